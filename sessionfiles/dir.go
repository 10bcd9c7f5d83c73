package sessionfiles

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Root is where Claude Code keeps its sessions: $CLAUDE_CONFIG_DIR/projects,
// or ~/.claude/projects. getenv is os.Getenv in the command.
func Root(getenv func(string) string) (string, error) {
	if dir := getenv("CLAUDE_CONFIG_DIR"); dir != "" {
		return filepath.Join(dir, "projects"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("sessions directory: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".claude", "projects"), nil
}

// Entry is one session's main file as found on disk.
type Entry struct {
	ID      string
	Path    string
	Project string // the project directory's name (the cwd, / as -)
	Size    int64  // the main file's size, with its subagents' files
	ModTime time.Time
	Agents  []string
	legacy  []Entry // Claude Code 2.0's subagent files, while listing
}

// List finds every session under root (a projects directory, one
// project's directory, or a single .jsonl file), newest first.
func List(root string) ([]Entry, error) {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	info, err := os.Stat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list sessions: %w: %s does not exist (is Claude Code installed and used here? CLAUDE_CONFIG_DIR or a DIR argument point elsewhere)", ErrNoSession, root)
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	if !info.IsDir() {
		return []Entry{entryOf(root, info)}, nil
	}
	var out []Entry
	// A session's subagents' files, by the session's directory
	// (<id>/subagents/*.jsonl), read as the walk passes them.
	agents := map[string][]fs.FileInfo{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if d.IsDir() {
			if d.Name() == "subagents" {
				list, _ := os.ReadDir(p)
				for _, a := range list {
					if info, err := a.Info(); err == nil && !a.IsDir() && strings.HasSuffix(a.Name(), ".jsonl") {
						agents[filepath.Dir(p)] = append(agents[filepath.Dir(p)], info)
					}
				}
				return filepath.SkipDir
			}
			// Deeper trees are not Claude Code's.
			if strings.Count(strings.TrimPrefix(p, root), string(filepath.Separator)) > 2 {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".jsonl") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		out = append(out, Entry{ID: strings.TrimSuffix(d.Name(), ".jsonl"), Path: p, Project: filepath.Base(filepath.Dir(p)), Size: info.Size(), ModTime: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	// Claude Code 2.0 wrote a subagent's file beside its session's, as
	// agent-<id>.jsonl, tied to it by the session ID of its records.
	byID := map[string]int{}
	for i, e := range out {
		if !isLegacyAgent(e.Path) {
			byID[filepath.Dir(e.Path)+"/"+e.ID] = i
		}
	}
	kept := out[:0:0]
	for _, e := range out {
		if isLegacyAgent(e.Path) {
			if i, ok := byID[filepath.Dir(e.Path)+"/"+firstSessionID(e.Path)]; ok {
				out[i].legacy = append(out[i].legacy, e)
				continue
			}
		}
		kept = append(kept, e)
	}
	out = kept
	for i := range out {
		e := &out[i]
		dir := strings.TrimSuffix(e.Path, ".jsonl")
		for _, a := range agents[dir] {
			e.Agents = append(e.Agents, filepath.Join(dir, "subagents", a.Name()))
			e.Size += a.Size()
			if a.ModTime().After(e.ModTime) {
				e.ModTime = a.ModTime()
			}
		}
		for _, a := range e.legacy {
			e.Agents = append(e.Agents, a.Path)
			e.Size += a.Size
			if a.ModTime.After(e.ModTime) {
				e.ModTime = a.ModTime
			}
		}
		e.legacy = nil
		sort.Strings(e.Agents)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ModTime.After(out[j].ModTime) })
	return out, nil
}

func entryOf(p string, info fs.FileInfo) Entry {
	e := Entry{ID: strings.TrimSuffix(filepath.Base(p), ".jsonl"), Path: p, Project: filepath.Base(filepath.Dir(p)), Size: info.Size(), ModTime: info.ModTime()}
	e.Agents = agentFiles(p)
	for _, a := range e.Agents {
		if ai, err := os.Stat(a); err == nil {
			e.Size += ai.Size()
			if ai.ModTime().After(e.ModTime) {
				e.ModTime = ai.ModTime()
			}
		}
	}
	return e
}

// agentFiles are the subagents' files of the session whose main file is
// path: <session-id>/subagents/agent-*.jsonl beside it, and Claude Code
// 2.0's agent-*.jsonl in the same directory whose records name the
// session.
func agentFiles(path string) []string {
	dir := filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents")
	list, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if !isLegacyAgent(path) {
		id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		legacy, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "agent-*.jsonl"))
		for _, a := range legacy {
			if firstSessionID(a) == id {
				list = append(list, a)
			}
		}
	}
	sort.Strings(list)
	return list
}

// isLegacyAgent reports whether path is named as Claude Code 2.0 named a
// subagent's file beside its session's.
func isLegacyAgent(path string) bool {
	return strings.HasPrefix(filepath.Base(path), "agent-")
}

// firstSessionID is the session ID of the first record of the file at
// path that names one, "" for none.
func firstSessionID(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for i := 0; i < 5; i++ {
		line, err := br.ReadSlice('\n')
		var r struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(bytes.TrimSpace(line), &r) == nil && r.SessionID != "" {
			return r.SessionID
		}
		if err != nil {
			return ""
		}
	}
	return ""
}

// ErrNoSession is returned by Resolve when nothing matches.
var ErrNoSession = errors.New("no Claude Code session")

// Resolve finds the session arg names under root: a path to a .jsonl
// file, "latest" (the most recently written), a session ID or an
// unambiguous prefix of one.
func Resolve(root, arg string) (Entry, error) {
	if strings.HasSuffix(arg, ".jsonl") {
		info, err := os.Stat(arg)
		if err != nil {
			return Entry{}, fmt.Errorf("open session: %w", err)
		}
		return entryOf(arg, info), nil
	}
	list, err := List(root)
	if err != nil {
		return Entry{}, err
	}
	if arg == "latest" {
		if len(list) == 0 {
			return Entry{}, fmt.Errorf("open session: %w: no sessions under %s", ErrNoSession, root)
		}
		return list[0], nil
	}
	var found []Entry
	for _, e := range list {
		if e.ID == arg {
			return e, nil
		}
		if strings.HasPrefix(e.ID, arg) {
			found = append(found, e)
		}
	}
	switch len(found) {
	case 0:
		return Entry{}, fmt.Errorf("open session %s: %w under %s", arg, ErrNoSession, root)
	case 1:
		return found[0], nil
	}
	return Entry{}, &notOne{fmt.Sprintf("open session %s: %d sessions start so, give more of the ID; %s", arg, len(found), Candidates(found))}
}

// LooksLikeSession reports whether arg reads as a session reference rather
// than a capture file's name: "latest", a .jsonl path, or a hexadecimal
// ID prefix of at least 4 characters with dashes.
func LooksLikeSession(arg string) bool {
	if arg == "latest" || strings.HasSuffix(arg, ".jsonl") {
		return true
	}
	if len(arg) < 4 || len(arg) > 36 {
		return false
	}
	for _, c := range arg {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == '-') {
			return false
		}
	}
	return true
}

func filepathBase(p string) string { return filepath.Base(p) }

// Sniff reports whether the file at path reads as a Claude Code session
// file: its first records have types Claude Code writes, and one of them
// a session ID (other tools' JSON Lines logs, claude-trace's among them,
// do not). Records that carry no session ID (summaries, file history
// snapshots) may come first.
func Sniff(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	known := false
	for i := 0; i < 20; i++ {
		line, err := br.ReadSlice('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var r struct {
				Type      string `json:"type"`
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(line, &r) != nil || !knownTypes[r.Type] {
				// Not a record, or a line longer than the buffer: a
				// session only when one before said so.
				return known && errors.Is(err, bufio.ErrBufferFull)
			}
			if r.SessionID != "" {
				return true
			}
			known = r.Type == "summary" || r.Type == "file-history-snapshot" || r.Type == "queue-operation" || known
		}
		if err != nil {
			return known && (errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull))
		}
	}
	return known
}
