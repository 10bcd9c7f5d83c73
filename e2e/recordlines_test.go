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
	"github.com/tsinspect/tsinspect/pricing"
)

// apiCall is a shell command that sends one Messages request to the base
// URL record gives the child.
const apiCall = `curl -s -o /dev/null -X POST "$ANTHROPIC_BASE_URL/v1/messages" -H 'content-type: application/json' -H 'x-api-key: sk-ant-standin' -H 'anthropic-version: 2023-06-01' -d '{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}'`

// TestRecordTurnLines: while a command runs, record says what each
// Messages turn cost and the running total, on standard error; the
// summary gives the session's cost, which is the report's. A command that
// has the terminal (its standard input is one, as a full-screen program's
// is) gets no line of tsinspect's on its screen: they go to FILE.log.
func TestRecordTurnLines(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		skipFor(t, "curl", installCurl, "curl is not installed")
	}
	_, url := session.StandIn(t, fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{
		fixtures.RouteMain: fixtures.Steps(fixtures.Text("Hello."), fixtures.Text("Hello again.")),
	}}, fixtures.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	code, _, stderr := runCLI(t, "record", "--db", db, "--mode", "reverse", "--upstream", url, "--", "sh", "-c", apiCall+"; "+apiCall)
	if code != 0 {
		t.Fatalf("record: exit %d: %s", code, stderr)
	}
	_, out, _ := runCLI(t, "report", db)
	r := parseReport(t, out)
	total := pricing.Format(r.Costs.TotalUSD, true)
	for _, want := range []string{"tsinspect: turn 1 sonnet-4-5: ", "tsinspect: turn 2 sonnet-4-5: ", " in all\n", "  cost " + total + " over 2 Messages turns (built-in prices taken 2026-11-26)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("record's output lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stderr, "; "+total+" in all\n") {
		t.Errorf("the running total after the last turn is not the report's %s:\n%s", total, stderr)
	}

	// A model the price table does not hold is priced as its nearest
	// neighbour, marked ≈, and the summary says which and as what.
	newer := strings.ReplaceAll(apiCall, "claude-sonnet-4-5", "claude-opus-5-7")
	code, _, stderr = runCLI(t, "record", "--db", filepath.Join(dir, "newer.db"), "--mode", "reverse", "--upstream", url, "--", "sh", "-c", newer)
	if code != 0 {
		t.Fatalf("record: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "  cost ≈$") || !strings.Contains(stderr, "over 1 Messages turn (≈: claude-opus-5-7 priced as claude-opus-5-5; built-in prices taken 2026-11-26)") {
		t.Errorf("the summary does not say how the unknown model was priced:\n%s", stderr)
	}

	// A full-screen command in a real terminal.
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("TSINSPECT_REQUIRE_CLAUDE") == "1" || os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed; CI installs it (.ci/run)")
		}
		skipFor(t, "tmux", installTmux, "tmux is not installed")
	}
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tm := func(args ...string) ([]byte, error) {
		return exec.Command("tmux", append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	}
	t.Cleanup(func() { tm("kill-server") })
	db2 := filepath.Join(dir, "full.db")
	child := `printf '\033[?1049h\033[HFULLSCREEN APP\n'; ` + apiCall + `; sleep 3; printf '\033[?1049l'`
	line := fmt.Sprintf("%s record --db %s --mode reverse --upstream %s -- sh -c %s; echo RECORD-DONE", kit.Tsinspect, db2, url, shellQuoted(child))
	if b, err := tm("new-session", "-d", "-s", "rec", "-x", "120", "-y", "30", "bash", "--norc", "--noprofile"); err != nil {
		t.Fatalf("tmux: %v\n%s", err, b)
	}
	tm("send-keys", "-t", "rec", "-l", line)
	tm("send-keys", "-t", "rec", "Enter")
	screen := func() string { b, _ := tm("capture-pane", "-p", "-t", "rec"); return string(b) }
	deadline := time.Now().Add(patience)
	for !strings.Contains(screen(), "FULLSCREEN APP") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	// The request is made; the command keeps its screen for 3 s more.
	time.Sleep(1500 * time.Millisecond)
	if s := screen(); !strings.Contains(s, "FULLSCREEN APP") || strings.Contains(s, "tsinspect:") {
		t.Errorf("the full-screen command's screen holds tsinspect's lines (or is gone):\n%s", s)
	}
	for !strings.Contains(screen(), "RECORD-DONE") && time.Now().Before(deadline.Add(10*time.Second)) {
		time.Sleep(100 * time.Millisecond)
	}
	b, err := os.ReadFile(db2 + ".log")
	if err != nil || !strings.Contains(string(b), "tsinspect: turn 1 sonnet-4-5: ") {
		t.Errorf("FILE.log: %v\n%s", err, b)
	}
	if s := screen(); !strings.Contains(s, "has the terminal") || !strings.Contains(s, "full.db.log") {
		t.Errorf("record did not say where its lines went:\n%s", s)
	}
}

// shellQuoted quotes s for a POSIX shell.
func shellQuoted(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
