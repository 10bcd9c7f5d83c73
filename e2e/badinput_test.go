package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/store"
)

// runBounded runs the binary with a time limit and reports its exit code
// and output; a run that does not end in time fails the test.
func runBounded(t *testing.T, limit time.Duration, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, kit.Tsinspect, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Errorf("%v did not end within %v", args, limit)
		return -1, out.String(), errb.String()
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestEveryReaderOnBadInput runs every command that reads a capture on
// random bytes, an empty file, another SQLite schema, a newer schema
// version, captures cut at several offsets, and captures whose rows hold
// malformed JSON, 10^5-deep nesting and invalid UTF-8. Each either reads
// what it can (exit 0) or refuses with one line (exit 1); none panics or
// hangs.
func TestEveryReaderOnBadInput(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	random := make([]byte, 64<<10)
	rand.New(rand.NewSource(7)).Read(random)
	unreadable := map[string]string{
		"random bytes": file("random.db", random),
		"empty file":   file("empty.db", nil),
	}
	other := filepath.Join(dir, "other.db")
	if s, err := sql.Open("sqlite3", other); err == nil {
		s.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`)
		s.Close()
	}
	unreadable["another schema"] = other
	newer := filepath.Join(dir, "newer.db")
	makeCapture(t, newer, 2)
	if s, err := sql.Open("sqlite3", newer); err == nil {
		s.Exec(`INSERT INTO schema_version (version, applied_ns) VALUES (99, 0)`)
		s.Close()
	}
	unreadable["a newer schema"] = newer

	readable := map[string]string{}
	whole := filepath.Join(dir, "whole.db")
	makeCapture(t, whole, 30)
	wb, _ := os.ReadFile(whole)
	for _, frac := range []int{1, 2, 3} {
		readable["cut at "+[]string{"", "1/4", "1/2", "3/4"}[frac]] = file("cut"+string(rune('0'+frac))+".db", wb[:len(wb)*frac/4])
	}
	readable["cut by one byte"] = file("cut-1.db", wb[:len(wb)-1])

	odd := filepath.Join(dir, "odd.db")
	db, err := store.Open(odd)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	deep := strings.Repeat("[", 100000)
	for i, c := range []struct{ req, resp string }{
		{`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"fine"}]}`, `{"type":"message","content":[]}`},
		{`{"model":"claude-sonnet-4-5","messages":` + deep, "event: message_start\ndata: " + deep + "\n\n"},
		{"{\"model\":\"\xff\xfe\",\"messages\":[{\"role\":\"user\",\"content\":\"\xc3\x28\"}]}", "event: content_block_delta\ndata: {\"delta\":{\"text\":\"\xed\xa0\x80\"}}\n\n"},
		{`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"cut`, "event: message_start\ndata: {\"type\":\"message_st"},
	} {
		ex := &exchange.Exchange{Source: "test", Start: now.Add(time.Duration(i) * time.Second), End: now.Add(time.Duration(i) * time.Second),
			Method: "POST", URL: "https://api.anthropic.com/v1/messages", Host: "api.anthropic.com",
			ReqBody: []byte(c.req), Status: 200, RespBody: []byte(c.resp), State: exchange.StateComplete,
			RespHeaders: []exchange.Header{{Name: "Content-Type", Value: "text/event-stream"}}}
		if err := db.Insert(context.Background(), ex); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if s, err := sql.Open("sqlite3", odd); err == nil {
		s.Exec(`UPDATE exchange SET chunks = '[{"offset":' WHERE id = 4`)
		s.Close()
	}
	readable["deep nesting, invalid UTF-8, truncated SSE, malformed JSON rows"] = odd

	commands := [][]string{{"exchanges"}, {"turns"}, {"searches"}, {"report", "--format", "json"}, {"export", "--format", "har"}}
	check := func(name string, args []string, mayRead bool) {
		code, stdout, stderr := runBounded(t, 60*time.Second, args...)
		if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
			t.Errorf("%s, %s: panic:\n%.2000s", name, args[0], stderr)
			return
		}
		switch {
		case code == 0 && mayRead:
		case code == 1:
			if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "tsinspect: ") {
				t.Errorf("%s, %s: exit 1 with %d lines of stderr, want one 'tsinspect: ' line:\n%s", name, args[0], len(lines), stderr)
			}
			if stdout != "" && args[0] != "export" {
				t.Errorf("%s, %s: exit 1 with output on stdout", name, args[0])
			}
		default:
			t.Errorf("%s, %s: exit %d (may read: %v):\n%s", name, args[0], code, mayRead, stderr)
		}
	}
	for name, path := range unreadable {
		for _, c := range append(commands, []string{"replay-server"}) {
			args := append([]string{c[0], path}, c[1:]...)
			check(name, args, false)
		}
	}
	for name, path := range readable {
		for _, c := range commands {
			check(name, append([]string{c[0], path}, c[1:]...), true)
		}
	}

	// import on the same kinds of bad input.
	for name, data := range map[string][]byte{
		"random bytes":        random,
		"empty file":          nil,
		"deeply nested HAR":   []byte(`{"log":{"entries":[` + deep),
		"HAR with bad UTF-8":  []byte("{\"log\":{\"entries\":[{\"request\":{\"method\":\"POST\",\"url\":\"https://api.anthropic.com/v1/messages\",\"postData\":{\"text\":\"\xff\xfe\"}},\"response\":{\"status\":200,\"content\":{\"text\":\"\xc3\x28\"}}}]}}"),
		"a HAR cut short":     []byte(`{"log":{"entries":[{"request":{"method":"POST","url":"https://api.anthropic.com/v1/mess`),
		"a pcap header alone": {0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0},
		"a pcap cut in a frame": append([]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0,
			1, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 100, 0, 0, 0}, random[:40]...),
	} {
		in := file("in-"+strings.ReplaceAll(name, " ", "-"), data)
		check(name, []string{"import", in, "--db", filepath.Join(t.TempDir(), "out.db")}, true)
	}
}
