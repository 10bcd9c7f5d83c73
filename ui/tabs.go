package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/tsinspect/tsinspect/timeline/view"
)

// tabBar is the row of detail tab names. A click on a name opens its tab.
type tabBar struct {
	*tview.TextView
	a *app
}

func newTabBar(a *app) *tabBar {
	tv := tview.NewTextView().SetDynamicColors(true).SetRegions(true).SetWrap(false).SetTextStyle(a.th.base())
	a.th.box(tv.Box)
	b := &tabBar{tv, a}
	tv.SetMouseCapture(singleClicks)
	tv.SetHighlightedFunc(func(added, _, _ []string) {
		if a.syncing || len(added) == 0 {
			return
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(added[0], "tab")); err == nil {
			a.m.SetTab(view.Tab(n))
			a.focusDetail()
		}
	})
	return b
}

// Draw brings the names up to date and draws them.
func (b *tabBar) Draw(screen tcell.Screen) {
	b.update(b.a)
	b.TextView.Draw(screen)
}

// update redraws the names, the open one in reverse video (bold when the
// tab has the focus), with the flag count of the selected turn. Regions
// only catch clicks: tview's own highlight would force colours.
func (b *tabBar) update(a *app) {
	var sb strings.Builder
	open := "[::r]"
	if a.detailFocused() {
		sb.WriteString("▸")
		open = "[::rb]"
	} else {
		sb.WriteString(" ")
	}
	flags := 0
	if t := a.m.Selected(); t != nil {
		flags = len(t.Flags)
	}
	// The titles in full when they fit, else shortened: the tabs the
	// session shows, in the tab table's order, with their keys.
	rows := view.TabsShown(a.m.Comparison() != nil)
	_, _, width, _ := b.GetInnerRect()
	name := func(r view.TabRow) string { return r.Title }
	full := 1
	for _, r := range rows {
		full += len([]rune(fmt.Sprintf(" %c %s %d │", r.Key, r.Title, flags)))
	}
	if width > 0 && full > width {
		name = func(r view.TabRow) string { return r.Short }
	}
	for i, r := range rows {
		label := fmt.Sprintf(" %c %s ", r.Key, name(r))
		if r.Tab == view.TabFlags && flags > 0 {
			label = fmt.Sprintf(" %c %s %d ", r.Key, name(r), flags)
		}
		if r.Tab == a.m.Tab() {
			label = open + label + "[::-]"
		}
		fmt.Fprintf(&sb, `["tab%d"]%s[""]`, r.Tab, label)
		if i+1 < len(rows) {
			sb.WriteString(a.th.tag(view.RoleDim) + "│[-:-:-]")
		}
	}
	a.syncing = true
	b.SetText(sb.String())
	b.Highlight()
	a.syncing = false
}
