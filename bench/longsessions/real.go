package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"

	"github.com/tsinspect/tsinspect/fixtures/realsession"
	"github.com/tsinspect/tsinspect/fixtures/session"
)

// ensure records the real session of n main-thread turns at path unless it
// is there already, and says what it holds. The recording runs in a child
// process: the stand-in keeps every request it answered, and a parent that
// had grown by them would pass its peak RSS on to the children measured
// after it (Linux counts the memory a child shared with its parent before
// exec in the child's peak).
func (r *recorder) ensure(path string, n int) (sessionInfo, error) {
	infoPath := path + ".json"
	if info, err := readInfo(infoPath); err == nil {
		return info, nil
	}
	if r.kit.Claude == "" {
		return sessionInfo{}, fmt.Errorf("record %d turns: Claude Code not found: install @anthropic-ai/claude-code@%s or set TSINSPECT_CLAUDE", n, session.ClaudeVersion)
	}
	self, err := os.Executable()
	if err != nil {
		return sessionInfo{}, fmt.Errorf("record %d turns: %w", n, err)
	}
	fmt.Fprintf(os.Stderr, "recording %d turns with Claude Code ...\n", n)
	cmd := exec.Command(self, "-record-child", path, strconv.Itoa(n), strconv.Itoa(r.compactWindow),
		r.kit.Tsinspect, r.kit.MCPDemo, r.kit.Claude)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return sessionInfo{}, fmt.Errorf("record %d turns: %w", n, err)
	}
	info, err := readInfo(infoPath)
	if err != nil {
		return sessionInfo{}, fmt.Errorf("record %d turns: %w", n, err)
	}
	return info, nil
}

func readInfo(path string) (sessionInfo, error) {
	var info sessionInfo
	b, err := os.ReadFile(path)
	if err != nil {
		return info, err
	}
	return info, json.Unmarshal(b, &info)
}

// recordChild is the child process of ensure: args are the capture path,
// the number of turns, the compact window for 1,000 turns or more, and the
// tsinspect, mcpdemo and claude binaries.
func recordChild(args []string) error {
	if len(args) != 6 {
		return errors.New("-record-child: want PATH TURNS WINDOW TSINSPECT MCPDEMO CLAUDE")
	}
	path := args[0]
	n, err1 := strconv.Atoi(args[1])
	window, err2 := strconv.Atoi(args[2])
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("-record-child: %w", err)
	}
	kit := &session.Kit{Tsinspect: args[3], MCPDemo: args[4], Claude: args[5]}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("record %d turns: %w", n, err)
		}
	}
	o := realsession.Options{Turns: n}
	if n >= 1000 {
		o.CompactWindow = window
	}
	work := path + ".work"
	defer os.RemoveAll(work)
	st, err := realsession.Record(context.Background(), kit, work, path, o)
	if err != nil {
		return fmt.Errorf("record %d turns: %w", n, err)
	}
	if o.CompactWindow > 0 && (st.Compactions == 0 || st.Restarts == 0) {
		return fmt.Errorf("record %d turns: %d compaction requests, %d restarts of the main thread: want at least one", n, st.Compactions, st.Restarts)
	}
	info := sessionInfo{Turns: st.Turns, Exchanges: st.Exchanges, ReqBytes: st.ReqBytes, RespBytes: st.RespBytes,
		Subagents: st.Subagents, Compacted: st.Compactions, Restarts: st.Restarts,
		FileBytes: size(path) + size(path+"-wal"), WriteNanos: st.Took.Nanoseconds()}
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	return os.WriteFile(path+".json", b, 0o600)
}
