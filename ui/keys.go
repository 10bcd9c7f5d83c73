package ui

import (
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/tsinspect/tsinspect/timeline/view"
)

// key handles the keys of the key table that work outside the Raw pane
// (keytable.go); the rest go to the focused widget (arrows, j/k, PgUp/PgDn,
// g/G in the lists and text, and the Raw pane's own rows).
func (a *app) key(ev *tcell.EventKey) *tcell.EventKey {
	if a.search.active {
		return ev
	}
	if a.helpShown() {
		a.hideHelp()
		return nil
	}
	if a.dispatch(ev, false) {
		return nil
	}
	return ev
}

// switchPane moves the focus between the turn list and the open tab (Tab).
func (a *app) switchPane(*tcell.EventKey) {
	if a.detailFocused() {
		a.focusList()
	} else {
		a.focusDetail()
	}
}

// escape clears the filter of the pane with the focus; with none, it moves
// the focus back to the turn list, or clears the status line (Esc).
func (a *app) escape(*tcell.EventKey) {
	switch {
	case a.detailFocused() && a.m.DetailQuery() != "":
		a.m.SetDetailQuery("")
	case !a.detailFocused() && a.m.Query() != "":
		a.m.SetQuery("")
	case a.detailFocused():
		a.focusList()
	default:
		a.m.SetStatus("")
	}
}

// saveFromList is s and S outside the Raw pane: on the Raw tab, from the
// turn list, s saves the request and S the whole exchange; elsewhere the
// status line says where they work. (In the Raw pane, its own row saves
// what the selected line belongs to.)
func (a *app) saveFromList(ev *tcell.EventKey) {
	switch {
	case a.m.Tab() != view.TabRaw:
		a.m.SetStatus("s and S save the request, response or whole exchange on the Raw tab: press 6")
	case ev.Rune() == 'S':
		a.save("turn")
	default:
		a.save("request")
	}
}

// detailFocused reports whether the detail pane has the focus. It is
// tracked from the widgets' focus callbacks, because tview's GetFocus may
// not be called while drawing.
func (a *app) detailFocused() bool { return a.inDetail }

// focusDetail moves the focus to the open tab.
func (a *app) focusDetail() {
	if a.m.Tab() == view.TabRaw {
		a.tv.SetFocus(a.raw)
	} else {
		a.tv.SetFocus(a.text)
	}
}

// focusList moves the focus to the turn list.
func (a *app) focusList() { a.tv.SetFocus(a.list) }

// searchBar is the "/" prompt. It filters the turn list, or the open
// detail tab when that has the focus, as the query is typed; Enter keeps
// the filter and Esc restores the previous one. It opens empty, as less's
// and vi's / do, so that what is typed replaces the filter rather than
// adding to it; ↑ brings the previous filter back to edit.
type searchBar struct {
	*tview.InputField
	a        *app
	active   bool
	detail   bool   // filtering the detail tab rather than the turns
	previous string // the filter before the prompt opened
	typed    bool   // the text was changed since the prompt opened
	raw      string // the last search in the Raw tab
}

func newSearchBar(a *app) *searchBar {
	f := tview.NewInputField().SetLabel("/").SetFieldBackgroundColor(tcell.ColorDefault).
		SetFieldStyle(a.th.base().Underline(true)).SetLabelStyle(a.th.base().Bold(true))
	a.th.box(f.Box)
	s := &searchBar{InputField: f, a: a}
	f.SetChangedFunc(func(text string) {
		if s.active {
			s.typed = true
			s.apply(text, false)
		}
	})
	f.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		if ev.Key() == tcell.KeyUp && s.previous != "" {
			f.SetText(s.previous)
			return nil
		}
		return ev
	})
	f.SetDoneFunc(func(key tcell.Key) {
		switch {
		case key == tcell.KeyEscape && s.detail && s.a.m.Tab() == view.TabRaw:
			s.clearNotFound() // a search moves the selection: nothing to restore
		case key == tcell.KeyEscape:
			s.apply(s.previous, false)
		case !s.typed && !(s.detail && s.a.m.Tab() == view.TabRaw):
			// Enter before typing keeps the filter there was.
			s.apply(s.previous, false)
		default:
			// Enter on a search typed just now stays on its match;
			// on the previous search again, it goes to the next one.
			s.apply(f.GetText(), !s.typed)
		}
		s.stop()
	})
	return s
}

// start opens the prompt, empty; the current filter stays until
// something is typed, and comes back with Esc.
func (s *searchBar) start() {
	s.detail = s.a.detailFocused()
	switch {
	case !s.detail:
		s.previous = s.a.m.Query()
	case s.a.m.Tab() == view.TabRaw:
		// A search, not a filter: the prompt opens empty, and Enter on
		// nothing goes to the next match of the last one.
		s.previous = s.raw
	default:
		s.previous = s.a.m.DetailQuery()
	}
	s.SetText("")
	s.active, s.typed = true, false
	s.a.footer.SwitchToPage("search")
	s.a.tv.SetFocus(s)
}

// apply sets the filter; in the Raw tab it moves to the next match instead.
func (s *searchBar) apply(q string, next bool) {
	switch {
	case !s.detail:
		s.a.m.SetQuery(q)
	case s.a.m.Tab() == view.TabRaw:
		if q == "" {
			if !next || s.raw == "" {
				s.clearNotFound()
				return
			}
			q = s.raw // Enter on an empty prompt: the last search again
		}
		s.raw = q
		if s.a.raw.find(q, next) {
			s.clearNotFound()
		} else {
			s.a.m.SetStatus(notFound + q)
		}
	default:
		s.a.m.SetDetailQuery(q)
	}
}

// notFound starts the status of a Raw search that found nothing.
const notFound = "not found: "

// clearNotFound clears a "not found" status left by an earlier keystroke.
func (s *searchBar) clearNotFound() {
	if strings.HasPrefix(s.a.m.Status(), notFound) {
		s.a.m.SetStatus("")
	}
}

// stop closes the prompt and gives the focus back.
func (s *searchBar) stop() {
	s.active = false
	s.a.footer.SwitchToPage("keys")
	if s.detail {
		s.a.focusDetail()
	} else {
		s.a.focusList()
	}
}
