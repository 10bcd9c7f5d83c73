package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
)

// TestRecordUILive runs `tsinspect record --ui -- claude -p ...` in a real
// terminal (tmux) against the stand-in: the live timeline must show the
// session's turns and its empty search while it is recorded, quit on q, and
// leave the command's output in FILE.out and its turns in the capture.
func TestRecordUILive(t *testing.T) {
	kit.RequireClaude(t)
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

	term := startTmux(t, "live", script)
	tm, waitFor := term.tm, term.waitFor
	// The header names the capture and the proxy from the start, while
	// Claude Code is still starting (once it exits, its status takes
	// the room at 120 columns).
	waitFor("the live header", func(s string) bool {
		return strings.Contains(s, "recording live.db via 127.0.0.1:")
	})
	waitFor("4 turns with the empty search", func(s string) bool {
		return strings.Contains(s, "4 turns") && strings.Contains(s, "empty_search")
	})
	waitFor("the command's end in the header", func(s string) bool {
		return strings.Contains(s, "claude exited with status 0; q quits")
	})
	tm("send-keys", "-t", "live", "q")
	waitFor("the exit status", func(string) bool {
		b, err := os.ReadFile(filepath.Join(dir, "exit"))
		return err == nil && len(b) > 0
	})
	if b, _ := os.ReadFile(filepath.Join(dir, "exit")); strings.TrimSpace(string(b)) != "EXIT=0" {
		t.Errorf("record --ui exited with %q", b)
	}
	// After q, the terminal holds the summary, not the proxy settings the
	// command was given.
	if s := tm("capture-pane", "-p", "-t", "live"); strings.Contains(s, "export HTTPS_PROXY") || !strings.Contains(s, "tsinspect: recorded ") {
		t.Errorf("after quitting:\n%s", s)
	}
	if out, _ := os.ReadFile(db + ".out"); !strings.Contains(string(out), "Echo said: live") {
		t.Errorf("the command's output is not in %s: %q", filepath.Base(db)+".out", out)
	}
	code, out, stderr := runCLI(t, "turns", db)
	if code != 0 || !strings.Contains(out, "empty_search") {
		t.Errorf("turns after recording: exit %d\n%s%s", code, out, stderr)
	}
}

// tmuxTerm is a tmux server of its own running one session, "live". Its
// socket is in a temporary directory of the test, so that none is left
// behind in tmux's own directory.
type tmuxTerm struct {
	t    *testing.T
	sock string // socket path
}

// startTmux runs script in a 120×40 tmux session; the server is killed at
// cleanup.
func startTmux(t *testing.T, name, script string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed; CI installs it (.ci/run)")
	}
	term := &tmuxTerm{t: t, sock: filepath.Join(t.TempDir(), name+".sock")}
	t.Cleanup(func() {
		term.tm("kill-server")
		os.Remove(term.sock)
	})
	term.tm("new-session", "-d", "-s", "live", "-x", "120", "-y", "40", "sh "+shq(script))
	return term
}

// tm runs a tmux command against the session's server.
func (term *tmuxTerm) tm(args ...string) string {
	out, _ := exec.Command("tmux", append([]string{"-S", term.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	return string(out)
}

// waitFor polls the screen for up to a minute until ok holds, and returns
// that screen.
func (term *tmuxTerm) waitFor(what string, ok func(string) bool) string {
	term.t.Helper()
	deadline := time.Now().Add(patience)
	for time.Now().Before(deadline) {
		if s := term.tm("capture-pane", "-p", "-t", "live"); ok(s) {
			return s
		}
		time.Sleep(200 * time.Millisecond)
	}
	term.t.Fatalf("timed out waiting for %s; screen:\n%s", what, term.tm("capture-pane", "-p", "-t", "live"))
	return ""
}

// TestRecordUISIGTERM: SIGTERM sent to `tsinspect record --ui` ends the
// live timeline as q would: the terminal is given back, the capture is
// flushed, the summary printed and the exit status is 0.
func TestRecordUISIGTERM(t *testing.T) {
	sc, _ := fixtures.Scenario("toolsearch")
	_, up := session.StandIn(t, sc, fixtures.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "term.db")
	errFile, pidFile, exitFile := filepath.Join(dir, "stderr"), filepath.Join(dir, "pid"), filepath.Join(dir, "exit")
	script := filepath.Join(dir, "run.sh")
	os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\n%s record --db %s --mode reverse --upstream %s --ui 2>%s &\necho $! > %s\nwait $!\necho EXIT=$? > %s\nsleep 30\n",
		shq(kit.Tsinspect), shq(db), shq(up), shq(errFile), shq(pidFile), shq(exitFile))), 0o700)
	term := startTmux(t, "term", script)
	term.waitFor("the live timeline", func(s string) bool { return strings.Contains(s, "recording term.db via 127.0.0.1:") })

	stderr, _ := os.ReadFile(errFile)
	m := regexp.MustCompile(`ANTHROPIC_BASE_URL=(http://127\.0\.0\.1:\d+)`).FindSubmatch(stderr)
	if m == nil {
		t.Fatalf("no base URL in stderr %q", stderr)
	}
	body := `{"model":"claude-sonnet-4-5","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	if code := sendWithKey(t, "POST", string(m[1])+"/v1/messages", body); code != 200 {
		t.Fatalf("status %d", code)
	}
	term.waitFor("the turn", func(s string) bool { return strings.Contains(s, "1 turn") })

	pid, _ := os.ReadFile(pidFile)
	n, err := strconv.Atoi(strings.TrimSpace(string(pid)))
	if err != nil {
		t.Fatalf("pid file %q", pid)
	}
	syscall.Kill(n, syscall.SIGTERM)
	term.waitFor("the exit status", func(string) bool {
		b, err := os.ReadFile(exitFile)
		return err == nil && len(b) > 0
	})
	if b, _ := os.ReadFile(exitFile); strings.TrimSpace(string(b)) != "EXIT=0" {
		t.Errorf("record --ui exited with %q after SIGTERM", b)
	}
	if stderr, _ := os.ReadFile(errFile); !strings.Contains(string(stderr), "recorded 1 exchange ") ||
		!strings.Contains(string(stderr), "  the capture holds 1 Messages turn in 1 thread; no flags\n  next: tsinspect open "+db) {
		t.Errorf("no summary after SIGTERM: %q", stderr)
	}
	if rows := session.ReadCapture(t, db); len(rows) != 1 || rows[0].State != exchange.StateComplete {
		t.Errorf("capture after SIGTERM: %d rows", len(rows))
	}
	if screen := term.tm("capture-pane", "-p", "-t", "live"); strings.Contains(screen, "recording term.db") {
		t.Errorf("the timeline is still on screen after exit:\n%s", screen)
	}
}

// shq quotes s for a POSIX shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestOpenFollow runs `tsinspect open --follow` in tmux beside a recorder
// in another process, as a user with two terminals would: it waits for
// the file, then each turn sent through the proxy appears on the screen.
func TestOpenFollow(t *testing.T) {
	sc, _ := fixtures.Scenario("toolsearch")
	_, up := session.StandIn(t, sc, fixtures.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "follow.db")
	script := filepath.Join(dir, "open.sh")
	os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\n%s open --follow %s\necho EXIT=$? > %s\nsleep 30\n",
		shq(kit.Tsinspect), shq(db), shq(filepath.Join(dir, "exit")))), 0o700)
	term := startTmux(t, "follow", script)
	term.waitFor("the wait for the file", func(s string) bool { return strings.Contains(s, "waiting for "+db) })

	addr, stop := startRecorder(t, "--db", db, "--mode", "reverse", "--upstream", up, "--quiet")
	defer stop()
	send := func(content string) {
		body := fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":100,"stream":true,"messages":[{"role":"user","content":%q}]}`, content)
		if code := sendWithKey(t, "POST", "http://"+addr+"/v1/messages", body); code != 200 {
			t.Fatalf("status %d", code)
		}
	}
	send("first")
	screen := term.waitFor("the first turn", func(s string) bool { return strings.Contains(s, "1 turn ·") })
	if !strings.Contains(screen, "following follow.db") {
		t.Errorf("no title:\n%s", screen)
	}
	send("second")
	term.waitFor("the second turn", func(s string) bool { return strings.Contains(s, "2 turns ·") })
	term.tm("send-keys", "-t", "live", "q")
	term.waitFor("the exit status", func(string) bool {
		b, err := os.ReadFile(filepath.Join(dir, "exit"))
		return err == nil && len(b) > 0
	})
	if b, _ := os.ReadFile(filepath.Join(dir, "exit")); strings.TrimSpace(string(b)) != "EXIT=0" {
		t.Errorf("open --follow exited with %q", b)
	}
}
