package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/report"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// sessionScenarios are the scenarios the session-files equivalence test
// records besides the report scenarios: the flaky steps (an HTTP 500, a
// cut stream, an empty stop_sequence reply), a call of a tool whose
// schema was never loaded, and two subagents started at once.
func sessionScenarios() []scenario {
	flaky, _ := fixtures.Scenario("flaky")
	agent := func(n int, typ string) fixtures.Reply {
		return fixtures.CallTool("Agent", map[string]any{"description": fmt.Sprintf("task %d", n), "prompt": "Warmup", "subagent_type": typ})
	}
	return []scenario{
		{name: "flaky", runs: func() []run { return []run{{script: flaky}} }},
		{name: "blind", runs: func() []run {
			return []run{{script: fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(
				fixtures.CallTool("mcp__demo__action_3", map[string]any{}),
				fixtures.ToolSearch("select:mcp__demo__action_3", 5),
				fixtures.CallTool("mcp__demo__action_3", map[string]any{}),
				fixtures.Text("done"),
			)}}}}
		}},
		{name: "missed", runs: func() []run {
			// A keyword search naming two of Claude Code's deferred tools
			// with max_results 1, as in public session files: one is left
			// out; the model goes on without it.
			return []run{{script: fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(
				fixtures.ToolSearch("WebSearch WebFetch", 1),
				fixtures.CallTool("mcp__demo__echo", map[string]any{"text": "no fetch tool, echo instead"}),
				fixtures.Text("done"),
			)}}}}
		}, check: func(t *testing.T, r *report.Report) {
			n := 0
			for _, tu := range r.Turns {
				for _, f := range tu.Flags {
					if f.Kind == "search_partial" {
						n++
						if f.CostUSD == nil || *f.CostUSD <= 0 {
							t.Errorf("search_partial without the cost of the turns after it: %+v", f)
						}
					}
				}
			}
			if n != 1 {
				t.Errorf("%d search_partial flags, want 1", n)
			}
		}},
		{name: "absent", runs: func() []run {
			// Tool search off, and the model calls ToolSearch all the same:
			// a call of an absent tool, refused, and no search.
			return []run{{script: fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(
				fixtures.ToolSearch("select:mcp__demo__echo", 5),
				fixtures.CallTool("mcp__demo__echo", map[string]any{"text": "hi"}),
				fixtures.Text("done"),
			)}}, opts: session.Options{Env: []string{"ENABLE_TOOL_SEARCH=false"}}}}
		}, check: func(t *testing.T, r *report.Report) {
			if got := flagCount(r); got != "tool_search_off unknown_tool" {
				t.Errorf("flags %s, want tool_search_off and one unknown_tool", got)
			}
		}},
		{name: "repeated", runs: func() []run {
			return []run{{script: fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(
				fixtures.ToolSearch("select:mcp__demo__echo", 5),
				fixtures.CallTool("mcp__demo__echo", map[string]any{"text": "hi"}),
				fixtures.ToolSearch("select:mcp__demo__echo", 5),
				fixtures.Text("done"),
			)}}}}
		}, check: func(t *testing.T, r *report.Report) {
			if got := flagCount(r); got != "search_repeated" {
				t.Errorf("flags %s, want one search_repeated", got)
			}
		}},
		{name: "parallel", runs: func() []run {
			return []run{{script: fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{
				fixtures.RouteMain:     fixtures.Steps(fixtures.Together(agent(1, "general-purpose"), agent(2, "Explore")), fixtures.Text("Both subagents reported.")),
				fixtures.RouteSubagent: fixtures.Steps(fixtures.Text("Ready."), fixtures.Text("Ready.")),
			}}, opts: session.Options{Prompt: "start two subagents", Allowed: []string{"Agent"}}}}
		}},
	}
}

// sessionFiles lists the main session files Claude Code wrote under home.
func sessionFiles(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(home, ".claude", "projects")
	entries, _ := filepath.Glob(filepath.Join(root, "*", "*.jsonl"))
	out = append(out, entries...)
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatalf("Claude Code wrote no session file under %s", root)
	}
	return out
}

// turnFacts is what the recorder and the session files must agree on for
// a turn.
func turnFacts(tu report.Turn, kind string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s status=%d stop=%s usage=%d/%d/%d/%d", kind, tu.Model, tu.Status, tu.StopReason,
		tu.Usage.InputTokens, tu.Usage.OutputTokens, tu.Usage.CacheReadInputTokens, tu.Usage.CacheCreationInputTokens)
	fmt.Fprintf(&b, " catalog=%d+%v-%v ws=%v", tu.Catalog.Count, tu.Catalog.Added, tu.Catalog.Removed, tu.WorkingSet.Names)
	for _, s := range tu.ToolSearches {
		fmt.Fprintf(&b, " search(%s %q → %v)", s.Tool, s.Query, s.Results)
	}
	for _, c := range tu.ToolCalls {
		fmt.Fprintf(&b, " call(%s loaded=%v)", c.Name, c.Loaded)
	}
	var kinds []string
	for _, f := range tu.Flags {
		kinds = append(kinds, f.Kind)
	}
	fmt.Fprintf(&b, " flags=%v", kinds)
	return b.String()
}

// threadKinds maps thread IDs to their kinds.
func threadKinds(r *report.Report) map[string]string {
	m := map[string]string{}
	for _, th := range r.Threads {
		m[th.ID] = th.Kind
	}
	return m
}

// TestSessionFilesAgreeWithRecorder records each scenario through the
// proxy with the real Claude Code, reads the session files Claude Code
// wrote of the same run, and checks that the two timelines agree turn for
// turn, but for what the files do not hold: what arrived of a cut stream,
// and how an empty reply ended (the recorder's stop_sequence_anomaly is
// the files' too, without usage). Side requests the files do not hold
// must be side threads.
//
// It runs with the pinned release and with the one $TSINSPECT_CLAUDE_NEWEST
// names (skipped without it, a failure under
// TSINSPECT_REQUIRE_CLAUDE_NEWEST=1).
func TestSessionFilesAgreeWithRecorder(t *testing.T) {
	eachRelease(t, "compare with it too", sessionFilesAgree)
}

func sessionFilesAgree(t *testing.T, k *session.Kit) {
	all := append(slices.Clone(scenarios), sessionScenarios()...)
	for _, sc := range all {
		t.Run(sc.name, func(t *testing.T) {
			rec := recordRunsWith(t, k, sc.runs()...)
			checkTotalsAgainstCcusage(t, rec.home)
			code, out, stderr := runCLI(t, "report", rec.db, "--redact", "off")
			if code != 0 {
				t.Fatalf("report capture: exit %d: %s", code, stderr)
			}
			captured := parseReport(t, out)
			if sc.check != nil && slices.Contains([]string{"missed", "absent", "repeated"}, sc.name) {
				sc.check(t, captured)
			}
			ck := threadKinds(captured)
			var fromFiles []report.Turn
			fk := map[string]string{}
			for _, f := range sessionFiles(t, rec.home) {
				code, out, stderr := runCLI(t, "report", f, "--redact", "off")
				if code != 0 {
					t.Fatalf("report %s: exit %d: %s", filepath.Base(f), code, stderr)
				}
				if strings.Contains(strings.ReplaceAll(stderr, "warning: --redact off", ""), "warning") {
					t.Errorf("report %s: %s", filepath.Base(f), stderr)
				}
				r := parseReport(t, out)
				for id, kind := range threadKinds(r) {
					fk[filepath.Base(f)+id] = kind
				}
				// Every request rebuilt from the files matches the digest
				// Claude Code kept of what it sent.
				s, err := sessionfiles.Open(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Stream(context.Background(), func(*exchange.Exchange) error { return nil }); err != nil {
					t.Fatal(err)
				}
				if s.Unconfirmed != 0 || s.Confirmed == 0 {
					t.Errorf("%s: %d requests confirmed by their digest, %d not", filepath.Base(f), s.Confirmed, s.Unconfirmed)
				}
				checkListing(t, f, r)
				checkTranscriptAgrees(t, f, r)
				for _, tu := range r.Turns {
					tu.Thread = filepath.Base(f) + tu.Thread
					fromFiles = append(fromFiles, tu)
				}
			}
			// Pair turns by the answer's message ID; failed turns, which
			// have none, in order.
			byMsg := map[string]report.Turn{}
			var failedFiles []report.Turn
			for _, tu := range fromFiles {
				if tu.ResponseID != "" {
					byMsg[tu.ResponseID] = tu
				} else {
					failedFiles = append(failedFiles, tu)
				}
			}
			matched := 0
			var failedCapture []report.Turn
			for _, tu := range captured.Turns {
				kind := ck[tu.Thread]
				if tu.ResponseID == "" || tu.Incomplete {
					failedCapture = append(failedCapture, tu)
					continue
				}
				ft, ok := byMsg[tu.ResponseID]
				if !ok {
					if kind != "side" && !emptyReply(tu) {
						t.Errorf("capture turn %d (%s, %s) is not in the session files", tu.Index, kind, tu.ResponseID)
					}
					if emptyReply(tu) {
						failedCapture = append(failedCapture, tu)
					}
					continue
				}
				matched++
				if got, want := turnFacts(ft, fk[ft.Thread]), turnFacts(tu, kind); got != want {
					t.Errorf("turn %d differs:\n files   %s\n capture %s", tu.Index, got, want)
				}
			}
			// The turns that got no whole answer: an HTTP error is the same
			// in both; a cut stream or an empty reply lacks what arrived.
			if len(failedCapture) != len(failedFiles) {
				t.Errorf("%d failed or empty turns in the capture, %d in the files", len(failedCapture), len(failedFiles))
			} else {
				for i, tu := range failedCapture {
					ft := failedFiles[i]
					switch {
					case tu.Status >= 400:
						if ft.Status != tu.Status || !slices.EqualFunc(ft.Flags, tu.Flags, func(a, b report.Flag) bool { return a.Kind == b.Kind }) {
							t.Errorf("HTTP error turn %d: files status %d flags %v, capture %d %v", tu.Index, ft.Status, ft.Flags, tu.Status, tu.Flags)
						}
					case emptyReply(tu):
						if !hasFlag(ft, "stop_sequence_anomaly") {
							t.Errorf("empty reply turn %d: files flags %v", tu.Index, ft.Flags)
						}
					case tu.Incomplete:
						if ft.Status != 0 || !hasFlag(ft, "stream_incomplete") {
							t.Errorf("cut turn %d: files status %d flags %v", tu.Index, ft.Status, ft.Flags)
						}
					}
				}
			}
			if matched == 0 {
				t.Fatal("no turn matched")
			}
			t.Logf("%d turns agree, %d failed or empty turns compared, %d capture turns, %d from the files", matched, len(failedCapture), len(captured.Turns), len(fromFiles))
			if t.Failed() {
				t.Logf("claude output:\n%s", strings.Join(rec.outputs, "\n---\n"))
			}
		})
	}
}

// flagCount lists the kinds of r's flags, sorted, each as often as it
// was raised.
func flagCount(r *report.Report) string {
	var kinds []string
	for _, tu := range r.Turns {
		for _, f := range tu.Flags {
			kinds = append(kinds, f.Kind)
		}
	}
	sort.Strings(kinds)
	return strings.Join(kinds, " ")
}

func emptyReply(tu report.Turn) bool {
	return tu.Status == 200 && len(tu.ToolCalls) == 0 && hasFlag(tu, "stop_sequence_anomaly")
}

func hasFlag(tu report.Turn, kind string) bool {
	return slices.ContainsFunc(tu.Flags, func(f report.Flag) bool { return f.Kind == kind })
}

// stripRequests copies the session whose main file is file, with its
// subagents' files, into a new directory, leaving out the request records
// (api-request, api-request-blob, api-request-shape): what Claude Code
// writes with the records off, or before 2.1.300. It returns the copy's
// main file.
func stripRequests(t *testing.T, file string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "projects", "p")
	src := filepath.Dir(file)
	id := strings.TrimSuffix(filepath.Base(file), ".jsonl")
	var files []string
	files = append(files, file)
	subs, _ := filepath.Glob(filepath.Join(src, id, "subagents", "*.jsonl"))
	files = append(files, subs...)
	for _, f := range files {
		rel, err := filepath.Rel(src, f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var kept []string
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if !strings.HasPrefix(line, `{"type":"api-request`) {
				kept = append(kept, line)
			}
		}
		out := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, []byte(strings.Join(kept, "")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, filepath.Base(file))
}

// transcriptFacts is what a turn read from the transcript alone must
// share with the same turn read from the request records: the answer, its
// usage and stop reason, the catalog's size, the searches with their
// results, the calls, and the flags the transcript can tell.
func transcriptFacts(tu report.Turn) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s status=%d stop=%s usage=%d/%d/%d/%d catalog=%d", tu.Model, tu.Status, tu.StopReason,
		tu.Usage.InputTokens, tu.Usage.OutputTokens, tu.Usage.CacheReadInputTokens, tu.Usage.CacheCreationInputTokens, tu.Catalog.Count)
	for _, s := range tu.ToolSearches {
		fmt.Fprintf(&b, " search(%s %q → %v)", s.Tool, s.Query, s.Results)
	}
	for _, c := range tu.ToolCalls {
		fmt.Fprintf(&b, " call(%s)", c.Name)
	}
	var kinds []string
	for _, f := range tu.Flags {
		switch f.Kind {
		case "call_before_load", "empty_search", "search_partial", "stop_sequence_anomaly", "api_error", "stream_incomplete", "retry":
			kinds = append(kinds, f.Kind)
		}
	}
	fmt.Fprintf(&b, " flags=%v", kinds)
	return b.String()
}

// checkTranscriptAgrees reads the session of file with its request
// records left out and checks that the timeline from the transcript
// alone gives, turn for turn, the answers, usage, searches, calls and
// blind calls of the timeline from the records (r), and that the listing
// agrees with it too.
func checkTranscriptAgrees(t *testing.T, file string, r *report.Report) {
	t.Helper()
	stripped := stripRequests(t, file)
	code, out, stderr := runCLI(t, "report", stripped, "--redact", "off")
	if code != 0 {
		t.Fatalf("report of %s without its request records: exit %d: %s", filepath.Base(file), code, stderr)
	}
	tr := parseReport(t, out)
	checkListing(t, stripped, tr)
	var want, got []string
	for _, tu := range r.Turns {
		if tu.Thread == "side1" || strings.HasPrefix(tu.Thread, "side") {
			continue // requests the transcript does not hold
		}
		want = append(want, transcriptFacts(tu))
	}
	for _, tu := range tr.Turns {
		got = append(got, transcriptFacts(tu))
		if !tu.WorkingSet.DeferredOnly {
			t.Errorf("turn %d of the transcript is not marked as holding only the deferred tools loaded", tu.Index)
		}
	}
	// Two subagents started together send their requests in the same
	// instant: the records order them by when each was sent, the
	// transcript by when each file was written. The turns are the same.
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: the transcript alone gives\n  %s\nthe request records\n  %s", filepath.Base(file), strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// checkListing checks that the sessions listing, which reads the files in
// one fast pass without rebuilding requests, gives the figures the
// timeline gives for the same session.
func checkListing(t *testing.T, file string, r *report.Report) {
	t.Helper()
	code, out, stderr := runCLI(t, "sessions", file, "--json", "--no-index")
	if code != 0 {
		t.Fatalf("sessions: exit %d: %s", code, stderr)
	}
	var row sessionfiles.Row
	if err := json.Unmarshal([]byte(out), &row); err != nil {
		t.Fatalf("sessions --json: %v\n%s", err, out)
	}
	var breaks, blind, searches, empty int
	var breaksUSD float64
	for _, tu := range r.Turns {
		for _, f := range tu.Flags {
			switch f.Kind {
			case "cache_break":
				breaks++
				if f.CostUSD != nil {
					breaksUSD += *f.CostUSD
				}
			case "call_before_load", "unknown_tool":
				blind++
			case "empty_search":
				empty++
			}
		}
		searches += len(tu.ToolSearches)
	}
	want := fmt.Sprintf("turns %d cost %.6f breaks %d (%.6f) blind %d searches %d empty %d", len(r.Turns), r.Costs.TotalUSD, breaks, breaksUSD, blind, searches, empty)
	got := fmt.Sprintf("turns %d cost %.6f breaks %d (%.6f) blind %d searches %d empty %d", row.Turns, row.CostUSD, row.CacheBreaks, row.BreaksUSD, row.BlindCalls, row.Searches, row.EmptySearches)
	if got != want {
		t.Errorf("%s: the listing says\n  %s\nthe timeline\n  %s", filepath.Base(file), got, want)
	}
}

// TestSessionsAsANewUser is a new user with Claude Code installed and
// nothing else set up: HOME holds the sessions Claude Code wrote (two
// recorded runs), and `tsinspect sessions` lists them, newest first, with
// no flag; `turns latest` and `report ID-prefix` read the newest in place;
// a second listing comes from the index and reads nothing.
func TestSessionsAsANewUser(t *testing.T) {
	kit.RequireClaude(t)
	keyword, _ := fixtures.Scenario("keyword")
	flaky, _ := fixtures.Scenario("flaky")
	rec := recordRuns(t, run{script: keyword}, run{script: flaky})
	t.Setenv("HOME", rec.home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	code, out, stderr := runCLI(t, "sessions")
	if code != 0 {
		t.Fatalf("sessions: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "SESSION") || !strings.Contains(lines[3], "2 sessions, 9 turns") {
		t.Fatalf("sessions:\n%s", out)
	}
	// Newest first: the flaky run (6 turns, 1 search) before the keyword
	// run (3 turns).
	if f := strings.Fields(lines[1]); f[5] != "6" || f[len(f)-3] != "1" { // ... SEARCH EMPTY PART
		t.Errorf("first row %q: want the flaky run, 6 turns, 1 search", lines[1])
	}
	if !strings.Contains(stderr, "read 2 sessions") {
		t.Errorf("first listing: %q", stderr)
	}
	code, again, stderr := runCLI(t, "sessions")
	if code != 0 || again != out || stderr != "" {
		t.Errorf("second listing: exit %d, stderr %q, same output %v", code, stderr, again == out)
	}
	code, out, stderr = runCLI(t, "turns", "latest")
	if code != 0 || !strings.Contains(out, "stop_sequence_anomaly") || !strings.Contains(out, "api_error") {
		t.Errorf("turns latest: exit %d %s\n%s", code, stderr, out)
	}
	id := strings.Fields(lines[2])[0]
	code, out, stderr = runCLI(t, "searches", id)
	if code != 0 || !strings.Contains(out, "echo text back") {
		t.Errorf("searches %s: exit %d %s\n%s", id, code, stderr, out)
	}
	if code, _, stderr := runCLI(t, "turns", "ffff0000"); code != 1 || !strings.Contains(stderr, "no Claude Code session") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("unknown session: exit %d %q", code, stderr)
	}
}

// TestOpenFollowSession writes a real session file line by line, as Claude
// Code does, while `open --follow` shows it in tmux: each request appears
// as a turn in flight and then answered. It logs how long after each
// answer was written it was on screen (BENCHMARKS.md quotes it; the
// test's own bound is loose, so that a loaded machine does not fail it).
func TestOpenFollowSession(t *testing.T) {
	kit.RequireClaude(t)
	sc, _ := fixtures.Scenario("toolsearch")
	rec := recordRuns(t, run{script: sc})
	files := sessionFiles(t, rec.home)
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	live := filepath.Join(dir, "11111111-2222-4333-8444-555555555555.jsonl")
	script := filepath.Join(dir, "open.sh")
	os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\n%s open --follow %s\necho EXIT=$? > %s\nsleep 30\n",
		shq(kit.Tsinspect), shq(live), shq(filepath.Join(dir, "exit")))), 0o700)
	term := startTmux(t, "followsession", script)
	term.waitFor("the session view", func(s string) bool { return strings.Contains(s, "following session 11111111") })

	f, err := os.OpenFile(live, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	turns := 0
	var lags []time.Duration
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" {
			continue
		}
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
		var r struct {
			Type    string `json:"type"`
			Message struct {
				StopReason *string `json:"stop_reason"`
			} `json:"message"`
		}
		json.Unmarshal([]byte(line), &r)
		switch {
		case r.Type == "api-request":
			turns++
			want := fmt.Sprintf("%d turn", turns)
			term.waitFor(want+" in flight", func(s string) bool { return strings.Contains(s, want) && strings.Contains(s, "waiting") })
		case r.Type == "assistant" && r.Message.StopReason != nil:
			written := time.Now()
			deadline := written.Add(patience)
			for {
				s := term.tm("capture-pane", "-p", "-t", "live")
				if !strings.Contains(s, "waiting") && strings.Contains(s, fmt.Sprintf("%d turn", turns)) {
					lags = append(lags, time.Since(written))
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("turn %d's answer not on screen %v after it was written:\n%s", turns, patience, s)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	if turns < 3 || len(lags) < 3 {
		t.Fatalf("%d turns, %d answers seen", turns, len(lags))
	}
	t.Logf("answers on screen after they were written: %v", lags)
	term.tm("send-keys", "-t", "live", "q")
	term.waitFor("the exit status", func(string) bool {
		b, err := os.ReadFile(filepath.Join(dir, "exit"))
		return err == nil && len(b) > 0
	})
}

// TestSessionFilesBefore2_1_300 records a session with a release before
// 2.1.300 ($TSINSPECT_CLAUDE_OLD; skipped without it, a failure under
// TSINSPECT_REQUIRE_CLAUDE_OLD=1), whose files hold the transcript but no
// request records: the listing gives its turns, cost and searches as the
// recorder's timeline has them, blind calls as unknown, and turns says
// what is missing instead of guessing a working set.
func TestSessionFilesBefore2_1_300(t *testing.T) {
	kit.RequireClaude(t)
	p := os.Getenv("TSINSPECT_CLAUDE_OLD")
	if p == "" {
		if os.Getenv("TSINSPECT_REQUIRE_CLAUDE_OLD") == "1" {
			t.Fatal("TSINSPECT_CLAUDE_OLD is not set: install @anthropic-ai/claude-code@2.1.299 and point it at its claude")
		}
		skipFor(t, "a Claude Code before 2.1.300", installOld, "set TSINSPECT_CLAUDE_OLD to a Claude Code before 2.1.300 to test its session files")
	}
	k := *kit
	k.Claude = p
	sc, _ := fixtures.Scenario("demo")
	rec := recordRunsWith(t, &k, run{script: sc})
	code, out, stderr := runCLI(t, "report", rec.db)
	if code != 0 {
		t.Fatalf("report: %d %s", code, stderr)
	}
	captured := parseReport(t, out)
	file := sessionFiles(t, rec.home)[0]
	if b, _ := os.ReadFile(file); strings.Contains(string(b), `"type":"api-request"`) {
		t.Fatalf("%s holds request records: not a release before 2.1.300", p)
	}
	code, out, stderr = runCLI(t, "sessions", file, "--json", "--no-index")
	if code != 0 {
		t.Fatalf("sessions: %d %s", code, stderr)
	}
	var row sessionfiles.Row
	if err := json.Unmarshal([]byte(out), &row); err != nil {
		t.Fatal(err)
	}
	searches, empty := 0, 0
	for _, tu := range captured.Turns {
		searches += len(tu.ToolSearches)
		if hasFlag(tu, "empty_search") {
			empty++
		}
	}
	got := fmt.Sprintf("requests %v turns %d cost %.6f searches %d empty %d", row.Requests, row.Turns, row.CostUSD, row.Searches, row.EmptySearches)
	want := fmt.Sprintf("requests false turns %d cost %.6f searches %d empty %d", len(captured.Turns), captured.Costs.TotalUSD, searches, empty)
	if got != want {
		t.Errorf("listing %s\nrecorder %s", got, want)
	}
	// The timeline from the transcript alone: turn for turn what the
	// recorder saw, but for the tools sent, which the files do not hold.
	code, out, stderr = runCLI(t, "report", file, "--redact", "off")
	if code != 0 {
		t.Fatalf("report of a session without request records: exit %d: %s", code, stderr)
	}
	fromFiles := parseReport(t, out)
	var wantTurns, gotTurns []string
	for _, tu := range captured.Turns {
		if !strings.HasPrefix(tu.Thread, "side") {
			wantTurns = append(wantTurns, transcriptFacts(tu))
		}
	}
	for _, tu := range fromFiles.Turns {
		gotTurns = append(gotTurns, transcriptFacts(tu))
	}
	if !slices.Equal(gotTurns, wantTurns) {
		t.Errorf("the transcript gives\n  %s\nthe recorder\n  %s", strings.Join(gotTurns, "\n  "), strings.Join(wantTurns, "\n  "))
	}
	checkListing(t, file, fromFiles)
	code, out, stderr = runCLI(t, "turns", file)
	if code != 0 || !strings.Contains(out, "WS*") && !strings.Contains(out, "*:") {
		t.Errorf("turns on files without requests: exit %d %q %q", code, out, stderr)
	}
	code, out, _ = runCLI(t, "sessions", file, "--no-index")
	if code != 0 || !strings.Contains(out, "*") {
		t.Errorf("the listing does not mark the release: %s", out)
	}
}

// TestStreamJSONOutputNamesItsSession runs the real Claude Code with -p
// --output-format stream-json, as an app built on it does, and hands what
// it printed to tsinspect: that is not the session's file, and the
// refusal says so, names the session, and the command it names reads the
// session's own file, turn for turn as the capture.
//
// It runs with the pinned release and with the one $TSINSPECT_CLAUDE_NEWEST
// names (skipped without it, a failure under
// TSINSPECT_REQUIRE_CLAUDE_NEWEST=1).
func TestStreamJSONOutputNamesItsSession(t *testing.T) {
	eachRelease(t, "read its stream-json output too", streamJSONNamesItsSession)
}

func streamJSONNamesItsSession(t *testing.T, k *session.Kit) {
	keyword, _ := fixtures.Scenario("keyword")
	rec := recordRunsWith(t, k, run{script: keyword, opts: session.Options{Args: []string{"--output-format", "stream-json", "--verbose"}}})
	var printed []string
	for _, line := range strings.Split(rec.outputs[0], "\n") {
		if strings.HasPrefix(line, `{"type":`) {
			printed = append(printed, line)
		}
	}
	if len(printed) < 3 || !strings.Contains(printed[0], `"subtype":"init"`) {
		t.Fatalf("claude printed no stream-json:\n%s", rec.outputs[0])
	}
	var init struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(printed[0]), &init); err != nil || len(init.SessionID) < 8 {
		t.Fatalf("init record %q: %v", printed[0], err)
	}
	out := filepath.Join(t.TempDir(), "out.jsonl")
	if err := os.WriteFile(out, []byte(strings.Join(printed, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", rec.home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	short := init.SessionID[:8]
	for _, args := range [][]string{{"turns", out}, {"import", out, "--db", filepath.Join(t.TempDir(), "x.db")}} {
		code, stdout, stderr := runCLI(t, args...)
		if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, "--output-format stream-json' printed for session "+init.SessionID) ||
			!strings.Contains(stderr, "'tsinspect open "+short+"'") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", args[0], code, stdout, stderr)
		}
	}
	code, fromFile, stderr := runCLI(t, "turns", short, "--json")
	if code != 0 {
		t.Fatalf("turns %s: exit %d %s", short, code, stderr)
	}
	code, fromCapture, stderr := runCLI(t, "turns", rec.db, "--json")
	if code != 0 {
		t.Fatalf("turns of the capture: exit %d %s", code, stderr)
	}
	a, b := turnLines(t, fromFile), turnLines(t, fromCapture)
	if len(a) == 0 || !slices.Equal(a, b) {
		t.Errorf("the session's file's turns:\n%s\nthe capture's:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

// turnLines is each turn of turns --json output as its usage and stop
// reason.
func turnLines(t *testing.T, out string) []string {
	t.Helper()
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var tu report.Turn
		if err := json.Unmarshal([]byte(line), &tu); err != nil {
			t.Fatalf("turns --json line %q: %v", line, err)
		}
		u := tu.Usage
		lines = append(lines, fmt.Sprintf("%s %d/%d/%d/%d", tu.StopReason, u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens))
	}
	return lines
}
