package ui

import (
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/tsinspect/tsinspect/internal/termsafe"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// theme turns the view's text roles into tview style tags. In colour mode
// each role has a colour; without colour (NO_COLOR) roles that must stand
// out get an attribute instead, and marks differ in shape anyway.
type theme struct {
	mono bool
}

// tag returns the style tag that opens text of role r ("" for plain).
func (th theme) tag(r view.Role) string {
	if th.mono {
		switch r {
		case view.RoleDim:
			return "[::d]"
		case view.RoleTitle, view.RoleError, view.RoleAdded, view.RoleSearch:
			return "[::b]"
		case view.RoleRemoved:
			return "[::s]"
		case view.RoleWarning, view.RoleRestored:
			return "[::u]"
		case view.RoleMatch:
			return "[::r]"
		}
		return ""
	}
	switch r {
	case view.RoleDim:
		return "[gray]"
	case view.RoleTitle:
		return "[::b]"
	case view.RoleKey:
		return "[teal]"
	case view.RoleString:
		return "[olive]"
	case view.RoleAdded:
		return "[green::b]"
	case view.RoleRemoved:
		return "[red::s]"
	case view.RoleError:
		return "[red::b]"
	case view.RoleWarning:
		return "[yellow]"
	case view.RoleInfo:
		return "[aqua]"
	case view.RoleRead:
		return "[green]"
	case view.RoleCreated:
		return "[yellow]"
	case view.RoleInput:
		return "[red]"
	case view.RoleSearch:
		return "[aqua]"
	case view.RoleRestored:
		return "[fuchsia]"
	case view.RoleMatch:
		return "[black:yellow]"
	}
	return ""
}

// tagged renders a line as tview tagged text.
func (th theme) tagged(l view.Line) string {
	var b strings.Builder
	for _, s := range l {
		tag := th.tag(s.Role)
		b.WriteString(tag)
		// Shown, never obeyed: tcell writes a cell's bytes as they are.
		b.WriteString(tview.Escape(termsafe.Text(s.Text)))
		if tag != "" {
			b.WriteString("[-:-:-]")
		}
	}
	return b.String()
}

// text renders lines as tagged text, one per line.
func (th theme) text(lines []view.Line) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(th.tagged(l))
	}
	return b.String()
}

// selected is the style of a selected row: reverse video, which reads the
// same with or without colour.
func (th theme) selected() tcell.Style { return tcell.StyleDefault.Reverse(true) }

// base is the style of plain text on the terminal's own background.
func (th theme) base() tcell.Style { return tcell.StyleDefault }

// box gives a primitive the terminal's default colours instead of tview's
// black theme.
func (th theme) box(b *tview.Box) {
	b.SetBackgroundColor(tcell.ColorDefault)
	b.SetBorderStyle(th.base())
	b.SetTitleColor(tcell.ColorDefault)
	b.SetBorderColor(tcell.ColorDefault)
}
