package view

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

// threeTurns is a short real-shaped session: a select search, the loaded
// tool called, then a text answer.
func threeTurns(t *testing.T) *timeline.Session {
	t.Helper()
	reminder := "<system-reminder>\nThe following deferred tools are now available via ToolSearch. Their schemas are NOT loaded — calling them directly will fail with InputValidationError. Use ToolSearch with query \"select:<name>[,<name>...]\" to load tool schemas before calling them:\nAlpha\nBeta\nmcp__x__echo\n</system-reminder>"
	tool := func(name string, deferred bool) map[string]any {
		m := map[string]any{"name": name, "description": name + " does things", "input_schema": map[string]any{"type": "object"}}
		if deferred {
			m["defer_loading"] = true
		}
		return m
	}
	tools := []any{tool("Bash", false), tool("ToolSearch", false), tool("DeferredToolPlaceholder", true)}
	msgs := []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": reminder}, map[string]any{"type": "text", "text": "echo hi"}}}}
	sys := []any{map[string]any{"type": "text", "text": "You are a test agent.", "cache_control": map[string]any{"type": "ephemeral"}}}
	var exs []exchange.Exchange
	at := t0
	send := func(content []any, stop string, read, created int) {
		body, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 32000, "system": sys, "tools": tools, "messages": msgs})
		resp, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("msg_%d", len(exs)), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": content, "stop_reason": stop, "usage": map[string]any{"input_tokens": 3, "cache_read_input_tokens": read, "cache_creation_input_tokens": created, "output_tokens": 10}})
		exs = append(exs, exchange.Exchange{ID: int64(len(exs) + 1), Start: at, End: at.Add(time.Second), Method: "POST",
			URL: "https://api.anthropic.com/v1/messages", ReqBody: body, Status: 200, State: exchange.StateComplete,
			RespHeaders: []exchange.Header{{Name: "Content-Type", Value: "application/json"}}, RespBody: resp})
		at = at.Add(3 * time.Second)
		msgs = append(msgs, map[string]any{"role": "assistant", "content": content})
	}
	send([]any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "ToolSearch", "input": map[string]any{"query": "select:mcp__x__echo", "max_results": 5}}}, "tool_use", 0, 3000)
	msgs = append(msgs, map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": []any{map[string]any{"type": "tool_reference", "tool_name": "mcp__x__echo"}}},
		map[string]any{"type": "text", "text": "Tool loaded."}}})
	tools = append(tools, tool("mcp__x__echo", true))
	send([]any{map[string]any{"type": "tool_use", "id": "toolu_2", "name": "mcp__x__echo", "input": map[string]any{"text": "hi"}}}, "tool_use", 3000, 100)
	msgs = append(msgs, map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_2", "content": "hi"}}})
	send([]any{map[string]any{"type": "text", "text": "Done."}}, "end_turn", 3100, 50)
	s := timeline.Build(exs)
	if len(s.Turns) != 3 || s.Turns[2].Prev != 2 {
		t.Fatalf("session: %d turns", len(s.Turns))
	}
	return s
}

func wantLines(t *testing.T, what string, lines []Line, want ...string) {
	t.Helper()
	text := Text(lines)
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

func TestDetailTabs(t *testing.T) {
	s := threeTurns(t)
	t2, t3 := s.Turns[1], s.Turns[2]
	wantLines(t, "working set #2", WorkingSet(t2, ""),
		"Working set of #2 (main): 3 tools, +1 −0 since #1",
		"Loaded by search (1)",
		" + mcp__x__echo  ← \"select:mcp__x__echo\"",
		"Always loaded (2)", "Bash, ToolSearch")
	if text := Text(WorkingSet(t2, "bash")); strings.Contains(text, "echo") || !strings.Contains(text, "filter bash") {
		t.Errorf("filtered working set:\n%s", text)
	}
	wantLines(t, "catalog #2", Catalog(t2, "", 80),
		"Catalog of #2 (main): 3 deferred tools, 1 loaded",
		"● mcp__x__echo  via search",
		"Not loaded (2)", "○ Alpha", "○ Beta")
	if text := Text(Catalog(t2, "zzz", 80)); !strings.Contains(text, `no catalog entry matches "zzz"`) {
		t.Errorf("catalog filter:\n%s", text)
	}
	wantLines(t, "searches #3", Searches(s, t3, ""),
		"Searches of #3 (main): 1 search, 0 new in this turn",
		`#2    ToolSearch "select:mcp__x__echo"  select, max 5`,
		"→ loaded mcp__x__echo",
		"→ called mcp__x__echo at #2")
	explain := func(kind string) (string, string) { return "because " + kind, "fix " + kind }
	t3.Flags = []timeline.Flag{{Kind: "test_flag", Severity: timeline.SeverityInfo, Detail: "it happened", Tool: "Bash"}}
	wantLines(t, "flags #3", Flags(s, t3, "", explain, nil),
		"Flags of #3 (main): 1 flag", "● test_flag  info  Bash", "What happened", "it happened",
		"Why it matters", "because test_flag", "What to do", "fix test_flag", "In this session: test_flag ×1")
	wantLines(t, "flags #2", Flags(s, t2, "", explain, nil), "Nothing flagged on this turn.")
	wantLines(t, "cache #3", Cache(s, t3, 60, 4),
		"Prompt cache across main (3 turns)", "#3  prompt 3.2k = read 3.1k + created 50 + input 3",
		"Prefix vs #2", "Same prefix")
	wantLines(t, "cache #1", Cache(s, s.Turns[0], 60, 4), "First turn of main")
}

func TestRaw(t *testing.T) {
	s := threeTurns(t)
	r := NewRaw()
	r.SetTurn(s.Turns[1])
	lines := func() string {
		var out []string
		for _, l := range r.Lines(60) {
			out = append(out, l.Text.String())
		}
		return strings.Join(out, "\n")
	}
	got := lines()
	for _, want := range []string{"▾ request  POST /v1/messages  ", "  ▸ headers  (0)", "  ▾ body", `      model: "claude-sonnet-4-5"`, "    ▸ tools: [4]", "▾ response  200  application/json"} {
		if !strings.Contains(got, want) {
			t.Errorf("raw lacks %q:\n%s", want, got)
		}
	}
	r.Toggle("request/body/tools")
	if got := lines(); !strings.Contains(got, "      ▸ [3]: {…}  mcp__x__echo") {
		t.Errorf("tools opened:\n%s", got)
	}
	r.Toggle("request/body/messages")
	r.Toggle("request/body/messages/0")
	r.Toggle("request/body/messages/0/content")
	r.Toggle("request/body/messages/0/content/0")
	got = lines()
	if !strings.Contains(got, "▸ text: \"<system-reminder>…\"  311 B, 6 lines") {
		t.Errorf("long string not folded:\n%s", got)
	}
	r.Toggle("request/body/messages/0/content/0/text")
	if got := lines(); !strings.Contains(got, "Alpha") || !strings.Contains(got, "Beta") {
		t.Errorf("opened string lacks its lines:\n%s", got)
	}
	for _, l := range r.Lines(60) {
		if l.Text.Width() > 60 && !l.Foldable {
			t.Errorf("text line wider than 60: %q", l.Text.String())
		}
	}
	// The open state is kept for the next turn.
	r.SetTurn(s.Turns[2])
	if got := lines(); !strings.Contains(got, "▾ tools: [4]") {
		t.Errorf("fold state lost:\n%s", got)
	}
	r.Toggle("request")
	if n := len(r.Lines(60)); n > 12 {
		t.Errorf("closed request still shows %d lines", n)
	}
	r.SetTurn(nil)
	if n := len(r.Lines(60)); n != 0 {
		t.Errorf("no turn: %d lines", n)
	}
}

func TestRawEvents(t *testing.T) {
	body := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":3}}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	start := t0
	ex := exchange.Exchange{Method: "POST", URL: "https://api.anthropic.com/v1/messages", Start: start, End: start.Add(time.Second),
		ReqBody: []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`), Status: 200,
		RespHeaders: []exchange.Header{{Name: "Content-Type", Value: "text/event-stream"}}, RespBody: []byte(body),
		Chunks: []exchange.Chunk{{Offset: 0, Size: 90, At: start.Add(412 * time.Millisecond)}, {Offset: 90, Size: len(body) - 90, At: start.Add(500 * time.Millisecond)}},
		State:  exchange.StateComplete}
	s := timeline.Build([]exchange.Exchange{ex})
	r := NewRaw()
	r.SetTurn(s.Turns[0])
	r.Toggle("response/events")
	var got []string
	for _, l := range r.Lines(100) {
		got = append(got, l.Text.String())
	}
	text := strings.Join(got, "\n")
	for _, want := range []string{"▾ message  rebuilt from the events", "▾ events  (2)", "+0.", "s  message_start", "message_stop"} {
		if !strings.Contains(text, want) {
			t.Errorf("events lack %q:\n%s", want, text)
		}
	}
}

// The Cache tab and the cache_break flag (which the report prints) give
// the gap between two turns in the same words.
func TestCacheGapAgrees(t *testing.T) {
	t0 := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	sys := []any{map[string]any{"type": "text", "text": "You are a test agent.", "cache_control": map[string]any{"type": "ephemeral"}}}
	msgs := []any{map[string]any{"role": "user", "content": "hi"}}
	var exs []exchange.Exchange
	for i, u := range []struct{ read, created int }{{0, 9000}, {0, 9050}} {
		body, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 32000, "system": sys,
			"tools": []any{map[string]any{"name": "Bash", "input_schema": map[string]any{"type": "object"}}}, "messages": msgs})
		resp, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("msg_%d", i), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": []any{map[string]any{"type": "text", "text": "ok"}}, "stop_reason": "end_turn",
			"usage": map[string]any{"input_tokens": 3, "cache_read_input_tokens": u.read, "cache_creation_input_tokens": u.created, "output_tokens": 1}})
		start := t0.Add(time.Duration(i) * 1445 * time.Millisecond)
		exs = append(exs, exchange.Exchange{ID: int64(i + 1), Start: start, End: start.Add(time.Second), Method: "POST",
			URL: "https://api.anthropic.com/v1/messages", ReqBody: body, Status: 200, State: exchange.StateComplete,
			RespHeaders: []exchange.Header{{Name: "Content-Type", Value: "application/json"}}, RespBody: resp})
		msgs = append(msgs, map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "ok"}}},
			map[string]any{"role": "user", "content": "again"})
	}
	s := timeline.Build(exs)
	t2 := s.Turn(2)
	if t2 == nil || t2.Prev != 1 || len(t2.Flags) != 1 || t2.Flags[0].Kind != timeline.FlagCacheBreak {
		t.Fatalf("want one cache_break on turn 2, got %+v", t2)
	}
	gap, ok := timeline.GapText(s.Turn(1), t2)
	if !ok || gap != "1 s" {
		t.Fatalf("gap %q %v", gap, ok)
	}
	if !strings.Contains(t2.Flags[0].Detail, gap+" passed since that turn started") {
		t.Errorf("flag detail %q lacks the gap %q", t2.Flags[0].Detail, gap)
	}
	wantLines(t, "cache #2", Cache(s, t2, 60, 4), "Prefix vs #1  ("+gap+" after it started)")
}

// CacheWithoutText names where the prefix changed and says the note
// instead of the text that changed.
func TestCacheWithoutText(t *testing.T) {
	s := threeTurns(t)
	sys := "You are a test agent, now with a secret."
	t3 := s.Turn(3)
	d := *t3.Decoded
	d.Request.System = append([]decode.SystemBlock(nil), d.Request.System...)
	d.Request.System[0].Text = sys
	t3.Decoded = &d
	full := Text(Cache(s, t3, 60, 4))
	if !strings.Contains(full, "first difference at system[0]") || !strings.Contains(full, "secret") {
		t.Fatalf("Cache lacks the change:\n%s", full)
	}
	got := Text(CacheWithoutText(s, t3, 60, 4, "the text is left out"))
	if strings.Contains(got, "secret") || strings.Contains(got, "test agent") {
		t.Errorf("CacheWithoutText shows the text:\n%s", got)
	}
	wantLines(t, "cache without text", CacheWithoutText(s, t3, 60, 4, "the text is left out"), "first difference at system[0]", "  the text is left out")
}

// SetOpen opens a node inside a closed one: it shows once its parents are
// open, whatever order they were opened in.
func TestRawSetOpen(t *testing.T) {
	s := threeTurns(t)
	r := NewRaw()
	r.SetTurn(s.Turns[1])
	r.SetOpen("request/body/messages/0", true)
	r.SetOpen("request/body/messages", true)
	var got []string
	for _, l := range r.Lines(60) {
		got = append(got, l.Text.String())
	}
	if text := strings.Join(got, "\n"); !strings.Contains(text, "▾ [0]") || !strings.Contains(text, "content: [2]") {
		t.Errorf("opened nodes not shown:\n%s", text)
	}
	r.SetOpen("request", false)
	for _, l := range r.Lines(60) {
		if strings.HasPrefix(l.Path, "request/") {
			t.Errorf("closed request still shows %s", l.Path)
		}
	}
}
