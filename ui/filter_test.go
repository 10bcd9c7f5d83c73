package ui

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
)

// TestFilterPrompt: the / prompt uses the command line's filter language
// and errors: a bad expression is said in the status line with the words
// turns --filter uses, and shows no "0 shown"; an unknown flag kind is
// refused; a new / replaces the filter instead of adding to it, ↑ brings
// the previous one back, Enter before typing keeps it, Esc restores it;
// and a bare word finds a turn by what its tool call said.
func TestFilterPrompt(t *testing.T) {
	h := newHarness(t, goldenSession(), 120, 40, Options{Title: "golden.db"})
	h.keys("/cost>>0.05\n")
	if got := h.a.m.Status(); !strings.Contains(got, `filter: "cost>>0.05": cost wants a number`) {
		t.Errorf("status %q", got)
	}
	if strings.Contains(h.text(), "0 shown") {
		t.Errorf("a bad filter shows no turn:\n%s", h.text())
	}
	h.keys("/flag:nonexistent_kind\n")
	if got := h.a.m.Status(); !strings.Contains(got, "no flag kind is nonexistent_kind") {
		t.Errorf("status %q", got)
	}
	h.keys("/flag:empty_search\n")
	if q, st := h.a.m.Query(), h.a.m.Status(); q != "flag:empty_search" || st != "" {
		t.Errorf("query %q, status %q", q, st)
	}
	h.keys("/")
	if got := h.a.search.GetText(); got != "" {
		t.Errorf("the prompt opened on %q, want empty", got)
	}
	h.keys("\n")
	if q := h.a.m.Query(); q != "flag:empty_search" {
		t.Errorf("Enter before typing: query %q", q)
	}
	h.keys("/thread:main\n")
	if q := h.a.m.Query(); q != "thread:main" {
		t.Errorf("a second filter made %q, want it to replace the first", q)
	}
	h.keys("/")
	h.key(tcell.KeyUp, 0)
	if got := h.a.search.GetText(); got != "thread:main" {
		t.Errorf("↑ gave %q", got)
	}
	h.keys(" and flag:retry\x1b")
	if q := h.a.m.Query(); q != "thread:main" {
		t.Errorf("Esc left %q", q)
	}
	// The demo echo tool's input: found in the content, not the row.
	h.keys("/\"hello\"\n")
	rows := h.a.m.Len()
	if rows == 0 {
		t.Fatalf("no turn found by a word of a tool input:\n%s", h.text())
	}
	h.keys("/body:/HEL+O/\n")
	if h.a.m.Len() != rows || h.a.m.Status() != "" {
		t.Errorf("body regex: %d rows (word: %d), status %q", h.a.m.Len(), rows, h.a.m.Status())
	}
}
