package ui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/tsinspect/tsinspect/timeline/view"
)

// detailText shows the tabs drawn as lines (all but Raw: the tab table's
// FormLines and FormMessages) of the selected turn. What it says is made by package view when
// it is drawn after a change, never per frame.
type detailText struct {
	*tview.TextView
	a     *app
	dirty bool // the turn, tab or filter changed: render and scroll to top
	w, h  int  // the size last rendered for
}

func newDetailText(a *app) *detailText {
	tv := tview.NewTextView().SetDynamicColors(true).SetWrap(true).SetWordWrap(true).SetScrollable(true)
	a.th.box(tv.Box)
	tv.SetTextStyle(a.th.base())
	return &detailText{TextView: tv, a: a, dirty: true}
}

// invalidate asks for a new render on the next draw.
func (d *detailText) invalidate() { d.dirty = true }

// Draw renders the open tab if something changed, then draws it.
func (d *detailText) Draw(screen tcell.Screen) {
	_, _, w, h := d.GetInnerRect()
	if d.dirty || w != d.w || h != d.h && d.a.m.Tab().Row().Tall {
		d.SetText(d.a.th.text(view.Wrap(d.render(w, h), w)))
		if d.dirty {
			d.ScrollToBeginning()
		}
		d.dirty, d.w, d.h = false, w, h
	}
	d.TextView.Draw(screen)
}

// render asks the tab table's view of the open tab for its lines.
func (d *detailText) render(w, h int) []view.Line {
	m := d.a.m
	t := m.Selected()
	if t == nil {
		text := emptyText(m)
		if d.a.loading != "" {
			text = "Reading the session: its turns appear when it is read (the header says how far)."
		}
		return []view.Line{{{Text: text, Role: view.RoleDim}}}
	}
	return m.Tab().Lines(view.TabInput{Session: m.Session(), Turn: t, Query: m.DetailQuery(), Width: w, Height: min(max(h/4, 2), 8),
		Prices: d.a.prices, Deferral: &d.a.deferral, Explain: d.a.explain, WholeHistory: d.a.wholeHistory, Comparison: m.Comparison()})
}

// emptyText says why no turn is selected.
func emptyText(m *view.Model) string {
	switch {
	case len(m.Session().Turns) == 0 && m.Replaying():
		return "No turns yet."
	case len(m.Session().Turns) == 0:
		return "No Messages API turns in this capture (yet)."
	case m.Len() == 0:
		return "No turn matches the filters: Esc clears the search, f and t change the others."
	}
	return "No turn selected."
}
