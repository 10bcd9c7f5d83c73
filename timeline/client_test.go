package timeline_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

// sdkConv is an agent loop of an application on the TypeScript SDK: tools,
// a small max_tokens, a plain system prompt.
func sdkConv(prompt string) *conv {
	return &conv{
		model:     "claude-sonnet-4-5",
		system:    []any{cached(text("You are a helpful assistant."))},
		tools:     []any{tool("get_weather"), tool("lookup")},
		messages:  []any{obj{"role": "user", "content": []any{text(prompt)}}},
		maxTokens: 1024,
		headers: []exchange.Header{{Name: "User-Agent", Value: "Anthropic/JS 0.71.0"},
			{Name: "X-Stainless-Lang", Value: "js"}, {Name: "X-Stainless-Package-Version", Value: "0.71.0"}},
	}
}

func TestClientDetection(t *testing.T) {
	cases := []struct {
		name    string
		headers []exchange.Header
		system  []any
		want    string
		family  string
	}{
		{"claude-cli user agent", []exchange.Header{{Name: "User-Agent", Value: "claude-cli/2.1.328 (external, cli)"}, {Name: "X-Stainless-Lang", Value: "js"}}, []any{text("You are an agent.")}, "Claude Code 2.1.328", timeline.ClientClaudeCode},
		{"billing header only", nil, []any{text(mainBilling), text(mainPrompt)}, "Claude Code 2.1.328", timeline.ClientClaudeCode},
		{"typescript sdk", []exchange.Header{{Name: "User-Agent", Value: "Anthropic/JS 0.71.0"}, {Name: "X-Stainless-Lang", Value: "js"}, {Name: "X-Stainless-Package-Version", Value: "0.71.0"}}, nil, "Anthropic TypeScript SDK 0.71.0", timeline.ClientSDK},
		{"go sdk", []exchange.Header{{Name: "User-Agent", Value: "Anthropic/Go 1.16.0"}}, nil, "Anthropic Go SDK 1.16.0", timeline.ClientSDK},
		{"python stainless only", []exchange.Header{{Name: "X-Stainless-Lang", Value: "python"}, {Name: "X-Stainless-Package-Version", Value: "0.69.0"}}, nil, "Anthropic Python SDK 0.69.0", timeline.ClientSDK},
		{"other user agent", []exchange.Header{{Name: "User-Agent", Value: "python-httpx/0.28.1"}}, nil, "python-httpx 0.28.1", timeline.ClientOther},
		{"nothing", nil, nil, "unknown", timeline.ClientOther},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(t)
			req := sdkConv("hi")
			req.headers, req.system = tc.headers, tc.system
			c.send(req, say("hello", 0, 0))
			s := c.build()
			got := s.Turn(1).Client
			if got.String() != tc.want || got.Family != tc.family {
				t.Errorf("client %+v (%s), want %s (%s)", got, got, tc.want, tc.family)
			}
			if th := s.Threads[0]; th.Client != got {
				t.Errorf("thread client %+v, turn client %+v", th.Client, got)
			}
		})
	}
}

// An SDK app's agent loop with max_tokens 1024 is an agent thread, not a
// side query; its second, later conversation is a conversation; a tool
// list like Claude Code's raises no tool_search_off.
func TestSDKAgentLoopIsNotSide(t *testing.T) {
	c := newCapture(t)
	a := sdkConv("weather in Paris?")
	a.tools = append(a.tools, tool("mcp__demo__echo"))
	r1 := call("toolu_1", "get_weather", obj{"city": "Paris"}, 0, 1500)
	c.send(a, r1)
	c.send(a.then(r1).user(toolResult("toolu_1", "sunny", false)), say("Sunny.", 1500, 30))
	c.wait(time.Minute)
	b := sdkConv("another question")
	b.system = []any{text("You answer briefly.")}
	b.maxTokens = 4000
	c.send(b, say("ok", 0, 0))
	s := c.build()
	wantThreads(t, s, map[string][]int{"main": {1, 2}, "conv1": {3}})
	for _, th := range s.Threads {
		if th.Kind == timeline.KindSide {
			t.Errorf("%s is a side query", th.ID)
		}
		if th.Client.Family != timeline.ClientSDK {
			t.Errorf("%s client %+v", th.ID, th.Client)
		}
	}
	noFlag(t, s, timeline.FlagToolSearchOff)
	noFlag(t, s, timeline.FlagRetry)
}

// Claude Code starts parallel subagent warmups: the same "Warmup" message
// with different models and system prompts, overlapping in time. They are
// different threads and none is a retry, even when one came back empty.
func TestParallelWarmupsAreNotRetries(t *testing.T) {
	c := newCapture(t)
	c.send(mainConv("go"), say("hi", 0, 20000))
	w1 := subConv("Warmup")
	w1.messages = []any{obj{"role": "user", "content": []any{text("Warmup")}}}
	w1.system = append(w1.system[:2:2], cached(text("You are a software architect.")))
	w2 := w1.clone()
	w2.model = "claude-haiku-4-5"
	w2.system = append(w1.system[:2:2], cached(text("You are a file search specialist.")))
	start := c.now
	c.sendAt(w1, reply{stop: "end_turn", create: 9000, took: 3 * time.Second}, start)
	c.sendAt(w2, say("ready", 0, 8000), start.Add(20*time.Millisecond))
	// A third, after both ended, differing in system prompt only.
	w3 := w1.clone()
	w3.system = append(w1.system[:2:2], cached(text("You plan.")))
	c.sendAt(w3, say("ready", 0, 8000), start.Add(5*time.Second))
	s := c.build()
	if len(s.Threads) != 4 {
		t.Fatalf("want 4 threads (main and three warmups)\n%s", dump(s))
	}
	noFlag(t, s, timeline.FlagRetry)
}

// Claude Code's token-count probes: parallel max_tokens 1 requests that
// differ only in their one tool. One thread each, no retry, no
// tool_search_off.
func TestTokenCountProbes(t *testing.T) {
	c := newCapture(t)
	start := c.now
	for i, name := range []string{"mcp__a__one", "mcp__a__two", "mcp__b__three", "mcp__b__four"} {
		p := mainConv("count")
		p.messages = []any{obj{"role": "user", "content": "foo"}}
		p.tools = []any{tool(name)}
		p.maxTokens = 1
		r := reply{stop: "max_tokens", input: 400}
		if i == 1 {
			r = httpError(529, "overloaded_error", "Overloaded")
		}
		c.sendAt(p, r, start.Add(time.Duration(i)*10*time.Millisecond))
	}
	s := c.build()
	if len(s.Threads) != 4 {
		t.Fatalf("want one thread per probe\n%s", dump(s))
	}
	for _, th := range s.Threads {
		if th.Kind != timeline.KindSide {
			t.Errorf("%s kind %s", th.ID, th.Kind)
		}
	}
	noFlag(t, s, timeline.FlagRetry)
	noFlag(t, s, timeline.FlagToolSearchOff)
}

// A retry is the same request after the failed one ended: a different
// model, system prompt or tools, or a start before the failed one ended,
// is no retry.
func TestRetryNeedsTheSameRequest(t *testing.T) {
	base := mainConv("go")
	cases := []struct {
		name   string
		change func(*conv)
		early  bool
		retry  bool
	}{
		{"same request after it ended", func(*conv) {}, false, true},
		{"other model", func(c *conv) { c.model = "claude-opus-4-1" }, false, false},
		{"other system prompt", func(c *conv) { c.system = append(c.system[:2:2], cached(text("Another agent."))) }, false, false},
		{"other tools", func(c *conv) { c.tools = append(c.tools[:3:3], deferred("DeferredToolPlaceholder"), tool("Extra")) }, false, false},
		{"other deferred tools", func(c *conv) { c.tools = append(c.tools[:4:4], deferred("mcp__x__y")) }, false, false},
		{"started before it ended", func(*conv) {}, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(t)
			c.send(base, httpError(529, "overloaded_error", "Overloaded"))
			again := base.clone()
			tc.change(again)
			if tc.early {
				c.sendAt(again, say("hi", 0, 20000), c.exs[0].Start.Add(200*time.Millisecond))
			} else {
				c.send(again, say("hi", 0, 20000))
			}
			s := c.build()
			got := allFlags(s, timeline.FlagRetry)
			if tc.retry != (len(got[2]) == 1) {
				t.Errorf("retry flags %v, want retry %v\n%s", describeFlags(got), tc.retry, dump(s))
			}
			if !tc.retry && len(s.Threads) != 2 {
				t.Errorf("want two threads\n%s", dump(s))
			}
			if tc.retry && !strings.Contains(got[2][0].Detail, "HTTP 529") {
				t.Errorf("detail %q", got[2][0].Detail)
			}
		})
	}
}
