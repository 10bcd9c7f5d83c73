package ui

import (
	"strings"

	"github.com/rivo/tview"
)

// helpText lists the keys.
const helpText = `[::b]Keys[-:-:-]

  ↑ ↓  j k          move in the turn list, or scroll the tab
  PgUp PgDn  g G    page, first, last
  Tab               switch between the turn list and the tab
  Enter             open the tab (list); open/close a node (Raw)
  1-7  ← →  [ ]     Working set, Catalog, Searches, Cache, Flags, Raw, Talk
  /                 filter turns: words, flag:K tool:T cost>N body:T, and/or
                    /not (↑ last filter); the tab with the focus; Raw: find
  e E  s S  a       Raw: open all, defaults, save, save all; Talk: history
  n  N              next / previous flagged turn
  t                 cycle threads: all, main, each subagent, side queries
  f                 flagged turns only, or all
  space             replay: pause, then step one turn at a time
  p  + -            replay: play / pause, faster, slower
  ?                 this help (any key closes it)
  q                 quit

[::b]Turn list[-:-:-]  CAT catalog, WORK working set (+added since the thread's
previous turn), PROMPT tokens: cache read █, created ▓, uncached input ░;
COST $, PRICES (≈ its family's newest model).
Flags ✖ error ▲ warning ● info. Mouse: click a row or tab, wheel scrolls.`

// newHelp makes the help overlay, centred.
func newHelp(a *app) tview.Primitive {
	prices := "no price table"
	if a.prices != nil {
		prices = a.prices.Describe()
	}
	helpText := strings.Replace(helpText, "PRICES", prices, 1)
	tv := tview.NewTextView().SetDynamicColors(true).SetText(helpText).SetTextStyle(a.th.base())
	a.th.box(tv.Box)
	tv.SetBorder(true).SetTitle(" tsinspect help ")
	w, h := 0, strings.Count(helpText, "\n")+3
	for _, l := range strings.Split(helpText, "\n") {
		w = max(w, tview.TaggedStringWidth(l))
	}
	w += 4
	// Blank boxes around it hide the main page.
	blank := func() tview.Primitive {
		b := tview.NewBox()
		a.th.box(b)
		return b
	}
	return tview.NewFlex().
		AddItem(blank(), 0, 1, false).
		AddItem(tview.NewFlex().SetDirection(tview.FlexRow).
			AddItem(blank(), 0, 1, false).
			AddItem(tv, h, 0, true).
			AddItem(blank(), 0, 1, false), w, 0, true).
		AddItem(blank(), 0, 1, false)
}

// showHelp shows the help over the main page.
func (a *app) showHelp() { a.pages.ShowPage("help") }

// hideHelp hides it.
func (a *app) hideHelp() {
	a.pages.HidePage("help")
	a.focusList()
}

// helpShown reports whether the help is shown.
func (a *app) helpShown() bool {
	name, _ := a.pages.GetFrontPage()
	return name == "help"
}
