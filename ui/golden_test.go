package ui

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/tsinspect/tsinspect/internal/golden"
	"github.com/tsinspect/tsinspect/timeline/view"
)

var update = flag.Bool("update", false, "rewrite the golden screens in testdata, and README.md's key list")

// TestGoldenTabs draws each tab of a chosen turn of the golden session at
// 120x40 and 80x24, through the keys a user would press.
func TestGoldenTabs(t *testing.T) {
	s := goldenSession()
	cases := []struct {
		tab  view.Tab
		turn int
	}{
		{view.TabWorkingSet, 3},   // echo loaded by search
		{view.TabCatalog, 13},     // after compaction: echo restored, a tool removed
		{view.TabSearches, 5},     // a select search and an empty keyword search
		{view.TabCache, 9},        // the system prompt changed: a cache break and its diff
		{view.TabFlags, 5},        // call before load and empty search
		{view.TabRaw, 3},          // request and response, folded
		{view.TabConversation, 4}, // the echo call's result, and the next call
	}
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		for _, c := range cases {
			name := fmt.Sprintf("%s_%dx%d.txt", strings.ReplaceAll(strings.ToLower(c.tab.String()), " ", ""), size[0], size[1])
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, s, size[0], size[1], Options{Title: "golden.db"})
				if !h.a.m.SelectTurn(c.turn) {
					t.Fatalf("turn %d not shown", c.turn)
				}
				h.keys(fmt.Sprint(int(c.tab) + 1))
				golden.Check(t, filepath.Join("testdata", name), h.text(), *update)
			})
		}
	}
}

// TestGoldenViews covers the list filters, the help and the search prompt.
func TestGoldenViews(t *testing.T) {
	s := goldenSession()
	cases := []struct {
		name string
		keys string
	}{
		{"start", ""},
		{"thread_sub1", "ttt"},
		{"flagged", "f"},
		{"search_echo", "/echo\n"},
		{"search_typing", "/cach"},
		{"help", "?"},
		{"raw_open", "jj6\tjjjj\n"},
		{"catalog_filter", "2\t/action_1\n"},
		{"raw_search", "6\t/stop_reason\n"},
		{"conversation_history", "jjj7a"},
	}
	for _, c := range cases {
		for _, size := range [][2]int{{120, 40}, {80, 24}} {
			name := fmt.Sprintf("%s_%dx%d.txt", c.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, s, size[0], size[1], Options{Title: "golden.db"})
				h.keys(c.keys)
				golden.Check(t, filepath.Join("testdata", name), h.text(), *update)
			})
		}
	}
}

// TestNoColor draws with NO_COLOR: no cell may carry a colour, and the
// selected row must still stand out (reverse video).
func TestNoColor(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	h := newHarness(t, goldenSession(), 120, 40, Options{})
	h.keys("n5")
	cells, w, _ := h.sim.GetContents()
	reversed := 0
	for i, c := range cells {
		fg, bg, attr := c.Style.Decompose()
		if fg != tcell.ColorDefault || bg != tcell.ColorDefault {
			t.Fatalf("cell (%d,%d) %q has colours %v on %v", i%w, i/w, string(c.Runes), fg, bg)
		}
		if attr&tcell.AttrReverse != 0 {
			reversed++
		}
	}
	if reversed < w/2 {
		t.Errorf("only %d reversed cells: the selection does not show", reversed)
	}
}

// TestColour checks that flags and cache bars are coloured by default.
func TestColour(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	h := newHarness(t, goldenSession(), 120, 40, Options{})
	cells, w, _ := h.sim.GetContents()
	colourOf := func(r rune) tcell.Color {
		for _, c := range cells {
			if len(c.Runes) > 0 && c.Runes[0] == r {
				fg, _, attr := c.Style.Decompose()
				if attr&tcell.AttrReverse == 0 {
					return fg
				}
			}
		}
		return tcell.ColorDefault
	}
	if got := colourOf('✖'); got != tcell.ColorRed {
		t.Errorf("error mark colour %v", got)
	}
	if got := colourOf('▲'); got != tcell.ColorYellow {
		t.Errorf("warning mark colour %v", got)
	}
	if got := colourOf('█'); got != tcell.ColorGreen {
		t.Errorf("cache read colour %v", got)
	}
	_ = w
}
