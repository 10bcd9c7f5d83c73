package timeline_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

func TestCallBeforeLoad(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("use the demo tools")
	r1 := call("toolu_e1", echo, obj{"text": "hi"}, 0, 20000)
	c.send(c1, r1)
	c.send(c1.then(r1).user(toolResult("toolu_e1",
		"<tool_use_error>InputValidationError: mcp__demo__echo failed. This tool's schema was not sent to the API — it was not in the discovered-tool set derived from message history.</tool_use_error>", true)),
		say("sorry", 20000, 100))
	s := c.build()
	f := oneFlag(t, s, timeline.FlagCallBeforeLoad, 1)
	if f.Tool != echo || f.Severity != timeline.SeverityError {
		t.Errorf("flag %+v", f)
	}
	for _, want := range []string{echo, "InputValidationError", "schema was not sent", "turn 2 of this thread (#2)"} {
		if !strings.Contains(f.Detail, want) {
			t.Errorf("detail lacks %q: %s", want, f.Detail)
		}
	}
	noFlag(t, s, timeline.FlagUnknownTool)

	// Without a later request.
	c = newCapture(t)
	c.send(c1, r1)
	f = oneFlag(t, c.build(), timeline.FlagCallBeforeLoad, 1)
	if !strings.Contains(f.Detail, "No later request") {
		t.Errorf("detail %s", f.Detail)
	}

	// A call after the search loaded it: no flag.
	c = newCapture(t)
	toolsearchSession(c)
	noFlag(t, c.build(), timeline.FlagCallBeforeLoad)
}

func TestUnknownTool(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("go")
	r1 := call("toolu_n1", "mcp__demo__nope", obj{}, 0, 20000)
	c.send(c1, r1)
	c.send(c1.then(r1).user(toolResult("toolu_n1", "<tool_use_error>Error: No such tool available: mcp__demo__nope</tool_use_error>", true)), say("hm", 20000, 90))
	s := c.build()
	f := oneFlag(t, s, timeline.FlagUnknownTool, 1)
	if f.Tool != "mcp__demo__nope" || !strings.Contains(f.Detail, "No such tool available") || f.Severity != timeline.SeverityError {
		t.Errorf("flag %+v", f)
	}
	noFlag(t, s, timeline.FlagCallBeforeLoad)

	// Calling a tool that is sent in tools: no flag.
	c = newCapture(t)
	r1 = call("toolu_b1", "Bash", obj{"command": "ls"}, 0, 20000)
	c.send(c1, r1)
	noFlag(t, c.build(), timeline.FlagUnknownTool)
}

func TestStopSequenceAnomaly(t *testing.T) {
	empty := reply{stop: "stop_sequence", stopSeq: strptr("\n\nHuman:"), read: 20000, create: 100}
	for _, tc := range []struct {
		name       string
		loaded     bool
		want, lack []string
	}{
		{"with Tool loaded", true, []string{"tool_reference (mcp__demo__echo)", `"Tool loaded." text was there`, `"\n\nHuman:"`, "no stop_sequences"}, nil},
		{"without Tool loaded", false, []string{"tool_reference (mcp__demo__echo)", `without the "Tool loaded." text`}, []string{"was there"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(t)
			r1 := call("toolu_s1", "ToolSearch", obj{"query": "select:" + echo}, 0, 20000)
			c1 := mainConv("go")
			c.send(c1, r1)
			c2 := c1.then(r1).user(toolResult("toolu_s1", refs(echo), false))
			if tc.loaded {
				c2 = c1.then(r1).user(toolResult("toolu_s1", refs(echo), false), text("Tool loaded."))
			}
			c2.tools = append(c2.tools, deferred(echo))
			c.send(c2, empty)
			c.send(c2, call("toolu_e1", echo, obj{"text": "x"}, 20100, 0))
			s := c.build()
			f := oneFlag(t, s, timeline.FlagStopSequence, 2)
			for _, w := range tc.want {
				if !strings.Contains(f.Detail, w) {
					t.Errorf("detail lacks %q: %s", w, f.Detail)
				}
			}
			for _, w := range tc.lack {
				if strings.Contains(f.Detail, w) {
					t.Errorf("detail has %q: %s", w, f.Detail)
				}
			}
			if f.Severity != timeline.SeverityWarning {
				t.Errorf("severity %s", f.Severity)
			}
			r := oneFlag(t, s, timeline.FlagRetry, 3)
			if !strings.Contains(r.Detail, "came back empty") {
				t.Errorf("retry detail %s", r.Detail)
			}
			noFlag(t, s, timeline.FlagCacheBreak)
		})
	}
	// Claude Code's own retry adds a nudge to the last user message.
	c := newCapture(t)
	r1 := call("toolu_s1", "ToolSearch", obj{"query": "select:" + echo}, 0, 20000)
	c1 := mainConv("go")
	c.send(c1, r1)
	c2 := c1.then(r1).user(toolResult("toolu_s1", refs(echo), false), text("Tool loaded."))
	c2.tools = append(c2.tools, deferred(echo))
	c.send(c2, empty)
	c3 := c1.then(r1).user(toolResult("toolu_s1", refs(echo), false), text("Tool loaded."),
		text("[Your previous response had no visible output. Please continue and produce a user-visible response.]"))
	c3.tools = c2.tools
	r3 := call("toolu_e1", echo, obj{"text": "x"}, 20100, 40)
	c.send(c3, r3)
	c.send(c3.then(r3).user(toolResult("toolu_e1", "x", false)), say("ok", 20140, 30))
	s := c.build()
	wantThreads(t, s, map[string][]int{"main": {1, 2, 3, 4}})
	if tt := s.Turn(3); tt.Prev != 2 || tt.Link != timeline.LinkRetry {
		t.Errorf("nudged retry: prev %d link %s", tt.Prev, tt.Link)
	}
	r := oneFlag(t, s, timeline.FlagRetry, 3)
	if !strings.Contains(r.Detail, "last user message changed (added: \"[Your previous response had no visible output.") {
		t.Errorf("retry detail %s", r.Detail)
	}
	noFlag(t, s, timeline.FlagCacheBreak)

	// A request that set stop_sequences, answered with content that ends
	// on one: no flag.
	c = newCapture(t)
	c1 = mainConv("go")
	c1.extra = obj{"stop_sequences": []string{"END"}}
	c.send(c1, reply{content: []any{text("done")}, stop: "stop_sequence", stopSeq: strptr("END"), create: 20000})
	noFlag(t, c.build(), timeline.FlagStopSequence)
	// But an empty reply is one even then.
	c = newCapture(t)
	c.send(c1, reply{stop: "stop_sequence", stopSeq: strptr("END"), create: 20000})
	f := oneFlag(t, c.build(), timeline.FlagStopSequence, 1)
	if !strings.Contains(f.Detail, "held no tool_reference") {
		t.Errorf("detail %s", f.Detail)
	}
}

func strptr(s string) *string { return &s }

func TestEmptySearch(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("go")
	r1 := call("toolu_s1", "ToolSearch", obj{"query": "weather forecast", "max_results": 5}, 0, 20000)
	c.send(c1, r1)
	c2 := c1.then(r1).user(toolResult("toolu_s1", "No matching deferred tools found", false))
	// Sent twice (the first cut off): one flag only.
	c.send(c2, reply{content: []any{text("No")}, cut: true, read: 20000})
	c.send(c2, say("No weather tool.", 20000, 60))
	s := c.build()
	f := oneFlag(t, s, timeline.FlagEmptySearch, 2)
	for _, w := range []string{`ToolSearch "weather forecast" (keyword query)`, "No matching deferred tools found", "catalog held 2 deferred tools"} {
		if !strings.Contains(f.Detail, w) {
			t.Errorf("detail lacks %q: %s", w, f.Detail)
		}
	}
	if f.Search != "toolu_s1" || f.Severity != timeline.SeverityWarning {
		t.Errorf("flag %+v", f)
	}
	// A select of a name that is not in the catalog says so.
	c = newCapture(t)
	r1 = call("toolu_s2", "ToolSearch", obj{"query": "select:mcp__demo__gone"}, 0, 20000)
	c.send(c1, r1)
	c.send(c1.then(r1).user(toolResult("toolu_s2", "No matching deferred tools found", false)), say("no", 20000, 50))
	f = oneFlag(t, c.build(), timeline.FlagEmptySearch, 2)
	if !strings.Contains(f.Detail, "mcp__demo__gone is not among them") {
		t.Errorf("detail %s", f.Detail)
	}
	// A search that loads a tool: no flag.
	c = newCapture(t)
	toolsearchSession(c)
	noFlag(t, c.build(), timeline.FlagEmptySearch)
}

func TestEmptyServerSearch(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("go")
	c1.tools = []any{obj{"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}, deferred("get_weather"), tool("Bash")}
	c1.messages = []any{obj{"role": "user", "content": "weather?"}}
	r := reply{content: []any{
		obj{"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_regex", "input": obj{"pattern": "forecast"}},
		obj{"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": obj{"type": "tool_search_tool_result_error", "error_code": "invalid_pattern"}},
		text("No tool."),
	}, stop: "end_turn", create: 5000}
	c.send(c1, r)
	f := oneFlag(t, c.build(), timeline.FlagEmptySearch, 1)
	if !strings.Contains(f.Detail, "error_code invalid_pattern") || f.Search != "srvtoolu_1" {
		t.Errorf("flag %+v", f)
	}
}

func TestStreamIncomplete(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("go")
	c.send(c1, reply{content: []any{text("This reply is cut")}, cut: true, create: 20000})
	c.send(c1, say("whole", 20000, 0))
	s := c.build()
	f := oneFlag(t, s, timeline.FlagStreamIncomplete, 1)
	if !strings.Contains(f.Detail, "without message_stop") || !strings.Contains(f.Detail, "unexpected EOF") || f.Severity != timeline.SeverityWarning {
		t.Errorf("flag %+v", f)
	}
	r := oneFlag(t, s, timeline.FlagRetry, 2)
	if !strings.Contains(r.Detail, "cut off") {
		t.Errorf("retry %s", r.Detail)
	}
	noFlag(t, s, timeline.FlagAPIError)
	// Still in flight (a live capture): not flagged yet.
	c = newCapture(t)
	c.send(c1, reply{content: []any{text("so far")}, cut: true, state: exchange.StateInFlight})
	noFlag(t, c.build(), timeline.FlagStreamIncomplete)
	// A whole stream: no flag.
	c = newCapture(t)
	toolsearchSession(c)
	noFlag(t, c.build(), timeline.FlagStreamIncomplete)
}

func TestAPIErrorEvent(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("go")
	c.send(c1, reply{errorEvent: true, errType: "overloaded_error", errMessage: "Overloaded", create: 20000})
	c.send(c1, say("ok", 20000, 0))
	s := c.build()
	f := oneFlag(t, s, timeline.FlagAPIError, 1)
	if !strings.Contains(f.Detail, "error event") || !strings.Contains(f.Detail, "overloaded_error: Overloaded") {
		t.Errorf("detail %s", f.Detail)
	}
	noFlag(t, s, timeline.FlagStreamIncomplete)
	if r := oneFlag(t, s, timeline.FlagRetry, 2); !strings.Contains(r.Detail, "error event") {
		t.Errorf("retry %s", r.Detail)
	}
	c = newCapture(t)
	toolsearchSession(c)
	noFlag(t, c.build(), timeline.FlagAPIError)
	noFlag(t, c.build(), timeline.FlagRetry)
}

func TestToolSearchOff(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("go")
	c1.tools = []any{tool("Bash"), tool(echo), tool("mcp__demo__action_0"), tool("mcp__demo__action_1"), tool("mcp__demo__action_2")}
	c1.messages = []any{obj{"role": "user", "content": []any{text("go")}}}
	r1 := call("toolu_e1", echo, obj{"text": "x"}, 0, 20000)
	c.send(c1, r1)
	c.send(c1.then(r1).user(toolResult("toolu_e1", "x", false)), say("ok", 20000, 40))
	s := c.build()
	f := oneFlag(t, s, timeline.FlagToolSearchOff, 1)
	if !strings.Contains(f.Detail, "4 MCP tools") || f.Severity != timeline.SeverityInfo {
		t.Errorf("flag %+v", f)
	}
	noFlag(t, s, timeline.FlagCallBeforeLoad)
	noFlag(t, s, timeline.FlagUnknownTool)
	// With ToolSearch: no flag.
	c = newCapture(t)
	toolsearchSession(c)
	noFlag(t, c.build(), timeline.FlagToolSearchOff)
}

func TestExplainAndSeverity(t *testing.T) {
	want := map[string]string{
		timeline.FlagCallBeforeLoad: timeline.SeverityError, timeline.FlagUnknownTool: timeline.SeverityError,
		timeline.FlagAPIError: timeline.SeverityError, timeline.FlagCacheBreak: timeline.SeverityWarning,
		timeline.FlagStopSequence: timeline.SeverityWarning, timeline.FlagStreamIncomplete: timeline.SeverityWarning,
		timeline.FlagEmptySearch: timeline.SeverityWarning, timeline.FlagRetry: timeline.SeverityInfo,
		timeline.FlagSearchPartial: timeline.SeverityWarning, timeline.FlagSearchRepeated: timeline.SeverityInfo,
		timeline.FlagToolSearchOff:   timeline.SeverityInfo,
		timeline.FlagCatalogNoSearch: timeline.SeverityWarning, timeline.FlagSearchNoCatalog: timeline.SeverityWarning,
		timeline.FlagDeferredInline: timeline.SeverityWarning, timeline.FlagUnknownReference: timeline.SeverityError,
		timeline.FlagReferenceNotSent: timeline.SeverityError,
	}
	if len(timeline.Kinds()) != len(want) {
		t.Errorf("kinds %v", timeline.Kinds())
	}
	for _, k := range timeline.Kinds() {
		if timeline.Severity(k) != want[k] {
			t.Errorf("%s severity %s, want %s", k, timeline.Severity(k), want[k])
		}
		why, todo := timeline.Explain(k)
		if len(why) < 80 || len(todo) < 80 {
			t.Errorf("%s: explain too short: %q / %q", k, why, todo)
		}
	}
	if why, todo := timeline.Explain("nope"); why != "" || todo != "" {
		t.Errorf("unknown kind explained")
	}
}

// cacheCase sends a three-turn conversation whose third request is
// changed by mutate, with the third reply reading read tokens.
func cacheCase(t *testing.T, mutate func(c *conv), gap time.Duration, r3 reply) *timeline.Session {
	t.Helper()
	c := newCapture(t)
	c1 := mainConv("go")
	r1 := call("toolu_1", "Bash", obj{"command": "ls"}, 0, 21000)
	c.send(c1, r1)
	c2 := c1.then(r1).user(toolResult("toolu_1", "a b", false))
	r2 := call("toolu_2", "Bash", obj{"command": "pwd"}, 21000, 480)
	c.send(c2, r2)
	c3 := c2.then(r2).user(toolResult("toolu_2", "/", false))
	if mutate != nil {
		mutate(c3)
	}
	c.wait(gap)
	c.send(c3, r3)
	return c.build()
}

func TestCacheBreakCauses(t *testing.T) {
	fell := say("ok", 0, 21600)
	for _, tc := range []struct {
		name   string
		mutate func(c *conv)
		gap    time.Duration
		r3     reply
		cause  string
		want   []string
	}{
		{"model", func(c *conv) { c.model = "claude-opus-4-5" }, 0, fell, timeline.CauseModel,
			[]string{"Cache read fell from 21,480 to 0 tokens (−21,480) against turn 2 of this thread (#2)", "from claude-sonnet-4-5 to claude-opus-4-5", "21,000 read, 480 written", "21,600 tokens written"}},
		{"tools", func(c *conv) { c.tools = append(c.tools[:1], c.tools[2:]...) }, 0, fell, timeline.CauseTools,
			[]string{"removed Bash", "3 non-deferred tools, was 4"}},
		{"tool definition", func(c *conv) {
			c.tools[1] = obj{"name": "Bash", "description": "Run it.", "input_schema": obj{"type": "object"}}
		}, 0, fell, timeline.CauseTools,
			[]string{"definition changed: Bash"}},
		{"system", func(c *conv) { c.system[2] = cached(text(mainPrompt + " Answer in French.")) }, 0, say("ok", 9000, 12600), timeline.CauseSystem,
			[]string{"the system prompt changed (block 2 differs from byte 58 of its text", "billing header block is not counted"}},
		{"speed", func(c *conv) { c.extra = obj{"speed": "fast"} }, 0, say("ok", 9000, 12600), timeline.CauseSystem,
			[]string{`the speed setting changed from (absent) to "fast", which invalidates the cached system prompt and messages`}},
		{"betas", func(c *conv) { c.betas += ",context-1m-2025-08-07" }, 0, fell, timeline.CauseBetas,
			[]string{"added context-1m-2025-08-07"}},
		{"messages", func(c *conv) {
			m := c.messages[2].(map[string]any)
			m["content"] = []any{toolResult("toolu_1", "a b c", false)}
		}, 0, say("ok", 14000, 7600), timeline.CauseMessages,
			[]string{"message 2 (user) is the first that differs: block 0 (tool_result) changes at byte"}},
		{"thinking", func(c *conv) { c.extra = obj{"thinking": obj{"type": "enabled", "budget_tokens": 1024}} }, 0, say("ok", 14000, 7600), timeline.CauseMessages,
			[]string{"the thinking settings changed"}},
		{"ttl", nil, 6 * time.Minute, fell, timeline.CauseTTL,
			[]string{"6 min", "longer than the 5 min cache lifetime"}},
		{"effort", func(c *conv) { c.extra = obj{"output_config": obj{"effort": "high"}} }, 30 * time.Second, fell, timeline.CauseUnexplained,
			[]string{`server's side (or by the change of output_config from (absent) to {"effort":"high"}, which the API does not document as part of the cached prefix)`}},
		{"unexplained", nil, 30 * time.Second, fell, timeline.CauseUnexplained,
			[]string{"nothing in the cached prefix changed", "4 tool definitions", "first 3 messages", "31 s passed", "server's side"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := cacheCase(t, tc.mutate, tc.gap, tc.r3)
			f := oneFlag(t, s, timeline.FlagCacheBreak, 3)
			if f.Cause != tc.cause || f.Severity != timeline.SeverityWarning {
				t.Errorf("cause %s, want %s", f.Cause, tc.cause)
			}
			if f.TokensLost != 21480-tc.r3.read {
				t.Errorf("tokens lost %d", f.TokensLost)
			}
			for _, w := range tc.want {
				if !strings.Contains(f.Detail, w) {
					t.Errorf("detail lacks %q:\n%s", w, f.Detail)
				}
			}
			if f.CacheMissReason != "" || f.Agrees != nil {
				t.Errorf("no diagnostics were sent")
			}
			if tc.name == "unexplained" && strings.Contains(f.Detail, "or by the change") {
				t.Errorf("a setting is named as changed when none was:\n%s", f.Detail)
			}
		})
	}
}

// With a one-hour marker a 10-minute pause is no expiry.
func TestCacheBreakTTL1h(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("go")
	c1.system[2] = obj{"type": "text", "text": mainPrompt, "cache_control": obj{"type": "ephemeral", "ttl": "1h"}}
	c1.markerTTL = "1h"
	r1 := call("toolu_1", "Bash", obj{"command": "ls"}, 0, 21000)
	c.send(c1, r1)
	c.wait(10 * time.Minute)
	c.send(c1.then(r1).user(toolResult("toolu_1", "a", false)), say("ok", 0, 21500))
	s := c.build()
	f := oneFlag(t, s, timeline.FlagCacheBreak, 2)
	if f.Cause != timeline.CauseUnexplained {
		t.Errorf("cause %s: %s", f.Cause, f.Detail)
	}
	// Break on the second turn of a thread: the first read nothing, so
	// Claude Code's read-only rule could not see it; read + written can.
	if f.TokensLost != 21000 {
		t.Errorf("lost %d", f.TokensLost)
	}
}

func TestCacheBreakDiagnostics(t *testing.T) {
	r := say("ok", 0, 21600)
	r.diagnostic = "model_changed"
	s := cacheCase(t, func(c *conv) { c.model = "claude-opus-4-5" }, 0, r)
	f := oneFlag(t, s, timeline.FlagCacheBreak, 3)
	if f.CacheMissReason != "model_changed" || f.Agrees == nil || !*f.Agrees || !strings.Contains(f.Detail, "diagnostics agree") {
		t.Errorf("flag %+v", f)
	}
	r.diagnostic = "messages_changed"
	s = cacheCase(t, func(c *conv) { c.model = "claude-opus-4-5" }, 0, r)
	f = oneFlag(t, s, timeline.FlagCacheBreak, 3)
	if f.CacheMissReason != "messages_changed" || f.Agrees == nil || *f.Agrees || !strings.Contains(f.Detail, "say otherwise") {
		t.Errorf("flag %+v", f)
	}
}

func TestCacheBreakLookback(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("go")
	var uses, results []any
	for i := 0; i < 12; i++ {
		id := "toolu_p" + string(rune('a'+i))
		uses = append(uses, toolUse(id, "Read", obj{"file": id}))
		results = append(results, toolResult(id, "content", false))
	}
	r1 := reply{content: uses, stop: "tool_use", create: 21000}
	c.send(c1, r1)
	c.send(c1.then(r1).user(results...), say("read them", 11000, 12000))
	f := oneFlag(t, c.build(), timeline.FlagCacheBreak, 2)
	if f.Cause != timeline.CauseLookback || !strings.Contains(f.Detail, "24 content blocks after") {
		t.Errorf("flag %+v", f)
	}
}

func TestNoCacheBreak(t *testing.T) {
	for _, tc := range []struct {
		name string
		r3   reply
	}{
		{"full read", say("ok", 21480, 90)},
		{"fell by 1,999", say("ok", 21480-1999, 2000)},
		{"at 95 %", say("ok", 20406, 1100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noFlag(t, cacheCase(t, nil, 0, tc.r3), timeline.FlagCacheBreak)
		})
	}
	// Failed turns have no usage to compare; the turn after a failure is
	// compared with the last turn that worked.
	c := newCapture(t)
	c1 := mainConv("go")
	r1 := call("toolu_1", "Bash", obj{"command": "ls"}, 0, 21000)
	c.send(c1, r1)
	c2 := c1.then(r1).user(toolResult("toolu_1", "a", false))
	c.send(c2, httpError(500, "api_error", "boom"))
	c.send(c2, reply{stop: "stop_sequence", stopSeq: strptr("x"), read: 21000, create: 50})
	c.send(c2, say("ok", 21050, 0))
	s := c.build()
	noFlag(t, s, timeline.FlagCacheBreak)
	// ... and a real break after a failure is still seen, against the
	// turn before it.
	c = newCapture(t)
	c.send(c1, r1)
	c.send(c2, httpError(500, "api_error", "boom"))
	c3 := c2.clone()
	c3.model = "claude-opus-4-5"
	c.send(c3, say("ok", 0, 21050))
	f := oneFlag(t, c.build(), timeline.FlagCacheBreak, 3)
	if f.Cause != timeline.CauseModel || !strings.Contains(f.Detail, "turn 1 of this thread (#1)") {
		t.Errorf("flag %+v", f)
	}
	// The first turn of a thread is never a break, whatever it reads.
	c = newCapture(t)
	c.send(c1, say("ok", 0, 21000))
	c.send(subConv("x"), say("ok", 0, 11000))
	noFlag(t, c.build(), timeline.FlagCacheBreak)
}
