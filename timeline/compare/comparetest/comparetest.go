// Package comparetest builds small sessions shaped like Claude Code's for
// the tests of package compare and of what writes its results.
package comparetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

// obj is a JSON object to build.
type obj = map[string]any

// Step is one turn's response: a search (query and what it loads), a
// call of a tool, or a closing text.
type Step struct {
	search string
	loads  []string
	call   string
	input  string
	text   string
}

// Search is a ToolSearch for query that loads the tools named.
func Search(query string, loads ...string) Step { return Step{search: query, loads: loads} }

// Call is a call of the tool name.
func Call(name string) Step { return Step{call: name, input: "hello"} }

// Done is a closing text.
func Done(text string) Step { return Step{text: text} }

// Shape is what a session's requests carry besides the steps.
type Shape struct {
	Version  string // Claude Code release
	Betas    string
	System   string // the main system prompt
	Thinking string // JSON of the thinking parameter, "" for none
	EchoDesc string // the description of mcp__demo__echo once loaded
	IDSeed   int    // makes the ids and times of one session differ from another's
	// Catalog, when set, replaces the deferred tools announced (Catalog).
	Catalog []string
	// Inline names more tools sent with their schemas on every request.
	Inline []string
}

// DefaultShape is the shape of Claude Code 2.1.328's requests.
func DefaultShape() Shape {
	return Shape{Version: "2.1.328", Betas: "claude-code-20250219,advanced-tool-use-2025-11-20",
		System: "You are an agent working with the user toward their goals.", Thinking: `{"type":"enabled","budget_tokens":4000}`,
		EchoDesc: "Echo text back."}
}

// Catalog is the deferred tools every session announces.
var Catalog = []string{"mcp__demo__echo", "mcp__demo__action_0", "mcp__demo__action_1"}

// Session builds the session of steps with shape sh.
func Session(sh Shape, steps ...Step) *timeline.Session {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).Add(time.Duration(sh.IDSeed) * time.Hour)
	catalog := Catalog
	if sh.Catalog != nil {
		catalog = sh.Catalog
	}
	billing := fmt.Sprintf("x-anthropic-billing-header: cc_version=%s.b1f; cc_entrypoint=sdk-cli; cch=%05x;", sh.Version, sh.IDSeed*7919)
	system := []any{obj{"type": "text", "text": billing},
		obj{"type": "text", "text": sh.System, "cache_control": obj{"type": "ephemeral"}}}
	announce := "<system-reminder>\nThe following deferred tools are now available via ToolSearch. Their schemas are NOT loaded — calling them directly will fail with InputValidationError. Use ToolSearch with query \"select:<name>[,<name>...]\" to load tool schemas before calling them:\n" +
		strings.Join(catalog, "\n") + "\n</system-reminder>"
	messages := []any{obj{"role": "user", "content": []any{obj{"type": "text", "text": announce}, obj{"type": "text", "text": "use the demo tools"}}}}
	loaded := []string{}
	var exs []exchange.Exchange
	for i, st := range steps {
		tools := []any{
			obj{"name": "Bash", "description": "Run a command.", "input_schema": obj{"type": "object"}},
			obj{"name": "ToolSearch", "description": "Search for deferred tools.", "input_schema": obj{"type": "object"}},
		}
		for _, n := range sh.Inline {
			tools = append(tools, obj{"name": n, "description": "The " + n + " tool.", "input_schema": obj{"type": "object"}})
		}
		for _, n := range loaded {
			desc := "The " + n + " tool."
			if n == "mcp__demo__echo" {
				desc = sh.EchoDesc
			}
			tools = append(tools, obj{"name": n, "description": desc, "input_schema": obj{"type": "object"}, "defer_loading": true})
		}
		req := obj{"model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": false, "system": system, "tools": tools, "messages": messages}
		if sh.Thinking != "" {
			req["thinking"] = json.RawMessage(sh.Thinking)
		}
		body, _ := json.Marshal(req)
		id := fmt.Sprintf("toolu_%d_%d", sh.IDSeed, i)
		var content []any
		stop := "tool_use"
		switch {
		case st.search != "":
			content = []any{obj{"type": "tool_use", "id": id, "name": "ToolSearch", "input": obj{"query": st.search, "max_results": 5}}}
		case st.call != "":
			content = []any{obj{"type": "tool_use", "id": id, "name": st.call, "input": obj{"text": st.input}}}
		default:
			content = []any{obj{"type": "text", "text": st.text}}
			stop = "end_turn"
		}
		read, written := 1000+int64(100*i), int64(100)
		resp, _ := json.Marshal(obj{"id": fmt.Sprintf("msg_%d_%d", sh.IDSeed, i), "type": "message", "role": "assistant",
			"model": "claude-sonnet-4-5", "content": content, "stop_reason": stop,
			"usage": obj{"input_tokens": 3, "cache_read_input_tokens": read, "cache_creation_input_tokens": written, "output_tokens": 20}})
		at := start.Add(time.Duration(i) * 2 * time.Second)
		exs = append(exs, exchange.Exchange{
			ID: int64(i + 1), Source: "mitm", Start: at, FirstByte: at.Add(500 * time.Millisecond), End: at.Add(time.Second),
			Method: "POST", URL: "https://api.anthropic.com/v1/messages?beta=true", Host: "api.anthropic.com",
			ReqHeaders: []exchange.Header{{Name: "Content-Type", Value: "application/json"}, {Name: "Anthropic-Beta", Value: sh.Betas},
				{Name: "User-Agent", Value: "claude-cli/" + sh.Version + " (external, sdk-cli)"}},
			ReqBody:     body,
			State:       exchange.StateComplete,
			Status:      200,
			RespHeaders: []exchange.Header{{Name: "Content-Type", Value: "application/json"}, {Name: "Request-Id", Value: fmt.Sprintf("req_%d_%d", sh.IDSeed, i)}},
			RespBody:    resp,
		})
		messages = append(messages, obj{"role": "assistant", "content": content})
		switch {
		case st.search != "" && len(st.loads) > 0:
			var refs []any
			for _, n := range st.loads {
				refs = append(refs, obj{"type": "tool_reference", "tool_name": n})
				loaded = append(loaded, n)
			}
			messages = append(messages, obj{"role": "user", "content": []any{
				obj{"type": "tool_result", "tool_use_id": id, "content": refs}, obj{"type": "text", "text": "Tool loaded."}}})
		case st.search != "":
			messages = append(messages, obj{"role": "user", "content": []any{
				obj{"type": "tool_result", "tool_use_id": id, "content": "No matching deferred tools found"}}})
		case st.call != "":
			messages = append(messages, obj{"role": "user", "content": []any{
				obj{"type": "tool_result", "tool_use_id": id, "content": st.input}}})
		}
	}
	return timeline.Build(exs)
}
