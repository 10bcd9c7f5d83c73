package timeline_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

// toolsearchSession is the plain round trip: search, call, answer.
func toolsearchSession(c *capture) *conv {
	r1 := call("toolu_s1", "ToolSearch", obj{"query": "select:" + echo, "max_results": 5}, 0, 20000)
	c1 := mainConv("use the demo tools")
	c.send(c1, r1)
	c2 := c1.then(r1).user(toolResult("toolu_s1", refs(echo), false), text("Tool loaded."))
	c2.tools = append(c2.tools, deferred(echo))
	r2 := call("toolu_e1", echo, obj{"text": "hello"}, 20000, 150)
	c.send(c2, r2)
	c3 := c2.then(r2).user(toolResult("toolu_e1", "hello", false))
	r3 := say("The echo tool answered: hello", 20150, 80)
	c.send(c3, r3)
	return c3.then(r3)
}

func TestBuildBasics(t *testing.T) {
	c := newCapture(t)
	first := c.now
	// A count_tokens call and a warm-up probe are exchanges, not turns.
	c.exs = append(c.exs, exchange.Exchange{ID: 99, Start: c.now, Method: "POST", URL: "https://api.anthropic.com/v1/messages/count_tokens",
		ReqBody: []byte(`{"model":"m","messages":[]}`), Status: 200, RespBody: []byte(`{"input_tokens":12}`), State: exchange.StateComplete})
	c.exs = append(c.exs, exchange.Exchange{ID: 98, Start: c.now, Method: "HEAD", URL: "https://api.anthropic.com/api/hello", Status: 200, State: exchange.StateComplete})
	c.wait(time.Second)
	toolsearchSession(c)
	s := c.build()
	if s.Exchanges != 5 || len(s.Turns) != 3 {
		t.Fatalf("exchanges %d turns %d, want 5 and 3", s.Exchanges, len(s.Turns))
	}
	if !s.FirstAt.Equal(first) || !s.LastAt.Equal(c.exs[4].Start) {
		t.Errorf("FirstAt %v LastAt %v", s.FirstAt, s.LastAt)
	}
	wantThreads(t, s, map[string][]int{"main": {1, 2, 3}})
	if s.Threads[0].Kind != timeline.KindMain {
		t.Errorf("kind %s", s.Threads[0].Kind)
	}
	for i, want := range []struct {
		prev int
		link string
	}{{0, timeline.LinkNew}, {1, timeline.LinkExtends}, {2, timeline.LinkExtends}} {
		tt := s.Turns[i]
		if tt.Index != i+1 || tt.Prev != want.prev || tt.Link != want.link || tt.Thread != "main" {
			t.Errorf("turn %d: index %d prev %d link %s thread %s, want prev %d link %s", i+1, tt.Index, tt.Prev, tt.Link, tt.Thread, want.prev, want.link)
		}
		if len(tt.Flags) > 0 {
			t.Errorf("turn %d flags: %+v", i+1, tt.Flags)
		}
	}
	// The search loaded echo: the working set grows on turn 2.
	if got := fmt.Sprint(s.Turns[1].WorkingAdded, s.Turns[1].WorkingRemoved); got != "[mcp__demo__echo] []" {
		t.Errorf("turn 2 working diff %s", got)
	}
	if s.Turns[0].WorkingAdded != nil || s.Turns[0].CatalogAdded != nil {
		t.Errorf("the first turn of a thread has no diff")
	}
	if s.Turn(2) != s.Turns[1] || s.Turn(0) != nil || s.Turn(4) != nil || s.Thread("main") != s.Threads[0] || s.Thread("x") != nil {
		t.Errorf("lookups")
	}
}

func TestCatalogDiff(t *testing.T) {
	c := newCapture(t)
	r1 := call("toolu_1", "Bash", obj{"command": "ls"}, 0, 20000)
	c1 := mainConv("go")
	c.send(c1, r1)
	// The next request announces a new tool and removes one.
	c2 := c1.then(r1).user(toolResult("toolu_1", "ok", false),
		text("<system-reminder>\nThe following deferred tools are no longer available in this session. Do not search for them — ToolSearch will return no match:\nmcp__demo__action_0\n</system-reminder>"),
		text("<system-reminder>\nThe following deferred tools are now available via ToolSearch:\nmcp__demo__zeta\nmcp__demo__alpha\n</system-reminder>"))
	c.send(c2, say("ok", 20000, 100))
	s := c.build()
	tt := s.Turn(2)
	if fmt.Sprint(tt.CatalogAdded, tt.CatalogRemoved) != "[mcp__demo__alpha mcp__demo__zeta] [mcp__demo__action_0]" {
		t.Errorf("catalog diff %v %v", tt.CatalogAdded, tt.CatalogRemoved)
	}
}

func TestInterleavedSubagents(t *testing.T) {
	c := newCapture(t)
	m1 := mainConv("research this")
	r1 := reply{content: []any{toolUse("toolu_a1", "Agent", obj{"prompt": "task one"}), toolUse("toolu_a2", "Agent", obj{"prompt": "task two"})}, stop: "tool_use", create: 20000}
	c.send(m1, r1)
	// Two subagents run in parallel, interleaved.
	s1 := subConv("task one")
	s2 := subConv("task two")
	rs1 := call("toolu_b1", "Bash", obj{"command": "ls"}, 0, 11000)
	rs2 := call("toolu_b2", "Bash", obj{"command": "pwd"}, 0, 11000)
	start := c.now
	c.sendAt(s1, rs1, start)
	c.sendAt(s2, rs2, start.Add(10*time.Millisecond))
	c.wait(2 * time.Second)
	c.send(s2.then(rs2).user(toolResult("toolu_b2", "/", false)), say("two done", 11000, 50))
	c.send(s1.then(rs1).user(toolResult("toolu_b1", "a b", false)), say("one done", 11000, 50))
	m2 := m1.then(r1).user(toolResult("toolu_a1", "one done", false), toolResult("toolu_a2", "two done", false))
	c.send(m2, say("all done", 20000, 300))
	s := c.build()
	wantThreads(t, s, map[string][]int{"main": {1, 6}, "sub1": {2, 5}, "sub2": {3, 4}})
	for _, th := range s.Threads {
		want := timeline.KindSubagent
		if th.ID == "main" {
			want = timeline.KindMain
		}
		if th.Kind != want {
			t.Errorf("thread %s kind %s", th.ID, th.Kind)
		}
	}
	if len(allFlags(s, timeline.FlagCacheBreak)) > 0 {
		t.Errorf("cache breaks:\n%s", dump(s))
	}
}

// Subagents of a client without a billing header are told apart by their
// own system prompt and by running while the main thread does; a later
// thread with another prompt that does not overlap is another
// conversation (side queries are Claude Code's notion).
func TestSubagentWithoutHeader(t *testing.T) {
	c := newCapture(t)
	m1 := mainConv("go")
	m1.system = m1.system[1:]
	r1 := call("toolu_a1", "Agent", obj{"prompt": "look"}, 0, 20000)
	c.send(m1, r1)
	sub := subConv("look")
	sub.system = sub.system[1:]
	c.send(sub, say("seen", 0, 11000))
	m2 := m1.then(r1).user(toolResult("toolu_a1", "seen", false))
	r2 := say("done", 20000, 100)
	c.send(m2, r2)
	c.wait(time.Minute)
	other := subConv("later, unrelated")
	other.system = []any{text("You are a different agent.")}
	c.send(other, say("ok", 0, 0))
	s := c.build()
	wantThreads(t, s, map[string][]int{"main": {1, 3}, "sub1": {2}, "conv1": {4}})
	if k := s.Thread("conv1").Kind; k != timeline.KindConversation {
		t.Errorf("conv1 kind %s", k)
	}
}

func TestRetryJoinsThread(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("go")
	r1 := call("toolu_1", "Bash", obj{"command": "ls"}, 0, 20000)
	c.send(c1, r1)
	c2 := c1.then(r1).user(toolResult("toolu_1", "a b", false))
	c.send(c2, httpError(529, "overloaded_error", "Overloaded"))
	c.wait(2 * time.Second)
	c.send(c2, say("done", 20000, 100))
	s := c.build()
	wantThreads(t, s, map[string][]int{"main": {1, 2, 3}})
	if tt := s.Turn(3); tt.Prev != 2 || tt.Link != timeline.LinkRepeat {
		t.Errorf("retry: prev %d link %s", tt.Prev, tt.Link)
	}
	f := oneFlag(t, s, timeline.FlagRetry, 3)
	if !strings.Contains(f.Detail, "HTTP 529") || f.Severity != timeline.SeverityInfo {
		t.Errorf("retry detail %q severity %s", f.Detail, f.Severity)
	}
	e := oneFlag(t, s, timeline.FlagAPIError, 2)
	if !strings.Contains(e.Detail, "529") || !strings.Contains(e.Detail, "overloaded_error: Overloaded") || e.Severity != timeline.SeverityError {
		t.Errorf("api_error %+v", e)
	}
	noFlag(t, s, timeline.FlagCacheBreak)
}

// Two subagents started at once with the same prompt send the same first
// request: twins, not a retry.
func TestParallelTwinsAreTwoThreads(t *testing.T) {
	c := newCapture(t)
	m1 := mainConv("go")
	r1 := reply{content: []any{toolUse("toolu_a1", "Agent", obj{"prompt": "same"}), toolUse("toolu_a2", "Agent", obj{"prompt": "same"})}, stop: "tool_use", create: 20000}
	c.send(m1, r1)
	sub := subConv("same")
	ra := call("toolu_x1", "Bash", obj{"command": "ls"}, 0, 11000)
	rb := call("toolu_x2", "Bash", obj{"command": "ls"}, 11000, 0)
	start := c.now
	c.sendAt(sub, ra, start)
	c.sendAt(sub, rb, start.Add(5*time.Millisecond))
	c.wait(2 * time.Second)
	c.send(sub.then(rb).user(toolResult("toolu_x2", "b", false)), say("b", 11000, 40))
	c.send(sub.then(ra).user(toolResult("toolu_x1", "a", false)), say("a", 11000, 40))
	s := c.build()
	wantThreads(t, s, map[string][]int{"main": {1}, "sub1": {2, 5}, "sub2": {3, 4}})
	noFlag(t, s, timeline.FlagRetry)
}

// A repeat of a request that worked, after it ended, stays in its thread
// but is not a retry.
func TestRepeatAfterSuccess(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("go")
	c.send(c1, say("hi", 0, 20000))
	c.send(c1, say("hi", 20000, 0))
	s := c.build()
	wantThreads(t, s, map[string][]int{"main": {1, 2}})
	if s.Turn(2).Link != timeline.LinkRepeat {
		t.Errorf("link %s", s.Turn(2).Link)
	}
	noFlag(t, s, timeline.FlagRetry)
}

// --resume in a new process re-sends the history with a new prompt; the
// billing header differs, the model may too.
func TestResumeExtends(t *testing.T) {
	c := newCapture(t)
	hist := toolsearchSession(c)
	c.wait(30 * time.Second)
	resumed := hist.user(text("again please"))
	resumed.system[0] = text("x-anthropic-billing-header: cc_version=2.1.328.50a; cc_entrypoint=sdk-cli;")
	resumed.model = "claude-opus-4-5"
	c.send(resumed, say("Done.", 0, 20400))
	s := c.build()
	wantThreads(t, s, map[string][]int{"main": {1, 2, 3, 4}})
	if tt := s.Turn(4); tt.Prev != 3 || tt.Link != timeline.LinkExtends {
		t.Errorf("resume: prev %d link %s", tt.Prev, tt.Link)
	}
	f := oneFlag(t, s, timeline.FlagCacheBreak, 4)
	if f.Cause != timeline.CauseModel || f.TokensLost != 20230 {
		t.Errorf("cause %s lost %d", f.Cause, f.TokensLost)
	}
}

// A client that rewrites its history on resume (reminders moved into a
// system message, as Claude Code does on a newer model) is still linked,
// through the tool use ids and texts the history keeps.
func TestRestructuredHistory(t *testing.T) {
	c := newCapture(t)
	hist := toolsearchSession(c)
	// Rewrite message 0 and drop the "Tool loaded." text.
	h := hist.clone()
	h.messages[0] = obj{"role": "user", "content": []any{text("use the demo tools")}}
	h.messages = append(h.messages[:1], append([]any{obj{"role": "system", "content": "# Environment"}}, h.messages[1:]...)...)
	c.send(h.user(text("again please")), say("Done.", 11000, 9000))
	s := c.build()
	wantThreads(t, s, map[string][]int{"main": {1, 2, 3, 4}})
	if tt := s.Turn(4); tt.Prev != 3 || tt.Link != timeline.LinkHistory {
		t.Errorf("prev %d link %s\n%s", tt.Prev, tt.Link, dump(s))
	}
	f := oneFlag(t, s, timeline.FlagCacheBreak, 4)
	if f.Cause != timeline.CauseMessages || !strings.Contains(f.Detail, "message 0 (user)") {
		t.Errorf("cause %s: %s", f.Cause, f.Detail)
	}
}

func compactionRequest(hist *conv) *conv {
	return hist.user(text("CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\nSummarize the conversation."))
}

func TestCompaction(t *testing.T) {
	for _, keepTail := range []bool{true, false} {
		t.Run(fmt.Sprintf("keepTail=%v", keepTail), func(t *testing.T) {
			c := newCapture(t)
			hist := toolsearchSession(c)
			// A subagent runs meanwhile: the compacted thread must be found
			// by lineage, not by recency.
			c.send(subConv("look around"), say("nothing", 0, 11000))
			c.send(compactionRequest(hist), say("<summary>the user asked for echo</summary>", 20230, 60))
			// The re-ask with an edited instruction is the same side thread.
			c.send(hist.user(text("CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\nSummarize it, with <summary> tags.")), say("<summary>echo</summary>", 20230, 0))
			cont := mainConv("x")
			msgs := []any{obj{"role": "user", "content": "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary: echo."}}
			if keepTail {
				msgs = append(msgs, obj{"role": "assistant", "content": []any{text("The echo tool answered: hello")}})
			}
			cont.messages = append(msgs, obj{"role": "user", "content": []any{catalogReminder(echo), text("again please")}})
			cont.tools = append(cont.tools, deferred(echo))
			// Only tools and system are read back.
			c.send(cont, say("ok", 9000, 2000))
			s := c.build()
			wantThreads(t, s, map[string][]int{"main": {1, 2, 3, 7}, "sub1": {4}, "side1": {5, 6}})
			tt := s.Turn(7)
			if tt.Prev != 3 || tt.Link != timeline.LinkCompaction {
				t.Errorf("continuation: prev %d link %s", tt.Prev, tt.Link)
			}
			if s.Turn(6).Link != timeline.LinkBranch {
				t.Errorf("re-ask link %s", s.Turn(6).Link)
			}
			noFlag(t, s, timeline.FlagCacheBreak)
		})
	}
}

func TestSideQueries(t *testing.T) {
	c := newCapture(t)
	m1 := mainConv("go")
	c.send(m1, say("hi", 0, 20000))
	// A title query: small max_tokens, no tools.
	title := &conv{model: "claude-haiku-4-5", maxTokens: 512, system: []any{text("Generate a title.")},
		messages: []any{obj{"role": "user", "content": "go"}}}
	c.send(title, say("Greeting", 0, 0))
	// A quota check: tools, but max_tokens 1.
	quota := mainConv("quota")
	quota.maxTokens = 1
	c.send(quota, say("", 0, 0))
	// The title asked again, failing, then retried: same side thread.
	c.send(title, httpError(500, "api_error", "Internal server error"))
	c.send(title, say("Greeting", 0, 0))
	s := c.build()
	wantThreads(t, s, map[string][]int{"main": {1}, "side1": {2, 4, 5}, "side2": {3}})
	oneFlag(t, s, timeline.FlagRetry, 5)
	for _, th := range s.Threads[1:] {
		if th.Kind != timeline.KindSide {
			t.Errorf("%s kind %s", th.ID, th.Kind)
		}
	}
	// count_tokens-like no-tools requests never become main.
	c2 := newCapture(t)
	c2.send(title, say("x", 0, 0))
	c2.send(m1, say("hi", 0, 20000))
	s2 := c2.build()
	wantThreads(t, s2, map[string][]int{"side1": {1}, "main": {2}})
	if s2.Threads[0].ID != "side1" || s2.Threads[1].ID != "main" {
		t.Errorf("threads are in order of their first turn: %v %v", s2.Threads[0].ID, s2.Threads[1].ID)
	}
}

// Malformed and odd exchanges never break Build.
func TestBuildRobust(t *testing.T) {
	exs := []exchange.Exchange{
		{ID: 1, Method: "POST", URL: "/v1/messages", ReqBody: []byte("not json"), Status: 200, RespBody: []byte("{")},
		{ID: 2, Method: "POST", URL: "/v1/messages", ReqBody: nil, State: exchange.StateInFlight},
		{ID: 3, Method: "POST", URL: "/v1/messages", ReqBody: []byte(`{"messages":[{"role":"user","content":null}],"tools":"x"}`), Status: 502, State: exchange.StateUpstreamFailed},
		{ID: 4, Method: "GET", URL: "/v1/models", Status: 200},
	}
	s := timeline.Build(exs)
	if len(s.Turns) != 3 || s.Exchanges != 4 {
		t.Fatalf("turns %d exchanges %d", len(s.Turns), s.Exchanges)
	}
	for _, tt := range s.Turns {
		if tt.Thread == "" || tt.Decoded == nil {
			t.Errorf("turn %d: thread %q", tt.Index, tt.Thread)
		}
	}
	if got := timeline.Build(nil); got == nil || len(got.Turns) != 0 || got.Exchanges != 0 {
		t.Errorf("empty build %+v", got)
	}
}

// A capture holding requests only (no response was recorded) is still
// linked: by message prefixes, and through the tool use ids a rewritten
// history keeps.
func TestRequestsOnly(t *testing.T) {
	c := newCapture(t)
	var bodies []*conv
	r1 := call("toolu_s1", "ToolSearch", obj{"query": "select:" + echo}, 0, 0)
	c1 := mainConv("use the demo tools")
	c2 := c1.then(r1).user(toolResult("toolu_s1", refs(echo), false), text("Tool loaded."))
	r2 := call("toolu_e1", echo, obj{"text": "first"}, 0, 0)
	c3 := c2.then(r2).user(toolResult("toolu_e1", "first", false))
	// Resumed on another model: reminders moved into system messages.
	c5 := c3.then(say("Done.", 0, 0)).user(text("again please"))
	c5.model = "claude-opus-5-5"
	c5.messages[0] = obj{"role": "user", "content": []any{text("use the demo tools")}}
	c5.messages = append(c5.messages[:1], append([]any{obj{"role": "system", "content": "# Environment"}}, c5.messages[1:]...)...)
	bodies = append(bodies, c1, c2, c3, subConv("SUBAGENT-TASK: look"), c5)
	for _, b := range bodies {
		c.send(b, reply{})
		ex := &c.exs[len(c.exs)-1]
		ex.RespBody, ex.RespHeaders, ex.State, ex.Status = nil, nil, exchange.StateClientAborted, 0
	}
	s := c.build()
	wantThreads(t, s, map[string][]int{"main": {1, 2, 3, 5}, "sub1": {4}})
	for i, want := range []string{timeline.LinkNew, timeline.LinkPrefix, timeline.LinkPrefix, timeline.LinkNew, timeline.LinkHistory} {
		if got := s.Turn(i + 1).Link; got != want {
			t.Errorf("turn %d link %s, want %s", i+1, got, want)
		}
	}
}

// BenchmarkBuild builds a 200-turn main thread with growing history and
// interleaved subagents.
func BenchmarkBuild(b *testing.B) {
	c := newCapture(nil)
	m := mainConv("go")
	for i := 0; i < 200; i++ {
		id := fmt.Sprintf("toolu_%d", i)
		r := call(id, "Bash", obj{"command": strings.Repeat("x", 200)}, int64(20000+i*100), 100)
		c.send(m, r)
		if i%20 == 0 {
			c.send(subConv(fmt.Sprintf("task %d", i)), say("ok", 0, 11000))
		}
		m = m.then(r).user(toolResult(id, strings.Repeat("output ", 100), false))
	}
	var size int64
	for _, ex := range c.exs {
		size += int64(len(ex.ReqBody) + len(ex.RespBody))
	}
	b.SetBytes(size) // MB/s is decode throughput over the whole capture
	b.ReportAllocs()
	for b.Loop() {
		s := timeline.Build(c.exs)
		if len(s.Threads) != 11 {
			b.Fatalf("threads %d", len(s.Threads))
		}
	}
}
