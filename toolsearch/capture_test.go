package toolsearch_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/toolsearch"
)

type obj = map[string]any

// session builds a session of one thread from request bodies and
// response contents.
func session(t *testing.T, turns ...[2]obj) *timeline.Session {
	t.Helper()
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var exs []exchange.Exchange
	for i, tr := range turns {
		req, _ := json.Marshal(tr[0])
		resp, _ := json.Marshal(obj{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": tr[1]["content"], "stop_reason": "tool_use", "usage": obj{"input_tokens": 10, "output_tokens": 10}})
		at := start.Add(time.Duration(i) * 2 * time.Second)
		exs = append(exs, exchange.Exchange{ID: int64(i + 1), Source: "mitm", Start: at, FirstByte: at, End: at.Add(time.Second),
			Method: "POST", URL: "https://api.anthropic.com/v1/messages?beta=true", Host: "api.anthropic.com",
			ReqHeaders:  []exchange.Header{{Name: "Content-Type", Value: "application/json"}},
			RespHeaders: []exchange.Header{{Name: "Content-Type", Value: "application/json"}},
			ReqBody:     req, RespBody: resp, Status: 200, State: exchange.StateComplete})
	}
	return timeline.Build(exs)
}

func def(name, desc string, deferLoading bool) obj {
	d := obj{"name": name, "description": desc, "input_schema": obj{"type": "object", "properties": obj{"channel": obj{"type": "string", "description": "Where to post"}}}}
	if deferLoading {
		d["defer_loading"] = true
	}
	return d
}

const reminder = "<system-reminder>\nThe following deferred tools are now available via ToolSearch. Their schemas are NOT loaded — calling them directly will fail with InputValidationError:\n"

// TestSessionClient: a ToolSearch recorded over the worked example's
// catalog. The descriptions are unknown (never loaded), yet the names
// alone reproduce 24, 12, 12; a recorded result the simulation cannot
// reproduce is reported with its likely causes.
func TestSessionClient(t *testing.T) {
	names := []string{"mcp__slack__send_message", "mcp__slack__list_channels", "mcp__email__send_email", "mcp__github__create_issue"}
	user := obj{"role": "user", "content": []any{obj{"type": "text", "text": reminder + strings.Join(names, "\n") + "\n</system-reminder>"}, obj{"type": "text", "text": "post to slack"}}}
	tools := []any{def("ToolSearch", "Search deferred tools.", false), obj{"name": "DeferredToolPlaceholder", "defer_loading": true, "input_schema": obj{"type": "object"}}}
	for _, c := range []struct {
		name     string
		recorded []string
		differs  string
	}{
		{"agrees", []string{"mcp__slack__send_message", "mcp__slack__list_channels", "mcp__email__send_email"}, ""},
		{"drifted", []string{"mcp__slack__send_message"}, "simulated but not recorded: mcp__slack__list_channels, mcp__email__send_email"},
	} {
		t.Run(c.name, func(t *testing.T) {
			call := obj{"type": "tool_use", "id": "toolu_1", "name": "ToolSearch", "input": obj{"query": "slack send", "max_results": 5}}
			var refs []any
			for _, n := range c.recorded {
				refs = append(refs, obj{"type": "tool_reference", "tool_name": n})
			}
			loaded := append([]any{}, tools...)
			for _, n := range c.recorded {
				loaded = append(loaded, obj{"name": n, "defer_loading": true, "input_schema": obj{"type": "object"}})
			}
			s := session(t,
				[2]obj{{"model": "claude-sonnet-4-5", "max_tokens": 100, "tools": tools, "messages": []any{user}}, {"content": []any{call}}},
				[2]obj{{"model": "claude-sonnet-4-5", "max_tokens": 100, "tools": loaded, "messages": []any{user,
					obj{"role": "assistant", "content": []any{call}},
					obj{"role": "user", "content": []any{obj{"type": "tool_result", "tool_use_id": "toolu_1", "content": refs}, obj{"type": "text", "text": "Tool loaded."}}}}},
					{"content": []any{obj{"type": "text", "text": "ok"}}}},
			)
			es := toolsearch.Session(s, toolsearch.Options{})
			if len(es) != 1 {
				t.Fatalf("%d explained, want 1", len(es))
			}
			e := es[0]
			if e.Turn != 2 || e.Pool != 4 || e.Sim.Mode != toolsearch.ModeKeyword {
				t.Errorf("turn %d pool %d mode %s", e.Turn, e.Pool, e.Sim.Mode)
			}
			var scores []float64
			for _, cd := range e.Sim.Candidates {
				scores = append(scores, cd.Score)
			}
			if len(scores) != 3 || scores[0] != 24 || scores[1] != 12 || scores[2] != 12 || e.Sim.Zero != 1 {
				t.Errorf("scores %v zero %d, want 24 12 12 and one 0", scores, e.Sim.Zero)
			}
			text := e.Text()
			if c.differs == "" {
				if !e.Agrees() || !strings.Contains(text, "simulation agrees with the recording") {
					t.Errorf("want agreement:\n%s", text)
				}
				return
			}
			if e.Agrees() || e.Diff != c.differs {
				t.Errorf("diff %q, want %q", e.Diff, c.differs)
			}
			for _, want := range []string{"DIFFERS: " + c.differs, "possible cause: the descriptions of 3 of the 4 catalog tools are unknown", "algorithm may have drifted"} {
				if !strings.Contains(text, want) {
					t.Errorf("text does not say %q:\n%s", want, text)
				}
			}
			if got := toolsearch.Summary(es); got != "1 search re-run offline: 0 agree with the recording, 1 differ" {
				t.Errorf("summary %q", got)
			}
		})
	}
}

// TestSessionServer: a server regex search in a response, re-run over the
// deferred definitions of its request; one whose pattern RE2 refuses is
// reported as not simulated.
func TestSessionServer(t *testing.T) {
	tools := []any{obj{"name": "tool_search_tool_regex", "type": "tool_search_tool_regex_20251119"},
		def("post_message", "Post a message to a channel.", true), def("get_weather", "Current weather.", true), def("list_files", "List files.", true)}
	for _, c := range []struct {
		pattern, recorded, want string
	}{
		{"(?i)post a message", "post_message", ""},
		{"(?i)weather", "list_files", "recorded but not simulated: list_files; simulated but not recorded: get_weather"},
		{"(?<=x)y", "get_weather", "not simulated: toolsearch: regex"},
	} {
		content := []any{
			obj{"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_regex", "input": obj{"pattern": c.pattern}},
			obj{"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": obj{"type": "tool_search_tool_search_result",
				"tool_references": []any{obj{"type": "tool_reference", "tool_name": c.recorded}}}},
		}
		s := session(t, [2]obj{{"model": "claude-sonnet-4-5", "max_tokens": 100, "tools": tools,
			"messages": []any{obj{"role": "user", "content": "go"}}}, {"content": content}})
		es := toolsearch.Session(s, toolsearch.Options{})
		if len(es) != 1 {
			t.Fatalf("%s: %d explained", c.pattern, len(es))
		}
		e := es[0]
		if e.Pool != 3 || (c.want == "") != e.Agrees() || !strings.HasPrefix(e.Diff, c.want) {
			t.Errorf("%s: pool %d diff %q, want %q", c.pattern, e.Pool, e.Diff, c.want)
		}
		if c.want == "" && e.Sim.Candidates[0].Why[0] != "matches the description" {
			t.Errorf("%s: why %v", c.pattern, e.Sim.Candidates[0].Why)
		}
	}
}

// TestParseToolMCP reads an MCP tools/list entry: inputSchema and the
// search hint in _meta.
func TestParseToolMCP(t *testing.T) {
	tl := toolsearch.ParseTool(json.RawMessage(`{"name":"send","description":"Send it.","inputSchema":{"properties":{"to":{"description":"Recipient"}}},"_meta":{"anthropic/searchHint":"mail post"}}`))
	if tl.Description != "Send it." || tl.SearchHint != "mail post" || len(tl.Params) != 1 || tl.Params[0] != "to: Recipient" {
		t.Errorf("%+v", tl)
	}
}
