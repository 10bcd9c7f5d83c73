package e2e

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures/realsession"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline"
)

// TestRecordLongSession records a long real Claude Code session (package
// realsession): three MCP servers of 50 tools, rounds of one ToolSearch and
// two tool calls of about 6 KB of text each, a subagent every 20 rounds.
// It runs only with TSINSPECT_LONG_TURNS=N (N main-thread turns;
// TSINSPECT_LONG_ROUNDS=R means 3R+1); TSINSPECT_LONG_COMPACT=W sets
// Claude Code's auto-compact window to W tokens (at least 100000), and the
// test then wants at least one compaction that the session goes on after.
// TSINSPECT_LONG_OUT=FILE keeps the capture. It checks the capture holds
// the turns and, from 100 turns on, takes at most 5 % of the raw bytes, and
// logs the figures.
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
	t.Logf("%d main turns: %d exchanges, %d Messages turns, %d subagents, %d compactions in %v; raw %d bytes, capture %d bytes (%.2f %%)",
		turns, st.Exchanges, st.Turns, st.Subagents, st.Compactions, st.Took.Round(1e9), raw, size, 100*float64(size)/float64(raw))
	if st.Turns < turns {
		t.Errorf("%d Messages turns, want at least %d", st.Turns, turns)
	}
	if turns >= 100 && size*20 > raw {
		t.Errorf("capture %d bytes for %d raw: more than 5 %%", size, raw)
	}
	if window > 0 {
		checkCompacted(t, db, st)
	}
	if out := os.Getenv("TSINSPECT_LONG_OUT"); out != "" {
		copyTo(t, db, out)
	}
}

// checkCompacted wants the capture's main thread to restart after a
// compaction at least once and to go on with tool calls after the last one.
func checkCompacted(t *testing.T, db string, st realsession.Stats) {
	t.Helper()
	if st.Compactions == 0 {
		t.Fatal("the stand-in answered no compaction request")
	}
	d, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	exs, err := d.Exchanges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := timeline.Build(exs)
	restarts, callsAfter := 0, 0
	for _, tn := range s.Turns {
		if tn.Thread != "main" {
			continue
		}
		if tn.Link == timeline.LinkCompaction {
			restarts, callsAfter = restarts+1, 0
		}
		if tn.Decoded != nil {
			callsAfter += len(tn.Decoded.ToolCalls)
		}
	}
	t.Logf("main thread: %d restarts after a compaction, %d tool calls after the last", restarts, callsAfter)
	if restarts == 0 || callsAfter < 3 {
		t.Errorf("main thread restarted %d times after a compaction with %d tool calls after the last; want at least 1 and 3", restarts, callsAfter)
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
