package ui

import (
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/tsinspect/tsinspect/timeline/view"
)

// helpText is the help: the keys, from the key table, then what the turn
// list shows. Every line fits 76 columns, so that the overlay, with its
// border and margins, fits a terminal of 80 (TestHelpFits80x24).
func helpText(rows []keyRow) string {
	return helpKeys(rows) + "\n" + helpLegend
}

// helpLegend explains the turn list's columns and marks; PRICES is
// replaced by what the price table says of itself.
const helpLegend = `[::b]Turn list[-:-:-]  CAT catalog, WORK working set (+added since the thread's
previous turn), PROMPT tokens: cache read █, created ▓, uncached input ░;
COST $, PRICES (≈ a neighbour in the table).
Flags ✖ error ▲ warning ● info. Mouse: click a row or tab, wheel scrolls.`

// newHelp makes the help overlay: the text in a bordered box, centred,
// over a blank screen that hides the main page.
func newHelp(a *app) tview.Primitive {
	prices := "no price table"
	if a.prices != nil {
		prices = a.prices.Describe()
	}
	text := strings.Replace(helpText(a.keyRows), "PRICES", prices, 1)
	tv := tview.NewTextView().SetDynamicColors(true).SetWrap(true).SetWordWrap(true).SetText(text).SetTextStyle(a.th.base())
	a.th.box(tv.Box)
	tv.SetBorder(true).SetTitle(" tsinspect help ").SetBorderPadding(0, 0, 1, 1)
	w, h := 0, strings.Count(text, "\n")+3
	for _, l := range strings.Split(text, "\n") {
		w = max(w, tview.TaggedStringWidth(l))
	}
	o := &overlay{Box: tview.NewBox(), inner: tv, w: w + 4, h: h}
	a.th.box(o.Box)
	return o
}

// overlay draws inner centred in its area, at its own size (w × h) or the
// area's when that is smaller, so that its border stays on screen on a
// small terminal (the text wraps there); the rest of the area is blank.
type overlay struct {
	*tview.Box
	inner *tview.TextView
	w, h  int
}

// Draw blanks the area and draws the box in its middle.
func (o *overlay) Draw(screen tcell.Screen) {
	o.Box.DrawForSubclass(screen, o)
	x, y, width, height := o.GetRect()
	w, h := min(o.w, width), min(o.h, height)
	o.inner.SetRect(x+(width-w)/2, y+(height-h)/2, w, h)
	o.inner.Draw(screen)
}

// Focus gives the focus to the text.
func (o *overlay) Focus(delegate func(p tview.Primitive)) { delegate(o.inner) }

// HasFocus reports whether the text has the focus.
func (o *overlay) HasFocus() bool { return o.inner.HasFocus() }

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

// KeysAbout is the paragraph of the timeline commands' help (open,
// replay, demo) that says the main keys, the tabs' keys and titles from
// the tab table; '?' in the timeline lists them all.
func KeysAbout() string {
	return wrapWords("Keys: arrows or j/k move, Tab switches between the turn list and the tabs ("+
		view.TabKeys(view.TabsShown(false))+" or left/right: "+view.TabsHelp(func(s string) string { return "'" + s + "'" })+
		"), / searches, n/N jump to the next/previous flagged turn, t cycles threads, f shows flagged turns only, ? shows all keys, "+
		"q quits. The mouse works too. Set NO_COLOR to draw without colour.", 72)
}

// CompareTab names the Compare tab with its key, "8 Compare", for the
// help of open --compare.
func CompareTab() string {
	r := view.TabCompare.Row()
	return string(r.Key) + " " + r.Title
}
