// Command sessionsdir makes a directory shaped like a heavy Claude Code
// user's, for measuring 'tsinspect sessions' and opening sessions from
// their files against ccusage and against captures.
//
//	go run ./bench/sessionsdir -dir DIR [-sizes 10,100,1000] [-copies 800,175,25] [-projects 50]
//
// It first records one real Claude Code session of each size (main-thread
// turns; fixtures/realsession: the real CLI through 'tsinspect record'
// against the stand-in, three MCP servers of 50 deferred tools, rounds of
// a ToolSearch and two calls with 6 KB results, an Agent subagent every 20
// rounds, and for 1,000 turns or more Claude Code's own compactions with
// CLAUDE_CODE_AUTO_COMPACT_WINDOW=-compact-window). Each recording is kept
// in DIR/recorded/N: capture.db (what the proxy saw) and home/, the HOME
// Claude Code ran with, whose .claude/projects holds its session files; a
// later run with the same DIR reuses them. Recording needs Claude Code
// ($TSINSPECT_CLAUDE, else claude on PATH).
//
// Then it writes DIR/config, a Claude Code configuration directory (point
// CLAUDE_CONFIG_DIR at it, or give DIR/config/projects to 'tsinspect
// sessions'): -copies[i] copies of the session of -sizes[i] turns, spread
// over -projects project directories, each copy with its subagent files and
// its own session ID (file name, directory and every record's sessionId),
// message IDs and request IDs, so that no two copies share a message
// (ccusage counts a message ID and request ID pair once across all files).
// Nothing else changes (after a compaction the requests name the
// transcript's path, with the original ID), so each copy's rebuilt requests
// still match the digests Claude Code kept of them. The defaults
// make 1,000 sessions, 575 subagent files and 1.83 GB in 50 projects
// (Claude Code 2.1.328 wrote 0.66 MB for 10 turns, 4 MB for 100 and 24 MB
// for 1,000 with its subagents). DIR/config is rewritten on each run.
//
// Afterwards, for example:
//
//	tsinspect sessions DIR/config/projects --no-index
//	CLAUDE_CONFIG_DIR=DIR/config ccusage session --offline
//	tsinspect turns DIR/recorded/1000/home/.claude/projects/*/*.jsonl
//	tsinspect turns DIR/recorded/1000/capture.db
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tsinspect/tsinspect/fixtures/realsession"
	"github.com/tsinspect/tsinspect/fixtures/session"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-record-child" {
		if err := recordChild(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "sessionsdir:", err)
			os.Exit(1)
		}
		return
	}
	dir := flag.String("dir", "", "directory for the recordings and the configuration directory (required)")
	sizes := flag.String("sizes", "10,100,1000", "comma-separated session sizes in main-thread turns, each recorded once")
	copies := flag.String("copies", "800,175,25", "comma-separated number of copies of each size in DIR/config")
	projects := flag.Int("projects", 50, "project directories to spread the copies over")
	window := flag.Int("compact-window", 400000, "Claude Code's auto-compact window in sessions of 1,000 turns or more")
	flag.Parse()
	if err := run(*dir, *sizes, *copies, *projects, *window); err != nil {
		fmt.Fprintln(os.Stderr, "sessionsdir:", err)
		os.Exit(1)
	}
}

func ints(list, name string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("-%s: bad number %q", name, f)
		}
		out = append(out, n)
	}
	return out, nil
}

func run(dir, sizeList, copyList string, projects, window int) error {
	if dir == "" {
		return errors.New("-dir is required")
	}
	sizes, err := ints(sizeList, "sizes")
	if err != nil {
		return err
	}
	counts, err := ints(copyList, "copies")
	if err != nil {
		return err
	}
	if len(counts) != len(sizes) {
		return fmt.Errorf("-copies: %d numbers for %d sizes", len(counts), len(sizes))
	}
	if projects < 1 {
		return errors.New("-projects: at least 1")
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var kit *session.Kit
	var sources []source
	for _, n := range sizes {
		rec := filepath.Join(dir, "recorded", strconv.Itoa(n))
		if _, err := os.Stat(filepath.Join(rec, "done")); err != nil {
			if kit == nil {
				if kit, err = session.NewKit(filepath.Join(dir, "bin")); err != nil {
					return err
				}
				if kit.Claude == "" {
					return fmt.Errorf("record: Claude Code not found: install @anthropic-ai/claude-code@%s or set TSINSPECT_CLAUDE", session.ClaudeVersion)
				}
			}
			if err := record(kit, rec, n, window); err != nil {
				return err
			}
		}
		src, err := findSession(filepath.Join(rec, "home", ".claude", "projects"))
		if err != nil {
			return fmt.Errorf("%d turns: %w", n, err)
		}
		sources = append(sources, src)
	}
	return writeConfig(filepath.Join(dir, "config"), sources, counts, projects)
}

// record records a session of n main-thread turns into rec, in a child
// process (the stand-in keeps every request it answered).
func record(kit *session.Kit, rec string, n, window int) error {
	if err := os.RemoveAll(rec); err != nil {
		return err
	}
	if err := os.MkdirAll(rec, 0o700); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "recording %d turns with Claude Code ...\n", n)
	cmd := exec.Command(self, "-record-child", rec, strconv.Itoa(n), strconv.Itoa(window),
		kit.Tsinspect, kit.MCPDemo, kit.Claude)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("record %d turns: %w", n, err)
	}
	return nil
}

// recordChild records into args[0] (capture.db, and home/ with Claude
// Code's files) the session of args[1] turns, and writes args[0]/done.
func recordChild(args []string) error {
	if len(args) != 6 {
		return errors.New("-record-child: want DIR TURNS WINDOW TSINSPECT MCPDEMO CLAUDE")
	}
	rec := args[0]
	n, err1 := strconv.Atoi(args[1])
	window, err2 := strconv.Atoi(args[2])
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("-record-child: %w", err)
	}
	kit := &session.Kit{Tsinspect: args[3], MCPDemo: args[4], Claude: args[5]}
	o := realsession.Options{Turns: n}
	if n >= 1000 {
		o.CompactWindow = window
	}
	st, err := realsession.Record(context.Background(), kit, rec, filepath.Join(rec, "capture.db"), o)
	if err != nil {
		return fmt.Errorf("record %d turns: %w", n, err)
	}
	if o.CompactWindow > 0 && (st.Compactions == 0 || st.Restarts == 0) {
		return fmt.Errorf("record %d turns: %d compaction requests, %d restarts of the main thread: want at least one", n, st.Compactions, st.Restarts)
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "recorded %d turns: %d Messages requests, %d subagents, %d compactions, %v\n",
		n, st.Turns, st.Subagents, st.Compactions, st.Took.Round(1e9))
	return os.WriteFile(filepath.Join(rec, "done"), b, 0o600)
}
