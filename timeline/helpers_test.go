package timeline_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

// Builders for synthetic exchanges: requests shaped like Claude Code's
// (billing header, cached system blocks, ToolSearch and the placeholder,
// a catalog announcement in the first user message, the single message
// cache_control marker on the last block), and responses with given usage.

const (
	mainBilling = "x-anthropic-billing-header: cc_version=2.1.328.b1f; cc_entrypoint=sdk-cli;"
	subBilling  = "x-anthropic-billing-header: cc_version=2.1.328.92a; cc_entrypoint=sdk-cli; cc_is_subagent=true;"
	mainPrompt  = "You are an agent working with the user toward their goals."
	subPrompt   = "You are an agent for Claude Code, Anthropic's official CLI for Claude."
	echo        = "mcp__demo__echo"
)

type obj = map[string]any

// conv is a request under construction.
type conv struct {
	model     string
	system    []any
	tools     []any
	messages  []any
	maxTokens int
	betas     string
	extra     obj
	markerTTL string // ttl of the message cache_control marker
	headers   []exchange.Header
}

func tool(name string) obj {
	return obj{"name": name, "description": "The " + name + " tool.", "input_schema": obj{"type": "object"}}
}

func deferred(name string) obj {
	t := tool(name)
	t["defer_loading"] = true
	return t
}

func text(s string) obj { return obj{"type": "text", "text": s} }

func catalogReminder(names ...string) obj {
	return text("<system-reminder>\nThe following deferred tools are now available via ToolSearch. Their schemas are NOT loaded — calling them directly will fail with InputValidationError. Use ToolSearch with query \"select:<name>[,<name>...]\" to load tool schemas before calling them:\n" +
		strings.Join(names, "\n") + "\n</system-reminder>")
}

func toolUse(id, name string, input obj) obj {
	return obj{"type": "tool_use", "id": id, "name": name, "input": input}
}

func toolResult(id string, content any, isError bool) obj {
	r := obj{"type": "tool_result", "tool_use_id": id, "content": content}
	if isError {
		r["is_error"] = true
	}
	return r
}

func refs(names ...string) []any {
	var out []any
	for _, n := range names {
		out = append(out, obj{"type": "tool_reference", "tool_name": n})
	}
	return out
}

// mainConv starts a main-agent conversation with the user prompt.
func mainConv(prompt string) *conv {
	return &conv{
		model: "claude-sonnet-4-5",
		system: []any{text(mainBilling), cached(text("You are a Claude agent, built on Anthropic's Claude Agent SDK.")),
			cached(text(mainPrompt))},
		tools:     []any{tool("Agent"), tool("Bash"), tool("Read"), tool("ToolSearch"), deferred("DeferredToolPlaceholder")},
		messages:  []any{obj{"role": "user", "content": []any{catalogReminder(echo, "mcp__demo__action_0"), text(prompt)}}},
		maxTokens: 32000,
		betas:     "claude-code-20250219,advanced-tool-use-2025-11-20",
	}
}

// subConv starts a subagent conversation.
func subConv(task string) *conv {
	c := mainConv(task)
	c.system = []any{text(subBilling), cached(text("You are a Claude agent, built on Anthropic's Claude Agent SDK.")), cached(text(subPrompt))}
	c.tools = []any{tool("Bash"), tool("Read"), tool("ToolSearch"), deferred("DeferredToolPlaceholder")}
	return c
}

func cached(b obj) obj {
	c := obj{}
	for k, v := range b {
		c[k] = v
	}
	c["cache_control"] = obj{"type": "ephemeral"}
	return c
}

func (c *conv) clone() *conv {
	d := *c
	d.system = append([]any(nil), c.system...)
	d.tools = append([]any(nil), c.tools...)
	d.messages = append([]any(nil), c.messages...)
	d.headers = append([]exchange.Header(nil), c.headers...)
	if c.extra != nil {
		d.extra = obj{}
		for k, v := range c.extra {
			d.extra[k] = v
		}
	}
	return &d
}

// user returns a copy with a user message appended.
func (c *conv) user(blocks ...any) *conv {
	d := c.clone()
	d.messages = append(d.messages, obj{"role": "user", "content": blocks})
	return d
}

// then returns a copy with the reply's content appended as an assistant
// message, as a client does.
func (c *conv) then(r reply) *conv {
	d := c.clone()
	d.messages = append(d.messages, obj{"role": "assistant", "content": r.content})
	return d
}

// body renders the request, with the message marker on the last block.
func (c *conv) body() []byte {
	msgs := make([]any, len(c.messages))
	// Deep-copy through JSON so that the marker does not stick.
	raw, _ := json.Marshal(c.messages)
	_ = json.Unmarshal(raw, &msgs)
	if n := len(msgs); n > 0 {
		m := msgs[n-1].(map[string]any)
		if blocks, ok := m["content"].([]any); ok && len(blocks) > 0 {
			last := blocks[len(blocks)-1].(map[string]any)
			last["cache_control"] = obj{"type": "ephemeral"}
			if c.markerTTL != "" {
				last["cache_control"] = obj{"type": "ephemeral", "ttl": c.markerTTL}
			}
		}
	}
	b := obj{"model": c.model, "max_tokens": c.maxTokens, "stream": false, "messages": msgs}
	if c.system != nil {
		b["system"] = c.system
	}
	if c.tools != nil {
		b["tools"] = c.tools
	}
	for k, v := range c.extra {
		b[k] = v
	}
	out, err := json.Marshal(b)
	if err != nil {
		panic(err)
	}
	return out
}

// reply is a response to build.
type reply struct {
	content    []any
	stop       string
	stopSeq    *string
	read       int64
	create     int64
	input      int64
	status     int
	errType    string
	errMessage string
	cut        bool // a stream cut before message_stop
	errorEvent bool // a 200 stream ending in an error event
	state      exchange.State
	diagnostic string // diagnostics.cache_miss_reason type
	took       time.Duration
}

func say(s string, read, create int64) reply {
	return reply{content: []any{text(s)}, stop: "end_turn", read: read, create: create}
}

func call(id, name string, input obj, read, create int64) reply {
	return reply{content: []any{toolUse(id, name, input)}, stop: "tool_use", read: read, create: create}
}

func httpError(status int, typ, msg string) reply {
	return reply{status: status, errType: typ, errMessage: msg}
}

// capture collects exchanges on a clock.
type capture struct {
	t   *testing.T
	now time.Time
	exs []exchange.Exchange
}

func newCapture(t *testing.T) *capture {
	return &capture{t: t, now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
}

// wait moves the clock.
func (c *capture) wait(d time.Duration) { c.now = c.now.Add(d) }

// send records one request and its reply, taking a second (or r.took).
func (c *capture) send(req *conv, r reply) {
	c.sendAt(req, r, c.now)
	took := r.took
	if took == 0 {
		took = time.Second
	}
	c.now = c.now.Add(took + 100*time.Millisecond)
}

// sendAt records an exchange that started at start (for overlaps).
func (c *capture) sendAt(req *conv, r reply, start time.Time) {
	took := r.took
	if took == 0 {
		took = time.Second
	}
	ex := exchange.Exchange{
		ID: int64(len(c.exs) + 1), Source: "mitm", Start: start, FirstByte: start.Add(took / 2), End: start.Add(took),
		Method: "POST", URL: "https://api.anthropic.com/v1/messages?beta=true", Host: "api.anthropic.com",
		ReqHeaders: append([]exchange.Header{{Name: "Content-Type", Value: "application/json"}, {Name: "Anthropic-Beta", Value: req.betas}}, req.headers...),
		ReqBody:    req.body(),
		State:      exchange.StateComplete,
		Status:     200,
	}
	if r.state != "" {
		ex.State = r.state
	}
	switch {
	case r.status >= 400:
		ex.Status = r.status
		ex.RespHeaders = []exchange.Header{{Name: "Content-Type", Value: "application/json"}}
		ex.RespBody, _ = json.Marshal(obj{"type": "error", "error": obj{"type": r.errType, "message": r.errMessage}, "request_id": "req_1"})
	case r.cut || r.errorEvent:
		ex.RespHeaders = []exchange.Header{{Name: "Content-Type", Value: "text/event-stream"}}
		ex.RespBody = sse(req, r)
		if r.cut && r.state == "" {
			ex.State = exchange.StateUpstreamFailed
			ex.Error = "unexpected EOF"
		}
	default:
		ex.RespHeaders = []exchange.Header{{Name: "Content-Type", Value: "application/json"}}
		ex.RespBody = messageBody(req, r)
	}
	c.exs = append(c.exs, ex)
}

func usage(r reply) obj {
	return obj{"input_tokens": r.input, "cache_read_input_tokens": r.read, "cache_creation_input_tokens": r.create, "output_tokens": 10}
}

func messageBody(req *conv, r reply) []byte {
	content := r.content
	if content == nil {
		content = []any{}
	}
	m := obj{"id": "msg_1", "type": "message", "role": "assistant", "model": req.model, "content": content,
		"stop_reason": r.stop, "stop_sequence": r.stopSeq, "usage": usage(r)}
	if r.diagnostic != "" {
		m["diagnostics"] = obj{"cache_miss_reason": obj{"type": r.diagnostic, "cache_missed_input_tokens": r.read + r.create}}
	}
	b, _ := json.Marshal(m)
	return b
}

// sse renders a stream that is cut after its content, or ends in an error
// event.
func sse(req *conv, r reply) []byte {
	var b strings.Builder
	ev := func(name string, data obj) {
		raw, _ := json.Marshal(data)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, raw)
	}
	ev("message_start", obj{"type": "message_start", "message": obj{"id": "msg_1", "type": "message", "role": "assistant",
		"model": req.model, "content": []any{}, "usage": usage(r)}})
	for i, c := range r.content {
		ev("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": c})
		ev("content_block_stop", obj{"type": "content_block_stop", "index": i})
	}
	if r.errorEvent {
		ev("error", obj{"type": "error", "error": obj{"type": r.errType, "message": r.errMessage}})
	}
	return []byte(b.String())
}

// build runs timeline.Build over the capture.
func (c *capture) build() *timeline.Session { return timeline.Build(c.exs) }

// flagsOf returns the flags of one kind on a turn.
func flagsOf(t *timeline.Turn, kind string) []timeline.Flag {
	var out []timeline.Flag
	for _, f := range t.Flags {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

// allFlags returns every flag of a kind in the session, with its turn.
func allFlags(s *timeline.Session, kind string) map[int][]timeline.Flag {
	out := map[int][]timeline.Flag{}
	for _, t := range s.Turns {
		if fs := flagsOf(t, kind); len(fs) > 0 {
			out[t.Index] = fs
		}
	}
	return out
}

// oneFlag asserts that turn i, and no other turn, has exactly one flag of
// the kind, and returns it.
func oneFlag(t *testing.T, s *timeline.Session, kind string, i int) timeline.Flag {
	t.Helper()
	all := allFlags(s, kind)
	if len(all) != 1 || len(all[i]) != 1 {
		t.Fatalf("%s flags: want one on turn %d, got %s", kind, i, describeFlags(all))
	}
	f := all[i][0]
	if f.Detail == "" {
		t.Errorf("%s flag on turn %d has no detail", kind, i)
	}
	t.Logf("turn %d %s: %s", i, kind, f.Detail)
	return f
}

// noFlag asserts that no turn has a flag of the kind.
func noFlag(t *testing.T, s *timeline.Session, kind string) {
	t.Helper()
	if all := allFlags(s, kind); len(all) > 0 {
		t.Errorf("%s flags: want none, got %s", kind, describeFlags(all))
	}
}

func describeFlags(m map[int][]timeline.Flag) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for i, fs := range m {
		for _, f := range fs {
			parts = append(parts, fmt.Sprintf("turn %d [%s %s %s]: %s", i, f.Cause, f.Tool, f.Search, f.Detail))
		}
	}
	return strings.Join(parts, "\n")
}

// dump describes a session for failure messages.
func dump(s *timeline.Session) string {
	var b strings.Builder
	for _, th := range s.Threads {
		fmt.Fprintf(&b, "thread %s (%s): %v\n", th.ID, th.Kind, th.Turns)
	}
	for _, t := range s.Turns {
		u := t.Decoded.Response.Usage
		fmt.Fprintf(&b, "turn %d %s prev=%d link=%s status=%d msgs=%d read=%d create=%d\n", t.Index, t.Thread, t.Prev, t.Link,
			t.Exchange.Status, len(t.Decoded.Request.Messages), u.CacheReadInputTokens, u.CacheCreationInputTokens)
		for _, f := range t.Flags {
			fmt.Fprintf(&b, "    %s %s [%s%s]: %s\n", f.Kind, f.Severity, f.Cause, f.Tool, f.Detail)
		}
	}
	return b.String()
}

// threadOf asserts the thread layout: ids mapped to turn lists.
func wantThreads(t *testing.T, s *timeline.Session, want map[string][]int) {
	t.Helper()
	got := map[string][]int{}
	for _, th := range s.Threads {
		got[th.ID] = th.Turns
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("threads %v, want %v\n%s", got, want, dump(s))
	}
}
