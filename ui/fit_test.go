package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/compare"
	"github.com/tsinspect/tsinspect/timeline/view"
)

var tags = regexp.MustCompile(`\[[a-z:-]*\]`)

// TestHelpFits80x24: at 80×24, the terminal people have, the help overlay
// is whole: its border's four corners are on screen and every line of the
// help is there in full. On a smaller terminal the border still is.
func TestHelpFits80x24(t *testing.T) {
	prices := pricing.Default()
	for _, size := range [][2]int{{80, 24}, {120, 40}, {60, 20}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			h := newHarness(t, goldenSession(), size[0], size[1], Options{Title: "golden.db", Prices: prices})
			h.keys("?")
			lines := strings.Split(h.text(), "\n")
			top, bottom := -1, -1
			for i, l := range lines {
				l = strings.TrimSpace(l)
				if strings.HasPrefix(l, "╔") && strings.HasSuffix(l, "╗") {
					top = i
				}
				if strings.HasPrefix(l, "╚") && strings.HasSuffix(l, "╝") {
					bottom = i
				}
			}
			if top < 0 || bottom <= top {
				t.Fatalf("the help's border is not whole on screen:\n%s", h.text())
			}
			if size[0] < 80 {
				return // the text wraps there
			}
			screen := h.text()
			text := strings.Replace(helpText(h.a.keyRows), "PRICES", prices.Describe(), 1)
			for _, l := range strings.Split(tags.ReplaceAllString(text, ""), "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.Contains(screen, l) {
					t.Errorf("help line not on screen whole: %q\n%s", l, screen)
				}
			}
		})
	}
}

// TestEveryScreenFits80x24 opens every tab, with a comparison set (tab 8),
// at 80×24: the header keeps the dollars, the tab bar every tab, the key
// line its help key.
func TestEveryScreenFits80x24(t *testing.T) {
	s := goldenSession()
	other := timeline.Build(goldenExchanges()[:6])
	cmp := view.NewComparison(compare.Compare(compare.Side{Session: s}, compare.Side{Session: other}, compare.Options{}), "other.db")
	for tab := 0; tab <= int(view.NumTabs); tab++ {
		t.Run(fmt.Sprint(tab+1), func(t *testing.T) {
			h := newHarness(t, s, 80, 24, Options{Title: "a-session-with-a-long-name.db", Prices: pricing.Default()},
				func(m *view.Model) { m.SetComparison(cmp) })
			h.keys(fmt.Sprintf("j%d", tab+1))
			lines := strings.Split(strings.TrimRight(h.text(), "\n"), "\n")
			if len(lines) > 24 {
				t.Fatalf("%d lines", len(lines))
			}
			if !strings.Contains(lines[0], " in all") {
				t.Errorf("header without the dollars: %q", lines[0])
			}
			var bar string
			for _, l := range lines {
				if strings.Contains(l, "1 Working") {
					bar = l
				}
			}
			for i := 1; i <= int(view.NumTabs)+1; i++ {
				if !strings.Contains(bar, fmt.Sprintf("%d ", i)) {
					t.Errorf("tab %d not in the tab bar %q", i, bar)
				}
			}
			if last := lines[len(lines)-1]; !strings.Contains(last, "? help") {
				t.Errorf("key line %q", last)
			}
		})
	}
}
