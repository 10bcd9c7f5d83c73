package timeline_test

// Real-client tests: the real Claude Code CLI, recorded by tsinspect, talks
// to the scripted stand-in, which is scripted to cause one flag kind; the
// capture is read back and analysed by timeline.Build. Claude Code is found
// on PATH or through $TSINSPECT_CLAUDE; without it these tests skip (or fail
// when TSINSPECT_REQUIRE_CLAUDE is set).

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/timeline"
)

// realRun is one run of the CLI in a recorded session.
type realRun struct {
	opts session.Options
	// before runs before the CLI starts (e.g. to edit the transcript).
	before func(t *testing.T, home string)
}

// realSession records runs of Claude Code against one stand-in, into one
// capture file, with one HOME: the first run starts session id, the
// others resume it. It returns the capture's exchanges and, for each run,
// the ID of its last exchange.
func realSession(t *testing.T, srvURL string, runs ...realRun) ([]exchange.Exchange, []int64) {
	t.Helper()
	requireClaude(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	db := filepath.Join(dir, "capture.db")
	id := newUUID(t)
	var ends []int64
	for i, r := range runs {
		o := r.opts
		o.Home, o.DB, o.Mode = home, db, orDefault(o.Mode, "reverse")
		if o.Timeout == 0 {
			o.Timeout = time.Minute
		}
		if i == 0 {
			o.Args = append([]string{"--session-id", id}, o.Args...)
		} else {
			o.Args = append([]string{"--resume", id}, o.Args...)
		}
		if r.before != nil {
			r.before(t, home)
		}
		res := kit.Record(t, srvURL, o)
		if res.Err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, res.Err, res.Output)
		}
		exs := session.ReadCapture(t, db)
		var last int64
		if len(exs) > 0 {
			last = exs[len(exs)-1].ID
		}
		ends = append(ends, last)
	}
	return session.ReadCapture(t, db), ends
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func newUUID(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// standIn starts the scripted API.
func standIn(t *testing.T, routes map[fixtures.Route][]fixtures.Step, opts fixtures.Options) string {
	_, u := session.StandIn(t, fixtures.Script{Routes: routes}, opts)
	return u
}

// mainTurns returns the main thread's turns, failing when there is none.
func mainTurns(t *testing.T, s *timeline.Session) []*timeline.Turn {
	t.Helper()
	th := s.Thread("main")
	if th == nil {
		t.Fatalf("no main thread\n%s", dump(s))
	}
	var out []*timeline.Turn
	for _, i := range th.Turns {
		out = append(out, s.Turn(i))
	}
	return out
}

// firstMainAfter is the first main turn recorded after exchange id.
func firstMainAfter(t *testing.T, s *timeline.Session, id int64) *timeline.Turn {
	t.Helper()
	for _, tt := range mainTurns(t, s) {
		if tt.Exchange.ID > id {
			return tt
		}
	}
	t.Fatalf("no main turn after exchange %d\n%s", id, dump(s))
	return nil
}

// wantOnly asserts that the only flags of kind are on turn i (one each
// per want), and returns them.
func wantOnly(t *testing.T, s *timeline.Session, kind string, i int) timeline.Flag {
	t.Helper()
	all := allFlags(s, kind)
	if len(all) != 1 || len(all[i]) != 1 {
		t.Fatalf("%s: want one flag on turn %d, got %s\n%s", kind, i, describeFlags(all), dump(s))
	}
	t.Logf("turn %d %s: %s", i, kind, all[i][0].Detail)
	return all[i][0]
}

func wantDetail(t *testing.T, f timeline.Flag, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(f.Detail, p) {
			t.Errorf("%s detail lacks %q: %s", f.Kind, p, f.Detail)
		}
	}
}

const (
	demoEcho   = "mcp__demo__echo"
	resumeText = "again please"
)

// toolsearchRoutes is the plain round trip: search, call, answer.
func toolsearchRoutes() map[fixtures.Route][]fixtures.Step {
	sc, _ := fixtures.Scenario("toolsearch")
	return sc.Routes
}

// TestRealCleanSession is the counterpart of every fault below: the same
// session (search, call, answer, then --resume with a new prompt) raises no
// flag of any kind, and is one main thread.
func TestRealCleanSession(t *testing.T) {
	u := standIn(t, toolsearchRoutes(), fixtures.Options{})
	exs, _ := realSession(t, u, realRun{}, realRun{opts: session.Options{Prompt: resumeText}})
	s := timeline.Build(exs)
	turns := mainTurns(t, s)
	if len(turns) < 4 || len(s.Threads) != 1 {
		t.Fatalf("want one main thread of at least 4 turns\n%s", dump(s))
	}
	for _, tt := range turns[1:] {
		if tt.Prev == 0 || tt.Link != timeline.LinkExtends {
			t.Errorf("turn %d: prev %d link %s", tt.Index, tt.Prev, tt.Link)
		}
	}
	if fmt.Sprint(turns[1].WorkingAdded) != "["+demoEcho+"]" {
		t.Errorf("turn 2 working added %v", turns[1].WorkingAdded)
	}
	for _, tt := range s.Turns {
		if len(tt.Flags) > 0 {
			t.Errorf("turn %d has flags\n%s", tt.Index, dump(s))
		}
	}
}

// Calling a deferred tool that was never loaded: Claude Code runs an MCP
// tool anyway, and refuses a built-in one whose input does not validate,
// saying that the schema was not sent.
func TestRealCallBeforeLoad(t *testing.T) {
	for _, tc := range []struct {
		name, tool string
		input      map[string]any
		detail     string
	}{
		{"mcp tool runs anyway", demoEcho, map[string]any{"text": "hello"}, "ran it anyway"},
		{"built-in tool refused", "CronCreate", map[string]any{}, "InputValidationError: the schema was not sent to the API"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := standIn(t, map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(
				fixtures.CallTool(tc.tool, tc.input),
				fixtures.Text("Done."),
			)}, fixtures.Options{})
			exs, _ := realSession(t, u, realRun{})
			s := timeline.Build(exs)
			first := mainTurns(t, s)[0]
			f := wantOnly(t, s, timeline.FlagCallBeforeLoad, first.Index)
			if f.Tool != tc.tool {
				t.Errorf("tool %q", f.Tool)
			}
			wantDetail(t, f, tc.tool, "catalog", tc.detail)
			noFlag(t, s, timeline.FlagUnknownTool)
		})
	}
}

func TestRealUnknownTool(t *testing.T) {
	const nope = "mcp__demo__no_such_tool"
	u := standIn(t, map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(
		fixtures.CallTool(nope, map[string]any{"text": "hello"}),
		fixtures.Text("Done."),
	)}, fixtures.Options{})
	exs, _ := realSession(t, u, realRun{})
	s := timeline.Build(exs)
	first := mainTurns(t, s)[0]
	f := wantOnly(t, s, timeline.FlagUnknownTool, first.Index)
	if f.Tool != nope {
		t.Errorf("tool %q", f.Tool)
	}
	wantDetail(t, f, "No such tool available")
	noFlag(t, s, timeline.FlagCallBeforeLoad)
}

// An empty stop_sequence reply right after the tool_reference result;
// Claude Code retries.
func TestRealStopSequenceAnomaly(t *testing.T) {
	u := standIn(t, map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: {
		{fixtures.ToolSearch("select:"+demoEcho, 5)},
		{fixtures.EmptyStop("\n\nHuman:"), fixtures.CallTool(demoEcho, map[string]any{"text": "hello"})},
		{fixtures.Text("The echo tool answered: hello")},
	}}, fixtures.Options{})
	exs, _ := realSession(t, u, realRun{})
	s := timeline.Build(exs)
	turns := mainTurns(t, s)
	f := wantOnly(t, s, timeline.FlagStopSequence, turns[1].Index)
	wantDetail(t, f, "empty", "no stop_sequences", "tool_reference ("+demoEcho+")", `"Tool loaded." text was there`)
	r := wantOnly(t, s, timeline.FlagRetry, turns[2].Index)
	wantDetail(t, r, "came back empty")
	if turns[2].Prev != turns[1].Index {
		t.Errorf("the retry's prev is %d, want the empty turn %d", turns[2].Prev, turns[1].Index)
	}
	noFlag(t, s, timeline.FlagCacheBreak)
}

func TestRealEmptySearch(t *testing.T) {
	u := standIn(t, map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(
		fixtures.ToolSearch("weather forecast", 5),
		fixtures.Text("There is no weather tool."),
	)}, fixtures.Options{})
	exs, _ := realSession(t, u, realRun{})
	s := timeline.Build(exs)
	turns := mainTurns(t, s)
	f := wantOnly(t, s, timeline.FlagEmptySearch, turns[1].Index)
	wantDetail(t, f, `"weather forecast"`, "No matching deferred tools found")
	call := turns[0].Decoded.ToolCalls
	if len(call) != 1 || f.Search != call[0].ID {
		t.Errorf("search %q, want the id of turn 1's ToolSearch call %+v", f.Search, call)
	}
}

// An HTTP 500, a cut stream and an error event, each retried.
func TestRealErrorsAndRetries(t *testing.T) {
	u := standIn(t, map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: {
		{fixtures.HTTPError(http.StatusInternalServerError, "api_error", "Internal server error"), fixtures.ToolSearch("select:"+demoEcho, 5)},
		{fixtures.CutStream(3), fixtures.CallTool(demoEcho, map[string]any{"text": "hello"})},
		{fixtures.StreamError("overloaded_error", "Overloaded"), fixtures.Text("The echo tool answered: hello")},
	}}, fixtures.Options{})
	exs, _ := realSession(t, u, realRun{})
	s := timeline.Build(exs)
	turns := mainTurns(t, s)
	if len(turns) != 6 {
		t.Fatalf("want 6 main turns (3 attempts failing, 3 retries)\n%s", dump(s))
	}
	errs := allFlags(s, timeline.FlagAPIError)
	if len(errs) != 2 || len(errs[turns[0].Index]) != 1 || len(errs[turns[4].Index]) != 1 {
		t.Fatalf("api_error flags: %s", describeFlags(errs))
	}
	wantDetail(t, errs[turns[0].Index][0], "HTTP 500", "api_error: Internal server error")
	wantDetail(t, errs[turns[4].Index][0], "error event", "overloaded_error: Overloaded")
	f := wantOnly(t, s, timeline.FlagStreamIncomplete, turns[2].Index)
	wantDetail(t, f, "without message_stop")
	retries := allFlags(s, timeline.FlagRetry)
	for _, i := range []int{1, 3, 5} {
		if len(retries[turns[i].Index]) != 1 {
			t.Errorf("no retry flag on main turn %d", i+1)
		}
		if turns[i].Link != timeline.LinkRepeat || turns[i].Prev != turns[i-1].Index {
			t.Errorf("turn %d: link %s prev %d", turns[i].Index, turns[i].Link, turns[i].Prev)
		}
	}
	if len(retries) != 3 {
		t.Errorf("retry flags: %s", describeFlags(retries))
	}
	noFlag(t, s, timeline.FlagCacheBreak)
	// The cut request and its retry carry the same ToolSearch result: the
	// search is the first one's alone.
	if len(turns[2].Decoded.NewSearches) != 1 || len(turns[3].Decoded.NewSearches) != 1 ||
		turns[2].Decoded.NewSearches[0].ToolUseID != turns[3].Decoded.NewSearches[0].ToolUseID {
		t.Fatalf("the cut request and its retry do not both carry the search:\n%s", dump(s))
	}
	if len(turns[2].NewSearches) != 1 || len(turns[3].NewSearches) != 0 {
		t.Errorf("new searches: %d on the cut request, %d on its retry; want 1 and 0", len(turns[2].NewSearches), len(turns[3].NewSearches))
	}
}

// Behind a base URL without ENABLE_TOOL_SEARCH Claude Code may turn tool
// search off; here it is turned off outright, through the HTTPS proxy.
func TestRealToolSearchOff(t *testing.T) {
	u := standIn(t, map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(
		fixtures.CallTool(demoEcho, map[string]any{"text": "hello"}),
		fixtures.Text("The echo tool answered: hello"),
	)}, fixtures.Options{})
	exs, _ := realSession(t, u, realRun{opts: session.Options{Mode: "mitm", Env: []string{"ENABLE_TOOL_SEARCH=false"}}})
	s := timeline.Build(exs)
	turns := mainTurns(t, s)
	f := wantOnly(t, s, timeline.FlagToolSearchOff, turns[0].Index)
	wantDetail(t, f, "MCP tools", "tool search is off")
	noFlag(t, s, timeline.FlagCallBeforeLoad)
	noFlag(t, s, timeline.FlagUnknownTool)
}

// The cache breaks, each provoked on the first request of a --resume run
// (or, for TTL and eviction, mid-run).
func TestRealCacheBreaks(t *testing.T) {
	resume := func(args ...string) realRun {
		return realRun{opts: session.Options{Prompt: resumeText, Args: args}}
	}
	cases := []struct {
		name   string
		routes func() map[fixtures.Route][]fixtures.Step
		runs   []realRun
		cause  string
		detail []string
	}{
		{name: "model", runs: []realRun{{}, {opts: session.Options{Prompt: resumeText, Model: "claude-opus-4-5"}}},
			cause: timeline.CauseModel, detail: []string{"from claude-sonnet-4-5 to claude-opus-4-5"}},
		{name: "tools", runs: []realRun{{}, resume("--disallowedTools", "Bash")},
			cause: timeline.CauseTools, detail: []string{"removed Bash"}},
		{name: "system", runs: []realRun{{}, resume("--append-system-prompt", "Answer in French.", "--system-prompt-snapshot", "off")},
			cause: timeline.CauseSystem, detail: []string{"the system prompt changed (block"}},
		{name: "messages", runs: []realRun{{}, {opts: session.Options{Prompt: resumeText}, before: editTranscript("use the demo tools", "use the DEMO tools")}},
			cause: timeline.CauseMessages, detail: []string{"message 0 (user) is the first that differs", "(text)"}},
		{name: "betas", routes: betaEvictingRoutes("context-1m-2025-08-07"),
			runs:  []realRun{{}, resume("--betas", "context-1m-2025-08-07")},
			cause: timeline.CauseBetas, detail: []string{"added context-1m-2025-08-07"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			routes := toolsearchRoutes()
			if tc.routes != nil {
				routes = tc.routes()
			}
			u := standIn(t, routes, fixtures.Options{})
			exs, ends := realSession(t, u, tc.runs...)
			s := timeline.Build(exs)
			at := firstMainAfter(t, s, ends[0])
			if at.Prev == 0 {
				t.Fatalf("the resumed turn %d starts a thread\n%s", at.Index, dump(s))
			}
			f := wantOnly(t, s, timeline.FlagCacheBreak, at.Index)
			if f.Cause != tc.cause {
				t.Errorf("cause %s, want %s", f.Cause, tc.cause)
			}
			if f.TokensLost < 2000 {
				t.Errorf("tokens lost %d", f.TokensLost)
			}
			wantDetail(t, f, tc.detail...)
		})
	}
	t.Run("ttl", func(t *testing.T) {
		// The stand-in's clock jumps 6 minutes when the third request
		// arrives; the capture's times are moved the same way.
		const jump = 6 * time.Minute
		var mu sync.Mutex
		var offset time.Duration
		now := func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return time.Now().Add(offset)
		}
		routes := toolsearchRoutes()
		routes[fixtures.RouteMain][2] = fixtures.Step{fixtures.Dynamic(func(*fixtures.Request) fixtures.Reply {
			mu.Lock()
			offset = jump
			mu.Unlock()
			return fixtures.Text("The echo tool answered: hello")
		})}
		u := standIn(t, routes, fixtures.Options{Now: now})
		exs, _ := realSession(t, u, realRun{})
		shiftFrom(exs, func(d *decode.Turn) bool { return assistants(d) >= 2 }, jump)
		s := timeline.Build(exs)
		turns := mainTurns(t, s)
		if len(turns) != 3 {
			t.Fatalf("want 3 main turns\n%s", dump(s))
		}
		f := wantOnly(t, s, timeline.FlagCacheBreak, turns[2].Index)
		if f.Cause != timeline.CauseTTL {
			t.Errorf("cause %s", f.Cause)
		}
		wantDetail(t, f, "6 min", "5 min cache lifetime")
	})
	t.Run("unexplained", func(t *testing.T) {
		routes := toolsearchRoutes()
		routes[fixtures.RouteMain][2] = fixtures.Step{fixtures.Text("The echo tool answered: hello").WithEviction()}
		u := standIn(t, routes, fixtures.Options{})
		exs, _ := realSession(t, u, realRun{})
		s := timeline.Build(exs)
		turns := mainTurns(t, s)
		f := wantOnly(t, s, timeline.FlagCacheBreak, turns[2].Index)
		if f.Cause != timeline.CauseUnexplained {
			t.Errorf("cause %s", f.Cause)
		}
		wantDetail(t, f, "nothing in the cached prefix changed", "server's side")
	})
}

// betaEvictingRoutes is the toolsearch script whose answer to the resumed
// request drops the cached prefix when the request carries beta: a server
// that keys its cache on the betas (the stand-in's simulation does not).
func betaEvictingRoutes(beta string) func() map[fixtures.Route][]fixtures.Step {
	return func() map[fixtures.Route][]fixtures.Step {
		routes := toolsearchRoutes()
		routes[fixtures.RouteMain] = append(routes[fixtures.RouteMain], fixtures.Step{fixtures.Dynamic(func(r *fixtures.Request) fixtures.Reply {
			reply := fixtures.Text("Done.")
			if strings.Contains(r.Header.Get("anthropic-beta"), beta) {
				reply = reply.WithEviction()
			}
			return reply
		})})
		return routes
	}
}

// editTranscript rewrites the saved session so that --resume sends an
// earlier message changed: what a client that edits its history does.
func editTranscript(from, to string) func(t *testing.T, home string) {
	return func(t *testing.T, home string) {
		t.Helper()
		edited := 0
		err := filepath.WalkDir(filepath.Join(home, ".claude", "projects"), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if nb := bytes.ReplaceAll(b, []byte(from), []byte(to)); !bytes.Equal(nb, b) {
				edited++
				return os.WriteFile(p, nb, 0o600)
			}
			return nil
		})
		if err != nil || edited == 0 {
			t.Fatalf("edit transcript: %v (%d files edited)", err, edited)
		}
	}
}

func assistants(d *decode.Turn) int {
	n := 0
	for _, m := range d.Request.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// shiftFrom moves the times of the first Messages exchange matching from,
// and of every exchange after it, by d.
func shiftFrom(exs []exchange.Exchange, from func(*decode.Turn) bool, d time.Duration) {
	shifting := false
	for i := range exs {
		ex := &exs[i]
		if !shifting {
			dt := decode.Decode(ex)
			shifting = dt.Request.Kind == decode.KindMessages && from(dt)
		}
		if !shifting {
			continue
		}
		for _, tp := range []*time.Time{&ex.Start, &ex.FirstByte, &ex.End} {
			if !tp.IsZero() {
				*tp = tp.Add(d)
			}
		}
		for j := range ex.Chunks {
			ex.Chunks[j].At = ex.Chunks[j].At.Add(d)
		}
	}
}

// A main agent that starts several subagents, each searching and calling a
// tool: every subagent gets its own thread, and no cache break is seen.
func TestRealSubagents(t *testing.T) {
	agent := func(n int) fixtures.Reply {
		return fixtures.CallTool("Agent", map[string]any{
			"description":   fmt.Sprintf("task %d", n),
			"prompt":        fmt.Sprintf("SUBAGENT-TASK %d: use the demo echo tool and report.", n),
			"subagent_type": "general-purpose",
		})
	}
	u := standIn(t, map[fixtures.Route][]fixtures.Step{
		fixtures.RouteMain: fixtures.Steps(agent(1), agent(2), agent(3), fixtures.Text("All three subagents reported.")),
		fixtures.RouteSubagent: fixtures.Steps(
			fixtures.ToolSearch("select:"+demoEcho, 5),
			fixtures.CallTool(demoEcho, map[string]any{"text": "from a subagent"}),
			fixtures.Text("The subagent echoed its text."),
		),
	}, fixtures.Options{})
	exs, _ := realSession(t, u, realRun{})
	s := timeline.Build(exs)
	var subs []*timeline.Thread
	for _, th := range s.Threads {
		switch th.Kind {
		case timeline.KindSubagent:
			subs = append(subs, th)
			for _, i := range th.Turns {
				if !strings.Contains(s.Turn(i).Decoded.Request.System[0].Text, "cc_is_subagent=true") &&
					!strings.Contains(s.Turn(i).Decoded.Request.System[len(s.Turn(i).Decoded.Request.System)-1].Text, "You are an agent for Claude Code") {
					t.Errorf("turn %d in %s does not look like a subagent's", i, th.ID)
				}
			}
		case timeline.KindSide:
			t.Errorf("unexpected side thread %s\n%s", th.ID, dump(s))
		}
	}
	if len(subs) != 3 || len(mainTurns(t, s)) < 4 {
		t.Fatalf("want a main thread of 4+ turns and 3 subagent threads\n%s", dump(s))
	}
	for _, th := range subs {
		if len(th.Turns) < 2 {
			t.Errorf("subagent %s has %d turns", th.ID, len(th.Turns))
		}
	}
	noFlag(t, s, timeline.FlagCacheBreak)
	noFlag(t, s, timeline.FlagCallBeforeLoad)
	t.Logf("\n%s", dump(s))
}

// /compact in a resumed run, then another resumed run: the compaction
// requests are a side thread, the restarted history joins main, and the
// restart is not taken for a cache break.
func TestRealCompaction(t *testing.T) {
	routes := toolsearchRoutes()
	summary := fixtures.Text("<analysis>The user asked to use the demo tools.</analysis>\n<summary>1. Primary Request and Intent: use the demo tools.\n2. The echo tool was loaded with ToolSearch and called with hello; it answered hello.\n3. Pending Tasks: none.</summary>")
	routes[fixtures.RouteSide] = fixtures.Steps(summary, summary, summary, summary)
	u := standIn(t, routes, fixtures.Options{})
	exs, ends := realSession(t, u, realRun{}, realRun{opts: session.Options{Prompt: "/compact"}}, realRun{opts: session.Options{Prompt: resumeText}})
	s := timeline.Build(exs)
	var compactions int
	for _, tt := range s.Turns {
		if tt.Exchange.ID > ends[0] && tt.Exchange.ID <= ends[1] {
			compactions++
			if th := s.Thread(tt.Thread); th == nil || th.Kind != timeline.KindSide {
				t.Errorf("compaction turn %d is in thread %s", tt.Index, tt.Thread)
			}
		}
	}
	if compactions == 0 {
		t.Fatalf("no compaction request\n%s", dump(s))
	}
	cont := firstMainAfter(t, s, ends[1])
	if cont.Link != timeline.LinkCompaction || cont.Prev == 0 || s.Turn(cont.Prev).Exchange.ID > ends[0] {
		t.Errorf("continuation turn %d: link %s prev %d\n%s", cont.Index, cont.Link, cont.Prev, dump(s))
	}
	for _, tt := range s.Turns {
		if len(tt.Flags) > 0 {
			t.Errorf("turn %d has flags\n%s", tt.Index, dump(s))
		}
	}
}

// Twelve parallel tool calls add 24 content blocks (the calls and their
// results) between two breakpoints, more than the API's 20-block lookback:
// the next request cannot find the previous turn's cache entry, although
// nothing in its prefix changed.
func TestRealLookbackExceeded(t *testing.T) {
	var calls []fixtures.Reply
	for i := 0; i < 12; i++ {
		calls = append(calls, fixtures.CallTool(demoEcho, map[string]any{"text": fmt.Sprintf("call %d", i)}))
	}
	u := standIn(t, map[fixtures.Route][]fixtures.Step{
		fixtures.RouteMain: fixtures.Steps(
			fixtures.ToolSearch("select:"+demoEcho, 5),
			fixtures.Together(calls...),
			fixtures.Text("Twelve echoes came back."),
		),
	}, fixtures.Options{})
	exs, _ := realSession(t, u, realRun{})
	s := timeline.Build(exs)
	turns := mainTurns(t, s)
	if len(turns) != 3 {
		t.Fatalf("want 3 main turns (search, 12 calls, answer)\n%s", dump(s))
	}
	if n := len(turns[1].Decoded.ToolCalls); n != 12 {
		t.Fatalf("turn 2 made %d calls, want 12", n)
	}
	f := wantOnly(t, s, timeline.FlagCacheBreak, turns[2].Index)
	if f.Cause != timeline.CauseLookback {
		t.Errorf("cause %s, want %s: %s", f.Cause, timeline.CauseLookback, f.Detail)
	}
	wantDetail(t, f, "looks back only 20 blocks")
	noFlag(t, s, timeline.FlagCallBeforeLoad)
}
