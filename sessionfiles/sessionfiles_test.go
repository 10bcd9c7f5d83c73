package sessionfiles

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

// writer builds a session file the way Claude Code writes one.
type writer struct {
	t     *testing.T
	lines []string
}

func (w *writer) rec(v map[string]any) {
	w.t.Helper()
	v["sessionId"] = "0b5e1d2c-0000-4000-8000-000000000001"
	b, err := json.Marshal(v)
	if err != nil {
		w.t.Fatal(err)
	}
	w.lines = append(w.lines, string(b))
}

func hashMsg(t *testing.T, m map[string]any) string {
	t.Helper()
	raw, _ := json.Marshal(m)
	c, err := canonMessage(raw)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(c)
	return hex.EncodeToString(h[:])
}

// twoTurns is a session of two requests: a user prompt answered by a
// ToolSearch call, then its result answered by text.
func twoTurns(t *testing.T) *writer {
	w := &writer{t: t}
	user1 := map[string]any{"role": "user", "content": "find the echo tool"}
	w.rec(map[string]any{"type": "user", "message": user1, "timestamp": "2026-11-20T10:00:00.000Z", "version": "2.1.328"})
	w.rec(map[string]any{"type": "api-request-shape", "shapeHash": "s1", "shape": map[string]any{
		"system": []any{map[string]any{"type": "text", "text": "You are Claude Code."}},
		"tools": []any{map[string]any{"name": "ToolSearch", "description": "search", "input_schema": map[string]any{"type": "object"}},
			map[string]any{"name": "mcp__demo__echo", "description": "echo", "input_schema": map[string]any{"type": "object"}, "defer_loading": true}},
	}})
	h1 := hashMsg(t, user1)
	params := map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 32000, "betas": []string{"claude-code-20250219"}}
	w.rec(map[string]any{"type": "api-request", "id": "r1", "timestamp": "2026-11-20T10:00:01.000Z", "version": "2.1.328", "querySource": "sdk",
		"shapeHash": "s1", "params": params, "keep": 0, "tail": []string{h1},
		"cacheControl": []any{map[string]any{"path": []any{"messages", 0, "content", 0}, "value": map[string]any{"type": "ephemeral"}}}})
	call := map[string]any{"type": "tool_use", "id": "toolu_1", "name": "ToolSearch", "input": map[string]any{"query": "select:mcp__demo__echo"}}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 500}
	w.rec(map[string]any{"type": "assistant", "requestRef": "r1", "requestId": "req_1", "timestamp": "2026-11-20T10:00:02.000Z",
		"message": map[string]any{"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{map[string]any{"type": "text", "text": "Searching."}}, "stop_reason": nil, "usage": usage}})
	usage2 := map[string]any{"input_tokens": 10, "output_tokens": 25, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 500}
	w.rec(map[string]any{"type": "assistant", "requestRef": "r1", "requestId": "req_1", "timestamp": "2026-11-20T10:00:03.000Z",
		"message": map[string]any{"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{call}, "stop_reason": "tool_use", "usage": usage2}})
	asst := map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Searching."}, call}}
	result := map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1",
		"content": []any{map[string]any{"type": "tool_reference", "tool_name": "mcp__demo__echo"}}}}}
	w.rec(map[string]any{"type": "user", "message": result, "timestamp": "2026-11-20T10:00:04.000Z"})
	w.rec(map[string]any{"type": "api-request-blob", "hash": hashMsg(t, result), "message": result})
	w.rec(map[string]any{"type": "api-request", "id": "r2", "timestamp": "2026-11-20T10:00:05.000Z", "version": "2.1.328", "querySource": "sdk",
		"shapeHash": "s1", "params": params, "base": "r1", "keep": 1, "tail": []string{hashMsg(t, asst), hashMsg(t, result)}})
	w.rec(map[string]any{"type": "assistant", "requestRef": "r2", "requestId": "req_2", "timestamp": "2026-11-20T10:00:06.000Z",
		"message": map[string]any{"id": "msg_2", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{map[string]any{"type": "text", "text": "Loaded."}}, "stop_reason": "end_turn",
			"usage": map[string]any{"input_tokens": 5, "output_tokens": 3, "cache_read_input_tokens": 500, "cache_creation_input_tokens": 40}}})
	return w
}

func (w *writer) save(t *testing.T, tail string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "0b5e1d2c-0000-4000-8000-000000000001.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(w.lines, "\n")+"\n"+tail), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func readAll(t *testing.T, s *Session) []*exchange.Exchange {
	t.Helper()
	var out []*exchange.Exchange
	if err := s.Stream(context.Background(), func(ex *exchange.Exchange) error {
		c := *ex
		out = append(out, &c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRebuildsRequestsAndAnswers(t *testing.T) {
	s, err := Open(twoTurns(t).save(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	exs := readAll(t, s)
	if len(exs) != 2 || len(s.Problems) != 0 {
		t.Fatalf("%d exchanges, problems %v", len(exs), s.Problems)
	}
	var body struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools  []json.RawMessage `json:"tools"`
		System []json.RawMessage `json:"system"`
		Model  string            `json:"model"`
		Betas  []string          `json:"betas"`
	}
	if err := json.Unmarshal(exs[1].ReqBody, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) != 3 || body.Messages[1].Role != "assistant" || len(body.Messages[1].Content) != 2 || len(body.Tools) != 2 || body.Model != "claude-sonnet-4-5" || body.Betas != nil {
		t.Fatalf("second request rebuilt wrong: %s", exs[1].ReqBody)
	}
	if !strings.Contains(string(exs[0].ReqBody), `"cache_control":{"type":"ephemeral"}`) {
		t.Errorf("the first request's mark is missing: %s", exs[0].ReqBody)
	}
	if got := exs[0].ReqHeader("Anthropic-Beta"); got != "claude-code-20250219" {
		t.Errorf("betas header %q", got)
	}
	var answer struct {
		Content []json.RawMessage `json:"content"`
		Usage   struct {
			Output int `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(exs[0].RespBody, &answer); err != nil {
		t.Fatal(err)
	}
	// The answer was written as two records: both blocks, the last usage.
	if len(answer.Content) != 2 || answer.Usage.Output != 25 || exs[0].Status != 200 {
		t.Errorf("answer %s", exs[0].RespBody)
	}
}

func TestUnfinishedLastLineIsLeftOut(t *testing.T) {
	s, err := Open(twoTurns(t).save(t, `{"type":"assistant","message":{"id":"msg_3"`))
	if err != nil {
		t.Fatal(err)
	}
	if len(readAll(t, s)) != 2 || len(s.Problems) != 1 || !strings.Contains(s.Problems[0].What, "unfinished") {
		t.Fatalf("problems %v", s.Problems)
	}
}

func TestBadLinesAndNewRecordTypesAreNamed(t *testing.T) {
	w := twoTurns(t)
	w.lines = append(w.lines[:3], append([]string{`{"type":"assistant",`, `{"type":"quantum-state","sessionId":"x"}`}, w.lines[3:]...)...)
	s, err := Open(w.save(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(readAll(t, s)); n != 2 {
		t.Fatalf("%d exchanges", n)
	}
	if len(s.Problems) != 1 || s.Problems[0].Line != 4 || !strings.Contains(s.Problems[0].String(), "line 4: not a JSON record") {
		t.Errorf("problems %v", s.Problems)
	}
	if got := UnknownSummary(s.Unknown, "2.1.100"); got != "1 record of types tsinspect does not know (left out): quantum-state ×1" {
		t.Errorf("an older release's unknown record: %q", got)
	}
	if got := UnknownSummary(s.Unknown, "9.9.9"); got != "1 record of types tsinspect does not know (a release newer than "+NewestKnown+", which tsinspect was checked against): quantum-state ×1" {
		t.Errorf("unknown: %q", got)
	}
}

func TestMissingBlobIsNamed(t *testing.T) {
	w := twoTurns(t)
	var kept []string
	for _, l := range w.lines {
		if !strings.Contains(l, `"api-request-blob"`) {
			kept = append(kept, l)
		}
	}
	// The user record of the result is there, so the message is found
	// through the transcript; drop it too.
	w.lines = nil
	for _, l := range kept {
		if !strings.Contains(l, `"tool_reference"`) {
			w.lines = append(w.lines, l)
		}
	}
	s, err := Open(w.save(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	exs := readAll(t, s)
	if len(exs) != 2 || len(s.Problems) != 1 || !strings.Contains(s.Problems[0].What, "is not in the files (left out)") {
		t.Fatalf("problems %v", s.Problems)
	}
	if s.Unconfirmed != 2 || s.Confirmed != 0 {
		t.Errorf("confirmed %d, unconfirmed %d: no digest in these records", s.Confirmed, s.Unconfirmed)
	}
}

func TestConsecutiveUserRecordsAreOneMessage(t *testing.T) {
	a := map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t", "content": "ok"}}}
	b := map[string]any{"role": "user", "content": "[Your previous response had no visible output. Please continue.]"}
	merged := map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "t", "content": "ok"},
		map[string]any{"type": "text", "text": "[Your previous response had no visible output. Please continue.]"}}}
	w := &writer{t: t}
	w.rec(map[string]any{"type": "user", "message": a})
	w.rec(map[string]any{"type": "user", "message": b})
	s := newSession("s.jsonl")
	sc := &scanned{unknown: map[string]int{}}
	if err := scanRecords(strings.NewReader(strings.Join(w.lines, "\n")+"\n"), sc); err != nil {
		t.Fatal(err)
	}
	f := &fileState{path: "s.jsonl", asst: map[string][]*record{}}
	s.files[f.path] = f
	s.ingest(f, sc.records)
	if len(s.index) != 0 {
		t.Errorf("%d messages indexed by hash before any request record needs them", len(s.index))
	}
	s.indexFiles()
	if _, ok := s.index[hashMsg(t, merged)]; !ok {
		t.Error("the merged message is not indexed")
	}
}

func TestJSStringEscaping(t *testing.T) {
	got, err := canonValue([]byte(`{"b":"<a&b>\u2028\u0001é\"\\","a":[1.50,2]}`), false)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"a\":[1.50,2],\"b\":\"<a&b>\u2028\\u0001é\\\"\\\\\"}"; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestResolve(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "-home-user-project")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"abcd1234-0000-4000-8000-000000000001", "abcd9999-0000-4000-8000-000000000002"} {
		if err := os.WriteFile(filepath.Join(proj, id+".jsonl"), []byte(`{"type":"queue-operation","sessionId":"`+id+`"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if e, err := Resolve(root, "abcd12"); err != nil || !strings.HasPrefix(e.ID, "abcd1234") {
		t.Errorf("prefix: %v %v", e, err)
	}
	if _, err := Resolve(root, "abcd"); err == nil || !strings.Contains(err.Error(), "2 sessions start so") {
		t.Errorf("ambiguous: %v", err)
	}
	if _, err := Resolve(root, "ffff"); err == nil {
		t.Error("no match should be an error")
	}
	if e, err := Resolve(root, "latest"); err != nil || e.Project != "-home-user-project" {
		t.Errorf("latest: %v %v", e, err)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.Local)
	for in, want := range map[string]time.Time{
		"2026-11-01": time.Date(2026, 11, 1, 0, 0, 0, 0, time.Local),
		"7d":         now.AddDate(0, 0, -7),
		"36h":        now.Add(-36 * time.Hour),
	} {
		if got, err := ParseSince(in, now); err != nil || !got.Equal(want) {
			t.Errorf("%s: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"yesterday", "-3d", "7w", ""} {
		if _, err := ParseSince(bad, now); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A forked session's file holds the original's answers, marked with the
// original's session ID: the listing does not count them again.
func TestForkedAnswersNotCountedTwice(t *testing.T) {
	w := twoTurns(t)
	copied := `{"type":"assistant","sessionId":"0b5e1d2c-0000-4000-8000-000000000001","requestSessionId":"aaaaaaaa-0000-4000-8000-000000000009","requestRef":"old","timestamp":"2026-11-20T09:00:00.000Z","message":{"id":"msg_old","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"earlier"}],"stop_reason":"end_turn","usage":{"input_tokens":7,"output_tokens":900,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}`
	w.lines = append([]string{copied}, w.lines...)
	p := w.save(t, "")
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(entryOf(p, info))
	if err != nil {
		t.Fatal(err)
	}
	if _, out, _, _ := s.Tokens(); out != 28 || len(s.Usage) != 2 {
		t.Errorf("output tokens %d over %d answers, want 28 over 2 (the copied answer left out)", out, len(s.Usage))
	}
}

// TestBlobsAreFoundByTheirOwnName: a request record names a message of an
// api-request-blob record by the hash that record gives, whatever hashing
// made it (the files' own name is the index's key, not tsinspect's hash).
func TestBlobsAreFoundByTheirOwnName(t *testing.T) {
	w := twoTurns(t)
	for i, l := range w.lines {
		if strings.Contains(l, `"api-request-blob"`) || strings.Contains(l, `"id":"r2"`) {
			var r map[string]any
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			if r["type"] == "api-request-blob" {
				r["hash"] = "named-by-the-files"
			} else {
				r["tail"].([]any)[1] = "named-by-the-files"
			}
			b, _ := json.Marshal(r)
			w.lines[i] = string(b)
		}
	}
	s, err := Open(w.save(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if exs := readAll(t, s); len(exs) != 2 || len(s.Problems) != 0 {
		t.Fatalf("%d exchanges, problems %v", len(exs), s.Problems)
	}
}
