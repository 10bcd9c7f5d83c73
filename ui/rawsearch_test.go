package ui

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawSelected returns the text of the Raw tab's selected line.
func rawSelected(h *harness) string {
	row, _ := h.a.raw.GetSelection()
	if row < 0 || row >= len(h.a.raw.content.lines) {
		return ""
	}
	return h.a.raw.content.lines[row].Text.String()
}

// TestRawSearch checks the Raw tab's search: it finds text inside folded
// nodes (opening them), a new / starts empty instead of appending to the
// last query, Enter on it goes to the next match, and a "not found" left
// by one keystroke goes away when a later one matches.
func TestRawSearch(t *testing.T) {
	h := newHarness(t, goldenSession(), 120, 40, Options{Title: "golden.db"})
	h.keys("6\t")
	// ToolSearch is only in folded nodes: the messages and the tools.
	if strings.Contains(h.text(), "ToolSearch") {
		t.Fatal("ToolSearch is on screen before the search")
	}
	h.keys("/ToolSearch\n")
	if got := rawSelected(h); !strings.Contains(got, "ToolSearch") {
		t.Errorf("search in folded nodes selected %q", got)
	}
	if !strings.Contains(h.text(), "ToolSearch") {
		t.Errorf("the match is not on screen:\n%s", h.text())
	}
	first, _ := h.a.raw.GetSelection()
	// A new search starts empty; Enter on it goes to the next match.
	h.keys("/")
	if got := h.a.search.GetText(); got != "" {
		t.Errorf("the prompt opened on %q", got)
	}
	h.keys("\n")
	if next, _ := h.a.raw.GetSelection(); next <= first || !strings.Contains(rawSelected(h), "ToolSearch") {
		t.Errorf("Enter on an empty prompt went from row %d to %d (%q)", first, next, rawSelected(h))
	}
	// "stop_reasonx" is not found, typed one key at a time; back to
	// "stop_reason" it is, and the footer no longer says otherwise.
	h.keys("/stop_reasonx")
	if got := h.a.m.Status(); got != "not found: stop_reasonx" {
		t.Errorf("status %q, want not found", got)
	}
	h.key(0x7f, 0) // Backspace
	h.keys("\n")
	if strings.Contains(h.text(), "not found") || !strings.Contains(rawSelected(h), "stop_reason") {
		t.Errorf("after a match the footer still says not found, or the match is not selected (%q):\n%s", rawSelected(h), h.text())
	}
}

// TestRawExpandAll checks e (open every node) and E (back to defaults).
func TestRawExpandAll(t *testing.T) {
	h := newHarness(t, goldenSession(), 120, 40, Options{Title: "golden.db"})
	h.keys("6\t")
	before := len(h.a.raw.content.lines)
	h.keys("e")
	all := len(h.a.raw.content.lines)
	if all <= before*2 {
		t.Errorf("e opened %d lines from %d", all, before)
	}
	for _, l := range h.a.raw.content.lines {
		if l.Foldable && !l.Open {
			t.Errorf("after e, %s is still closed", l.Path)
			break
		}
	}
	h.keys("E")
	if n := len(h.a.raw.content.lines); n != before {
		t.Errorf("E left %d lines, want the %d of the defaults", n, before)
	}
}

// TestRawSave checks s (the request or response of the selected line) and
// S (the whole exchange) in the Raw tab.
func TestRawSave(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, goldenSession(), 120, 40, Options{Title: "golden.db", SaveDir: dir})
	h.keys("6\ts")
	req, err := os.ReadFile(filepath.Join(dir, "turn-1-request.json"))
	if err != nil || !bytes.Equal(req, h.a.m.Selected().Exchange.ReqBody) {
		t.Fatalf("request not saved as sent: %v", err)
	}
	if st := h.a.m.Status(); !strings.Contains(st, "saved the request of #1 to ") {
		t.Errorf("status %q", st)
	}
	h.keys("/stop_reason\ns")
	if b, err := os.ReadFile(filepath.Join(dir, "turn-1-response.sse")); err != nil || !bytes.Contains(b, []byte("message_stop")) {
		t.Errorf("response not saved: %v", err)
	}
	h.keys("S")
	var whole struct {
		Request  map[string]any `json:"request"`
		Response map[string]any `json:"response"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "turn-1.json"))
	if err != nil || json.Unmarshal(b, &whole) != nil || whole.Request["method"] != "POST" || whole.Response["status"] != float64(200) {
		t.Errorf("whole exchange: %v %.200s", err, b)
	}
}
