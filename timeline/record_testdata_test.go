package timeline_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
)

// TestRecordClaudeCode records testdata/claude-code-parallel-subagents:
// Claude Code with three MCP servers (ToolSearch on by
// ENABLE_TOOL_SEARCH=auto) starting two subagents of different types in
// one response, with the same prompt "Warmup": they run at once with the
// same messages but different system prompts and tools. The first to
// arrive gets an empty stop_sequence reply, the second a text.
func TestRecordClaudeCode(t *testing.T) {
	if !*record {
		t.Skip("records with -record only")
	}
	requireClaude(t)
	agent := func(n int, typ string) fixtures.Reply {
		return fixtures.CallTool("Agent", map[string]any{
			"description":   fmt.Sprintf("task %d", n),
			"prompt":        "Warmup",
			"subagent_type": typ,
		})
	}
	u := standIn(t, map[fixtures.Route][]fixtures.Step{
		fixtures.RouteMain:     fixtures.Steps(fixtures.Together(agent(1, "general-purpose"), agent(2, "Explore")), fixtures.Text("Both subagents reported.")),
		fixtures.RouteSubagent: {{fixtures.EmptyStop("\n\nHuman:"), fixtures.Text("Ready.")}},
	}, fixtures.Options{})
	dir := t.TempDir()
	cfg := map[string]any{"mcpServers": map[string]any{
		"files": map[string]any{"command": kit.MCPDemo, "args": []string{"-actions=150"}},
		"web":   map[string]any{"command": kit.MCPDemo, "args": []string{"-actions=150"}},
	}}
	b, _ := json.Marshal(cfg)
	extra := filepath.Join(dir, "more.json")
	if err := os.WriteFile(extra, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "capture.db")
	res := kit.Record(t, u, session.Options{DB: db, Mode: "mitm", Timeout: 2 * time.Minute, Prompt: "start two subagents",
		Env: []string{"ENABLE_TOOL_SEARCH=auto"}, Args: []string{"--mcp-config", extra}, Allowed: []string{"Agent", "mcp__files__echo", "mcp__web__echo"}})
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Output)
	}
	exs := session.ReadCapture(t, db)
	storeCapture(t, "claude-code-parallel-subagents", exs, [][2]string{
		{res.Home, "/home/user"}, {res.Dir, "/project"}, {strings.ReplaceAll(res.Dir, "/", "-"), "-project"}, {os.TempDir(), "/tmp"}})
}
