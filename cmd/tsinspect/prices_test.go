package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pricedSessions writes a sessions directory of three models: Opus 4.6,
// a name the table only has a neighbour for, and GLM driven through
// Claude Code; the last answer on at.
func pricedSessions(t *testing.T, last string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "-home-u-alpha")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	line := func(id, at, model, usage string) string {
		return `{"type":"assistant","sessionId":"aaaaaaaa-0000-4000-8000-000000000001","cwd":"/home/u/alpha","timestamp":"` + at + `","version":"2.1.300","message":{"id":"` + id +
			`","role":"assistant","model":"` + model + `","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":` + usage + `}}`
	}
	lines := []string{
		// 3×$5 + 1,250×$25 + 4,500×$6.25 + 180,000×$0.50 = $0.14939.
		line("m1", "2026-11-20T10:00:00.000Z", "claude-opus-4-6", `{"input_tokens":3,"output_tokens":1250,"cache_read_input_tokens":180000,"cache_creation_input_tokens":4500}`),
		// ≈ claude-opus-4-6: 1,000×$25 = $0.025.
		line("m2", "2026-11-21T10:00:00.000Z", "claude-opus-4-6-thinking", `{"input_tokens":0,"output_tokens":1000}`),
		line("m3", last, "glm-4.6", `{"input_tokens":1000,"output_tokens":100}`),
	}
	if err := os.WriteFile(filepath.Join(dir, "aaaaaaaa-0000-4000-8000-000000000001.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestPricesCommand is a user checking the prices behind the listing:
// the table's date on every dollar line, which models are priced ≈ or not
// at all, their own price file used without a flag, and a notice when the
// sessions outgrow the table.
func TestPricesCommand(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := pricedSessions(t, "2026-11-22T10:00:00.000Z")

	code, out, stderr := runIn("prices", root, "--no-index")
	if code != 0 {
		t.Fatalf("prices: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"Prices in force (US dollars per million tokens): built-in prices taken 2026-11-26.",
		"Your price file: none at " + filepath.Join(cfg, "tsinspect", "prices.json"),
		"claude-opus-4-6 (before 2026-03-13)",
		"Models in your sessions (1 session under " + root + "):",
		"≈ claude-opus-4-6 (a neighbour",
		"≥ no price",
		"2 models are priced ≈ or not at all: claude-opus-4-6-thinking, glm-4.6.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("prices lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Note:") {
		t.Errorf("a notice for sessions older than the table:\n%s", out)
	}

	code, out, _ = runIn("sessions", root, "--no-index")
	if code != 0 || !strings.Contains(out, "1 session, 3 turns, ≥$0.1744 at built-in prices taken 2026-11-26") ||
		!strings.Contains(out, "≈: claude-opus-4-6-thinking as claude-opus-4-6") || !strings.Contains(out, "≥ no price for glm-4.6") {
		t.Errorf("sessions: exit %d\n%s", code, out)
	}
	code, out, _ = runIn("sessions", root, "--no-index", "--by", "day", "--timezone", "UTC")
	if code != 0 || !strings.Contains(out, "2026-11-20  opus-4-6") || !strings.Contains(out, "≥$0.1744") ||
		!strings.Contains(out, "US dollars at built-in prices taken 2026-11-26; each answer in the day of its timestamp") {
		t.Errorf("sessions --by day: exit %d\n%s", code, out)
	}

	// The user's own price file prices GLM; no flag needed, and every
	// dollar line says whose prices they are.
	if err := os.MkdirAll(filepath.Join(cfg, "tsinspect"), 0o700); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(cfg, "tsinspect", "prices.json")
	if err := os.WriteFile(own, []byte(`{"extends":"built-in","taken":"2026-11-27","models":[{"model":"glm-4.6","input":0.6,"output":2.2}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runIn("sessions", root, "--no-index")
	// $0.17439 + 1,000×$0.60 + 100×$2.20 = $0.17521.
	if code != 0 || !strings.Contains(out, "≈$0.1752 at built-in prices taken 2026-11-26, with glm-4.6 from "+own+" (your configuration directory)") {
		t.Errorf("sessions with the user's price file: exit %d\n%s", code, out)
	}
	code, out, _ = runIn("prices", "--no-sessions", "--json")
	var got struct {
		Prices string `json:"prices"`
		Table  struct {
			Taken  string `json:"taken"`
			Models []struct {
				Model string  `json:"model"`
				Input float64 `json:"input"`
			} `json:"models"`
		} `json:"table"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Table.Taken != "2026-11-26" || !strings.Contains(got.Prices, "your configuration directory") {
		t.Errorf("prices --json: exit %d %v %+v", code, err, got)
	}
	if err := os.WriteFile(own, []byte(`{"extends":"built-in"`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := runIn("sessions", root, "--no-index"); code != 1 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "configuration directory") {
		t.Errorf("a broken price file: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	os.Remove(own)

	// Sessions two months newer than the table: a notice, once.
	later := pricedSessions(t, "2027-01-30T10:00:00.000Z")
	code, _, stderr = runIn("sessions", later, "--no-index")
	if code != 0 || strings.Count(stderr, "days newer than the price table (2026-11-26)") != 1 {
		t.Errorf("stale table: exit %d, stderr %q", code, stderr)
	}
}
