package e2e

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/report"
)

// readmeCommands returns the lines of the first sh block under the README
// heading "## TITLE".
func readmeCommands(t *testing.T, title string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(kit.Root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## "+title+"\n")
	if !ok {
		t.Fatalf("README has no section %q", title)
	}
	_, block, ok := strings.Cut(section, "```sh\n")
	if !ok {
		t.Fatalf("README section %q has no sh block", title)
	}
	block, _, _ = strings.Cut(block, "```")
	var out []string
	sc := bufio.NewScanner(strings.NewReader(block))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// TestTryItWithoutAPIKey types the README's "Try it without an API key"
// commands into a shell in tmux, as a newcomer would (the binary already
// built, the stand-in on a free port), and checks that they recorded a
// real Claude Code session through tsinspect.
func TestTryItWithoutAPIKey(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("TSINSPECT_REQUIRE_CLAUDE") == "1" || os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed; CI installs it (.ci/run)")
		}
		skipFor(t, "tmux", installTmux, "tmux is not installed")
	}
	kit.RequireClaude(t)
	cmds := readmeCommands(t, "Try it without an API key")
	if len(cmds) > 3 || !strings.HasPrefix(cmds[0], "go build -o tsinspect ") {
		t.Fatalf("the README's try-it block is not at most three commands starting with the build: %q", cmds)
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	// The binary is built already: link it where the README's build puts it.
	if err := os.Symlink(kit.Tsinspect, filepath.Join(dir, "tsinspect")); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()

	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tm := func(args ...string) ([]byte, error) {
		return exec.Command("tmux", append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	}
	env := session.ClaudeEnv(home)
	// Claude Code finds a key in the README's command line, not here.
	var tmuxEnv []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") && !strings.HasPrefix(kv, "TMUX") {
			tmuxEnv = append(tmuxEnv, "-e", kv)
		}
	}
	if claudeDir := filepath.Dir(kit.Claude); claudeDir != "" {
		tmuxEnv = append(tmuxEnv, "-e", "PATH="+claudeDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	args := append([]string{"new-session", "-d", "-s", "try", "-x", "200", "-y", "50", "-c", dir}, tmuxEnv...)
	args = append(args, "bash", "--norc", "--noprofile")
	if b, err := tm(args...); err != nil {
		t.Fatalf("tmux: %v\n%s", err, b)
	}
	t.Cleanup(func() {
		tm("send-keys", "-t", "try", "kill %1", "Enter")
		time.Sleep(200 * time.Millisecond)
		tm("kill-server")
		os.Remove(sock)
		// Claude Code may still be finishing writes to its HOME.
		for i := 0; i < 50; i++ {
			if os.RemoveAll(home) == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	screen := func() string {
		b, _ := tm("capture-pane", "-p", "-J", "-S", "-200", "-t", "try")
		return string(b)
	}
	waitFor := func(what string, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for time.Now().Before(deadline) {
			if strings.Contains(screen(), what) {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("timed out waiting for %q; screen:\n%s", what, screen())
	}
	for _, c := range cmds[1:] {
		c = strings.ReplaceAll(c, "8642", port)
		standin := strings.HasPrefix(c, "./tsinspect standin ")
		if standin {
			c = strings.Replace(c, " standin ", " standin --listen 127.0.0.1:"+port+" ", 1)
		}
		if b, err := tm("send-keys", "-t", "try", "-l", c); err != nil {
			t.Fatalf("tmux send-keys: %v\n%s", err, b)
		}
		tm("send-keys", "-t", "try", "Enter")
		if standin {
			waitFor("stand-in Messages API", 20*time.Second)
		}
	}
	waitFor("tsinspect: recorded ", 3*time.Minute)
	code, out, stderr := runCLI(t, "report", filepath.Join(dir, "try.db"))
	if code != 0 {
		t.Fatalf("report: exit %d: %s\nscreen:\n%s", code, stderr, screen())
	}
	r := parseReport(t, out)
	var searched, called bool
	for _, tu := range r.Turns {
		for _, s := range tu.ToolSearches {
			searched = searched || len(s.Results) > 0 && s.Results[0] == echoTool
		}
		for _, c := range tu.ToolCalls {
			called = called || c.Name == echoTool && c.Loaded
		}
	}
	if len(r.Turns) < 3 || !searched || !called || r.Costs == nil || r.Costs.TotalUSD <= 0 {
		t.Errorf("the try-it session: %d turns, search loaded echo %v, echo called %v, costs %+v\nscreen:\n%s", len(r.Turns), searched, called, r.Costs, screen())
	}
	checkTryItFigures(t, filepath.Join(dir, "try.db"), r)
	checkTryItConfigDir(t, dir, home)
}

// checkTryItConfigDir holds the try-it to its word: Claude Code kept the
// stand-in's session in the throwaway configuration directory the README
// names, and nothing of it in the user's own ~/.claude, where 'tsinspect
// sessions' and ccusage would count it.
func checkTryItConfigDir(t *testing.T, dir, home string) {
	t.Helper()
	own, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "*.jsonl"))
	if len(own) > 0 || fileExists(filepath.Join(home, ".claude.json")) {
		t.Errorf("the try-it wrote into the user's own Claude Code directory: %v", own)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "try-claude", "projects", "*", "*.jsonl"))
	if len(kept) != 1 {
		t.Fatalf("session files in try-claude/projects: %v, want one", kept)
	}
	code, out, stderr := runCLI(t, "sessions", filepath.Join(dir, "try-claude", "projects"), "--json", "--no-index")
	id := strings.TrimSuffix(filepath.Base(kept[0]), ".jsonl")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, id) {
		t.Errorf("sessions try-claude/projects: exit %d, %s\n%s", code, stderr, out)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// checkTryItFigures holds the figures of the try-it session (41 MCP tools
// deferred, one loaded) to what was recorded: every token estimate of a
// request within the prompt the API measured for it, the announcement the
// list of names and not the system message around it, and deferral a
// saving, in tokens and dollars, in every view.
func checkTryItFigures(t *testing.T, db string, r *report.Report) {
	t.Helper()
	for _, tu := range r.Turns {
		tt := tu.ToolTokens
		if tt.Prompt <= 0 || tt.Sent+tt.Announcement > tt.Prompt {
			t.Errorf("turn %d: %d tokens of tool definitions and %d of announcement in a measured prompt of %d", tu.Index, tt.Sent, tt.Announcement, tt.Prompt)
		}
		// 53 names and a header line: some 1,300 bytes, not the 10 kB
		// system message Claude Code puts them in.
		if tt.Announcement <= 0 || tt.Announcement > 600 {
			t.Errorf("turn %d: announcement of %d tokens", tu.Index, tt.Announcement)
		}
		var defs int64
		for _, d := range tu.ToolDefinitions {
			defs += d.Tokens
		}
		if defs > tt.Prompt {
			t.Errorf("turn %d: definitions of %d tokens in a prompt of %d", tu.Index, defs, tt.Prompt)
		}
		if tt.Saved <= 0 || tt.Estimated == 0 {
			t.Errorf("turn %d: deferral saved %d tokens (%d catalog tools estimated)", tu.Index, tt.Saved, tt.Estimated)
		}
	}
	th := r.TokenSummary.Threads
	if len(th) == 0 || th[0].Saved <= 0 || th[0].SavedUSD <= 0 || r.Costs.DeferralSavedUSD <= 0 || !r.Costs.DeferralSavedEstimated {
		t.Errorf("deferral: threads %+v, costs %+v", th, r.Costs)
	}
	// The pinned CLI's default model, Opus 5.5, is in the price table: no
	// view prices it as another model (the saving stays ≈: tool sizes are
	// estimated).
	if _, out, _ := runCLI(t, "turns", db); !strings.Contains(out, "deferral saved ≈$") || strings.Contains(out, "-$") ||
		strings.Contains(out, "priced as") {
		t.Errorf("turns prices line:\n%s", out)
	}
	if _, out, _ := runCLI(t, "report", db, "--format", "markdown"); !strings.Contains(out, "Deferral saved ≈$") || strings.Contains(out, "Deferral cost") || strings.Contains(out, "−$") {
		t.Errorf("markdown report: no saving, or a cost, in its sentences")
	}
}
