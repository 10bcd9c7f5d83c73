package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sessionFixture is what a test session is written with: the strings it
// carries where Claude Code writes names, releases and text.
type sessionFixture struct {
	project, cwd, version string
	tool, query, stop     string
	unknownType           string
	prompt, result        string // the user's prompt, the tool's result
}

// plainFixture is a session with nothing odd in it.
func plainFixture() sessionFixture {
	return sessionFixture{project: "-home-me-repo", cwd: "/home/me/repo", version: "2.1.328", tool: "mcp__demo__echo",
		query: "select:mcp__demo__echo", stop: "end_turn", prompt: "find the echo tool", result: "ok"}
}

// fixtureID is the session ID of every fixture session.
const fixtureID = "0b5e1d2c-0000-4000-8000-000000000001"

// writeSession writes a session of two requests as Claude Code lays them
// out (a ToolSearch that loads f.tool, then its call) under
// config/projects/f.project, with a subagent's file beside it; it returns
// the main file.
func writeSession(t *testing.T, config string, f sessionFixture) string {
	t.Helper()
	dir := filepath.Join(config, "projects", f.project)
	if err := os.MkdirAll(filepath.Join(dir, fixtureID, "subagents"), 0o700); err != nil {
		t.Fatal(err)
	}
	var lines []string
	rec := func(v map[string]any) {
		v["sessionId"] = fixtureID
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 20, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 3000}
	rec(map[string]any{"type": "user", "cwd": f.cwd, "version": f.version, "timestamp": "2026-11-20T10:00:00.000Z",
		"message": map[string]any{"role": "user", "content": f.prompt}})
	rec(map[string]any{"type": "api-request-shape", "shapeHash": "s1", "shape": map[string]any{
		"system": []any{map[string]any{"type": "text", "text": "You are Claude Code."}},
		"tools": []any{
			map[string]any{"name": "ToolSearch", "description": "search", "input_schema": map[string]any{"type": "object"}},
			map[string]any{"name": f.tool, "description": "a tool", "input_schema": map[string]any{"type": "object"}, "defer_loading": true}}}})
	rec(map[string]any{"type": "api-request-blob", "hash": "h1", "message": map[string]any{"role": "user", "content": f.prompt}})
	params := map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 32000, "betas": []string{"claude-code-20250219"}}
	rec(map[string]any{"type": "api-request", "id": "r1", "timestamp": "2026-11-20T10:00:01.000Z", "version": f.version,
		"querySource": "sdk", "shapeHash": "s1", "params": params, "keep": 0, "tail": []string{"h1"}})
	search := map[string]any{"type": "tool_use", "id": "toolu_1", "name": "ToolSearch", "input": map[string]any{"query": f.query}}
	rec(map[string]any{"type": "assistant", "requestRef": "r1", "requestId": "req_1", "timestamp": "2026-11-20T10:00:02.000Z", "version": f.version, "cwd": f.cwd,
		"message": map[string]any{"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{search}, "stop_reason": "tool_use", "usage": usage}})
	loaded := map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1",
		"content": []any{map[string]any{"type": "tool_reference", "tool_name": f.tool}}}}}
	rec(map[string]any{"type": "user", "message": loaded, "timestamp": "2026-11-20T10:00:03.000Z"})
	rec(map[string]any{"type": "api-request-blob", "hash": "h2", "message": map[string]any{"role": "assistant", "content": []any{search}}})
	rec(map[string]any{"type": "api-request-blob", "hash": "h3", "message": loaded})
	rec(map[string]any{"type": "api-request", "id": "r2", "timestamp": "2026-11-20T10:00:04.000Z", "version": f.version,
		"querySource": "sdk", "shapeHash": "s1", "params": params, "base": "r1", "keep": 1, "tail": []string{"h2", "h3"}})
	call := map[string]any{"type": "tool_use", "id": "toolu_2", "name": f.tool, "input": map[string]any{"text": f.prompt}}
	rec(map[string]any{"type": "assistant", "requestRef": "r2", "requestId": "req_2", "timestamp": "2026-11-20T10:00:05.000Z", "version": f.version,
		"message": map[string]any{"id": "msg_2", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{call}, "stop_reason": f.stop, "usage": usage}})
	result := map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_2", "content": f.result}}}
	rec(map[string]any{"type": "user", "timestamp": "2026-11-20T10:00:06.000Z", "message": result})
	rec(map[string]any{"type": "api-request-blob", "hash": "h4", "message": map[string]any{"role": "assistant", "content": []any{call}}})
	rec(map[string]any{"type": "api-request-blob", "hash": "h5", "message": result})
	rec(map[string]any{"type": "api-request", "id": "r3", "timestamp": "2026-11-20T10:00:07.000Z", "version": f.version,
		"querySource": "sdk", "shapeHash": "s1", "params": params, "base": "r2", "keep": 3, "tail": []string{"h4", "h5"}})
	rec(map[string]any{"type": "assistant", "requestRef": "r3", "requestId": "req_3", "timestamp": "2026-11-20T10:00:08.000Z", "version": f.version,
		"message": map[string]any{"id": "msg_3", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{map[string]any{"type": "text", "text": "Done: " + f.result}}, "stop_reason": "end_turn", "usage": usage}})
	if f.unknownType != "" {
		rec(map[string]any{"type": f.unknownType})
	}
	main := filepath.Join(dir, fixtureID+".jsonl")
	if err := os.WriteFile(main, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A subagent of one request, in its own file.
	r := strings.NewReplacer(`"id":"r1"`, `"id":"a1"`, `"requestRef":"r1"`, `"requestRef":"a1"`, `"msg_1"`, `"msg_a1"`, `"req_1"`, `"req_a1"`)
	agent := []string{r.Replace(lines[1]), r.Replace(lines[2]), r.Replace(lines[3]), r.Replace(lines[4])}
	if err := os.WriteFile(filepath.Join(dir, fixtureID, "subagents", "agent-a1.jsonl"), []byte(strings.Join(agent, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return main
}
