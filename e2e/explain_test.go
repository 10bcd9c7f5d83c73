package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/democapture"
	"github.com/tsinspect/tsinspect/fixtures/session"
)

// explainQueries are the ToolSearch calls the stand-in scripts: every
// form of query, ties cut by max_results, description-only matches.
var explainQueries = []struct {
	query string
	max   int
}{
	{"echo text back", 5},
	{"demo action", 3},
	{"action 7", 5},
	{"+echo text", 5},
	{"ECHO Text", 5},
	{"target", 5},
	{"mcp__demo__act", 5},
	{"mcp__demo__action_1", 5},
	{"mcp__demo__echo", 5},
	{"weather forecast", 5},
	{"select:mcp__demo__echo,mcp__demo__nope", 5},
	{"number named", 4},
	{"select:Bash", 5},
	{"mcp__demo", 2},
	{"send message", 5},
	{"notebook cell", 5},
	// Claude Code's own tools carry search hints that are not on the wire
	// ("cancel a scheduled cron job", "list active cron jobs"): these
	// three come back in another order than simulated, and say why.
	{"cron", 3},
	{"+cron delete", 5},
	{"web", 5},
}

// hinted counts the queries at the end of explainQueries whose order
// the built-in tools' search hints decide.
const hinted = 3

// TestExplainAgreesWithClaudeCode has real Claude Code run ToolSearch
// (client-side: Claude Code computes the result) for each query, then
// re-runs every recorded search offline with the demo server's own
// descriptions and checks that the simulation returns exactly what Claude
// Code returned.
func TestExplainAgreesWithClaudeCode(t *testing.T) {
	kit.RequireClaude(t)
	var steps []fixtures.Reply
	for _, q := range explainQueries {
		steps = append(steps, fixtures.ToolSearch(q.query, q.max))
	}
	steps = append(steps, fixtures.Text("done"))
	sc := fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(steps...)}}
	_, url := session.StandIn(t, sc, fixtures.Options{})
	res := kit.Record(t, url, session.Options{})
	if res.Err != nil {
		t.Fatalf("record: %v\n%s", res.Err, res.Output)
	}
	code, out, stderr := runCLI(t, "searches", res.DB, "--explain", "--mcp-config", filepath.Join(res.Dir, "mcp.json"))
	if code != 0 {
		t.Fatalf("searches --explain: exit %d: %s", code, stderr)
	}
	summary := fmt.Sprintf("%d searches re-run offline: %d agree with the recording, %d differ", len(explainQueries), len(explainQueries)-hinted, hinted)
	if !strings.Contains(out, summary) {
		t.Errorf("want %q", summary)
	}
	if n := strings.Count(out, "DIFFERS: same tools in another order"); n != hinted {
		t.Errorf("%d searches differ in order only, want %d", n, hinted)
	}
	if n := strings.Count(out, "possible cause: Claude Code's own tools (Cron"); n != 2 {
		t.Errorf("%d cron searches blame the built-in search hints, want 2", n)
	}
	if !strings.Contains(out, "possible cause: Claude Code's own tools (WebSearch, WebFetch) carry search hints") {
		t.Errorf("the web search does not blame the built-in search hints")
	}
	for _, q := range explainQueries {
		if !strings.Contains(out, "ToolSearch "+quoteGo(q.query)) {
			t.Errorf("search %q not explained", q.query)
		}
	}
	// The mode each took, as the simulation saw it.
	for _, w := range []string{`exact query "mcp__demo__echo"`, `prefix query "mcp__demo__act", max_results 5`, `exact query "mcp__demo__action_1"`, `required query "+echo text"`, `select query "select:mcp__demo__echo,mcp__demo__nope"`} {
		if !strings.Contains(out, w) {
			t.Errorf("output does not say %s", w)
		}
	}
	if t.Failed() {
		t.Logf("explain:\n%s", out)
	}
	// What Claude Code 2.1.328 runs (names also scored whole) agrees just
	// as well: the extra points shift tied tools alike.
	code, out, stderr = runCLI(t, "searches", res.DB, "--explain", "--algorithm", "2.1.328", "--mcp-config", filepath.Join(res.Dir, "mcp.json"))
	if code != 0 || !strings.Contains(out, summary) || !strings.Contains(out, `"echo" = whole name +12`) {
		t.Errorf("--algorithm 2.1.328: exit %d %s, want %q and whole-name points\n%s", code, stderr, summary, out)
	}
}

// TestExplainBundledCapture re-runs the searches of the bundled real
// session, without the MCP servers: both agree with the recording.
func TestExplainBundledCapture(t *testing.T) {
	db := filepath.Join(t.TempDir(), "demo.db")
	if err := os.WriteFile(db, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "searches", db, "--explain")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{
		"turn 3 (main): ToolSearch \"weather forecast\" (client, 56 deferred tools in the pool)",
		"No tool scored: the search returns nothing",
		"2 searches re-run offline: 2 agree with the recording, 0 differ",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output does not say %q:\n%s", w, out)
		}
	}
	code, _, stderr = runCLI(t, "searches", db, "--mcp-config", "x.json")
	assertRefused(t, code, "", stderr, 2, "--mcp-config goes with --explain")
}

func quoteGo(s string) string { return strings.ReplaceAll(`"`+s+`"`, "\\", "\\\\") }
