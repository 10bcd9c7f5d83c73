package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/timeline/compare"
)

// diffRecord records one run of script with k's Claude Code. Runs of one
// comparison share their working directory and home: Claude Code puts
// both in its system prompt, and a session run elsewhere, or by another
// user, is not the same scenario.
func diffRecord(t *testing.T, k *session.Kit, sc fixtures.Script, dir, name string) string {
	t.Helper()
	return diffRecordMode(t, k, sc, dir, name, "mitm")
}

func diffRecordMode(t *testing.T, k *session.Kit, sc fixtures.Script, dir, name, mode string) string {
	t.Helper()
	_, upstream := session.StandIn(t, sc, fixtures.Options{})
	res := k.Record(t, upstream, session.Options{Mode: mode, Dir: dir, DB: filepath.Join(t.TempDir(), name+".db"),
		Home: filepath.Join(dir, "home")})
	if res.Err != nil {
		t.Fatalf("record %s: %v\n%s", name, res.Err, res.Output)
	}
	return res.DB
}

// runDiff runs tsinspect diff and returns its output and exit status.
func runDiff(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(kit.Tsinspect, append([]string{"diff"}, args...)...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if stderr.Len() > 0 {
		t.Logf("stderr: %s", stderr.String())
	}
	return out.String(), code
}

// diffJSON runs tsinspect diff --json.
func diffJSON(t *testing.T, a, b string, args ...string) compare.Diff {
	t.Helper()
	out, _ := runDiff(t, append([]string{"--json", a, b}, args...)...)
	var d compare.Diff
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("diff --json: %v\n%s", err, out)
	}
	return d
}

// rowsOf lists the non-identical rows of the comparison.
func rowsOf(d compare.Diff) []compare.Row {
	var out []compare.Row
	for _, th := range d.Threads {
		for _, r := range th.Rows {
			if r.Op != compare.OpSame {
				out = append(out, r)
			}
		}
	}
	return out
}

func echoScript(steps ...fixtures.Reply) fixtures.Script {
	return fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(steps...)}}
}

const diffEcho = "mcp__demo__echo"

// TestDiffSameScenarioTwice: one scenario recorded twice compares as the
// same, exit status 0.
func TestDiffSameScenarioTwice(t *testing.T) {
	kit.RequireClaude(t)
	t.Parallel()
	sc, _ := fixtures.Scenario("toolsearch")
	dir := t.TempDir()
	a := diffRecord(t, kit, sc, dir, "a")
	b := diffRecord(t, kit, sc, dir, "b")
	out, code := runDiff(t, a, b)
	t.Logf("tsinspect diff a.db b.db (exit %d):\n%s", code, out)
	if code != 0 || !strings.Contains(out, "The sessions are the same") {
		t.Fatalf("exit %d, want 0", code)
	}
}

// TestDiffOneSearch: two scenarios that differ in one search show exactly
// that search (and what follows from it: its result, the tokens it took).
func TestDiffOneSearch(t *testing.T) {
	kit.RequireClaude(t)
	t.Parallel()
	dir := t.TempDir()
	a := diffRecord(t, kit, echoScript(
		fixtures.ToolSearch("select:"+diffEcho, 5),
		fixtures.CallTool(diffEcho, map[string]any{"text": "hello"}),
		fixtures.Text("The echo tool answered: hello"),
	), dir, "a")
	b := diffRecord(t, kit, echoScript(
		fixtures.ToolSearch("echo text back", 5),
		fixtures.CallTool(diffEcho, map[string]any{"text": "hello"}),
		fixtures.Text("The echo tool answered: hello"),
	), dir, "b")
	out, code := runDiff(t, a, b, "--tools", "mcp__demo__echo")
	t.Logf("tsinspect diff --tools mcp__demo__echo a.db b.db (exit %d):\n%s", code, out)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	d := diffJSON(t, a, b)
	if len(d.Shape) != 0 {
		t.Errorf("request shape differs: %+v", d.Shape)
	}
	var searches []compare.Field
	for _, r := range rowsOf(d) {
		if r.Op != compare.OpChanged {
			t.Errorf("row %+v: want only changed rows", r)
		}
		for _, f := range r.Fields {
			if f.Name == "searches" || f.Name == "calls" {
				searches = append(searches, f)
			}
		}
	}
	if len(searches) != 2 {
		t.Fatalf("want the search on two turns (the call and the result), got %+v", searches)
	}
	if !strings.Contains(searches[0].A+searches[1].A, "select:mcp__demo__echo") || !strings.Contains(searches[0].B+searches[1].B, "echo text back") {
		t.Errorf("the search that differs is not shown: %+v", searches)
	}
}

// TestDiffExtraTurn: a session with one extra turn in the middle aligns
// around it: the turn shows as inserted, the turns before and after as
// paired.
func TestDiffExtraTurn(t *testing.T) {
	kit.RequireClaude(t)
	t.Parallel()
	dir := t.TempDir()
	sc, _ := fixtures.Scenario("toolsearch")
	a := diffRecord(t, kit, sc, dir, "a")
	b := diffRecord(t, kit, echoScript(
		fixtures.ToolSearch("select:"+diffEcho, 5),
		fixtures.ToolSearch("weather forecast", 5),
		fixtures.CallTool(diffEcho, map[string]any{"text": "hello"}),
		fixtures.Text("The echo tool answered: hello"),
	), dir, "b")
	out, code := runDiff(t, a, b)
	t.Logf("tsinspect diff a.db b.db (exit %d):\n%s", code, out)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	d := diffJSON(t, a, b)
	var inserted, deleted int
	for _, th := range d.Threads {
		if th.Kind != "main" {
			continue
		}
		for _, r := range th.Rows {
			switch r.Op {
			case compare.OpInserted:
				inserted++
				if !strings.Contains(r.What, "weather forecast") {
					t.Errorf("inserted turn %+v is not the extra search", r)
				}
			case compare.OpDeleted:
				deleted++
			}
		}
		if first := th.Rows[0]; first.Op != compare.OpSame || first.AFirst != 1 || first.BFirst != 1 {
			t.Errorf("first row %+v: want turn 1 the same", first)
		}
		if last := th.Rows[len(th.Rows)-1]; last.Op == compare.OpInserted || last.Op == compare.OpDeleted {
			t.Errorf("last row %+v: want the last turns paired", last)
		}
	}
	if inserted != 1 || deleted != 0 {
		t.Errorf("%d inserted and %d deleted main turns, want 1 and 0", inserted, deleted)
	}
}

// TestDiffReleases: the pinned Claude Code against the newest release, the
// same scenario: the client version and what really changed in the
// request, nothing else.
func TestDiffReleases(t *testing.T) {
	kit.RequireClaude(t)
	p := os.Getenv("TSINSPECT_CLAUDE_NEWEST")
	if p == "" {
		if os.Getenv("TSINSPECT_REQUIRE_CLAUDE_NEWEST") == "1" {
			t.Fatal("TSINSPECT_CLAUDE_NEWEST is not set: install the newest @anthropic-ai/claude-code and point it at its claude")
		}
		skipFor(t, "the newest Claude Code", installNewest, "set TSINSPECT_CLAUDE_NEWEST to the newest Claude Code's claude to compare with it")
	}
	t.Parallel()
	newest := *kit
	newest.Claude = p
	dir := t.TempDir()
	sc, _ := fixtures.Scenario("toolsearch")
	a := diffRecord(t, kit, sc, dir, "pinned")
	b := diffRecord(t, &newest, sc, dir, "newest")
	out, code := runDiff(t, a, b)
	t.Logf("tsinspect diff pinned.db newest.db (exit %d):\n%s", code, out)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	d := diffJSON(t, a, b)
	client := false
	for _, c := range d.Shape {
		if c.Area == compare.AreaClient {
			client = strings.Contains(c.A, session.ClaudeVersion) && !strings.Contains(c.B, session.ClaudeVersion)
		}
	}
	if !client {
		t.Errorf("the client version change is not shown: %+v", d.Shape)
	}
	for _, f := range d.Summary {
		if f.Differs && f.Name != "clients" && !tokenFigure(f.Name) {
			t.Errorf("summary figure %q differs: %v → %v", f.Name, f.A, f.B)
		}
	}
	for _, r := range rowsOf(d) {
		if r.Op != compare.OpChanged {
			t.Errorf("row %+v: the same scenario aligns turn for turn", r)
		}
		for _, f := range r.Fields {
			if !tokenFigure(f.Name) {
				t.Errorf("turn %d: %s differs (%s → %s)", r.AFirst, f.Name, f.A, f.B)
			}
		}
	}
}

// tokenFigure reports whether a figure follows from the request's size:
// a request that changed takes other tokens, and costs otherwise.
func tokenFigure(name string) bool {
	switch strings.TrimSpace(name) {
	case "input tokens", "cache read", "cache write", "cost", "of it cache breaks", "of it blind calls":
		return true
	}
	return false
}

// TestDiffModes: the same scenario recorded through the forward proxy and
// behind ANTHROPIC_BASE_URL shows what the mode changes in the request
// (docs/recording.md, "What each mode changes"): fewer betas, no
// diagnostics, no scope "global" system block.
func TestDiffModes(t *testing.T) {
	kit.RequireClaude(t)
	t.Parallel()
	dir := t.TempDir()
	sc, _ := fixtures.Scenario("toolsearch")
	a := diffRecordMode(t, kit, sc, dir, "mitm", "mitm")
	b := diffRecordMode(t, kit, sc, dir, "reverse", "reverse")
	out, code := runDiff(t, a, b)
	t.Logf("tsinspect diff mitm.db reverse.db (exit %d):\n%s", code, out)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	d := diffJSON(t, a, b)
	got := map[string]bool{}
	for _, c := range d.Shape {
		got[c.Area+" "+c.Op+" "+c.Item] = true
		if c.Op == "added" && c.Area != compare.AreaSystem {
			t.Errorf("%s %s added behind the base URL", c.Area, c.Item)
		}
	}
	for _, want := range []string{"betas removed cache-diagnosis-2026-04-07", "params removed diagnostics"} {
		if !got[want] {
			t.Errorf("shape lacks %q: %+v", want, d.Shape)
		}
	}
	system := false
	for _, c := range d.Shape {
		system = system || c.Area == compare.AreaSystem
	}
	if !system {
		t.Errorf("no system block change: %+v", d.Shape)
	}
}
