package main

import (
	"encoding/json"
	"strings"
	"testing"
)

const demoDB = "../../fixtures/democapture/demo.db"

// jsonLines parses out as JSON Lines, failing on a line that is not one
// object.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON object line: %q: %v", l, err)
		}
		objs = append(objs, m)
	}
	return objs
}

func TestJSONLines(t *testing.T) {
	code, out, stderr := runIn("turns", "--json", demoDB)
	if code != 0 {
		t.Fatalf("turns --json: %d %s", code, stderr)
	}
	turns := jsonLines(t, out)
	if len(turns) != 7 || turns[0]["index"] != float64(1) || turns[6]["thread"] != "main" {
		t.Errorf("turns --json: %d lines, first %v", len(turns), turns[0]["index"])
	}
	if c, _ := turns[0]["cost"].(map[string]any); c == nil || c["usd"].(float64) <= 0 {
		t.Errorf("turn 1 has no cost: %v", turns[0]["cost"])
	}
	_, out, _ = runIn("turns", "--json", "--flagged", demoDB)
	if n := len(jsonLines(t, out)); n != 3 {
		t.Errorf("turns --json --flagged: %d lines, want the 3 flagged turns", n)
	}
	_, out, _ = runIn("exchanges", "--json", demoDB)
	exs := jsonLines(t, out)
	if len(exs) < 7 || exs[0]["id"] != float64(1) || exs[0]["state"] != "complete" || exs[0]["path"] == "" {
		t.Errorf("exchanges --json: %d lines, first %v", len(exs), exs[0])
	}
	_, out, _ = runIn("searches", "--json", "--tools", "mcp__demo__echo", demoDB)
	lines := jsonLines(t, out)
	if len(lines) != 3 || lines[0]["kind"] != "search" || lines[1]["query"] != "weather forecast" || lines[2]["kind"] != "tool" || lines[2]["first_loaded"] != float64(2) {
		t.Errorf("searches --json:\n%s", out)
	}
}

func TestTurnsFilter(t *testing.T) {
	code, out, stderr := runIn("turns", "--json", "--filter", "flag:cache_break or (tool:mcp__demo__* and cost<0.008)", demoDB)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []float64
	for _, l := range jsonLines(t, out) {
		got = append(got, l["index"].(float64))
	}
	if len(got) != 3 || got[0] != 3 || got[1] != 4 || got[2] != 7 {
		t.Errorf("filtered turns %v, want 3, 4, 7", got)
	}
	if code, _, stderr := runIn("turns", "--filter", "colour:red", demoDB); code != 2 || !strings.Contains(stderr, `unknown field "colour"`) {
		t.Errorf("bad filter: exit %d %q", code, stderr)
	}
}

func TestTurnsPricesLine(t *testing.T) {
	_, out, _ := runIn("turns", demoDB)
	out, _, _ = strings.Cut(out, "\n\n") // the threads table follows
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// Turn 7's break: 22,319 tokens at $3.75 − $0.30. Turn 4's blind call
	// ran all the same (its tool_result is no error): it wasted nothing.
	// Deferral: ≈11,700 tokens a request (Claude Code's own deferred tools
	// at their recorded sizes, the demo server's at echo's), at the
	// cache-write rate on the first request of each thread and on the
	// broken one, the read rate elsewhere.
	want := "US dollars at built-in prices taken 2026-11-26; of the total, cache breaks $0.0770 and blind calls $0; deferral saved ≈$0.1462"
	if last := lines[len(lines)-1]; last != want {
		t.Errorf("prices line %q, want %q", last, want)
	}
	_, out, _ = runIn("turns", "--flagged", demoDB)
	if strings.Contains(out, "cache breaks") {
		t.Error("the capture's figures under a filtered table")
	}
}

// TestSearchesAlgorithmFollowsTheClient: --explain scores with what the
// capture's Claude Code release runs unless told otherwise, accepts every
// Claude Code version, and refuses a bad --algorithm before printing
// anything.
func TestSearchesAlgorithmFollowsTheClient(t *testing.T) {
	_, out, _ := runIn("searches", "--explain", demoDB)
	if !strings.Contains(out, `Keyword scoring "2.1.328": the scoring Claude Code 2.1.328 runs, as measured.`) {
		t.Errorf("default scoring not the capture's release:\n%s", out)
	}
	for arg, want := range map[string]string{
		"2.1.331":   `Keyword scoring "2.1.328": the scoring Claude Code 2.1.331 runs, as measured.`,
		"published": `Keyword scoring "published": the published algorithm.`,
		"2.1.100":   `Keyword scoring "published": the published scoring: Claude Code 2.1.100 is older than any release measured`,
	} {
		if code, out, stderr := runIn("searches", "--explain", "--algorithm", arg, demoDB); code != 0 || !strings.Contains(out, want) {
			t.Errorf("--algorithm %s: exit %d %s\n%s", arg, code, stderr, out)
		}
	}
	code, out, stderr := runIn("searches", demoDB, "--algorithm", "nope")
	if code != 2 || out != "" || !strings.Contains(stderr, `--algorithm "nope"`) {
		t.Errorf("bad --algorithm: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// TestReportConversation: with --redact off the HTML and JSON reports hold
// each turn's conversation (the echo's input and result, readable); with
// the default redaction, and strict, neither holds a word of it.
func TestReportConversation(t *testing.T) {
	const said = "hello from the demo"
	for _, format := range []string{"html", "json"} {
		code, out, stderr := runIn("report", demoDB, "--format", format, "--redact", "off")
		if code != 0 || !strings.Contains(out, said) {
			t.Errorf("%s --redact off: exit %d %s; holds the conversation: %v", format, code, stderr, strings.Contains(out, said))
		}
		if format == "html" && (!strings.Contains(out, `← result of <code>mcp__demo__echo</code>`) || !strings.Contains(out, `<a href="#conv-4">4</a>`)) {
			t.Errorf("html: no readable conversation linked from the turn table")
		}
		for _, policy := range []string{"default", "strict"} {
			if _, out, _ := runIn("report", demoDB, "--format", format, "--redact", policy); strings.Contains(out, said) || strings.Contains(out, "conversation") && format == "json" {
				t.Errorf("%s --redact %s: the conversation is in the report", format, policy)
			}
		}
	}
}
