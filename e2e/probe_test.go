package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbeDemoServer probes the demo MCP server through the binary, as
// an MCP author would in CI, with no session and no API.
func TestProbeDemoServer(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"command": kit.MCPDemo, "args": []string{"-actions=40"}}}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "probe", "--mcp-config", cfg, "--query", "echo text back", "--require", "findable",
		"--expect", "echo text=mcp__demo__echo", "--expect", "action 39=mcp__demo__action_39")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	for _, want := range []string{
		"server demo (stdio mcpdemo 1.0.0): 41 tools",
		"mcp__demo__echo       82      \"echo\"       -",
		// A number is no query a model writes; "action" names 40 tools.
		`mcp__demo__action_39  80      "action 39"  "action" in 40 names; only "39" tells it apart`,
		`Problem: 40 of these tools have only "action" in their names`,
		"41 tools: ≈3,272 tokens of definitions in every request when sent inline; deferred, the catalog lists their names for ≈357 tokens: deferring saves ≈2,915 tokens per request",
		"these tools would be sent inline (below the threshold)",
		"Every tool is found by a query of its own name's words.",
		` +     30  mcp__demo__echo  "echo" = name part +12; "echo" = whole name +12; "echo" in the description +2; "text" in the description +2; "back" in the description +2`,
		"Searched among them and Claude Code 2.1.331's 15 deferred tools",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}
	code, _, stderr = runCLI(t, "probe", "--mcp-config", cfg, "--expect", "demo action=mcp__demo__action_39")
	if code != 3 || !strings.Contains(stderr, `"demo action" does not load mcp__demo__action_39`) {
		t.Errorf("unmet --expect: exit %d, %s", code, stderr)
	}
}

// TestProbeNPMServer probes a real MCP server from npm when one is
// installed: $TSINSPECT_MCP_FILESYSTEM names the mcp-server-filesystem
// binary of @modelcontextprotocol/server-filesystem.
func TestProbeNPMServer(t *testing.T) {
	bin := os.Getenv("TSINSPECT_MCP_FILESYSTEM")
	if bin == "" {
		if p, err := exec.LookPath("mcp-server-filesystem"); err == nil {
			bin = p
		}
	}
	if bin == "" {
		t.Skip("set TSINSPECT_MCP_FILESYSTEM to the mcp-server-filesystem binary (npm @modelcontextprotocol/server-filesystem)")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"filesystem": map[string]any{"command": bin, "args": []string{dir}}}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "probe", "--mcp-config", cfg, "--query", "list directory", "--require", "findable",
		"--expect", "read file=mcp__filesystem__read_file", "--expect", "move file=mcp__filesystem__move_file")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	for _, want := range []string{
		"server filesystem (stdio secure-filesystem-server",
		"mcp__filesystem__read_file ",
		"mcp__filesystem__list_directory ",
		"deferring saves ≈",
		`keyword query "list directory", max_results 5`,
		"returns mcp__filesystem__list_directory, ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}
}
