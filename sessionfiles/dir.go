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
	// SubagentsOnly: the main file is absent and only the subagents'
	// files (<id>/subagents/agent-*.jsonl) are there; Path names the
	// main file as it would be.
	SubagentsOnly bool
	legacy        []Entry // Claude Code 2.0's subagent files, while listing
	// Passed names the newer sessions Resolve passed over for "latest"
	// because they could not be read.
	Passed []Problem
}

// Listing is what Find found under a directory: the sessions, and what
// was passed over (files named *.jsonl that are not regular files,
// directories that could not be read, links that loop).
type Listing struct {
	Entries []Entry
	Skipped []Problem
}

// SkippedSummary says in one line what a listing passed over, "" for
// nothing.
func (l Listing) SkippedSummary() string {
	if len(l.Skipped) == 0 {
		return ""
	}
	var parts []string
	for i, p := range l.Skipped {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(l.Skipped)-3))
			break
		}
		parts = append(parts, p.File+": "+p.What)
	}
	return fmt.Sprintf("%d %s not read: %s", len(l.Skipped), plural(len(l.Skipped), "path", "paths"), strings.Join(parts, "; "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// List finds every session under root (a projects directory, one
// project's directory, or a single .jsonl file), newest first; see Find.
func List(root string) ([]Entry, error) {
	l, err := Find(root)
	return l.Entries, err
}

// Find finds every session under root (a projects directory, one
// project's directory, or a single .jsonl file), newest first. Symbolic
// links are followed, to directories as to files (a projects directory
// kept elsewhere, project directories linked in), each directory listed
// once however many links lead to it; a link back to a directory it is in
// is a loop, not followed. Only regular files are sessions: a named pipe
// or a device named *.jsonl is passed over and named in Skipped.
func Find(root string) (Listing, error) {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	info, err := os.Stat(root)
	if e, ok := subagentsOnly(root, err); ok {
		return Listing{Entries: []Entry{e}}, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return Listing{}, fmt.Errorf("list sessions: %w: %s does not exist (is Claude Code installed and used here? CLAUDE_CONFIG_DIR or a DIR argument point elsewhere)", ErrNoSession, root)
	}
	if err != nil {
		return Listing{}, fmt.Errorf("list sessions: %w", err)
	}
	if !info.IsDir() {
		if !info.Mode().IsRegular() {
			return Listing{}, fmt.Errorf("list sessions: %s: %w (%s)", root, ErrNotRegular, kindOf(info.Mode()))
		}
		return Listing{Entries: []Entry{entryOf(root, info)}}, nil
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return Listing{}, fmt.Errorf("list sessions: %w", err)
	}
	w := &walker{seen: map[string]bool{}, agents: map[string][]fs.FileInfo{}}
	if err := w.dir(root, real, 0); err != nil {
		return Listing{}, fmt.Errorf("list sessions: %w", err)
	}
	out := w.out
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
		for _, a := range w.agents[dir] {
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
	// A session whose main file is gone (or was never kept) and whose
	// subagents' files are there is listed from those.
	have := map[string]bool{}
	for _, e := range out {
		have[strings.TrimSuffix(e.Path, ".jsonl")] = true
	}
	var orphans []string
	for dir := range w.agents {
		if !have[dir] {
			orphans = append(orphans, dir)
		}
	}
	sort.Strings(orphans)
	for _, dir := range orphans {
		e := Entry{ID: filepath.Base(dir), Path: dir + ".jsonl", Project: filepath.Base(filepath.Dir(dir)), SubagentsOnly: true}
		for _, a := range w.agents[dir] {
			e.Agents = append(e.Agents, filepath.Join(dir, "subagents", a.Name()))
			e.Size += a.Size()
			if a.ModTime().After(e.ModTime) {
				e.ModTime = a.ModTime()
			}
		}
		sort.Strings(e.Agents)
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ModTime.After(out[j].ModTime) })
	return Listing{Entries: out, Skipped: w.skipped}, nil
}

// walker is one Find's walk: the sessions found, the subagents' files by
// their session's directory (<id>/subagents/*.jsonl), the directories
// listed by their real path, and what was passed over.
type walker struct {
	out     []Entry
	agents  map[string][]fs.FileInfo
	seen    map[string]bool
	skipped []Problem
}

// maxDepth is how deep below the root directories are listed: Claude
// Code's are projects/<project>/<session-id>/subagents; deeper trees are
// not its.
const maxDepth = 2

// dir lists the directory at p (real: its path with no link in it), depth
// levels below the root.
func (w *walker) dir(p, real string, depth int) error {
	w.seen[real] = true
	list, err := os.ReadDir(p)
	if err != nil {
		if depth == 0 {
			return err
		}
		w.skipped = append(w.skipped, Problem{File: p, What: "cannot be read: " + unwrapPath(err)})
		return nil
	}
	for _, d := range list {
		child, childReal := filepath.Join(p, d.Name()), filepath.Join(real, d.Name())
		mode := d.Type()
		var info fs.FileInfo
		if mode&fs.ModeSymlink != 0 {
			if info, err = os.Stat(child); err != nil {
				if strings.HasSuffix(d.Name(), ".jsonl") {
					w.skipped = append(w.skipped, Problem{File: child, What: "a link to nothing that can be read: " + unwrapPath(err)})
				}
				continue
			}
			mode = info.Mode().Type()
			if mode.IsDir() {
				if childReal, err = filepath.EvalSymlinks(child); err != nil {
					continue
				}
			}
		}
		switch {
		case mode.IsDir() && d.Name() == "subagents":
			w.subagents(child, p)
		case mode.IsDir():
			if depth+1 > maxDepth {
				continue
			}
			if within(real, childReal) {
				w.skipped = append(w.skipped, Problem{File: child, What: "a link to " + childReal + ", which holds it (a loop): not followed"})
				continue
			}
			if w.seen[childReal] {
				continue // listed through another link
			}
			if err := w.dir(child, childReal, depth+1); err != nil {
				return err
			}
		case strings.HasSuffix(d.Name(), ".jsonl"):
			if !mode.IsRegular() {
				w.skipped = append(w.skipped, Problem{File: child, What: kindOf(mode) + ", not a regular file"})
				continue
			}
			if info == nil {
				if info, err = d.Info(); err != nil {
					continue
				}
			}
			w.out = append(w.out, Entry{ID: strings.TrimSuffix(d.Name(), ".jsonl"), Path: child, Project: filepath.Base(p), Size: info.Size(), ModTime: info.ModTime()})
		}
	}
	return nil
}

// subagents reads a session's subagents directory p, beside the session
// directory sessionDir.
func (w *walker) subagents(p, sessionDir string) {
	list, _ := os.ReadDir(p)
	for _, a := range list {
		if !strings.HasSuffix(a.Name(), ".jsonl") {
			continue
		}
		info, err := os.Stat(filepath.Join(p, a.Name()))
		if err != nil {
			continue
		}
		if !info.Mode().IsRegular() {
			if !info.IsDir() {
				w.skipped = append(w.skipped, Problem{File: filepath.Join(p, a.Name()), What: kindOf(info.Mode()) + ", not a regular file"})
			}
			continue
		}
		w.agents[sessionDir] = append(w.agents[sessionDir], info)
	}
}

// unwrapPath is an error's message without the path a *fs.PathError
// repeats.
func unwrapPath(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// subagentsOnly is the entry of the session whose main file path is
// absent (err from its stat) and whose subagents' files are there.
func subagentsOnly(path string, err error) (Entry, bool) {
	if !strings.HasSuffix(path, ".jsonl") {
		return Entry{}, false
	}
	agents := agentFiles(path)
	if !mainAbsent(agents, err) {
		return Entry{}, false
	}
	e := Entry{ID: strings.TrimSuffix(filepath.Base(path), ".jsonl"), Path: path, Project: filepath.Base(filepath.Dir(path)), Agents: agents, SubagentsOnly: true}
	for _, a := range agents {
		if ai, err := os.Stat(a); err == nil {
			e.Size += ai.Size()
			if ai.ModTime().After(e.ModTime) {
				e.ModTime = ai.ModTime()
			}
		}
	}
	return e, true
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

// mainAbsent reports whether the main file at path is absent while
// subagents' files are there: a session kept as its subagents' files.
func mainAbsent(agents []string, err error) bool {
	return len(agents) > 0 && errors.Is(err, fs.ErrNotExist)
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
// file, "latest" (the most recently written session that can be read:
// the newer ones passed over are in the Entry's Passed), a session ID or
// an unambiguous prefix of one.
func Resolve(root, arg string) (Entry, error) {
	if strings.HasSuffix(arg, ".jsonl") {
		info, err := os.Stat(arg)
		if e, ok := subagentsOnly(arg, err); ok {
			return e, nil
		}
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
		var passed []Problem
		for _, e := range list {
			if err := Recognise(e.Path); err != nil {
				passed = append(passed, Problem{File: e.Path, What: unwrapPath(err)})
				continue
			}
			e.Passed = passed
			return e, nil
		}
		return Entry{}, fmt.Errorf("open session: %w: none of the %d under %s can be read (the newest, %s: %s)", ErrNoSession, len(list), root, filepath.Base(passed[0].File), passed[0].What)
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
		return Entry{}, fmt.Errorf("open session %s: %w under %s ('tsinspect sessions' lists their IDs)", arg, ErrNoSession, root)
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

// ErrNotSession is returned by Recognise for a file that does not read as
// a Claude Code session file.
var ErrNotSession = errors.New("not a Claude Code session file")

// Sniff reports whether the file at path reads as a Claude Code session
// file (see Recognise).
func Sniff(path string) bool { return Recognise(path) == nil }

// sniffLines is how many lines Recognise looks through for a record;
// sniffHead how much of a long first line it reads.
const (
	sniffLines = 20
	sniffHead  = 1 << 20
)

// sniffBuffer is the size of Recognise's buffer: a longer line is gathered.
const sniffBuffer = 16 << 10

// sniffLine reads a line from br as ReadSlice does from a buffer of
// sniffHead bytes: a longer line is its first sniffHead bytes, with
// bufio.ErrBufferFull.
func sniffLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	long := bytes.Clone(line)
	for errors.Is(err, bufio.ErrBufferFull) && len(long) < sniffHead {
		line, err = br.ReadSlice('\n')
		long = append(long, line...)
	}
	if len(long) > sniffHead || len(long) == sniffHead && long[sniffHead-1] != '\n' {
		return long[:sniffHead], bufio.ErrBufferFull
	}
	return long, err
}

// Recognise says whether the regular file at path reads as a Claude Code
// session file: its first records have types Claude Code writes, and one
// of them a session ID (other tools' JSON Lines logs, claude-trace's among
// them, do not); records that carry none (summaries, file history
// snapshots, queue operations) may come first, and so may damaged lines
// and records (a line that is not JSON, a record of an unknown type or
// without the session ID its type always carries: each costs only itself,
// as the listing reads it) as long as a record with a session ID follows
// within the lines read. It is nil when it does, or
// an error that says why not: one that wraps ErrNotSession with what the
// file holds instead, or the error of opening it (ErrNotRegular for a pipe
// or a device).
func Recognise(path string) (refused error) {
	f, info, err := openRegular(path)
	if agents := agentFiles(path); err != nil && mainAbsent(agents, err) {
		// A session kept as its subagents' files alone.
		return Recognise(agents[0])
	}
	if err != nil {
		return err
	}
	defer f.Close()
	// No larger than the file, nor than most first lines: a line longer
	// is gathered (a directory of sessions allocated and cleared a
	// megabyte for each, twice, to read a line of a few kB).
	br := bufio.NewReaderSize(io.LimitReader(f, sniffLines*sniffHead), int(max(min(info.Size()+1, sniffBuffer), 4096)))
	known := false // a record of a type that carries no session ID
	var bad error  // the first line that is not a JSON record
	printed := ""  // the session of stream-json output, when it is that
	defer func() {
		if printed != "" && errors.Is(refused, ErrNotSession) {
			refused = printedError(printed)
		}
	}()
	for i := 0; i < sniffLines; i++ {
		line, err := sniffLine(br)
		if errors.Is(err, bufio.ErrBufferFull) {
			// A first record longer than what is read of it (a pasted
			// prompt): its leading members name it.
			return recogniseHead(line)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var r sniffed
			if uerr := json.Unmarshal(line, &r); uerr != nil {
				if r, ok := leading(line); ok && printed == "" {
					printed = r.printedSession() // cut, or still being written
				}
				if i == 0 && err != nil && !bytes.HasSuffix(line, []byte("\n")) {
					return fmt.Errorf("%w: its only line is unfinished", ErrNotSession)
				}
				if bad == nil {
					bad = fmt.Errorf("%w: its first line is not a JSON record (%s)", ErrNotSession, shortErr(uerr))
				}
				if err != nil {
					return bad
				}
				// A damaged line costs only itself, as anywhere in a
				// file: the next record says what the file is.
				continue
			}
			if knownTypes[r.Type] && r.SessionID == "" && sessionless[r.Type] {
				known = true
				continue
			}
			if printed == "" {
				printed = r.printedSession()
			}
			if !knownTypes[r.Type] || r.SessionID == "" {
				// A record of no type Claude Code writes, or of one that
				// always carries a session ID without it: another tool's
				// log, or a damaged record of a session (the listing
				// reads past it); a record of Claude Code's after it
				// tells which.
				if bad == nil {
					bad = recognised(r.Type, r.SessionID != "")
				}
				if err != nil {
					return bad
				}
				continue
			}
			return recognised(r.Type, r.SessionID != "")
		}
		if err != nil {
			switch {
			case known:
				return nil
			case bad != nil:
				return bad
			case i == 0 && len(line) == 0:
				return fmt.Errorf("%w: it is empty", ErrNotSession)
			}
			return fmt.Errorf("%w: it holds no record", ErrNotSession)
		}
	}
	switch {
	case known:
		return nil
	case bad != nil:
		return bad
	}
	return fmt.Errorf("%w: its first %d lines are blank", ErrNotSession, sniffLines)
}

// sniffed is what Recognise reads of a record.
type sniffed struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	Printed   string `json:"session_id"` // stream-json's name for it
}

// printedSession is the session ID of a record of what Claude Code prints
// with -p --output-format stream-json (each message, with a system init
// record first and a result record last, naming its session as
// session_id rather than sessionId), or "".
func (r sniffed) printedSession() string {
	if r.SessionID != "" || (!knownTypes[r.Type] && r.Type != "result") {
		return ""
	}
	return r.Printed
}

// PrintedSession is the session ID of the stream-json output of Claude
// Code whose first lines head holds, or "" when head holds none of its
// records.
func PrintedSession(head []byte) string {
	for line := range bytes.Lines(head) {
		var r sniffed
		if json.Unmarshal(line, &r) != nil {
			r, _ = leading(line) // the head's last line, cut
		}
		if id := r.printedSession(); id != "" {
			return id
		}
	}
	return ""
}

// PrintedHint says that a file is the stream-json output of session id
// rather than the session's file, and how to read that.
func PrintedHint(id string) string {
	return fmt.Sprintf("it is what 'claude -p --output-format stream-json' printed for session %s, which holds no requests; the session's own file does: 'tsinspect open %s' (with CLAUDE_CONFIG_DIR as that run had it)", id, shortID(id))
}

// printedError is Recognise's PrintedHint.
func printedError(id string) error { return fmt.Errorf("%w: %s", ErrNotSession, PrintedHint(id)) }

// shortID is the first eight characters of a session ID, as the listing
// shows it.
func shortID(id string) string { return id[:min(len(id), 8)] }

// sessionless are the record types Claude Code writes without a session
// ID, which may come before the first record that has one.
var sessionless = map[string]bool{"summary": true, "file-history-snapshot": true, "queue-operation": true}

// recognised says whether a first record of type typ, with a session ID
// or not, is one Claude Code writes.
func recognised(typ string, hasSession bool) error {
	switch {
	case typ == "":
		return fmt.Errorf("%w: its first record has no type", ErrNotSession)
	case !knownTypes[typ]:
		return fmt.Errorf("%w: its first record's type %q is not one Claude Code writes", ErrNotSession, typ)
	case !hasSession && typ != "summary":
		return fmt.Errorf("%w: its first record (%s) has no sessionId", ErrNotSession, typ)
	}
	return nil
}

// recogniseHead reads the members of a record cut short: the type and the
// session ID, as far as they come before the cut.
func recogniseHead(head []byte) error {
	r, ok := leading(head)
	switch {
	case !ok:
		return fmt.Errorf("%w: its first line is not a JSON record", ErrNotSession)
	case r.printedSession() != "":
		return printedError(r.Printed)
	case r.Type != "" && r.SessionID == "" && knownTypes[r.Type]:
		return nil // the session ID comes after the cut
	}
	return recognised(r.Type, r.SessionID != "")
}

// leading reads what it can of a record cut short: the members that come
// whole before the cut. ok is false when head does not begin a JSON
// object.
func leading(head []byte) (r sniffed, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return r, false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		switch k {
		case "type":
			_ = json.Unmarshal(v, &r.Type)
		case "sessionId":
			_ = json.Unmarshal(v, &r.SessionID)
		case "session_id":
			_ = json.Unmarshal(v, &r.Printed)
		}
		if r.Type != "" && (r.SessionID != "" || r.Printed != "") {
			break
		}
	}
	return r, true
}
