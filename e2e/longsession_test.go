package e2e

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/fixtures/realsession"
)

// TestRecordLongSession records a long real Claude Code session (package
// realsession): three MCP servers of 50 tools, rounds of one ToolSearch and
// two tool calls of about 6 KB of text each, a subagent every 20 rounds.
// It runs only with TSINSPECT_LONG_TURNS=N (N main-thread turns;
// TSINSPECT_LONG_ROUNDS=R means 3R+1); TSINSPECT_LONG_COMPACT=W sets
// Claude Code's auto-compact window to W tokens (at least 100000), and the
// test then wants at least one compaction that the session goes on after.
// TSINSPECT_LONG_OUT=FILE keeps the capture. It checks the capture holds
// the turns and, from 100 turns on without compaction (whose shorter
// histories compress less), takes at most 5 % of the raw bytes, and logs
// the figures.
func TestRecordLongSession(t *testing.T) {
	turns, _ := strconv.Atoi(os.Getenv("TSINSPECT_LONG_TURNS"))
	if rounds, _ := strconv.Atoi(os.Getenv("TSINSPECT_LONG_ROUNDS")); rounds > 0 {
		turns = 3*rounds + 1
	}
	if turns <= 0 {
		t.Skip("set TSINSPECT_LONG_TURNS=N to record a session of N turns")
	}
	kit.RequireClaude(t)
	window, _ := strconv.Atoi(os.Getenv("TSINSPECT_LONG_COMPACT"))
	dir := t.TempDir()
	db := filepath.Join(dir, "capture.db")
	st, err := realsession.Record(context.Background(), kit, filepath.Join(dir, "work"), db, realsession.Options{Turns: turns, CompactWindow: window})
	if err != nil {
		t.Fatalf("%+v: %v", st, err)
	}
	var size int64
	for _, p := range []string{db, db + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			size += fi.Size()
		}
	}
	raw := st.ReqBytes + st.RespBytes
	t.Logf("%d main turns: %d exchanges, %d Messages turns, %d subagents, %d compactions (%d restarts of the main thread) in %v; raw %d bytes, capture %d bytes (%.2f %%)",
		turns, st.Exchanges, st.Turns, st.Subagents, st.Compactions, st.Restarts, st.Took.Round(time.Second), raw, size, 100*float64(size)/float64(raw))
	if st.Turns < turns {
		t.Errorf("%d Messages turns, want at least %d", st.Turns, turns)
	}
	if turns >= 100 && window == 0 && size*20 > raw {
		t.Errorf("capture %d bytes for %d raw: more than 5 %%", size, raw)
	}
	if window > 0 {
		// The main thread restarts after a compaction and goes on with
		// tool calls (Record saw it reach its closing text).
		if st.Compactions == 0 || st.Restarts == 0 || st.CallsAfter < 3 {
			t.Errorf("%d compaction requests, %d restarts of the main thread, %d tool calls after the first: want at least 1, 1 and 3",
				st.Compactions, st.Restarts, st.CallsAfter)
		}
	}
	if out := os.Getenv("TSINSPECT_LONG_OUT"); out != "" {
		copyTo(t, db, out)
	}
}

func copyTo(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
