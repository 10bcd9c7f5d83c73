package view_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/internal/golden"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

var update = flag.Bool("update", false, "rewrite the tab table of docs/timeline.md")

// TestTabTable holds the tab table together: a row per tab constant, in
// the constants' order, keys 1 up in that order, names and titles of
// their own, the tabs of a comparison last, and a view for each tab not
// drawn as a tree.
func TestTabTable(t *testing.T) {
	rows := view.Tabs()
	if len(rows) != int(view.NumTabs)+1 {
		t.Fatalf("%d rows, want a row per tab and Compare's: %d", len(rows), view.NumTabs+1)
	}
	names, titles := map[string]bool{}, map[string]bool{}
	compared := false
	for i, r := range rows {
		if r.Tab != view.Tab(i) {
			t.Errorf("row %d is tab %d: the rows go in the order of the constants", i, r.Tab)
		}
		if want := rune('1' + i); r.Key != want {
			t.Errorf("tab %s: key %c, want %c (its place in the table)", r.Title, r.Key, want)
		}
		if r.Name == "" || names[r.Name] || r.Title == "" || titles[r.Title] || r.Short == "" || r.Shows == "" {
			t.Errorf("tab %d: name %q, title %q, short %q: each set and its own; shows %q", i, r.Name, r.Title, r.Short, r.Shows)
		}
		names[r.Name], titles[r.Title] = true, true
		if (r.Lines == nil) != (r.Form == view.FormTree) {
			t.Errorf("tab %s: a view (Lines) is wanted exactly when it is not drawn as a tree", r.Title)
		}
		if compared && !r.Compared {
			t.Errorf("tab %s comes after a tab of a comparison: those go last", r.Title)
		}
		compared = compared || r.Compared
		if got, ok := view.TabOfKey(r.Key); !ok || got != r.Tab {
			t.Errorf("key %c opens %v %v, want %s", r.Key, got, ok, r.Title)
		}
		if got, ok := view.TabNamed(r.Name); !ok || got != r.Tab {
			t.Errorf("name %s is %v %v, want %s", r.Name, got, ok, r.Title)
		}
		if r.Tab.String() != r.Title || r.Tab.Short() != r.Short {
			t.Errorf("tab %d: String %q, Short %q, want the row's", i, r.Tab.String(), r.Tab.Short())
		}
	}
	if view.TabCompare != view.Tab(len(rows)-1) || !rows[len(rows)-1].Compared {
		t.Errorf("the Compare tab is not the table's last row")
	}
	if got := view.TabKeys(view.TabsShown(false)); got != "1-7" {
		t.Errorf("TabKeys = %q", got)
	}
}

// TestTabLines draws each tab of a turn of the bundled real session
// through the table: a tab drawn as lines has some, a tree none.
func TestTabLines(t *testing.T) {
	s := timeline.Build(session.DemoExchanges(t))
	turn := s.Turns[len(s.Turns)-1]
	for _, r := range view.TabsShown(false) {
		got := view.Text(r.Tab.Lines(view.TabInput{Session: s, Turn: turn, Width: 100, Height: 6, Explain: timeline.Explain}))
		if (got == "") != (r.Form == view.FormTree) {
			t.Errorf("%s (form %d) drew %q", r.Title, r.Form, got)
		}
	}
}

// TestDocsTabs holds docs/timeline.md's tab table to the tab table; -update
// rewrites it.
func TestDocsTabs(t *testing.T) {
	var b strings.Builder
	b.WriteString("| tab | what it shows |\n| --- | --- |\n")
	for _, r := range view.Tabs() {
		fmt.Fprintf(&b, "| %c %s | %s |\n", r.Key, r.Title, strings.ReplaceAll(r.Shows, "|", `\|`))
	}
	golden.Section(t, "../../docs/timeline.md", "tabs", b.String(), *update)
}
