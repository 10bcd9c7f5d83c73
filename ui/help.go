package ui

import (
	"strings"

	"github.com/rivo/tview"
)

// helpText is the help: the keys, from the key table, then what the turn
// list shows.
func helpText(rows []keyRow) string {
	return "[::b]Keys[-:-:-]\n\n" + helpKeys(rows) + "\n" + helpLegend
}

// helpLegend explains the turn list's columns and marks; PRICES is
// replaced by what the price table says of itself.
const helpLegend = `[::b]Turn list[-:-:-]  CAT catalog, WORK working set (+added since the thread's
previous turn), PROMPT tokens: cache read █, created ▓, uncached input ░;
COST $, PRICES (≈ a neighbour in the table).
Flags ✖ error ▲ warning ● info. Mouse: click a row or tab, wheel scrolls.`

// newHelp makes the help overlay, centred.
func newHelp(a *app) tview.Primitive {
	prices := "no price table"
	if a.prices != nil {
		prices = a.prices.Describe()
	}
	text := strings.Replace(helpText(a.keyRows), "PRICES", prices, 1)
	tv := tview.NewTextView().SetDynamicColors(true).SetText(text).SetTextStyle(a.th.base())
	a.th.box(tv.Box)
	tv.SetBorder(true).SetTitle(" tsinspect help ")
	w, h := 0, strings.Count(text, "\n")+3
	for _, l := range strings.Split(text, "\n") {
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
