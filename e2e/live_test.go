package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
)

// TestRecordUILive runs `tsinspect record --ui -- claude -p ...` in a real
// terminal (tmux) against the stand-in: the live timeline must show the
// session's turns and its empty search while it is recorded, quit on q, and
// leave the command's output in FILE.out and its turns in the capture.
func TestRecordUILive(t *testing.T) {
	kit.RequireClaude(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed; CI installs it (.ci/run)")
	}
	sc := fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{
		fixtures.RouteMain: fixtures.Steps(
			fixtures.ToolSearch("select:mcp__demo__echo", 5),
			fixtures.ToolSearch("weather forecast", 5),
			fixtures.CallTool("mcp__demo__echo", map[string]any{"text": "live"}),
			fixtures.Text("Echo said: live"),
		),
	}}
	_, up := session.StandIn(t, sc, fixtures.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "live.db")
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o700)
	mcp := filepath.Join(dir, "mcp.json")
	os.WriteFile(mcp, []byte(fmt.Sprintf(`{"mcpServers":{"demo":{"command":%q}}}`, kit.MCPDemo)), 0o600)

	// The command tmux runs; its environment comes from tmux's own.
	script := filepath.Join(dir, "run.sh")
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncd " + shq(dir) + "\n")
	for _, kv := range session.ClaudeEnv(home) {
		b.WriteString("export " + shq(kv) + "\n")
	}
	fmt.Fprintf(&b, "%s record --db %s --upstream %s --ca-dir %s --ui -- %s -p 'use the demo tools' --mcp-config %s --strict-mcp-config --allowedTools ToolSearch,mcp__demo__echo --model claude-sonnet-4-5\n",
		shq(kit.Tsinspect), shq(db), shq(up), shq(filepath.Join(dir, "ca")), shq(kit.Claude), shq(mcp))
	b.WriteString("echo EXIT=$? > " + shq(filepath.Join(dir, "exit")) + "\nsleep 30\n")
	os.WriteFile(script, []byte(b.String()), 0o700)

	sock := fmt.Sprintf("tsinspect-live-%d", os.Getpid())
	tm := func(args ...string) string {
		out, _ := exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out)
	}
	t.Cleanup(func() { tm("kill-server") })
	tm("new-session", "-d", "-s", "live", "-x", "120", "-y", "40", "sh "+shq(script))

	waitFor := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			s := tm("capture-pane", "-p", "-t", "live")
			if ok(s) {
				return s
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("timed out waiting for %s; screen:\n%s", what, tm("capture-pane", "-p", "-t", "live"))
		return ""
	}
	screen := waitFor("4 turns with the empty search", func(s string) bool {
		return strings.Contains(s, "4 turns") && strings.Contains(s, "empty_search")
	})
	if !strings.Contains(screen, "recording live.db via 127.0.0.1:") {
		t.Errorf("live header missing:\n%s", screen)
	}
	tm("send-keys", "-t", "live", "q")
	waitFor("the exit status", func(string) bool {
		b, err := os.ReadFile(filepath.Join(dir, "exit"))
		return err == nil && len(b) > 0
	})
	if b, _ := os.ReadFile(filepath.Join(dir, "exit")); strings.TrimSpace(string(b)) != "EXIT=0" {
		t.Errorf("record --ui exited with %q", b)
	}
	if out, _ := os.ReadFile(db + ".out"); !strings.Contains(string(out), "Echo said: live") {
		t.Errorf("the command's output is not in %s: %q", filepath.Base(db)+".out", out)
	}
	code, out, stderr := runCLI(t, "turns", db)
	if code != 0 || !strings.Contains(out, "empty_search") {
		t.Errorf("turns after recording: exit %d\n%s%s", code, out, stderr)
	}
}

// shq quotes s for a POSIX shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
