package sessionfiles

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/internal/crash"
)

// readState is how a session's files are read: the longest line read,
// and how many times following them had to start over.
type readState struct {
	limit      int // the longest line read (0: maxLine)
	generation int
	restarted  bool // since the last Refresh returned
	// ctx, when set, stops the read under way when it is done (the
	// first reading of OpenContext).
	ctx context.Context
}

// fileRead is how far one file was read and what it was then.
type fileRead struct {
	at   cursor
	info fs.FileInfo // the file last read (nil: never read)
	head []byte      // its first bytes, to tell a file rewritten in place
	gone bool        // it was found missing, and said so
	// failed is the last error reading it, said once.
	failed string
}

// newSession is a session of the main file path, with nothing read yet.
func newSession(path string) *Session {
	s := &Session{Path: path, ID: strings.TrimSuffix(filepathBase(path), ".jsonl"), Unknown: map[string]int{},
		shapes: map[string]*shape{}, index: map[string]int32{}, files: map[string]*fileState{}}
	s.tr = newTranscript(s.addMessage)
	s.tr.hashed = func() bool { return s.Requests }
	s.tr.onRequest = func(q *request) { s.newReqs = append(s.newReqs, q) }
	return s
}

// maxProblems bounds the problems a session keeps; the rest are counted
// (MoreProblems).
const maxProblems = 100

// problem notes what could not be read.
func (s *Session) problem(ps ...Problem) {
	for _, p := range ps {
		if len(s.Problems) < maxProblems {
			s.Problems = append(s.Problems, p)
		} else {
			s.MoreProblems++
		}
	}
}

// openWith is Open reading lines of at most limit bytes (0: maxLine).
func openWith(path string, limit int) (s *Session, err error) {
	return openContext(context.Background(), path, limit)
}

// OpenContext is Open, its reading stopped, with ctx's error, as soon as
// ctx is done (a reader that left, a server that stops): a session of
// hundreds of megabytes need not be read to the end for nothing.
func OpenContext(ctx context.Context, path string) (*Session, error) {
	return openContext(ctx, path, 0)
}

// openContext is OpenContext reading lines of at most limit bytes (0:
// maxLine).
func openContext(ctx context.Context, path string, limit int) (s *Session, err error) {
	s = newSession(path)
	s.rd.limit, s.rd.ctx = limit, ctx
	_, err = s.Refresh()
	s.rd.ctx = nil // only the first reading is stopped by it
	if err != nil {
		return nil, err
	}
	for _, p := range append([]string{s.Path}, s.Agents...) {
		if f := s.files[p]; f != nil && f.partial {
			s.problem(Problem{File: p, What: "its last line is unfinished (Claude Code is still writing it, or was cut off): left out"})
		}
	}
	return s, nil
}

// Generation counts the times following the files started over from the
// start (a file was cut or replaced): a follower that kept what earlier
// reads gave drops it when this changes.
func (s *Session) Generation() int { return s.rd.generation }

// Refresh reads what was appended to the files since the last read (a
// last line still being written is left for the next), and the files of
// subagents that appeared. It returns the index of the first request
// that is new or whose answer may have changed: requests before it are
// as they were. When nothing was appended it returns Len().
//
// A file that is shorter than what was read of it (cut), or that is
// another file under the same name (replaced, or gone and back), makes
// the session start over from every file's start: the turns are those of
// the files as they now are, Generation changes, it returns 0 and one
// problem says why. A file that is gone is said once; what was read of it
// stays. Problems name lines counted from the file's start.
func (s *Session) Refresh() (from int, err error) {
	defer crash.Recover("read session "+s.Path, &err)
	if s.released {
		return 0, fmt.Errorf("read session %s: released: it reads no more (open it again)", s.Path)
	}
	if why, ok := s.changedUnder(); ok {
		s.startOver(why)
	}
	s.Agents = agentFiles(s.Path)
	s.tr.agentIDs = agentIDsOf(s.Agents)
	var read int64
	from = len(s.reqs)
	for i, q := range s.reqs {
		if !q.ended() {
			from = i
			break
		}
	}
	for _, p := range append([]string{s.Path}, s.Agents...) {
		f := s.files[p]
		if f == nil {
			f = &fileState{path: p, asst: map[string][]*record{}}
			s.files[p] = f
		}
		sc, info, err := scanFileFrom(s.rd.ctx, p, f.read.at, s.rd.limit)
		if err != nil && s.rd.ctx != nil && s.rd.ctx.Err() != nil {
			return 0, fmt.Errorf("read session: %w", err)
		}
		if err != nil {
			if p == s.Path && f.read.info == nil && mainAbsent(s.Agents, err) {
				if !s.SubagentsOnly {
					s.SubagentsOnly = true
					s.problem(Problem{File: p, What: "absent: the session is read from its subagents' files alone"})
				}
				continue
			}
			if p == s.Path && f.read.info == nil {
				return 0, fmt.Errorf("read session: %w", err)
			}
			s.unreadable(f, err)
			continue
		}
		f.read.info, f.read.gone, f.read.failed = info, false, ""
		f.read.at = sc.at
		if len(f.read.head) < headSize && int64(len(f.read.head)) < f.read.at.offset {
			f.read.head = readHead(p, int(min(f.read.at.offset, headSize)))
		}
		read += sc.consumed
		f.partial = sc.partial
		s.problem(sc.problems...)
		s.MoreProblems += sc.more
		for k, n := range sc.unknown {
			s.Unknown[k] += n
		}
		n := 0
		for _, chunk := range sc.records {
			n += len(chunk)
		}
		s.tr.expect(n)
		s.ingest(f, sc.records)
	}
	// Records whose parent never came are read as they are: at once when
	// the files are read whole, after a round when they are followed.
	s.tr.endRound(!s.Live)
	s.flushRequests()
	if d := s.tr.dups; d > s.saidDups {
		s.problem(Problem{File: s.Path, What: fmt.Sprintf("%d records read again (the UUID or request ID of an earlier one): counted once", d-s.saidDups)})
		s.saidDups = d
	}
	// Requests whose shape the files do not hold, one line a shape.
	for h, m := range s.missingShape {
		if m.n > m.said {
			what := "request " + short(m.first) + ": its shape " + short(h) + " (system and tools) is not in the files"
			if m.n > 1 {
				what = fmt.Sprintf("%d requests (the first %s) name the shape %s (system and tools), which is not in the files", m.n, short(m.first), short(h))
			}
			s.problem(Problem{File: m.file, What: what})
			m.said = m.n
		}
	}
	// An ended request the transcript learned more of since (a failed
	// attempt's model, from its retry's answer) is rebuilt again.
	for i, q := range s.reqs {
		if q.dirty {
			from = min(from, i)
			q.dirty = false
		}
	}
	s.Partial = false
	for _, f := range s.files {
		s.Partial = s.Partial || f.partial
	}
	if s.rd.restarted {
		s.rd.restarted = false
		from = 0
	} else if read == 0 {
		return len(s.reqs), nil
	}
	if from < len(s.reqs) {
		tail := s.reqs[from:]
		sort.SliceStable(tail, func(i, j int) bool { return tail[i].at.Before(tail[j].at) })
	}
	return from, nil
}

// changedUnder reports whether a file read before is now shorter than
// what was read of it, or another file, with the problem that says so.
func (s *Session) changedUnder() (Problem, bool) {
	paths := make([]string, 0, len(s.files))
	for p := range s.files {
		paths = append(paths, p)
	}
	sort.Strings(paths) // the main file's name sorts before its subagents'
	for _, p := range paths {
		f := s.files[p]
		if f.read.info == nil {
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			continue // gone: said when it is read
		}
		switch {
		case f.read.gone:
			// Another file, even where the system gave it the inode of
			// the one deleted.
			return Problem{File: p, What: "came back after it was gone: read again from the start"}, true
		case !os.SameFile(info, f.read.info):
			return Problem{File: p, What: "was replaced by another file of its name: read again from the start"}, true
		case info.Size() < f.read.at.offset:
			return Problem{File: p, What: fmt.Sprintf("was cut (%d bytes, %d read before): read again from the start", info.Size(), f.read.at.offset)}, true
		case len(f.read.head) > 0 && !bytes.Equal(readHead(p, len(f.read.head)), f.read.head):
			return Problem{File: p, What: "was rewritten (it no longer begins as it did): read again from the start"}, true
		}
	}
	return Problem{}, false
}

// startOver forgets everything read: the next read is from every file's
// start, and why is the one problem it begins with.
func (s *Session) startOver(why Problem) {
	fresh := newSession(s.Path)
	fresh.Live = s.Live
	fresh.rd = readState{limit: s.rd.limit, generation: s.rd.generation + 1, restarted: true}
	*s = *fresh
	s.tr.onRequest = func(q *request) { s.newReqs = append(s.newReqs, q) }
	s.tr.add = s.addMessage
	s.problem(why)
}

// unreadable notes that a file read before (or a subagent's) could not be
// read now: once for a file gone, once for each new error.
func (s *Session) unreadable(f *fileState, err error) {
	if errors.Is(err, fs.ErrNotExist) {
		if f.read.info != nil && !f.read.gone {
			f.read.gone = true
			s.problem(Problem{File: f.path, What: "is gone (deleted or renamed): what was read of it stays; it is read again if it comes back"})
		}
		return
	}
	if msg := err.Error(); msg != f.read.failed {
		f.read.failed = msg
		s.problem(Problem{File: f.path, What: msg})
	}
}

// headSize is how much of a file's start is kept to tell it was rewritten.
const headSize = 256

// readHead is the first n bytes of the regular file at path (fewer if it
// is shorter, nil if it cannot be read).
func readHead(path string, n int) []byte {
	f, _, err := openRegular(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, n)
	m, _ := io.ReadFull(f, b)
	return b[:m]
}
