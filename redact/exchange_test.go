package redact

import (
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

func TestExchangesKeepsToolSearchAndRemovesText(t *testing.T) {
	req := `{"model":"claude-sonnet-4-5","metadata":{"user_id":"user_abc_account_123"},"system":[{"type":"text","text":"You are Claude Code at /home/alice/secret-project"}],` +
		`"tools":[{"name":"ToolSearch","description":"find tools","input_schema":{"type":"object","properties":{"query":{"type":"string","description":"what"}}}},{"name":"mcp__github__create_issue","defer_loading":true,"description":"create"}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"<available-deferred-tools>\nmcp__github__create_issue\n</available-deferred-tools>\nmy key is sk-ant-api03-abcdefghijklmnop"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"ToolSearch","input":{"query":"select:mcp__github__create_issue","max_results":5}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"tool_reference","tool_name":"mcp__github__create_issue"}]},{"type":"tool_result","tool_use_id":"toolu_0","content":"AWS_SECRET_ACCESS_KEY=abc\ncorrect horse battery staple"}]}]}`
	resp := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"the password is hunter2\"}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":12}}\n\n"
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	ex := &exchange.Exchange{URL: "https://api.anthropic.com/v1/messages?beta=true", ReqBody: []byte(req), RespBody: []byte(resp), Status: 200,
		ReqHeaders: []exchange.Header{{Name: "Content-Type", Value: "application/json"}, {Name: "X-Claude-Code-Session-Id", Value: "0b5e1d2c-0000-4000-8000-000000000001"}},
		Chunks:     []exchange.Chunk{{Offset: 0, Size: 10, At: at}, {Offset: 10, Size: len(resp) - 10, At: at.Add(time.Second)}}}
	for _, p := range []Policy{Default, Strict} {
		out := NewExchanges(p).Exchange(ex)
		all := string(out.ReqBody) + string(out.RespBody) + out.ReqHeaders[1].Value
		for _, secret := range []string{"sk-ant-api03", "alice", "AWS_SECRET", "horse", "hunter2", "user_abc", "0b5e1d2c", "find tools"} {
			if strings.Contains(all, secret) {
				t.Errorf("%s: %q is in %s", p, secret, all)
			}
		}
		server := "github"
		if p == Strict {
			server = "s1"
		}
		for _, kept := range []string{`"name":"ToolSearch"`, `"query":"select:mcp__` + server + `__create_issue"`, `"tool_name":"mcp__` + server + `__create_issue"`,
			`<available-deferred-tools>\nmcp__` + server + `__create_issue\n</available-deferred-tools>`, `"defer_loading":true`, `"max_results":5`,
			`"stop_reason":"end_turn"`, `"output_tokens":12`, "event: message_delta\ndata: {", `"model":"claude-sonnet-4-5"`} {
			if !strings.Contains(all, kept) {
				t.Errorf("%s: %s is not kept in %s", p, kept, all)
			}
		}
		if len(out.Chunks) != 1 || out.Chunks[0].Size != len(out.RespBody) || !out.Chunks[0].At.Equal(at) {
			t.Errorf("%s: chunks %+v for a body of %d", p, out.Chunks, len(out.RespBody))
		}
	}
	if !strings.Contains(string(ex.ReqBody), "hunter2") && !strings.Contains(string(ex.RespBody), "hunter2") {
		t.Error("the exchange given was changed")
	}
}
