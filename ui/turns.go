package ui

import (
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// turnList is the list of turns: a tview.Table over a virtual content that
// asks the model for the rows it draws. Nothing is copied per row; the cells
// of a turn are made when it is first drawn and kept until the session
// changes.
type turnList struct {
	*tview.Table
	content *turnContent
	// shownRow and shownHeight are the selected row and the list's height
	// at the last draw: when either changes, the selection is scrolled
	// into view.
	shownRow, shownHeight int
}

// turnContent implements tview.TableContent over the view model. Row 0 is
// the heading.
type turnContent struct {
	tview.TableContentReadOnly
	a      *app
	cells  map[int][]*tview.TableCell // by turn index
	head   []*tview.TableCell
	widths [view.NumColumns]int
	// narrow drops the TIME column, for a list too narrow to show it and
	// a whole flag name; noCost drops the COST column, the first to go.
	narrow bool
	noCost bool
	// wide shows every flag with what it is about, and whole model names,
	// on a list wider than wideWidth.
	wide bool
	// varying holds the widest cell of each of varyingColumns in the
	// session measured.
	measured *timeline.Session
	varying  map[view.Column]int
	// costWidth is the width of the COST column when shown.
	costWidth int
}

// varyingColumns are the columns sized to their content.
var varyingColumns = []view.Column{view.ColModel, view.ColCatalog, view.ColWorking, view.ColStop}

// flagRoom is the width the FLAGS column needs for a mark and the longest
// flag name with up to three marks ("✖▲● call_before_load").
const flagRoom = 20

// Draw fits the columns to the list's width, keeps the selected turn in
// view, then draws it.
func (l *turnList) Draw(screen tcell.Screen) {
	_, _, w, h := l.GetInnerRect()
	l.content.fit(w)
	l.keepSelectionInView(h)
	l.Table.Draw(screen)
}

// keepSelectionInView scrolls the list so that the selected row shows when
// the selection or the list's height changed since the last draw (opening
// a capture of more turns than fit, a resize), and leaves the offset alone
// otherwise so that the mouse wheel scrolls. Setting the offset also stops
// tview from keeping the list scrolled to its end, which it starts doing
// whenever a draw finds every row in view (as on a tall first screen) and
// would otherwise keep after the list shrinks.
func (l *turnList) keepSelectionInView(height int) {
	row, _ := l.GetSelection()
	off, col := l.GetOffset()
	visible := height - 1 // the heading is fixed
	if visible >= 1 && (row != l.shownRow || height != l.shownHeight) {
		switch {
		case row <= off:
			off = row - 1
		case row > off+visible:
			off = row - visible
		}
		off = max(off, 0)
	}
	l.shownRow, l.shownHeight = row, height
	l.SetOffset(off, col)
}

// fit drops the COST column, then the TIME column, when the list is
// narrower than every column and a whole flag name, and brings them back
// when there is room.
func (c *turnContent) fit(width int) {
	need := flagRoom
	for col := view.Column(0); col < view.ColFlags; col++ {
		w := c.widths[col]
		switch col {
		case view.ColTime:
			w = timeWidth
		case view.ColCost:
			w = c.costWidth
		}
		need += w + 1
	}
	noCost := width < need
	narrow := width < need-c.costWidth-1
	wide := width > wideWidth
	if narrow != c.narrow || noCost != c.noCost || wide != c.wide {
		c.narrow, c.noCost, c.wide = narrow, noCost, wide
		c.reset()
	}
}

// wideWidth is the list width above which flags are shown whole.
const wideWidth = 120

// timeWidth is the width of the TIME column: "15:04:05".
const timeWidth = 8

func newTurnList(a *app) *turnList {
	c := &turnContent{a: a}
	t := tview.NewTable().SetContent(c).SetFixed(1, 0).SetSelectable(true, false).SetSelectedStyle(a.th.selected()).
		SetBordersColor(tcell.ColorDefault)
	a.th.box(t.Box)
	l := &turnList{Table: t, content: c}
	c.reset()
	t.SetSelectionChangedFunc(func(row, _ int) {
		if !a.syncing {
			a.m.Select(row - 1)
		}
	})
	t.SetSelectedFunc(func(int, int) { a.focusDetail() })
	t.SetMouseCapture(singleClicks)
	return l
}

// singleClicks makes a second click soon after another (which tview
// reports as a double click, wherever it lands) select like a click.
func singleClicks(action tview.MouseAction, ev *tcell.EventMouse) (tview.MouseAction, *tcell.EventMouse) {
	if action == tview.MouseLeftDoubleClick {
		action = tview.MouseLeftClick
	}
	return action, ev
}

// reset drops the cached cells and sizes the columns for the session.
func (c *turnContent) reset() {
	c.cells = map[int][]*tview.TableCell{}
	s := c.a.m.Session()
	for col := view.Column(0); col < view.NumColumns; col++ {
		c.widths[col] = len(col.Title())
	}
	c.widths[view.ColIndex] = max(len(strconv.Itoa(len(s.Turns))), 1)
	c.widths[view.ColTime] = timeWidth
	if c.narrow {
		c.widths[view.ColTime] = 0
	}
	for _, th := range s.Threads {
		c.widths[view.ColThread] = max(c.widths[view.ColThread], len(th.ID))
	}
	// Columns of varying content are as wide as their widest cell in the
	// session (up to the column's limit), so that the flags keep room.
	// Measured once per session: filters and searches reset the rows, not
	// the session.
	if s != c.measured {
		c.measured = s
		c.varying = map[view.Column]int{}
		c.costWidth = len(view.ColCost.Title())
		for _, t := range s.Turns {
			c.costWidth = max(c.costWidth, view.CostCell(t, c.a.prices, false).Width())
			for _, col := range varyingColumns {
				c.varying[col] = max(c.varying[col], view.Cell(t, col, c.a.loc, false).Width())
			}
		}
	}
	for col, w := range c.varying {
		if mw := col.MaxWidth(); mw > 0 && !(col == view.ColModel && c.wide) {
			w = min(w, mw)
		}
		c.widths[col] = max(c.widths[col], w)
	}
	c.widths[view.ColPrompt] = 7 + view.BarWidth
	c.widths[view.ColCost] = c.costWidth
	if c.noCost {
		c.widths[view.ColCost] = 0
	}
	// A replay shows "streaming" in STOP while a response is under way.
	if c.a.m.Replaying() {
		c.widths[view.ColStop] = max(c.widths[view.ColStop], len("streaming"))
	}
	c.head = make([]*tview.TableCell, view.NumColumns)
	for col := range c.head {
		title := view.Column(col).Title()
		if c.narrow && view.Column(col) == view.ColTime || c.noCost && view.Column(col) == view.ColCost {
			title = ""
		}
		cell := tview.NewTableCell(c.pad(view.Column(col), "[::b]"+title+"[-:-:-]", len(title))).
			SetSelectable(false).SetStyle(c.a.th.base())
		if view.Column(col) == view.ColFlags {
			cell.SetExpansion(1)
		}
		c.head[col] = cell
	}
}

// pad fills text (of visible width w) out to its column's width, so that
// columns keep their place whatever rows are in view.
func (c *turnContent) pad(col view.Column, text string, w int) string {
	n := c.widths[col] - w
	if n <= 0 || col == view.ColFlags {
		return text
	}
	if col.RightAligned() {
		return strings.Repeat(" ", n) + text
	}
	return text + strings.Repeat(" ", n)
}

// GetRowCount returns the heading plus the visible turns.
func (c *turnContent) GetRowCount() int { return c.a.m.Len() + 1 }

// GetColumnCount returns the number of columns.
func (c *turnContent) GetColumnCount() int { return int(view.NumColumns) }

// GetCell returns the cell at row, column.
func (c *turnContent) GetCell(row, col int) *tview.TableCell {
	if col < 0 || col >= int(view.NumColumns) {
		return nil
	}
	if row == 0 {
		return c.head[col]
	}
	t := c.a.m.Row(row - 1)
	if t == nil {
		return nil
	}
	if cells, ok := c.cells[t.Index]; ok {
		return cells[col]
	}
	inFlight := c.a.m.InFlight(t)
	cells := make([]*tview.TableCell, view.NumColumns)
	for i := range cells {
		colm := view.Column(i)
		line := view.Cell(t, colm, c.a.loc, inFlight)
		if colm == view.ColCost {
			line = view.CostCell(t, c.a.prices, inFlight)
		}
		if c.narrow && colm == view.ColTime || c.noCost && colm == view.ColCost {
			line = view.Line{}
		}
		if c.wide && colm == view.ColFlags {
			line = view.WideFlags(t)
		}
		if cmp := c.a.m.Comparison(); cmp != nil && colm == view.ColFlags {
			line = cmp.FlagsCell(t, line)
		}
		cell := tview.NewTableCell(c.pad(colm, c.a.th.tagged(line), line.Width())).SetStyle(c.a.th.base())
		if mw := colm.MaxWidth(); mw > 0 && !(colm == view.ColModel && c.wide) {
			cell.SetMaxWidth(mw)
		}
		if colm == view.ColFlags {
			cell.SetExpansion(1)
		}
		cells[i] = cell
	}
	if !inFlight {
		c.cells[t.Index] = cells
	}
	return cells[col]
}

// sync moves the table's selection to the model's without telling the
// model back.
func (l *turnList) sync(a *app) {
	a.syncing = true
	defer func() { a.syncing = false }()
	if row := a.m.SelectedRow(); row >= 0 {
		l.Select(row+1, 0)
	}
}
