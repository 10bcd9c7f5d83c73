package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/store"
)

// TestOneBadRowCostsOnlyItself damages three rows of a capture (malformed
// JSON, a state cut short, a body deleted): every reading command keeps
// the other rows and names the damaged ones in one warning line. The body
// deleted is the last request's: an earlier one is the base the next
// requests are compressed against, and losing it loses them too (see
// TestLostBaseNamesItsDependents).
func TestOneBadRowCostsOnlyItself(t *testing.T) {
	path := filepath.Join(t.TempDir(), "damaged.db")
	makeCapture(t, path, 6)
	s, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=off")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE exchange SET resp_headers = '[{' WHERE id = 2`,
		`DELETE FROM blob WHERE hash = (SELECT req_body FROM exchange WHERE id = 6)`,
		`UPDATE exchange SET state = 'complet' || char(0) WHERE id = 4`,
	} {
		if _, err := s.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	named := regexp.MustCompile(`skipped 3 damaged exchanges: #2 \(.*\), #4 \(unknown state .*\), #6 \(request body missing\)`)
	// exchanges lists from summaries: it cannot see malformed JSON, but
	// names the rows whose body is missing or whose state is unknown.
	if code, _, stderr := runCLI(t, "exchanges", path); code != 0 || !strings.Contains(stderr, "2 damaged (a row whose body is missing is not listed): #4 (unknown state") || !strings.Contains(stderr, "#6 (request body missing)") {
		t.Errorf("exchanges: exit %d, stderr:\n%s", code, stderr)
	}
	for _, args := range [][]string{
		{"turns", path},
		{"searches", path},
		{"report", path, "--format", "json"},
		{"export", path, "--format", "har"},
	} {
		code, out, stderr := runCLI(t, args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", args[0], code, stderr)
			continue
		}
		if !named.MatchString(stderr) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s: want one line naming rows 2, 4 and 6, got:\n%s", args[0], stderr)
		}
		if args[0] == "export" && strings.Count(out, `"request": {`) != 3 {
			t.Errorf("export kept %d entries, want 3", strings.Count(out, `"request": {`))
		}
		if args[0] == "report" {
			if r := parseReport(t, out); len(r.Turns) != 3 {
				t.Errorf("report has %d turns, want the 3 intact rows", len(r.Turns))
			}
		}
	}

	// replay-server serves the intact rows.
	replayServes(t, path)
}

// TestLostBaseNamesItsDependents deletes the stored body of a request that
// later requests are compressed against: those rows cannot be rebuilt, and
// each is named with the reason, while the rows before it are kept.
func TestLostBaseNamesItsDependents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "damaged.db")
	makeCapture(t, path, 6)
	s, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=off")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(`DELETE FROM blob WHERE hash = (SELECT req_body FROM exchange WHERE id = 3)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	code, _, stderr := runCLI(t, "turns", path)
	if code != 0 || !strings.Contains(stderr, "#3 (request body missing)") || !strings.Contains(stderr, "is missing") {
		t.Errorf("turns: exit %d, want #3 named and its dependents named for their missing base:\n%s", code, stderr)
	}
	for _, early := range []string{"#1 (", "#2 ("} {
		if strings.Contains(stderr, early) {
			t.Errorf("a row before the lost body, %s), was named damaged:\n%s", early, stderr)
		}
	}
}

// replayServes starts replay-server on a capture and checks that it answers
// a request from its intact rows.
func replayServes(t *testing.T, path string) {
	t.Helper()
	cmd := exec.Command(kit.Tsinspect, "replay-server", path, "--fast")
	out := &lockedBuffer{}
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = out, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var addr string
	re := regexp.MustCompile(`at http://(127\.0\.0\.1:\d+)`)
	for deadline := time.Now().Add(patience); addr == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		out.mu.Lock()
		if m := re.FindStringSubmatch(out.b.String()); m != nil {
			addr = m[1]
		}
		out.mu.Unlock()
	}
	if addr == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("replay-server did not start: %s", stderr.String())
	}
	resp, err := http.Post("http://"+addr+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("replay-server answered %d", resp.StatusCode)
	}
}

// TestExportStreams exports a capture of 40 distinct 2 MB bodies (80 MB):
// the exporter's peak memory is that of a few exchanges being encoded (and
// the base each body is decompressed against), not of the capture
// (buffering it all peaked near 4 times its size).
func TestExportStreams(t *testing.T) {
	kit.Skips.Short(t, "a long export (about 10 s)")
	path := filepath.Join(t.TempDir(), "big.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := 0; i < 40; i++ {
		body := bytes.Repeat([]byte(fmt.Sprintf("event: ping\ndata: {\"n\":%d}\n\n", i)), 2<<20/24)
		ex := &exchange.Exchange{Source: "test", Start: now, End: now, Method: "POST",
			URL: "https://api.anthropic.com/v1/messages", Host: "api.anthropic.com",
			ReqBody: []byte(fmt.Sprintf(`{"n":%d}`, i)), Status: 200, RespBody: body, State: exchange.StateComplete}
		if err := db.Insert(context.Background(), ex); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	cmd := exec.Command(kit.Tsinspect, "export", path, "--format", "har", "--out", filepath.Join(t.TempDir(), "out.har"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("export: %v: %s", err, out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage on this system")
	}
	peak := ru.Maxrss << 10 // kilobytes on Linux
	if peak > 160<<20 {
		t.Errorf("export of an 80 MB capture peaked at %d MB", peak>>20)
	}
	t.Logf("peak RSS %d MB", peak>>20)
}

// TestFollowStepsPastDamagedRows: 'open --follow' on a capture with a
// malformed row shows the rows around it and names it in the status line,
// and keeps following: a row added later appears.
func TestFollowStepsPastDamagedRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "damaged.db")
	makeCapture(t, path, 4)
	s, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(`UPDATE exchange SET resp_headers = '[{' WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	script := filepath.Join(filepath.Dir(path), "open.sh")
	if err := os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\n%s open --follow %s\nsleep 30\n", shq(kit.Tsinspect), shq(path))), 0o700); err != nil {
		t.Fatal(err)
	}
	term := startTmux(t, "follow-damaged", script)
	term.waitFor("3 turns and the damaged row named", func(s string) bool {
		return strings.Contains(s, "3 turns") && strings.Contains(s, "skipped 1 damaged exchange: #2")
	})
	makeMore(t, path)
	term.waitFor("the row added later", func(s string) bool { return strings.Contains(s, "4 turns") })
}

// makeMore appends one exchange to a capture.
func makeMore(t *testing.T, path string) {
	t.Helper()
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	ex := &exchange.Exchange{Source: "test", Start: now, End: now, Method: "POST",
		URL: "https://api.anthropic.com/v1/messages", Host: "api.anthropic.com",
		ReqBody: []byte(`{"model":"claude-sonnet-4-5","max_tokens":32000,"messages":[{"role":"user","content":"later"}]}`),
		Status:  200, RespBody: []byte(`{}`), State: exchange.StateComplete}
	if err := db.Insert(context.Background(), ex); err != nil {
		t.Fatal(err)
	}
}
