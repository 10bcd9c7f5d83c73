package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/democapture"
	"github.com/tsinspect/tsinspect/fixtures/session"
)

// TestSearchesCommand lists the bundled real session's searches and what
// happened to the demo MCP server's tools, as an MCP server author would.
func TestSearchesCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "demo.db")
	if err := os.WriteFile(db, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "searches", db, "--tools", "mcp__demo__echo,mcp__demo__action_7")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		`^TURN +THREAD +SEARCH +MODE +QUERY +RESULT$`,
		`^2 +main +ToolSearch +select +select:mcp__demo__echo +loaded mcp__demo__echo \(called #3\)$`,
		`^3 +main +ToolSearch +keyword +weather forecast +no match$`,
		`^2 searches, 1 of them loaded nothing$`,
		`^$`,
		`^TOOL +DEFERRED +TURNS +FOUND BY +LOADED +CALLS +BLIND$`,
		`^mcp__demo__action_7 +yes +7 +- +- +1 +1$`,
		`^mcp__demo__echo +yes +7 +#2 select:mcp__demo__echo +#2 +1 +0$`,
		`^2 tools: 1 found by a search, 1 loaded, 2 called, 1 called blind; 0 never found nor called$`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		assertMatch(t, lines[i], w)
	}

	// One thread: the subagent searched nothing; a glob picks tools.
	code, out, _ = runCLI(t, "searches", "--thread", "sub1", db, "--tools", "mcp__demo__action_?")
	if code != 0 || !strings.Contains(out, "0 searches, 0 of them loaded nothing") || !strings.Contains(out, "10 tools: 0 found by a search") {
		t.Errorf("sub1: exit %d\n%s", code, out)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"searches", db, "--thread", "sub9"}, 2, `--thread "sub9": the capture's threads are main, sub1`},
		{[]string{"searches", db, "--tools", "mcp__[demo"}, 2, `--tools "mcp__[demo": syntax error in pattern`},
		{[]string{"searches"}, 2, "want one capture FILE"},
		{[]string{"searches", filepath.Join(dir, "none.db")}, 1, "does not exist"},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		assertRefused(t, code, stdout, stderr, c.code, c.want)
	}
	code, _, stderr = runCLI(t, "searches", db, "--tools", "mcp__nothing__")
	if code != 0 || !strings.Contains(stderr, "no tool in "+db+" matches --tools mcp__nothing__") {
		t.Errorf("no match: exit %d, stderr %q", code, stderr)
	}

	// --require, for an MCP server's CI job: exit 3 naming the tools.
	for _, c := range []struct {
		tools, require string
		code           int
		stderr         string
	}{
		{"mcp__demo__echo", "found", 0, ""},
		{"mcp__demo__echo", "called", 0, ""},
		{"mcp__demo__echo,mcp__demo__action_7", "found", 3, "tsinspect: --require found: 1 of 2 tools never found by a search: mcp__demo__action_7\n"},
		{"mcp__demo__action_7", "called", 3, "tsinspect: --require called: 1 of 1 tool never called with its schema loaded: mcp__demo__action_7\n"},
		{"mcp__nothing__", "found", 3, "tsinspect: no tool in " + db + " matches --tools mcp__nothing__\ntsinspect: --require found: no tool matches --tools mcp__nothing__\n"},
	} {
		code, _, stderr := runCLI(t, "searches", db, "--tools", c.tools, "--require", c.require)
		if code != c.code || stderr != c.stderr {
			t.Errorf("--tools %s --require %s: exit %d, stderr %q; want %d, %q", c.tools, c.require, code, stderr, c.code, c.stderr)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"searches", db, "--require", "found"}, "--require needs --tools"},
		{[]string{"searches", db, "--tools", "x", "--require", "used"}, `--require "used": want found or called`},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		assertRefused(t, code, stdout, stderr, 2, c.want)
	}
}

// assertMatch checks line against the regular expression re.
func assertMatch(t *testing.T, line, re string) {
	t.Helper()
	if !regexp.MustCompile(re).MatchString(line) {
		t.Errorf("line %q does not match %s", line, re)
	}
}

// TestTurnsFilters: turns --flagged and --thread keep the turns asked for
// on the bundled real session, and total what they show.
func TestTurnsFilters(t *testing.T) {
	db := filepath.Join(t.TempDir(), "demo.db")
	if err := os.WriteFile(db, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	// The turn numbers, then "total"; the last line names the prices.
	turnsOf := func(out string) []string {
		var idx []string
		out, _, _ = strings.Cut(out, "\n\n") // the threads table follows
		lines := strings.Split(strings.TrimSpace(out), "\n")
		for _, l := range lines[1 : len(lines)-1] {
			idx = append(idx, strings.Fields(l)[0])
		}
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, "US dollars at ") {
			idx = append(idx, "no prices line")
		}
		return idx
	}
	code, out, stderr := runCLI(t, "turns", db, "--flagged")
	if got := strings.Join(turnsOf(out), " "); code != 0 || got != "3 4 7 total" {
		t.Errorf("--flagged: exit %d, turns %q\n%s%s", code, got, out, stderr)
	}
	code, out, _ = runCLI(t, "turns", "--thread", "sub1", db)
	if got := strings.Join(turnsOf(out), " "); code != 0 || got != "6 total" {
		t.Errorf("--thread sub1: exit %d, turns %q\n%s", code, got, out)
	}
	// 12,347 written at $3.75 and 24 out at $15 per million: $0.0467.
	assertMatch(t, strings.Split(strings.TrimSpace(out), "\n")[2], `^ +total +0 +0 +12,347 +24 +\$0\.0467$`)
	code, out, stderr = runCLI(t, "turns", db, "--thread", "sub1", "--flagged")
	if code != 0 || strings.Count(out, "\n") != 1 || stderr != "tsinspect: none of the 7 turns of "+db+" is shown\n" {
		t.Errorf("nothing shown: exit %d\n%s%q", code, out, stderr)
	}
	code, stdout, stderr := runCLI(t, "turns", db, "--thread", "sub9")
	assertRefused(t, code, stdout, stderr, 2, `turns: --thread "sub9": the capture's threads are main, sub1`)
}

// TestSearchCountedOnce records real Claude Code against the stand-in's
// "flaky" scenario: the request carrying the ToolSearch result has its
// stream cut, and Claude Code sends it again, the same tool_result in it.
// The search is one search in every view that lists or counts searches.
func TestSearchCountedOnce(t *testing.T) {
	kit.RequireClaude(t)
	script, _ := fixtures.Scenario("flaky")
	_, url := session.StandIn(t, script, fixtures.Options{})
	res := kit.Record(t, url, session.Options{Prompt: "Use the demo echo tool."})
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Output)
	}
	code, out, stderr := runCLI(t, "searches", res.DB, "--json", "--tools", "mcp__demo__echo")
	if code != 0 {
		t.Fatalf("searches: exit %d: %s", code, stderr)
	}
	var searches int
	var foundBy []any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		switch o["kind"] {
		case "search":
			searches++
		case "tool":
			foundBy, _ = o["found_by"].([]any)
		}
	}
	if searches != 1 || len(foundBy) != 1 {
		t.Errorf("searches --json: %d searches, found_by %v; want 1 and one turn\n%s", searches, foundBy, out)
	}
	_, r, _ := runCLI(t, "report", res.DB)
	rep := parseReport(t, r)
	listed := 0
	for _, tu := range rep.Turns {
		listed += len(tu.ToolSearches)
	}
	if listed != 1 || rep.TokenSummary.Threads[0].Searches != 1 {
		t.Errorf("report: %d searches listed, token summary counts %d", listed, rep.TokenSummary.Threads[0].Searches)
	}
	_, st, _ := runCLI(t, "stats", "--json", res.DB)
	var tab struct {
		Servers []struct {
			Tools []struct {
				Name  string `json:"name"`
				Found int    `json:"found"`
			} `json:"tools"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(st), &tab); err != nil {
		t.Fatalf("stats --json: %v", err)
	}
	found := -1
	for _, srv := range tab.Servers {
		for _, tool := range srv.Tools {
			if tool.Name == "mcp__demo__echo" {
				found = tool.Found
			}
		}
	}
	if found != 1 {
		t.Errorf("stats: echo found by %d searches, want 1", found)
	}
}
