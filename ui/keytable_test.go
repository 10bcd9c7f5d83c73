package ui

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/tsinspect/tsinspect/timeline/view"
)

// TestKeyTable holds the key table together: every row's keys parse, a
// row does something unless a widget handles its keys, no key is bound
// twice where it is dispatched, and the footer's places are 1, 2, 3, ...
func TestKeyTable(t *testing.T) {
	rows := keyTable()
	bound := map[bool]map[press]string{false: {}, true: {}}
	foot := map[bool][]int{}
	for _, r := range rows {
		shown, err := parseKeys(r.keys)
		if err != nil || len(shown) == 0 {
			t.Errorf("row %q: keys %v %v", r.keys, shown, err)
		}
		hidden, err := parseKeys(r.also)
		if err != nil {
			t.Errorf("row %q: also: %v", r.keys, err)
		}
		if (r.do == nil) != (r.where == inWidget) {
			t.Errorf("row %q: where %s, action %v", r.keys, r.where, r.do != nil)
		}
		if r.help == "" && r.doc == "" {
			t.Errorf("row %q: no text for the help nor the README", r.keys)
		}
		if r.do == nil {
			continue
		}
		pane := r.where == inRawPane
		for _, p := range append(shown, hidden...) {
			if other, ok := bound[pane][p]; ok {
				t.Errorf("key %v bound by rows %q and %q", p, other, r.keys)
			}
			bound[pane][p] = r.keys
		}
		if r.foot.browse > 0 {
			foot[false] = append(foot[false], r.foot.browse)
		}
		if r.foot.replay > 0 {
			foot[true] = append(foot[true], r.foot.replay)
		}
		if (r.foot.browse > 0 || r.foot.replay > 0) != (r.foot.label != "") {
			t.Errorf("row %q: footer %+v", r.keys, r.foot)
		}
	}
	for replay, at := range foot {
		seen := map[int]bool{}
		for _, n := range at {
			if n > len(at) || seen[n] {
				t.Errorf("replay %v: footer places %v are not 1 to %d", replay, at, len(at))
				break
			}
			seen[n] = true
		}
	}
	for i := range view.NumTabs {
		if bound[false][press{key: tcell.KeyRune, r: '1' + rune(i)}] == "" {
			t.Errorf("no key opens tab %d", i+1)
		}
	}
	if _, err := parseKeys("Ctrl-Q"); err == nil {
		t.Error("an unknown key name parsed")
	}
}

// TestKeyLine holds the footer's key line, browsing and replaying.
func TestKeyLine(t *testing.T) {
	for _, c := range []struct {
		replay bool
		want   string
	}{
		{false, " q quit  ? help  / search  n/N flag  t thread  f flagged  Tab pane  1-8 tab "},
		{true, " space pause  p play  +/- speed  q quit  ? help  / search  n/N flag  Tab pane "},
	} {
		var setup []func(*view.Model)
		if c.replay {
			setup = append(setup, func(m *view.Model) { m.StartReplay(nil, 1) })
		}
		h := newHarness(t, goldenSession(), 120, 40, Options{}, setup...)
		if got := keyLine(h.a).String(); got != c.want {
			t.Errorf("replay %v: key line %q, want %q", c.replay, got, c.want)
		}
	}
}

// TestKeyScopes checks that a row takes its keys only where it works, and
// leaves them to the focused widget elsewhere.
func TestKeyScopes(t *testing.T) {
	h := newHarness(t, goldenSession(), 120, 40, Options{})
	key := func(r rune) *tcell.EventKey { return tcell.NewEventKey(tcell.KeyRune, r, tcell.ModNone) }
	if h.a.dispatch(key('p'), false) || h.a.dispatch(key(' '), false) {
		t.Error("p or space taken outside a replay")
	}
	if h.a.dispatch(key('a'), false) {
		t.Error("a taken outside the Conversation tab")
	}
	if !h.a.dispatch(key('s'), false) || !strings.Contains(h.a.m.Status(), "on the Raw tab") {
		t.Errorf("s outside the Raw tab: status %q", h.a.m.Status())
	}
	h.keys("7")
	if !h.a.dispatch(key('a'), false) || !h.a.wholeHistory {
		t.Error("a on the Conversation tab did not show the whole history")
	}
	h.keys("6\t")
	if h.a.dispatch(key('s'), false) || h.a.dispatch(key('e'), false) {
		t.Error("the Raw pane's s or e taken before the pane")
	}
	if h.a.dispatch(key('q'), true) {
		t.Error("q taken by the Raw pane")
	}
	h.keys("[")
	if h.a.m.Tab() != view.TabFlags {
		t.Errorf("[ from Raw opened %s", h.a.m.Tab())
	}
	h.key(tcell.KeyRight, 0)
	if h.a.m.Tab() != view.TabRaw {
		t.Errorf("→ opened %s", h.a.m.Tab())
	}
}
