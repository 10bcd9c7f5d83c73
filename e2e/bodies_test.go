package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
)

// TestRecordBodies records real Claude Code with --mode bodies against the
// stand-in: no proxy, the exchanges come from the files Claude Code writes,
// the temporary directory is gone at the end, and the API key is nowhere in
// the capture.
func TestRecordBodies(t *testing.T) {
	kit.RequireClaude(t)
	sc, _ := fixtures.Scenario("toolsearch")
	_, up := session.StandIn(t, sc, fixtures.Options{})
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o700)
	db := filepath.Join(dir, "bodies.db")
	home := filepath.Join(dir, "home")
	os.Mkdir(home, 0o700)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kit.Tsinspect, "record", "--db", db, "--mode", "bodies", "--",
		kit.Claude, "-p", "use the demo tools", "--model", "claude-sonnet-4-5")
	cmd.Dir = dir
	cmd.Env = append(session.ClaudeEnv(home), "ANTHROPIC_BASE_URL="+up, "ENABLE_TOOL_SEARCH=true", "TMPDIR="+tmp)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("record --mode bodies: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "recorded 3 exchanges") && !strings.Contains(out.String(), "recorded 2 exchanges") {
		t.Errorf("summary does not count the 3 requests:\n%s", out.String())
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "tsinspect-bodies-*")); len(left) != 0 {
		t.Errorf("the bodies directory was left behind: %v", left)
	}
	raw, _ := os.ReadFile(db)
	if bytes.Contains(raw, []byte(session.APIKey)) {
		t.Fatal("the API key reached the capture")
	}
	exs := session.ReadCapture(t, db)
	complete := 0
	for i, ex := range exs {
		if ex.Source != "bodies" {
			t.Errorf("source %q, want bodies", ex.Source)
		}
		if ex.State == exchange.StateComplete {
			complete++
			// Claude Code may exit before it writes the index line of
			// its last request.
			if i < len(exs)-1 && (ex.RespHeader("Request-Id") == "" || ex.ReqHeader("X-Claude-Code-Session-Id") == "") {
				t.Errorf("exchange %d lacks the index's request and session ids", ex.ID)
			}
		}
	}
	// Claude Code may exit before writing its last answer; the others
	// are there.
	if complete < 2 {
		t.Fatalf("%d complete exchanges of %d, want at least 2:\n%s", complete, len(exs), out.String())
	}
	code, _, stderr := runCLI(t, "exchanges", db)
	if code != 0 || !strings.Contains(stderr, "recorded in mode bodies lack: no HTTP headers") {
		t.Errorf("exchanges: exit %d, stderr %q", code, stderr)
	}
}
