package ui

import (
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/tsinspect/tsinspect/timeline/view"
)

// rawPane is the Raw tab: the selected turn's request, response and SSE
// events as a foldable tree. Enter (or a click on a selected line) opens or
// closes the line's node.
type rawPane struct {
	*tview.Table
	a       *app
	raw     *view.Raw
	content *rawContent
	turn    int  // the turn shown
	dirty   bool // the selection changed: load its turn if it is another
	stale   bool // the lines changed: lay them out again
	w       int  // the width laid out for
}

// rawContent is the virtual table content over the visible lines.
type rawContent struct {
	tview.TableContentReadOnly
	p     *rawPane
	lines []view.RawLine
	cells []*tview.TableCell
}

func newRawPane(a *app) *rawPane {
	p := &rawPane{a: a, raw: view.NewRaw(), dirty: true}
	p.content = &rawContent{p: p}
	p.Table = tview.NewTable().SetContent(p.content).SetSelectable(true, false).SetSelectedStyle(a.th.selected()).
		SetBordersColor(tcell.ColorDefault)
	a.th.box(p.Table.Box)
	p.SetSelectedFunc(func(row, _ int) { p.toggle(row) })
	p.SetMouseCapture(singleClicks) // a double click: select, then toggle
	return p
}

// invalidate asks for the selected turn to be loaded on the next draw.
func (p *rawPane) invalidate() { p.dirty = true }

// Draw loads the turn if it changed, lays the lines out for the width, and
// draws the visible ones.
func (p *rawPane) Draw(screen tcell.Screen) {
	_, _, w, _ := p.GetInnerRect()
	if p.dirty {
		t := p.a.m.Selected()
		idx := 0
		if t != nil {
			idx = t.Index
		}
		if idx != p.turn {
			p.raw.SetTurn(t)
			p.turn, p.stale = idx, true
			p.Select(0, 0)
			p.SetOffset(0, 0)
		}
		p.dirty = false
	}
	p.layout(w)
	p.Table.Draw(screen)
}

// layout refreshes the lines for width w when they changed.
func (p *rawPane) layout(w int) {
	if !p.stale && w == p.w {
		return
	}
	p.content.lines = p.raw.Lines(w)
	p.content.cells = make([]*tview.TableCell, len(p.content.lines))
	p.stale, p.w = false, w
}

// toggle opens or closes the node on row.
func (p *rawPane) toggle(row int) {
	if row < 0 || row >= len(p.content.lines) || !p.content.lines[row].Foldable {
		return
	}
	p.raw.Toggle(p.content.lines[row].Path)
	p.stale = true
	p.layout(p.w)
}

// find selects the next match of q in the tree, opening folded nodes to
// show it: from the selected line (after it when next is set).
func (p *rawPane) find(q string, next bool) bool {
	from := ""
	if row, _ := p.GetSelection(); row >= 0 && row < len(p.content.lines) {
		from = p.content.lines[row].Path
	}
	path, ok := p.raw.Find(q, from, next)
	if !ok {
		return false
	}
	p.stale = true
	p.layout(p.w)
	lines := p.content.lines
	for i, l := range lines {
		if l.Path != path {
			continue
		}
		// In an opened long string, the line that holds the match.
		lq := strings.ToLower(q)
		for k := i + 1; k < len(lines) && strings.HasPrefix(lines[k].Path, path+"#"); k++ {
			if strings.Contains(strings.ToLower(lines[k].Text.String()), lq) {
				i = k
				break
			}
		}
		p.Select(i, 0)
		return true
	}
	return false
}

// expand opens every node (all) or brings them back to their defaults.
func (p *rawPane) expand(all bool) {
	if all {
		p.raw.ExpandAll()
	} else {
		p.raw.CollapseAll()
	}
	p.stale = true
	p.layout(p.w)
}

// selectedPart names the part of the exchange the selected line belongs
// to: "request" or "response".
func (p *rawPane) selectedPart() string {
	if row, _ := p.GetSelection(); row >= 0 && row < len(p.content.lines) && !strings.HasPrefix(p.content.lines[row].Path, "request") {
		return "response"
	}
	return "request"
}

// InputHandler adds the key table's Raw pane rows (e, E, s, S) to the
// table's keys.
func (p *rawPane) InputHandler() func(ev *tcell.EventKey, setFocus func(tview.Primitive)) {
	table := p.Table.InputHandler()
	return func(ev *tcell.EventKey, setFocus func(tview.Primitive)) {
		if p.a.dispatch(ev, true) {
			return
		}
		table(ev, setFocus)
	}
}

// GetRowCount returns the number of visible lines.
func (c *rawContent) GetRowCount() int { return len(c.lines) }

// GetColumnCount returns 1.
func (c *rawContent) GetColumnCount() int { return 1 }

// GetCell returns the cell of line row.
func (c *rawContent) GetCell(row, col int) *tview.TableCell {
	if col != 0 || row < 0 || row >= len(c.lines) {
		return nil
	}
	if c.cells[row] == nil {
		l := c.lines[row]
		cell := tview.NewTableCell(c.p.a.th.tagged(l.Text)).SetStyle(c.p.a.th.base()).SetExpansion(1)
		if l.Foldable {
			r := row
			cell.SetClickedFunc(func() bool {
				if sel, _ := c.p.GetSelection(); sel == r {
					c.p.toggle(r)
				}
				return false
			})
		}
		c.cells[row] = cell
	}
	return c.cells[row]
}
