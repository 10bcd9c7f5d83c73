package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/internal/golden"
	"github.com/tsinspect/tsinspect/report"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline"
)

const echoTool = "mcp__demo__echo"

// A recording is one scenario recorded through the binary: the capture
// file and claude's output of each run.
type recording struct {
	db      string
	home    string // HOME of the runs: Claude Code's session files are under .claude/projects
	outputs []string
}

// A run is one claude invocation of a scenario, each with its own
// stand-in (attempts are counted per server).
type run struct {
	script fixtures.Script
	opts   session.Options
}

// recordRuns records the runs one after the other into one capture file,
// sharing HOME so that later runs can --resume earlier ones.
func recordRuns(t *testing.T, runs ...run) recording {
	t.Helper()
	return recordRunsWith(t, kit, runs...)
}

// recordRunsWith is recordRuns with another kit (another Claude Code
// release).
func recordRunsWith(t *testing.T, k *session.Kit, runs ...run) recording {
	t.Helper()
	dir := t.TempDir()
	rec := recording{db: filepath.Join(dir, "capture.db")}
	home := filepath.Join(dir, "home")
	rec.home = home
	for i, r := range runs {
		_, url := session.StandIn(t, r.script, fixtures.Options{})
		o := r.opts
		o.DB, o.Home = rec.db, home
		res := k.Record(t, url, o)
		rec.outputs = append(rec.outputs, res.Output)
		if res.Err != nil {
			t.Fatalf("run %d: record: %v\n%s", i+1, res.Err, res.Output)
		}
	}
	return rec
}

// resumeModel is the model the resumed session switches to. Claude Code
// remaps older Opus names to the latest, so the current one is named.
const resumeModel = "claude-opus-5-5"

// sessionID is the fixed --session-id of the resumed sessions.
const sessionID = "5f0c4a8e-2b7d-4c1e-9a3f-6d8b1e2c7a90"

// scenario is a recorded session: its runs, and what its report must show.
type scenario struct {
	name  string
	runs  func() []run
	check func(*testing.T, *report.Report)
}

// scenarios are the recorded sessions the golden reports come from.
var scenarios = []scenario{
	{
		name: "keyword",
		runs: func() []run {
			sc, _ := fixtures.Scenario("keyword")
			return []run{{script: sc}}
		},
		check: func(t *testing.T, r *report.Report) {
			checkSearchLoadsEcho(t, r, "main", "keyword", "echo text back")
		},
	},
	{
		name: "select",
		runs: func() []run {
			sc, _ := fixtures.Scenario("toolsearch")
			return []run{{script: sc}}
		},
		check: func(t *testing.T, r *report.Report) {
			s := checkSearchLoadsEcho(t, r, "main", "select", "select:"+echoTool)
			if !slices.Equal(s.Selected, []string{echoTool}) || !slices.Equal(s.Results, []string{echoTool}) || !s.ToolLoaded {
				t.Errorf("select search %+v: want exactly %s selected and loaded", *s, echoTool)
			}
		},
	},
	{
		name: "subagent",
		runs: func() []run {
			// The main thread hands the work to a general-purpose subagent and
			// waits for it; the subagent loads echo with its own ToolSearch and
			// calls it.
			sc := fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{
				fixtures.RouteMain: fixtures.Steps(
					fixtures.CallTool("Agent", map[string]any{
						"description":       "Echo through a subagent",
						"prompt":            "Load the demo echo tool with ToolSearch and call it with the text hello.",
						"subagent_type":     "general-purpose",
						"run_in_background": false,
					}),
					fixtures.Text("The subagent echoed hello."),
				),
				fixtures.RouteSubagent: fixtures.Steps(
					fixtures.ToolSearch("select:"+echoTool, 5),
					fixtures.CallTool(echoTool, map[string]any{"text": "hello"}),
					fixtures.Text("The echo tool answered: hello"),
				),
			}}
			return []run{{script: sc, opts: session.Options{Prompt: "ask a subagent to use the demo tools"}}}
		},
		check: func(t *testing.T, r *report.Report) {
			subs := threadsOf(r, "subagent")
			if len(subs) != 1 {
				t.Fatalf("threads %+v: want one subagent", r.Threads)
			}
			sub := subs[0]
			checkSearchLoadsEcho(t, r, sub.ID, "select", "select:"+echoTool)
			agent, _ := calls(r, "Agent")
			if len(agent) != 1 || agent[0].Thread != "main" {
				t.Fatalf("Agent called on %v: want once, by main", agent)
			}
			main := threadsOf(r, "main")[0]
			// The subagent ran while the main thread waited for the Agent call.
			if first, last := sub.Turns[0], sub.Turns[len(sub.Turns)-1]; first <= agent[0].Index || last >= main.Turns[len(main.Turns)-1] {
				t.Errorf("subagent turns %v, main turns %v, Agent called on turn %d", sub.Turns, main.Turns, agent[0].Index)
			}
			for _, i := range main.Turns {
				if len(r.Turns[i-1].ToolSearches) > 0 {
					t.Errorf("main turn %d lists the subagent's search", i)
				}
			}
			if len(sub.Turns) < 3 || r.Turns[sub.Turns[0]-1].Catalog.Count == 0 {
				t.Errorf("subagent turns %v: want at least 3, with a catalog", sub.Turns)
			}
		},
	},
	{
		name: "resume",
		runs: func() []run {
			// A select session, then the same session resumed on another
			// model, which calls echo again: the tool_reference is still in
			// the history, so echo is still loaded.
			first, _ := fixtures.Scenario("toolsearch")
			again := fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{
				fixtures.RouteMain: callThenAnswer(echoTool, map[string]any{"text": "again"}, "The echo tool answered: again"),
			}}
			return []run{
				{script: first, opts: session.Options{Args: []string{"--session-id", sessionID}}},
				{script: again, opts: session.Options{Prompt: "call echo again", Model: resumeModel,
					Args: []string{"--resume", sessionID}}},
			}
		},
		check: func(t *testing.T, r *report.Report) {
			checkSearchLoadsEcho(t, r, "main", "select", "select:"+echoTool)
			main := threadsOf(r, "main")[0]
			if !slices.Equal(main.Models, []string{"claude-sonnet-4-5", resumeModel}) {
				t.Errorf("main thread models %v", main.Models)
			}
			var resumed []*report.Turn
			for i := range r.Turns {
				if r.Turns[i].Model == resumeModel {
					resumed = append(resumed, &r.Turns[i])
				}
			}
			if len(resumed) < 2 {
				t.Fatalf("%d turns on %s, want 2", len(resumed), resumeModel)
			}
			first := resumed[0]
			for _, tu := range resumed {
				if tu.Thread != "main" {
					t.Errorf("resumed turn %d is in thread %s, want main", tu.Index, tu.Thread)
				}
			}
			if first.Prev == 0 || r.Turns[first.Prev-1].Model != "claude-sonnet-4-5" || first.Link == timeline.LinkNew {
				t.Errorf("first resumed turn %d follows turn %d (link %s)", first.Index, first.Prev, first.Link)
			}
			// The newer model's session drops some deferred tools ("no longer
			// available"); echo stays loaded by the search in the history.
			if len(first.Catalog.Removed) == 0 || first.Catalog.Count != r.Turns[first.Prev-1].Catalog.Count-len(first.Catalog.Removed) {
				t.Errorf("first resumed turn catalog %+v after %d", first.Catalog, r.Turns[first.Prev-1].Catalog.Count)
			}
			if first.WorkingSet.Via[echoTool] != "search" || len(first.WorkingSet.Added) != 0 {
				t.Errorf("first resumed turn working set %+v", first.WorkingSet)
			}
			if !slices.ContainsFunc(first.ToolCalls, func(c report.ToolCall) bool { return c.Name == echoTool && c.Loaded }) {
				t.Errorf("first resumed turn calls %+v: want %s, loaded", first.ToolCalls, echoTool)
			}
		},
	},
	{
		name: "compact",
		runs: func() []run {
			// A select session, then /compact, then the compacted session
			// resumed to call echo: no tool_reference is left in the history,
			// yet Claude Code still sends echo in tools.
			first, _ := fixtures.Scenario("toolsearch")
			summary := fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{
				fixtures.RouteSide: repeat(20, fixtures.Dynamic(func(r *fixtures.Request) fixtures.Reply {
					if strings.HasPrefix(strings.TrimSpace(r.LastUserText()), "CRITICAL: Respond with TEXT ONLY") {
						return fixtures.Text("<summary>The user asked to use the demo tools. ToolSearch loaded " +
							echoTool + " and echo answered hello.</summary>")
					}
					return fixtures.Text("Done.")
				})),
			}}
			after := fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{
				fixtures.RouteMain: callThenAnswer(echoTool, map[string]any{"text": "after compaction"}, "The echo tool answered: after compaction"),
			}}
			return []run{
				{script: first, opts: session.Options{Args: []string{"--session-id", sessionID}}},
				{script: summary, opts: session.Options{Prompt: "/compact", Args: []string{"--resume", sessionID}}},
				{script: after, opts: session.Options{Prompt: "call echo again", Args: []string{"--resume", sessionID}}},
			}
		},
		check: func(t *testing.T, r *report.Report) {
			checkSearchLoadsEcho(t, r, "main", "select", "select:"+echoTool)
			// After compaction no tool_reference is left, yet echo is still
			// sent and callable: restored, unreferenced.
			turns, cs := calls(r, echoTool)
			if len(turns) != 2 {
				t.Fatalf("%s called on %d turns, want 2 (before and after compaction)", echoTool, len(turns))
			}
			after, call := turns[1], cs[1]
			if after.Thread != "main" || after.WorkingSet.Via[echoTool] != "restored" ||
				!slices.Contains(after.Unreferenced, echoTool) || !call.Loaded || call.Via != "restored" {
				t.Errorf("turn %d after compaction: thread %s working set %+v unreferenced %v call %+v",
					after.Index, after.Thread, after.WorkingSet, after.Unreferenced, call)
			}
			if len(after.ToolSearches) != 0 || after.Link != timeline.LinkCompaction {
				t.Errorf("turn %d after compaction: link %q, searches %+v", after.Index, after.Link, after.ToolSearches)
			}
			// The compaction request itself is a side query, between the
			// two halves of the main thread.
			sides := threadsOf(r, "side")
			if len(sides) != 1 || len(sides[0].Turns) != 1 || sides[0].Turns[0] >= after.Index || sides[0].Turns[0] <= turns[0].Index {
				t.Errorf("side threads %+v: want the compaction request alone, between turns %d and %d", sides, turns[0].Index, after.Index)
			}
		},
	},
}

// repeat makes n steps answering r, whatever the conversation position.
func repeat(n int, r fixtures.Reply) []fixtures.Step {
	out := make([]fixtures.Step, n)
	for i := range out {
		out[i] = fixtures.Step{r}
	}
	return out
}

// callThenAnswer makes steps that call the tool when the last user message
// holds no tool_result yet, and answer text once it does, whatever the
// conversation position (a resumed or compacted history has its own).
func callThenAnswer(tool string, input any, answer string) []fixtures.Step {
	return repeat(40, fixtures.Dynamic(func(r *fixtures.Request) fixtures.Reply {
		for i := len(r.Messages) - 1; i >= 0; i-- {
			if r.Messages[i].Role != "user" {
				continue
			}
			for _, raw := range r.Messages[i].Blocks() {
				var b struct{ Type string }
				if json.Unmarshal(raw, &b) == nil && b.Type == "tool_result" {
					return fixtures.Text(answer)
				}
			}
			break
		}
		return fixtures.CallTool(tool, input)
	}))
}

var update = flag.Bool("update", false, "rewrite the golden reports in testdata/ from this run")

// TestReportGolden records each scenario with the real Claude Code, writes
// its report with the binary, checks facts that do not depend on the
// golden file, and compares the normalised report with
// testdata/report-NAME.json (refresh with go test ./e2e -run Golden -update).
func TestReportGolden(t *testing.T) {
	kit.RequireClaude(t)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			rec := recordRuns(t, sc.runs()...)
			code, out, stderr := runCLI(t, "report", rec.db)
			if code != 0 {
				t.Fatalf("report: exit %d: %s", code, stderr)
			}
			r := parseReport(t, out)
			checkCommon(t, r)
			sc.check(t, r)
			// Every search of the scenario, re-run offline, agrees with
			// what Claude Code returned.
			if code, ex, stderr := runCLI(t, "searches", rec.db, "--explain"); code != 0 || !regexp.MustCompile(`(?m)^[1-9]\d* (search|searches) re-run offline: .*, 0 differ$`).MatchString(ex) {
				t.Errorf("searches --explain: exit %d %s\n%s", code, stderr, ex)
			}
			if t.Failed() {
				t.Logf("claude output:\n%s", strings.Join(rec.outputs, "\n---\n"))
			}
			got := normalise(out)
			golden.Check(t, filepath.Join("testdata", "report-"+sc.name+".json"), got, *update && !t.Failed())
		})
	}
}

// parseReport decodes a report strictly: unknown fields are an error, so
// that the report package's types and the JSON stay one schema.
func parseReport(t *testing.T, out string) *report.Report {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var r report.Report
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("report is not schema JSON: %v\n%.3000s", err, out)
	}
	return &r
}

// Placeholders the normaliser writes.
const (
	phTime    = "<time>"
	phTokens  = "<tokens>"
	phVersion = "tsinspect <version>"
	phNumber  = "<n>"
	phUSD     = "<usd>"
	phTiming  = "<timing>"
)

var (
	reTime = regexp.MustCompile(`("(?:at|first_at|last_at)": )"[^"]*"`)
	// Estimates of parts of a request (definitions, the announcement and
	// what they add up to) are shares of its measured prompt, which holds
	// the session's temporary paths, whose length varies.
	reTokens = regexp.MustCompile(`("(?:input_tokens|cache_read_input_tokens|cache_creation_input_tokens|cache_creation_5m|cache_creation_1h|tokens_lost|announcement|saved|tokens|sent|loaded|search_tool|inlined|prompt|known_deferred_average|break_even|call_tokens|error_tokens)": )(-?[1-9][0-9]*)`)
	reRate   = regexp.MustCompile(`("bytes_per_token": )([0-9.]+)`)
	// Timing varies from run to run.
	reTiming = regexp.MustCompile(`("(?:ttft_ms|duration_ms|output_tokens_per_second)": )(-?[0-9][0-9.e+-]*)`)
	// Dollar figures follow the token counts.
	reUSD       = regexp.MustCompile(`("(?:usd|input|output|cache_write|cache_read|total_usd|cache_breaks_usd|blind_calls_usd|deferral_saved_usd|saved_usd|cost_usd)": )(-?(?:[1-9][0-9]*(?:\.[0-9]+)?|0\.[0-9]+)(?:e-?[0-9]+)?)\b`)
	reGenerator = regexp.MustCompile(`("generator": )"tsinspect[^"]*"`)
	reDetail    = regexp.MustCompile(`("detail": )"((?:[^"\\]|\\.)*)"`)
	reBigNumber = regexp.MustCompile(`[-−]?\b[0-9]{1,3}(?:,[0-9]{3})+\b|[-−]?\b[0-9]{3,}\b`)
	reID        = regexp.MustCompile(`\b(msg|toolu|srvtoolu|req)_01[1-9A-HJ-NP-Za-km-z]{22}\b`)
)

// normalise replaces what legitimately differs between two recordings of
// the same scenario, and nothing else:
//
//   - times (at, first_at, last_at) become "<time>";
//   - message, tool_use and request ids, which the stand-in draws at random,
//     become msg_1, toolu_1, ... numbered in order of first appearance, so
//     that which search a call or flag refers to is still checked;
//   - non-zero input-side token counts (input, cache read, cache creation,
//     tokens lost) become "<tokens>": Claude Code's prompt holds the
//     working directory, a temporary directory whose name length varies,
//     and the stand-in counts tokens from the prompt's length. So do the
//     estimates calibrated against them (tool definitions, what they add
//     up to, the rate). Zero stays 0, so whether the cache was read or
//     written is still checked. Output tokens are counted from the
//     scripted reply alone and are kept;
//   - in flag details, numbers of three digits or more (token counts, byte
//     offsets into a prompt that holds that directory) become "<n>";
//     small numbers (turn numbers, counts of tools) stay;
//   - non-zero dollar figures, which follow those token counts, become
//     "<usd>", and timings (ttft_ms, duration_ms,
//     output_tokens_per_second) "<timing>", zero or not: they depend on
//     how busy the machine was;
//   - the generator's version becomes "tsinspect <version>".
//
// Everything else (turn order, threads, models, stop reasons, the catalog,
// the working set and its provenance, searches and their results, calls,
// flag kinds and details, exchange counts) is deterministic for a scenario
// and kept as is.
func normalise(out string) string {
	out = reTime.ReplaceAllStringFunc(out, func(m string) string {
		return reTime.ReplaceAllString(m, `$1"`+phTime+`"`)
	})
	out = reTokens.ReplaceAllString(out, `$1"`+phTokens+`"`)
	out = reRate.ReplaceAllString(out, `$1"`+phNumber+`"`)
	out = reUSD.ReplaceAllString(out, `$1"`+phUSD+`"`)
	out = reTiming.ReplaceAllString(out, `$1"`+phTiming+`"`)
	out = reGenerator.ReplaceAllString(out, `$1"`+phVersion+`"`)
	out = reDetail.ReplaceAllStringFunc(out, func(m string) string {
		return reBigNumber.ReplaceAllString(m, phNumber)
	})
	ids := map[string]string{}
	count := map[string]int{}
	out = reID.ReplaceAllStringFunc(out, func(id string) string {
		if n, ok := ids[id]; ok {
			return n
		}
		prefix := id[:strings.IndexByte(id, '_')]
		count[prefix]++
		ids[id] = fmt.Sprintf("%s_%d", prefix, count[prefix])
		return ids[id]
	})
	return out
}

// checkCommon checks what every report of a Claude Code session holds.
func checkCommon(t *testing.T, r *report.Report) {
	t.Helper()
	if r.SchemaVersion != 1 || !strings.HasPrefix(r.Generator, "tsinspect ") {
		t.Errorf("schema_version %d generator %q", r.SchemaVersion, r.Generator)
	}
	if r.Capture.Turns != len(r.Turns) || r.Capture.Turns == 0 || r.Capture.Exchanges < r.Capture.Turns {
		t.Errorf("capture %+v with %d turns", r.Capture, len(r.Turns))
	}
	if r.Capture.FirstAt == nil || r.Capture.LastAt == nil || r.Capture.LastAt.Before(*r.Capture.FirstAt) {
		t.Errorf("capture times %v %v", r.Capture.FirstAt, r.Capture.LastAt)
	}
	mains := 0
	seen := map[int]bool{}
	for _, th := range r.Threads {
		if th.Kind == "main" {
			mains++
		}
		for _, i := range th.Turns {
			if i < 1 || i > len(r.Turns) || r.Turns[i-1].Thread != th.ID || seen[i] {
				t.Errorf("thread %s lists turn %d", th.ID, i)
			}
			seen[i] = true
		}
	}
	if mains != 1 || len(seen) != len(r.Turns) {
		t.Errorf("%d main threads, %d of %d turns in a thread", mains, len(seen), len(r.Turns))
	}
	for i, tu := range r.Turns {
		if tu.Index != i+1 || tu.Status != 200 || tu.ResponseID == "" || tu.At == nil || tu.Model == "" {
			t.Errorf("turn %d: index %d status %d id %q at %v model %q", i+1, tu.Index, tu.Status, tu.ResponseID, tu.At, tu.Model)
		}
		if tu.WorkingSet.Count != len(tu.WorkingSet.Names) || len(tu.WorkingSet.Via) != len(tu.WorkingSet.Names) {
			t.Errorf("turn %d: working set %+v", tu.Index, tu.WorkingSet)
		}
		if len(tu.Problems) > 0 {
			t.Errorf("turn %d: problems %v", tu.Index, tu.Problems)
		}
		for _, f := range tu.Flags {
			if !slices.Contains(timeline.Kinds(), f.Kind) || f.Severity != timeline.Severity(f.Kind) || f.Detail == "" {
				t.Errorf("turn %d: flag %+v", tu.Index, f)
			}
			if r.Capture.Flags[f.Kind] == 0 {
				t.Errorf("turn %d: flag %s not counted in capture.flags %v", tu.Index, f.Kind, r.Capture.Flags)
			}
		}
	}
}

// thread returns the report's threads of a kind.
func threadsOf(r *report.Report, kind string) []report.Thread {
	var out []report.Thread
	for _, th := range r.Threads {
		if th.Kind == kind {
			out = append(out, th)
		}
	}
	return out
}

// calls returns the turns whose response calls the named tool, with the
// call.
func calls(r *report.Report, name string) (turns []*report.Turn, cs []report.ToolCall) {
	for i := range r.Turns {
		for _, c := range r.Turns[i].ToolCalls {
			if c.Name == name {
				turns, cs = append(turns, &r.Turns[i]), append(cs, c)
			}
		}
	}
	return turns, cs
}

// nextOf returns the turn that follows tu in its thread, or nil.
func nextOf(r *report.Report, tu *report.Turn) *report.Turn {
	for i := range r.Turns {
		if r.Turns[i].Prev == tu.Index && r.Turns[i].Thread == tu.Thread {
			return &r.Turns[i]
		}
	}
	return nil
}

// checkSearchLoadsEcho follows the round trip: a turn's response calls
// ToolSearch; the next turn of its thread carries the search (with the
// given mode and query) whose results include echo, its working set gains
// echo by search, and its response calls echo, loaded.
func checkSearchLoadsEcho(t *testing.T, r *report.Report, thread, mode, query string) *report.Search {
	t.Helper()
	turns, cs := calls(r, "ToolSearch")
	for i, tu := range turns {
		if tu.Thread != thread {
			continue
		}
		next := nextOf(r, tu)
		if next == nil {
			t.Fatalf("turn %d calls ToolSearch and is the last of thread %s", tu.Index, thread)
		}
		var s *report.Search
		for j := range next.ToolSearches {
			if next.ToolSearches[j].ToolUseID == cs[i].ID {
				s = &next.ToolSearches[j]
			}
		}
		if s == nil {
			t.Fatalf("turn %d calls ToolSearch %s; turn %d lists searches %+v", tu.Index, cs[i].ID, next.Index, next.ToolSearches)
		}
		if s.Mode != mode || s.Query != query || !slices.Contains(s.Results, echoTool) || s.NoMatch || s.MaxResults != 5 {
			t.Errorf("turn %d search %+v: want mode %s query %q with %s in the results", next.Index, *s, mode, query, echoTool)
		}
		if slices.Contains(tu.WorkingSet.Names, echoTool) {
			t.Errorf("turn %d: %s in the working set before the search", tu.Index, echoTool)
		}
		if !slices.Contains(next.WorkingSet.Added, echoTool) || next.WorkingSet.Via[echoTool] != "search" {
			t.Errorf("turn %d: working set %+v: want %s added by search", next.Index, next.WorkingSet, echoTool)
		}
		if !slices.ContainsFunc(next.ToolCalls, func(c report.ToolCall) bool { return c.Name == echoTool && c.Loaded && c.Via == "search" }) {
			t.Errorf("turn %d calls %+v: want %s called, loaded by search", next.Index, next.ToolCalls, echoTool)
		}
		return s
	}
	t.Fatalf("no turn of thread %s calls ToolSearch", thread)
	return nil
}

// TestTurnsAndReportCommands runs 'turns' and 'report' through the binary
// on a recorded session with a search that matches nothing, so that the
// timeline has something to flag, and checks --out and --fail-on.
func TestTurnsAndReportCommands(t *testing.T) {
	kit.RequireClaude(t)
	sc, _ := fixtures.Scenario("demo")
	rec := recordRuns(t, run{script: sc})

	code, table, stderr := runCLI(t, "turns", rec.db)
	if code != 0 || stderr != "" {
		t.Fatalf("turns: exit %d: %s", code, stderr)
	}
	code, out, stderr := runCLI(t, "report", rec.db)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	r := parseReport(t, out)
	checkTurnsTable(t, table, r)

	// --out writes the same report, atomically, and nothing on stdout.
	dir := t.TempDir()
	outFile := filepath.Join(dir, "report.json")
	code, stdout, stderr := runCLI(t, "report", rec.db, "--out", outFile)
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("report --out: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	written, err := os.ReadFile(outFile)
	if err != nil || normalise(string(written)) != normalise(out) {
		t.Errorf("--out file differs from stdout (%v)", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left beside --out: %v", left)
	}

	// --fail-on: exit 3 and one line naming the kinds and turns when a
	// listed kind is flagged; exit 0 otherwise. The report is written
	// either way.
	kinds, turns := r.FlagKinds()
	if len(kinds) == 0 {
		t.Fatalf("no flags raised on the demo session (a search for a weather tool matched nothing)\n%s", table)
	}
	var absent string
	for _, k := range timeline.Kinds() {
		if _, ok := turns[k]; !ok {
			absent = k
		}
	}
	failed := filepath.Join(dir, "failed.json")
	code, _, stderr = runCLI(t, "report", "--fail-on", absent+","+kinds[0], "--out", failed, rec.db)
	var nums []string
	for _, n := range turns[kinds[0]] {
		nums = append(nums, fmt.Sprint(n))
	}
	wantLine := fmt.Sprintf("tsinspect: fail-on: %s on turn", kinds[0])
	if code != 3 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, wantLine) ||
		!strings.HasSuffix(stderr, " "+strings.Join(nums, ", ")+"\n") {
		t.Errorf("--fail-on %s: exit %d stderr %q, want 3 and %q... %s", kinds[0], code, stderr, wantLine, strings.Join(nums, ", "))
	}
	if _, err := os.Stat(failed); err != nil {
		t.Errorf("report not written when --fail-on fired: %v", err)
	}
	code, _, stderr = runCLI(t, "report", "--fail-on", absent, "--out", failed, rec.db)
	if code != 0 || stderr != "" {
		t.Errorf("--fail-on %s, which is not raised: exit %d stderr %q", absent, code, stderr)
	}
}

// checkTurnsTable checks the turns table against the report of the same
// capture: a header, one line per turn, a totals line, the prices line,
// at most 120 columns, thousands separators, dollars.
func checkTurnsTable(t *testing.T, table string, r *report.Report) {
	t.Helper()
	table, threads, ok := strings.Cut(table, "\n\n")
	if !ok {
		t.Fatalf("turns printed no threads table:\n%s", table)
	}
	checkThreadsTable(t, threads, r)
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	if len(lines) != len(r.Turns)+3 {
		t.Fatalf("turns printed %d lines for %d turns:\n%s", len(lines), len(r.Turns), table)
	}
	head := strings.Fields(lines[0])
	wantHead := []string{"TURN", "THREAD", "MODEL", "CAT", "WS", "SRCH", "CALLS", "INPUT", "CACHE-RD", "CACHE-NEW", "OUTPUT", "COST", "STOP", "FLAGS"}
	if !slices.Equal(head, wantHead) {
		t.Errorf("header %q", lines[0])
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("line %d is %d columns wide: %q", i+1, n, l)
		}
	}
	var read int64
	for i, tu := range r.Turns {
		f := strings.Fields(lines[i+1])
		if f[0] != fmt.Sprint(tu.Index) || f[1] != tu.Thread || f[2] != strings.TrimPrefix(tu.Model, "claude-") {
			t.Errorf("line for turn %d: %q", tu.Index, lines[i+1])
		}
		if !strings.Contains(lines[i+1], " "+tu.StopReason) {
			t.Errorf("line for turn %d lacks stop reason %s: %q", tu.Index, tu.StopReason, lines[i+1])
		}
		for _, fl := range tu.Flags {
			if !strings.Contains(lines[i+1], fl.Kind) {
				t.Errorf("line for turn %d lacks flag %s: %q", tu.Index, fl.Kind, lines[i+1])
			}
		}
		if tu.Cost == nil || !strings.Contains(lines[i+1], "$") {
			t.Errorf("line for turn %d has no cost: %q", tu.Index, lines[i+1])
		}
		read += tu.Usage.CacheReadInputTokens
	}
	if p := lines[len(lines)-1]; !strings.HasPrefix(p, "US dollars at built-in prices taken ") {
		t.Errorf("prices line %q", p)
	}
	total := lines[len(lines)-2]
	if !strings.Contains(total, "total") || !strings.Contains(total, thousandsOf(read)) || !strings.Contains(total, ",") {
		t.Errorf("totals line %q: want cache read %s", total, thousandsOf(read))
	}
}

// checkThreadsTable checks the threads table under the turns: one line
// per thread, with its kind and client.
func checkThreadsTable(t *testing.T, table string, r *report.Report) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	if len(lines) != len(r.Threads)+1 || !slices.Equal(strings.Fields(lines[0]), []string{"THREAD", "KIND", "TURNS", "CLIENT"}) {
		t.Fatalf("threads table for %d threads:\n%s", len(r.Threads), table)
	}
	for i, th := range r.Threads {
		f := strings.Fields(lines[i+1])
		if f[0] != th.ID || f[1] != th.Kind || f[2] != fmt.Sprint(len(th.Turns)) || !strings.HasSuffix(lines[i+1], th.Client.String()) {
			t.Errorf("line for thread %s: %q", th.ID, lines[i+1])
		}
		if !th.Client.ClaudeCode() || th.Client.Version == "" {
			t.Errorf("thread %s: client %+v, want Claude Code with a version", th.ID, th.Client)
		}
	}
}

// thousandsOf writes n with comma separators.
func thousandsOf(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestReportBadInput needs no Claude Code: captures that are not
// captures, broken or empty, and bad flags.
func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	notCapture := filepath.Join(dir, "notes.txt")
	os.WriteFile(notCapture, []byte("hello"), 0o600)
	corrupt := filepath.Join(dir, "corrupt.db")
	makeCapture(t, corrupt, 50)
	fi, _ := os.Stat(corrupt)
	if err := os.Truncate(corrupt, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.db")
	makeCapture(t, empty, 0)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"report on a text file", []string{"report", notCapture}, 1, "not a tsinspect capture file"},
		{"turns on a text file", []string{"turns", notCapture}, 1, "not a tsinspect capture file"},
		{"report on a missing file", []string{"report", filepath.Join(dir, "none.db")}, 1, "does not exist"},
		{"report on a corrupt capture", []string{"report", corrupt}, 1, "malformed"},
		{"turns on a corrupt capture", []string{"turns", corrupt}, 1, "malformed"},
		{"report without a file", []string{"report"}, 2, "want one capture FILE"},
		{"turns with two files", []string{"turns", empty, empty}, 2, "want one capture FILE"},
		{"unknown format", []string{"report", "--format", "xml", empty}, 2, `--format "xml": want json, markdown or html`},
		{"unknown policy", []string{"report", "--redact", "lax", empty}, 2, `--redact "lax": want default, strict or off`},
		{"empty kind", []string{"report", "--fail-on", "cache_break,,retry", empty}, 2, "empty kind"},
		{"unknown kind", []string{"report", "--fail-on", "cache_brake", empty}, 2, `unknown flag kind "cache_brake" (kinds: `},
		{"unknown flag", []string{"report", "--bogus", empty}, 2, "flag provided but not defined: -bogus"},
		{"out in a missing dir", []string{"report", "--out", filepath.Join(dir, "no", "r.json"), empty}, 1, "directory does not exist"},
		{"turns on an empty capture", []string{"turns", empty}, 0, "no Messages API turns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, c.args...)
			assertRefused(t, code, stdout, stderr, c.code, c.want)
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
		t.Error("--out into a missing directory created it")
	}

	// An empty capture gives an empty report, arrays and all.
	code, out, stderr := runCLI(t, "report", empty)
	if code != 0 || stderr != "" {
		t.Fatalf("report on an empty capture: exit %d: %s", code, stderr)
	}
	r := parseReport(t, out)
	if r.Capture.Exchanges != 0 || len(r.Turns) != 0 || !strings.Contains(out, `"turns": []`) || !strings.Contains(out, `"first_at": null`) {
		t.Errorf("empty report:\n%s", out)
	}

	// Help in the style of the other commands.
	for _, cmd := range []string{"report", "turns"} {
		code, out, _ := runCLI(t, cmd, "-h")
		if code != 0 || !strings.HasPrefix(out, "Usage: tsinspect "+cmd) || !strings.Contains(out, "Examples:") {
			t.Errorf("%s -h: exit %d\n%s", cmd, code, out)
		}
	}
	_, out, _ = runCLI(t, "report", "-h")
	for _, f := range []string{"-format", "-out", "-fail-on", "-redact", "markdown", "html", "status 3"} {
		if !strings.Contains(out, f) {
			t.Errorf("report -h does not mention %s", f)
		}
	}
}

// TestReportUndecodableTurns checks that Messages exchanges whose bodies do
// not decode still give a report, with the problems listed on the turns.
func TestReportUndecodableTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i, body := range []string{`not json`, `{"model":7,"messages":"x"}`, `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`} {
		ex := &exchange.Exchange{Source: "test", Start: now.Add(time.Duration(i) * time.Second), End: now.Add(time.Duration(i)*time.Second + time.Millisecond),
			Method: "POST", URL: "https://api.anthropic.com/v1/messages", Host: "api.anthropic.com",
			ReqBody: []byte(body), Status: 200, RespBody: []byte("event: message_start\ndata: {broken\n\n"), State: exchange.StateComplete}
		if err := db.Insert(context.Background(), ex); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	code, out, stderr := runCLI(t, "report", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := parseReport(t, out)
	if len(r.Turns) != 3 || len(r.Turns[0].Problems) == 0 {
		t.Errorf("report of undecodable turns:\n%s", out)
	}
	if code, _, stderr := runCLI(t, "turns", path); code != 0 {
		t.Errorf("turns: exit %d: %s", code, stderr)
	}
}

// makeCapture writes a capture with n exchanges whose request bodies are
// large enough to span many pages.
func makeCapture(t *testing.T, path string, n int) {
	t.Helper()
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	for i := 0; i < n; i++ {
		body := fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":32000,"messages":[{"role":"user","content":%q}]}`, strings.Repeat(fmt.Sprintf("turn %d ", i), 2000))
		ex := &exchange.Exchange{Source: "test", Start: now, End: now, Method: "POST",
			URL: "https://api.anthropic.com/v1/messages", Host: "api.anthropic.com",
			ReqBody: []byte(body), Status: 200, RespBody: []byte(`{}`), State: exchange.StateComplete}
		if err := db.Insert(context.Background(), ex); err != nil {
			t.Fatal(err)
		}
	}
}
