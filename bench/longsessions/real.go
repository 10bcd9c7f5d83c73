package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/tsinspect/tsinspect/fixtures/realsession"
)

// ensure records the real session of n main-thread turns at path unless it
// is there already, and says what it holds.
func (r *recorder) ensure(path string, n int) (sessionInfo, error) {
	infoPath := path + ".json"
	if b, err := os.ReadFile(infoPath); err == nil {
		var info sessionInfo
		if err := json.Unmarshal(b, &info); err == nil {
			return info, nil
		}
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return sessionInfo{}, fmt.Errorf("record %d turns: %w", n, err)
		}
	}
	o := realsession.Options{Turns: n}
	if n >= 1000 {
		o.CompactWindow = r.compactWindow
	}
	fmt.Fprintf(os.Stderr, "recording %d turns with Claude Code ...\n", n)
	work := path + ".work"
	defer os.RemoveAll(work)
	st, err := realsession.Record(context.Background(), r.kit, work, path, o)
	if err != nil {
		return sessionInfo{}, fmt.Errorf("record %d turns: %w", n, err)
	}
	if o.CompactWindow > 0 && (st.Compactions == 0 || st.Restarts == 0) {
		return sessionInfo{}, fmt.Errorf("record %d turns: %d compaction requests, %d restarts of the main thread: want at least one", n, st.Compactions, st.Restarts)
	}
	info := sessionInfo{Turns: st.Turns, Exchanges: st.Exchanges, ReqBytes: st.ReqBytes, RespBytes: st.RespBytes,
		Subagents: st.Subagents, Compacted: st.Compactions, Restarts: st.Restarts,
		FileBytes: size(path) + size(path+"-wal"), WriteNanos: st.Took.Nanoseconds()}
	b, err := json.Marshal(info)
	if err != nil {
		return info, err
	}
	return info, os.WriteFile(infoPath, b, 0o600)
}
