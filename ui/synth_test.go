package ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

// A deterministic, synthetic Claude Code session: request bodies shaped
// like Claude Code's (billing header, cached system blocks, a catalog
// reminder, ToolSearch with tool_reference results, deferred tools sent
// with defer_loading), streamed responses with chunk times, and usage
// figures from a simple prompt-cache model. Tests and benchmarks build
// their sessions from it with timeline.Build, so the screens they check
// are those of the real pipeline.

// synthStart is when every synthetic session starts.
var synthStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type obj = map[string]any

// synth accumulates exchanges.
type synth struct {
	now  time.Time
	exs  []exchange.Exchange
	seq  int // tool_use and message ids
	pad  string
	tool map[string]obj // every tool definition by name
}

func newSynth() *synth {
	s := &synth{now: synthStart, tool: map[string]obj{}}
	s.pad = strings.Repeat("Follow the user's instructions carefully and use the tools when they help. ", 300)
	for _, n := range []string{"Agent", "Bash", "Edit", "Read", "ToolSearch", "Write"} {
		s.tool[n] = obj{"name": n, "description": n + " tool. " + strings.Repeat("It does what its name says. ", 20),
			"input_schema": obj{"type": "object", "properties": obj{"arg": obj{"type": "string"}}}}
	}
	s.tool["DeferredToolPlaceholder"] = obj{"name": "DeferredToolPlaceholder", "description": "Reserved placeholder; never call this tool.",
		"input_schema": obj{"type": "object"}, "defer_loading": true}
	for _, n := range catalogNames() {
		s.tool[n] = obj{"name": n, "description": "Demo tool " + n + ".", "input_schema": obj{"type": "object", "properties": obj{"text": obj{"type": "string"}}}, "defer_loading": true}
	}
	return s
}

func catalogNames() []string {
	names := []string{"CronCreate", "NotebookEdit", "WebFetch", "mcp__demo__echo"}
	for i := 0; i < 12; i++ {
		names = append(names, fmt.Sprintf("mcp__demo__action_%d", i))
	}
	return names
}

// convo is one conversation's state: what its next request sends.
type convo struct {
	system    []obj
	always    []string
	loaded    []string // deferred tools sent in tools
	catalog   []string
	messages  []obj
	maxTokens int
	cached    int // tokens the previous response left in the cache
}

func (s *synth) mainConvo(prompt string) *convo {
	c := &convo{
		system: []obj{
			{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.328.b1f; cc_entrypoint=sdk-cli;"},
			{"type": "text", "text": "You are a Claude agent, built on Anthropic's Claude Agent SDK.", "cache_control": obj{"type": "ephemeral"}},
			{"type": "text", "text": "You are an agent working with the user.\nToday's date is 2026-01-02.\n" + s.pad, "cache_control": obj{"type": "ephemeral"}},
		},
		always:    []string{"Agent", "Bash", "Edit", "Read", "ToolSearch", "Write"},
		catalog:   catalogNames(),
		maxTokens: 32000,
	}
	c.messages = []obj{{"role": "user", "content": []any{
		obj{"type": "text", "text": catalogReminder(c.catalog)},
		obj{"type": "text", "text": prompt},
	}}}
	return c
}

func (s *synth) subConvo(prompt string) *convo {
	c := &convo{
		system: []obj{
			{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.328.b1f; cc_entrypoint=sdk-cli; cc_is_subagent=true;"},
			{"type": "text", "text": "You are an agent for Claude Code. " + s.pad[:4000], "cache_control": obj{"type": "ephemeral"}},
		},
		always:    []string{"Bash", "Read", "ToolSearch"},
		catalog:   catalogNames()[:8],
		maxTokens: 32000,
	}
	c.messages = []obj{{"role": "user", "content": []any{
		obj{"type": "text", "text": catalogReminder(c.catalog)},
		obj{"type": "text", "text": prompt},
	}}}
	return c
}

func catalogReminder(names []string) string {
	return "<system-reminder>\nThe following deferred tools are now available via ToolSearch. Their schemas are NOT loaded — calling them directly will fail with InputValidationError. Use ToolSearch with query \"select:<name>[,<name>...]\" to load tool schemas before calling them:\n" +
		strings.Join(names, "\n") + "\n</system-reminder>"
}

func (s *synth) id(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s_synth%04d", prefix, s.seq)
}

// reply is what a response says.
type reply struct {
	text   string
	call   string // tool to call
	input  obj
	stop   string
	status int    // an HTTP error instead
	errTyp string // its error type
	gap    time.Duration
	miss   bool // the server lost the cache entry
}

func text(t string) reply { return reply{text: t, stop: "end_turn"} }

func call(name string, input obj) reply { return reply{call: name, input: input, stop: "tool_use"} }

func search(q string) reply {
	return reply{text: "Let me look for a tool.", call: "ToolSearch", input: obj{"query": q, "max_results": 5}, stop: "tool_use"}
}

// request renders the convo's next request body.
func (c *convo) request(s *synth) []byte {
	var tools []any
	for _, n := range c.always {
		tools = append(tools, s.tool[n])
	}
	if len(c.loaded) > 0 || len(c.catalog) > 0 {
		tools = append(tools, s.tool["DeferredToolPlaceholder"])
	}
	for _, n := range c.loaded {
		tools = append(tools, s.tool[n])
	}
	msgs := make([]any, len(c.messages))
	for i, m := range c.messages {
		msgs[i] = m
	}
	// One cache_control marker, on the last block of the last message.
	last := c.messages[len(c.messages)-1]
	blocks := last["content"].([]any)
	lb := obj{}
	for k, v := range blocks[len(blocks)-1].(obj) {
		lb[k] = v
	}
	lb["cache_control"] = obj{"type": "ephemeral"}
	nb := append(append([]any{}, blocks[:len(blocks)-1]...), lb)
	msgs[len(msgs)-1] = obj{"role": last["role"], "content": nb}
	sys := make([]any, len(c.system))
	for i, b := range c.system {
		sys[i] = b
	}
	body := obj{"model": "claude-sonnet-4-5", "max_tokens": c.maxTokens, "stream": true, "system": sys, "messages": msgs}
	if len(tools) > 0 {
		body["tools"] = tools
	}
	out, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	return out
}

// turn sends the convo's next request, answers it with r, and appends the
// response to the convo's history.
func (s *synth) turn(c *convo, r reply) []any {
	body := c.request(s)
	s.now = s.now.Add(1500*time.Millisecond + r.gap)
	start := s.now
	ex := exchange.Exchange{
		ID: int64(len(s.exs) + 1), Source: "mitm", Start: start, Method: "POST",
		URL: "https://api.anthropic.com/v1/messages?beta=true", Host: "api.anthropic.com",
		ReqHeaders: []exchange.Header{
			{Name: "Anthropic-Beta", Value: "claude-code-20250219,interleaved-thinking-2025-05-14,advanced-tool-use-2025-11-20"},
			{Name: "Anthropic-Version", Value: "2023-06-01"},
			{Name: "Content-Type", Value: "application/json"},
			{Name: "X-Api-Key", Value: exchange.Fingerprint("sk-test")},
		},
		ReqBody: body,
		State:   exchange.StateComplete,
	}
	if r.status != 0 {
		ex.Status = r.status
		ex.RespHeaders = []exchange.Header{{Name: "Content-Type", Value: "application/json"}, {Name: "Request-Id", Value: s.id("req")}}
		ex.RespBody = []byte(fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":"Overloaded"},"request_id":"req_synth"}`, r.errTyp))
		ex.FirstByte = start.Add(200 * time.Millisecond)
		ex.End = ex.FirstByte
		ex.Chunks = []exchange.Chunk{{Offset: 0, Size: len(ex.RespBody), At: ex.End}}
		s.exs = append(s.exs, ex)
		s.now = ex.End
		return nil
	}
	// Usage: the whole prompt is about a quarter of the body; what the
	// previous response left cached is read, the rest written.
	total := len(body) / 4
	read := min(c.cached, total-3)
	if r.miss {
		read = 0
	}
	created := total - 3 - read
	var content []any
	if r.text != "" {
		content = append(content, obj{"type": "text", "text": r.text})
	}
	if r.call != "" {
		content = append(content, obj{"type": "tool_use", "id": s.id("toolu"), "name": r.call, "input": r.input})
	}
	msgID := s.id("msg")
	var events []string
	ev := func(name string, data any) {
		b, err := json.Marshal(data)
		if err != nil {
			panic(err)
		}
		events = append(events, "event: "+name+"\ndata: "+string(b)+"\n\n")
	}
	ev("message_start", obj{"type": "message_start", "message": obj{"id": msgID, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": obj{"input_tokens": 3, "cache_creation_input_tokens": created, "cache_read_input_tokens": read, "output_tokens": 1}}})
	out := 0
	for i, b := range content {
		bo := b.(obj)
		switch bo["type"] {
		case "text":
			ev("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": obj{"type": "text", "text": ""}})
			ev("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "text_delta", "text": bo["text"]}})
			out += len(bo["text"].(string)) / 4
		case "tool_use":
			ev("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": obj{"type": "tool_use", "id": bo["id"], "name": bo["name"], "input": obj{}}})
			in, _ := json.Marshal(bo["input"])
			ev("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "input_json_delta", "partial_json": string(in)}})
			out += len(in)/4 + 20
		}
		ev("content_block_stop", obj{"type": "content_block_stop", "index": i})
	}
	ev("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": r.stop, "stop_sequence": nil}, "usage": obj{"output_tokens": out + 1}})
	ev("message_stop", obj{"type": "message_stop"})
	at := start.Add(400 * time.Millisecond)
	ex.FirstByte = at
	for _, e := range events {
		ex.Chunks = append(ex.Chunks, exchange.Chunk{Offset: int64(len(ex.RespBody)), Size: len(e), At: at})
		ex.RespBody = append(ex.RespBody, e...)
		at = at.Add(30 * time.Millisecond)
	}
	ex.End = at
	ex.Status = 200
	ex.RespHeaders = []exchange.Header{{Name: "Content-Type", Value: "text/event-stream; charset=utf-8"}, {Name: "Request-Id", Value: s.id("req")}}
	s.exs = append(s.exs, ex)
	s.now = ex.End
	c.cached = total - 3
	c.messages = append(c.messages, obj{"role": "assistant", "content": content})
	return content
}

// lastCall returns the id of the tool_use in content.
func lastCall(content []any) string {
	for _, b := range content {
		if bo := b.(obj); bo["type"] == "tool_use" {
			return bo["id"].(string)
		}
	}
	return ""
}

// result appends the user message answering a tool call.
func (c *convo) result(id string, blocks ...any) {
	c.messages = append(c.messages, obj{"role": "user", "content": append([]any{obj{"type": "tool_result", "tool_use_id": id, "content": "ok"}}, blocks...)})
}

// loaded appends a ToolSearch result that loads names.
func (c *convo) loadedBy(id string, names ...string) {
	var refs []any
	for _, n := range names {
		refs = append(refs, obj{"type": "tool_reference", "tool_name": n})
		c.loaded = append(c.loaded, n)
	}
	c.messages = append(c.messages, obj{"role": "user", "content": []any{
		obj{"type": "tool_result", "tool_use_id": id, "content": refs},
		obj{"type": "text", "text": "Tool loaded."},
	}})
}

// side sends a one-shot side query (a title, a compaction summary).
func (s *synth) side(prompt string, history []obj, maxTokens int, answer string) {
	c := &convo{
		system:    []obj{{"type": "text", "text": "Generate a short title for the conversation."}},
		maxTokens: maxTokens,
		messages:  append(append([]obj{}, history...), obj{"role": "user", "content": []any{obj{"type": "text", "text": prompt}}}),
	}
	s.turn(c, text(answer))
}

// goldenExchanges is the small session the screen tests show: a select
// search, a title side query, a loaded call, an empty keyword search, a
// call before load, a subagent, a system-prompt change that breaks the
// cache, an overloaded error and its retry, a compaction after which a
// tool is restored and a catalog entry removed.
func goldenExchanges() []exchange.Exchange {
	s := newSynth()
	m := s.mainConvo("Show me what the demo MCP tools can do.")
	r := s.turn(m, search("select:mcp__demo__echo"))
	s.side("Write a 3-word title for: Show me what the demo MCP tools can do.", nil, 512, "Demo tools tour")
	m.loadedBy(lastCall(r), "mcp__demo__echo")
	r = s.turn(m, call("mcp__demo__echo", obj{"text": "hello"}))
	m.result(lastCall(r))
	r = s.turn(m, search("weather forecast"))
	m.messages = append(m.messages, obj{"role": "user", "content": []any{obj{"type": "tool_result", "tool_use_id": lastCall(r), "content": "No matching deferred tools found"}}})
	r = s.turn(m, call("mcp__demo__action_7", obj{"text": "inbox"}))
	m.result(lastCall(r))
	r = s.turn(m, call("Agent", obj{"description": "Summarise the demo", "prompt": "Say what the demo tools did."}))
	agent := lastCall(r)
	sub := s.subConvo("Say what the demo tools did.")
	sr := s.turn(sub, call("Read", obj{"arg": "notes.txt"}))
	sub.result(lastCall(sr))
	s.turn(sub, text("The demo loaded echo by name and called it."))
	m.result(agent)
	// The date line of the system prompt changes: the cache breaks there.
	m.system[2] = obj{"type": "text", "text": "You are an agent working with the user.\nToday's date is 2026-01-03.\n" + s.pad, "cache_control": obj{"type": "ephemeral"}}
	m.cached = 900 // only the tools before it are still cached
	r = s.turn(m, call("Bash", obj{"arg": "ls"}))
	m.result(lastCall(r))
	s.turn(m, reply{status: 529, errTyp: "overloaded_error"})
	s.turn(m, text("Echo works; action 7 was called without its schema."))
	// Compaction: a side request summarises, the thread restarts with the
	// summary, echo is still sent (restored) and the catalog lost one tool.
	m.messages = append(m.messages, obj{"role": "user", "content": []any{obj{"type": "text", "text": "Keep going."}}})
	s.side("CRITICAL: Respond with TEXT ONLY. Do NOT call any tools. Summarise the conversation.", m.messages, 32000, "Summary: echo loaded and called.")
	m.catalog = m.catalog[:len(m.catalog)-1]
	m.messages = []obj{{"role": "user", "content": []any{
		obj{"type": "text", "text": "This session is being continued from a previous conversation that ran out of context. <tools-used-before-summary>ToolSearch, mcp__demo__echo</tools-used-before-summary> Summary: echo loaded and called."},
		obj{"type": "text", "text": catalogReminder(m.catalog)},
	}}}
	m.cached = 0
	r = s.turn(m, call("mcp__demo__echo", obj{"text": "again"}))
	m.result(lastCall(r))
	s.turn(m, text("Done."))
	return s.exs
}

// goldenSession builds the golden session.
func goldenSession() *timeline.Session { return timeline.Build(goldenExchanges()) }

// bigExchanges makes a session of about n turns: a main thread that reads
// and runs commands, with a ten-turn subagent every 25 main turns, so that
// no request grows past about 60 kB.
func bigExchanges(n int) []exchange.Exchange {
	s := newSynth()
	m := s.mainConvo("Work through the repository.")
	r := s.turn(m, search("select:mcp__demo__echo"))
	m.loadedBy(lastCall(r), "mcp__demo__echo")
	mainTurns := 1
	for len(s.exs) < n {
		if mainTurns%25 == 0 {
			r = s.turn(m, call("Agent", obj{"prompt": fmt.Sprintf("Task %d", mainTurns)}))
			agent := lastCall(r)
			sub := s.subConvo(fmt.Sprintf("Task %d", mainTurns))
			for k := 0; k < 9 && len(s.exs) < n; k++ {
				sr := s.turn(sub, call("Read", obj{"arg": fmt.Sprintf("file%d.go", k)}))
				sub.result(lastCall(sr))
			}
			if len(s.exs) < n {
				s.turn(sub, text("Task done."))
			}
			m.result(agent)
		} else {
			tool := []string{"Read", "Bash", "mcp__demo__echo"}[mainTurns%3]
			r = s.turn(m, call(tool, obj{"arg": fmt.Sprintf("step %d", mainTurns)}))
			m.result(lastCall(r))
		}
		mainTurns++
		if len(m.messages) > 240 { // compact, as Claude Code would
			m.messages = append([]obj{}, m.messages[:1]...)
			m.messages = append(m.messages, obj{"role": "assistant", "content": []any{obj{"type": "text", "text": fmt.Sprintf("Resuming at %d.", mainTurns)}}},
				obj{"role": "user", "content": []any{obj{"type": "text", "text": "Go on."}}})
		}
	}
	return s.exs[:n]
}
