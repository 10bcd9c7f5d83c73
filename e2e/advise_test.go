package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/report"
	"github.com/tsinspect/tsinspect/toolsearch/claudetools"
)

// Claude Sonnet 4.5's list prices, in US dollars per million tokens: the
// rates the figures below are worked out with.
const (
	sonnetInput   = 3.0
	sonnetOutput  = 15.0
	sonnetWrite5m = 3.75
	sonnetRead    = 0.30
)

// patternsScript is one session of the setup whose patterns the advice
// must find: a keyword search that finds nothing ("parrot mirror": no
// word of echo's name or description), then the select: search that
// loads echo and its call; a call of action_3 whose schema was never
// loaded; echo again; and a last request that reads nothing from the
// cache (the stand-in drops its entries: a break on the API's side).
func patternsScript() fixtures.Script {
	return fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(
		fixtures.ToolSearch("parrot mirror", 5),
		fixtures.ToolSearch("select:"+echoTool, 5),
		fixtures.CallTool(echoTool, map[string]any{"text": "hello"}),
		fixtures.CallTool("mcp__demo__action_3", map[string]any{"target": "x"}),
		fixtures.CallTool(echoTool, map[string]any{"text": "again"}),
		fixtures.Text("Done.").WithEviction(),
	)}}
}

// offScript is one session with tool search off: echo is called at once
// (it is sent whole).
func offScript() fixtures.Script {
	return fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(
		fixtures.CallTool(echoTool, map[string]any{"text": "hello"}),
		fixtures.Text("Done."),
	)}}
}

// prefixRate is the rate a turn paid for the start of its prompt: the
// cache-read rate when it read the cache, else the write rate when it
// wrote it, else the input rate.
func prefixRate(u report.Usage) float64 {
	switch {
	case u.CacheReadInputTokens > 0:
		return sonnetRead
	case u.CacheCreationInputTokens > 0:
		return sonnetWrite5m
	}
	return sonnetInput
}

// promptUSD is what a turn's prompt cost: its cost less its output.
func promptUSD(tu *report.Turn) float64 { return tu.Cost.USD - tu.Cost.Output }

func prompt(u report.Usage) int64 {
	return u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
}

// demoTools are the tools of a demo MCP server named server (echo and
// action_0 to action_39): what the catalog announces of it.
func demoTools(server string) []string {
	out := []string{"mcp__" + server + "__echo"}
	for i := range 40 {
		out = append(out, fmt.Sprintf("mcp__%s__action_%d", server, i))
	}
	return out
}

// searchTurn finds the turn whose request carried the result of the
// search with query q.
func searchTurn(t *testing.T, r *report.Report, q string) *report.Turn {
	t.Helper()
	for i := range r.Turns {
		for _, s := range r.Turns[i].ToolSearches {
			if s.Query == q {
				return &r.Turns[i]
			}
		}
	}
	t.Fatalf("no search %q in the report", q)
	return nil
}

// tripUSD is what a search cost, by hand: the prompt of the request that
// carried its result (made for it alone: the turn before made only the
// search), and the search call, the whole output of the turn before.
func tripUSD(t *testing.T, r *report.Report, a *report.Turn) (float64, int64) {
	t.Helper()
	p := &r.Turns[a.Prev-1]
	if len(p.ToolCalls) != 1 || p.ToolCalls[0].Name != "ToolSearch" {
		t.Fatalf("turn %d made %+v, want one ToolSearch", p.Index, p.ToolCalls)
	}
	return promptUSD(a) + float64(p.Usage.OutputTokens)*sonnetOutput/1e6, prompt(a.Usage) + p.Usage.OutputTokens
}

func closeTo(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s: advice says %.6f, worked out by hand %.6f", what, got, want)
	}
}

func findAdvice(r *advice.Result, kind, subject string) *advice.Advice {
	for i := range r.Advice {
		if r.Advice[i].Kind == kind && r.Advice[i].Subject == subject {
			return &r.Advice[i]
		}
	}
	return nil
}

// evidenceOf lists an advice's sessions and turns: "ID:turn,turn".
func evidenceOf(a *advice.Advice) []string {
	var out []string
	for _, e := range a.Evidence {
		out = append(out, fmt.Sprintf("%s:%v", e.Session, e.Turns))
	}
	sort.Strings(out)
	return out
}

// runEnv runs the binary with extra environment.
func runEnv(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(kit.Tsinspect, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// adviseJSON runs advise --json over projects with args.
func adviseJSON(t *testing.T, projects string, args ...string) *advice.Result {
	t.Helper()
	code, out, stderr := runCLI(t, append([]string{"advise", projects, "--no-cache", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("advise %v: exit %d: %s", args, code, stderr)
	}
	var r advice.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("advise --json: %v\n%s", err, out)
	}
	return &r
}

// TestAdviseScenarios records, with real Claude Code, three sessions of
// one setup (two MCP servers, demo and idle, of 41 tools each; each
// session searches for echo with words that find nothing, loads it with
// select:, calls action_3 blind, and meets a cache break on the API's
// side), three with tool search off, and one more of the first setup in a
// project of its own, and checks the advice and every figure of it
// against the sessions' reports, worked out by hand: alone, that one
// session gives no advice.
//
// It runs with the pinned release and with the one $TSINSPECT_CLAUDE_NEWEST
// names (skipped without it, a failure under
// TSINSPECT_REQUIRE_CLAUDE_NEWEST=1).
func TestAdviseScenarios(t *testing.T) {
	eachRelease(t, "advise from its sessions too", adviseScenarios)
}

// clientRelease is the Claude Code release of a report's first turn that
// names one ("claude-cli/2.1.328 (external, sdk-cli)").
func clientRelease(r *report.Report) string {
	for _, tu := range r.Turns {
		if v, ok := strings.CutPrefix(tu.Client, "claude-cli/"); ok {
			v, _, _ = strings.Cut(v, " ")
			return v
		}
	}
	return ""
}

func adviseScenarios(t *testing.T, k *session.Kit) {
	base := t.TempDir()
	patterns, off, alone := filepath.Join(base, "patterns"), filepath.Join(base, "off"), filepath.Join(base, "alone")
	for _, d := range []string{patterns, off, alone} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	servers := []string{"demo", "idle"}
	var runs []run
	for range 3 {
		runs = append(runs, run{script: patternsScript(), opts: session.Options{Dir: patterns, Servers: servers}})
	}
	for range 3 {
		runs = append(runs, run{script: offScript(), opts: session.Options{Dir: off, Servers: servers, Env: []string{"ENABLE_TOOL_SEARCH=false"}}})
	}
	runs = append(runs, run{script: patternsScript(), opts: session.Options{Dir: alone, Servers: servers}})
	rec := recordRunsWith(t, k, runs...)
	projects := filepath.Join(rec.home, ".claude", "projects")

	// Each session's report, by project.
	reports := map[string]map[string]*report.Report{}
	for _, f := range sessionFiles(t, rec.home) {
		code, out, stderr := runCLI(t, "report", f, "--redact", "off")
		if code != 0 {
			t.Fatalf("report %s: exit %d: %s", f, code, stderr)
		}
		proj := filepath.Base(filepath.Dir(f))
		key := ""
		for _, k := range []string{"patterns", "off", "alone"} {
			if strings.HasSuffix(proj, "-"+k) {
				key = k
			}
		}
		if reports[key] == nil {
			reports[key] = map[string]*report.Report{}
		}
		reports[key][strings.TrimSuffix(filepath.Base(f), ".jsonl")] = parseReport(t, out)
	}
	if len(reports["patterns"]) != 3 || len(reports["off"]) != 3 || len(reports["alone"]) != 1 {
		t.Fatalf("sessions by project: %d patterns, %d off, %d alone", len(reports["patterns"]), len(reports["off"]), len(reports["alone"]))
	}

	var release string
	for _, rep := range reports["patterns"] {
		release = clientRelease(rep)
	}
	r := adviseJSON(t, projects, "--project", "patterns")
	if r.Sessions != 3 {
		t.Fatalf("advice read %d sessions, want 3", r.Sessions)
	}

	// By hand, over the three sessions' reports.
	var loadTrip, carry, idleUSD, missUSD, blindUSD, breakUSD float64
	var loadTokens, carryTokens, idleTokens, missTokens, breakTokens int64
	var wantLoad, wantMiss, wantBlind, wantBreak []string
	echoSize := int64(0)
	for id, rep := range reports["patterns"] {
		for _, tu := range rep.Turns {
			if tu.Model != "" && tu.Model != "claude-sonnet-4-5" {
				t.Fatalf("turn %d on %s: the figures are worked out at Sonnet 4.5's prices", tu.Index, tu.Model)
			}
			for _, d := range tu.ToolDefinitions {
				if d.Name == echoTool {
					echoSize = d.Tokens
				}
			}
		}
		// The select: search loaded echo before its first call.
		a := searchTurn(t, rep, "select:"+echoTool)
		usd, tok := tripUSD(t, rep, a)
		loadTrip += usd
		loadTokens += tok
		wantLoad = append(wantLoad, fmt.Sprintf("%s:[%d]", id, a.Index))
		// The search that found nothing.
		e := searchTurn(t, rep, "parrot mirror")
		usd, tok = tripUSD(t, rep, e)
		missUSD += usd
		missTokens += tok
		wantMiss = append(wantMiss, fmt.Sprintf("%s:[%d]", id, e.Index))
		var blindTurns, breakTurns []int
		for i := range rep.Turns {
			tu := &rep.Turns[i]
			if prompt(tu.Usage) == 0 {
				continue
			}
			// Every turn with a catalog announces all 82 MCP tools and
			// Claude Code's 15 own deferred tools; none is removed.
			if tu.Catalog.Count == 0 {
				continue
			}
			if tu.Catalog.Count != 97 {
				t.Fatalf("%s turn %d: catalog of %d tools, want the 82 MCP tools and Claude Code's 15", id, tu.Index, tu.Catalog.Count)
			}
			rate := prefixRate(tu.Usage)
			if !slices.Contains(tu.WorkingSet.Names, echoTool) {
				carry += rate // × echo's size, below
				carryTokens++
			}
			for _, n := range demoTools("idle") {
				line := int64(float64(len(n)+1) / 2.5)
				idleUSD += float64(line) * rate / 1e6
				idleTokens += line
			}
			for _, f := range tu.Flags {
				switch f.Kind {
				case "call_before_load":
					blindUSD += *f.CostUSD
					blindTurns = append(blindTurns, tu.Index)
					if f.Tool != "mcp__demo__action_3" {
						t.Errorf("blind call of %s", f.Tool)
					}
				case "cache_break":
					breakUSD += *f.CostUSD
					breakTokens += f.TokensLost
					breakTurns = append(breakTurns, tu.Index)
				}
			}
		}
		wantBlind = append(wantBlind, fmt.Sprintf("%s:%v", id, blindTurns))
		wantBreak = append(wantBreak, fmt.Sprintf("%s:%v", id, breakTurns))
	}
	sort.Strings(wantLoad)
	sort.Strings(wantMiss)
	sort.Strings(wantBlind)
	sort.Strings(wantBreak)
	if echoSize == 0 {
		t.Fatal("no request sent echo's schema")
	}
	carryUSD := float64(echoSize) * carry / 1e6
	// One output token's worth of rounding in each search call's estimate.
	const tol = 3 * sonnetOutput / 1e6

	a := findAdvice(r, advice.KindLoadUpFront, echoTool)
	if a == nil {
		t.Fatalf("no advice to load echo up front: %+v", r.Advice)
	}
	closeTo(t, "load echo up front", a.SavesUSD, loadTrip-carryUSD, tol)
	if d := a.Tokens - (loadTokens - echoSize*carryTokens); d < -3 || d > 3 {
		t.Errorf("load echo up front: %d tokens, by hand %d", a.Tokens, loadTokens-echoSize*carryTokens)
	}
	if got := evidenceOf(a); !slices.Equal(got, wantLoad) || a.Sessions != 3 || a.Of != 3 {
		t.Errorf("load echo up front rests on %v (%d of %d sessions), want %v", got, a.Sessions, a.Of, wantLoad)
	}

	a = findAdvice(r, advice.KindNeverUsed, "mcp__idle")
	if a == nil || !strings.Contains(a.Title, "Drop the idle MCP server") {
		t.Fatalf("no advice to drop the idle server: %+v", r.Advice)
	}
	closeTo(t, "drop idle", a.SavesUSD, idleUSD, 1e-9)
	if a.Tokens != idleTokens || a.Sessions != 3 {
		t.Errorf("drop idle: %d tokens over %d sessions, by hand %d over 3", a.Tokens, a.Sessions, idleTokens)
	}
	if a = findAdvice(r, advice.KindNeverUsed, "mcp__demo (39 of 41 tools)"); a == nil {
		t.Errorf("no advice on the demo tools never called (all but echo and action_3): %+v", r.Advice)
	}

	a = findAdvice(r, advice.KindSearchMisses, echoTool)
	if a == nil {
		t.Fatalf("no advice on the searches that missed echo: %+v", r.Advice)
	}
	closeTo(t, "searches that missed echo", a.CostUSD, missUSD, tol)
	if d := a.Tokens - missTokens; d < -3 || d > 3 {
		t.Errorf("searches that missed echo: %d tokens, by hand %d", a.Tokens, missTokens)
	}
	if !strings.Contains(a.Title, `"parrot"`) || !strings.Contains(a.Title, `"mirror"`) || !strings.Contains(strings.Join(a.Figures, "\n"), "3 of the 3 keyword queries would have returned it") {
		t.Errorf("searches that missed echo: %q, %q", a.Title, a.Figures)
	}
	if got := evidenceOf(a); !slices.Equal(got, wantMiss) {
		t.Errorf("searches that missed echo rest on %v, want %v", got, wantMiss)
	}

	a = findAdvice(r, advice.KindBlindCalls, "mcp__demo__action_3")
	if a == nil {
		t.Fatalf("no blind-call advice: %+v", r.Advice)
	}
	closeTo(t, "blind calls", a.CostUSD, blindUSD, 1e-9)
	if got := evidenceOf(a); release == "" || !slices.Equal(got, wantBlind) || !strings.Contains(a.Why, "by release: "+release+": 3") {
		t.Errorf("blind calls rest on %v (%q), want %v on %s", got, a.Why, wantBlind, release)
	}

	a = findAdvice(r, advice.KindCacheBreaks, "unexplained")
	if a == nil {
		t.Fatalf("no advice on the breaks on the API's side: %+v", r.Advice)
	}
	closeTo(t, "cache breaks", a.CostUSD, breakUSD, 1e-9)
	if got := evidenceOf(a); a.Tokens != breakTokens || !slices.Equal(got, wantBreak) {
		t.Errorf("cache breaks: %d tokens on %v, by hand %d on %v", a.Tokens, got, breakTokens, wantBreak)
	}

	// Deferring the 82 MCP tools and Claude Code's own paid in these
	// sessions: no advice to turn tool search off.
	for _, a := range r.Advice {
		if a.Kind == advice.KindToolSearch {
			t.Errorf("tool search advice over sessions where it paid: %+v", a)
		}
	}

	// Over the sessions with tool search off, and those with it on (which
	// give the search tool's size): turn it on. Deferring would have kept
	// the schemas not yet called (the MCP tools', Claude Code's own
	// deferrable ones') out of each request, less their catalog lines and
	// the search tool, and added a search before the call of echo: a
	// request like the one that called it, read from the cache.
	searchTool := int64(0)
	for _, rep := range reports["patterns"] {
		for _, tu := range rep.Turns {
			searchTool = max(searchTool, tu.ToolTokens.SearchTool)
		}
	}
	// The tools this Claude Code release defers besides the MCP tools.
	own := map[string]bool{}
	rel, _ := claudetools.For(release)
	for _, tl := range rel.Tools {
		own[tl.Name] = true
	}
	var wantOn float64
	for _, rep := range reports["off"] {
		called := false
		for i := range rep.Turns {
			tu := &rep.Turns[i]
			if tu.Thread != "main" || prompt(tu.Usage) == 0 {
				continue
			}
			rate := prefixRate(tu.Usage)
			var kept int64
			for _, d := range tu.ToolDefinitions {
				if !strings.HasPrefix(d.Name, "mcp__") && !own[d.Name] || d.Name == echoTool && called {
					continue
				}
				kept += d.Tokens - int64(float64(len(d.Name)+1)/tu.ToolTokens.BytesPerToken)
			}
			wantOn += float64(kept-searchTool) * rate / 1e6
			for _, c := range tu.ToolCalls {
				if c.Name == echoTool && !called {
					called = true
					wantOn -= float64(prompt(tu.Usage)) * sonnetRead / 1e6
				}
			}
		}
	}
	all := adviseJSON(t, projects)
	var on *advice.Advice
	for i := range all.Advice {
		if all.Advice[i].Kind == advice.KindToolSearch {
			on = &all.Advice[i]
		}
	}
	if wantOn <= 0 {
		t.Fatalf("by hand, deferring would not have paid in the sessions with tool search off ($%f): the scenario no longer shows it", wantOn)
	}
	if on == nil || on.Subject != "ENABLE_TOOL_SEARCH=true" || on.Sessions != 3 || on.Of != 7 {
		t.Fatalf("want ENABLE_TOOL_SEARCH=true from the 3 sessions with it off (of 7): %+v", all.Advice)
	}
	// Token estimates of the catalog lines round per request.
	closeTo(t, "tool search on", on.SavesUSD, wantOn, 0.02*wantOn)

	// One session alone: no advice, and what it would have been is said.
	code, out, stderr := runCLI(t, "advise", projects, "--no-cache", "--project", "alone")
	if code != 0 || !strings.Contains(out, "Advice from 1 session,") || !strings.Contains(out, "No advice: no pattern shows in 3 sessions or more.") ||
		!strings.Contains(out, "rests on 1 session, fewer than 3") || strings.Contains(out, "Evidence:") {
		t.Errorf("one session alone: exit %d\n%s\n%s", code, out, stderr)
	}

	// The text names each session as 'tsinspect open' takes it, and a
	// second reading takes every session from the cache, written in the
	// user's cache directory and nowhere in Claude Code's.
	cache := filepath.Join(base, "cache")
	env := []string{"XDG_CACHE_HOME=" + cache, "CLAUDE_CONFIG_DIR=" + filepath.Join(rec.home, ".claude")}
	before := listTree(t, projects)
	code, first, stderr := runEnv(t, env, "advise", "--project", "patterns")
	if code != 0 || !strings.Contains(stderr, "read 3 sessions") {
		t.Fatalf("advise: exit %d: %s", code, stderr)
	}
	code, second, stderr2 := runEnv(t, env, "advise", "--project", "patterns")
	if code != 0 || first != second || !strings.Contains(stderr2, "read 0 sessions (0 B)") || !strings.Contains(stderr2, "; 3 from the cache") {
		t.Errorf("second reading: exit %d, %s; the same text: %v", code, stderr2, first == second)
	}
	if after := listTree(t, projects); after != before {
		t.Errorf("advise wrote in Claude Code's directory:\n%s\nwas\n%s", after, before)
	}
	if _, err := os.Stat(filepath.Join(cache, "tsinspect", "advice-facts.gob")); err != nil {
		t.Errorf("no cache in the user's cache directory: %v", err)
	}
	for _, line := range strings.Split(first, "\n") {
		_, ref, ok := strings.Cut(line, "Evidence: tsinspect open ")
		if !ok {
			continue
		}
		id, _, _ := strings.Cut(ref, " ")
		id = strings.TrimSuffix(id, ":")
		if code, _, stderr := runEnv(t, env, "turns", id); code != 0 {
			t.Errorf("the evidence's session %q does not open: %s", id, stderr)
		}
	}
	t.Logf("advise --project patterns:\n%s", first)

	// The report of the directory is the same advice, redacted: no
	// session's ID, no project, no path.
	code, md, stderr := runCLI(t, "report", projects, "--format", "markdown")
	if code != 0 || !strings.Contains(md, "## Advice") || !strings.Contains(md, `Load mcp\_\_demo\_\_echo up front`) || !strings.Contains(md, "[session-1]") {
		t.Fatalf("report of the directory: exit %d: %s\n%s", code, stderr, md)
	}
	for _, rs := range reports {
		for id := range rs {
			if strings.Contains(md, id[:8]) {
				t.Errorf("the redacted report names session %s", id)
			}
		}
	}
	if strings.Contains(md, filepath.Base(base)) || strings.Contains(md, "patterns") || strings.Contains(md, base) {
		t.Errorf("the redacted report names a project or path:\n%s", md)
	}
}

// listTree lists the files under dir with their sizes and times.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", p, info.Size(), info.ModTime().UnixNano())
		}
		return nil
	})
	return b.String()
}
