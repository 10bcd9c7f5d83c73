package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// Files is a Claude Code session read in place from its own session
// files.
type Files struct {
	s *sessionfiles.Session
}

// OpenFiles reads the session whose main file is path. A file that does
// not read as a session file is an error that says what it holds instead.
func OpenFiles(path string) (*Files, error) {
	// An empty file is a session with nothing in it yet.
	info, err := os.Stat(path)
	empty := err == nil && info.Mode().IsRegular() && info.Size() == 0
	if err := sessionfiles.Recognise(path); err != nil && !empty {
		if errors.Is(err, sessionfiles.ErrNotSession) {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return nil, err
	}
	s, err := sessionfiles.Open(path)
	if err != nil {
		return nil, err
	}
	// Read whole and never read on: what only reading on needs goes.
	s.Release()
	return &Files{s: s}, nil
}

// Session is what the files held.
func (f *Files) Session() *sessionfiles.Session { return f.s }

// Name is the main file's path.
func (f *Files) Name() string { return f.s.Path }

// Stream hands every request the files hold, rebuilt, to fn.
func (f *Files) Stream(ctx context.Context, fn func(*exchange.Exchange) error) ([]Problem, error) {
	err := f.s.Stream(ctx, fn)
	return f.problems(), err
}

// StreamMade is Stream handing each request made from the transcript as
// the parts it is made of (see MadeStreamer).
func (f *Files) StreamMade(ctx context.Context, fn func(*exchange.Exchange) error) ([]Problem, error) {
	err := f.s.StreamMade(ctx, fn)
	return f.problems(), err
}

func (f *Files) problems() []Problem {
	var ps []Problem
	for _, p := range f.s.Problems {
		ps = append(ps, Problem{Problem: p.String()})
	}
	if n := f.s.Voids(); n > 0 {
		ps = append(ps, Problem{Problem: fmt.Sprintf("%d request records hold nothing (no shape in the files, no messages, no answer): left out", n)})
	}
	if f.s.MoreProblems > 0 {
		ps = append(ps, Problem{Problem: fmt.Sprintf("and %d more problems", f.s.MoreProblems)})
	}
	if u := sessionfiles.UnknownSummary(f.s.Unknown, f.s.Version); u != "" {
		ps = append(ps, Problem{Problem: u})
	}
	return ps
}

// Get rebuilds one exchange.
func (f *Files) Get(_ context.Context, id int64) (*exchange.Exchange, error) { return f.s.Get(id) }

// Close does nothing: the files are read whole when opened.
func (f *Files) Close() error { return nil }

// Resolve is the file arg names: itself when it exists (or does not look
// like a session), else the main file of the Claude Code session it names.
// For "latest", the newer sessions passed over because they could not be
// read are named in one warning line on warn (nil: not named).
//
// A missing file named like the start of a session ID too short to name
// one (sessionfiles.ShortPrefix) is an error saying which sessions it
// could be, when any could.
func Resolve(arg string, warn io.Writer) (string, error) {
	_, statErr := os.Stat(arg)
	if statErr != nil && sessionfiles.ShortPrefix(arg) {
		if root, err := sessionfiles.Root(os.Getenv); err == nil {
			if err := sessionfiles.TooShort(root, arg); err != nil {
				return "", err
			}
		}
	}
	if statErr == nil || !sessionfiles.LooksLikeSession(arg) || strings.ContainsRune(arg, filepath.Separator) {
		return arg, nil
	}
	root, err := sessionfiles.Root(os.Getenv)
	if err != nil {
		return "", err
	}
	e, err := sessionfiles.Resolve(root, arg)
	if err != nil {
		return "", err
	}
	if len(e.Passed) > 0 && warn != nil {
		var ps []Problem
		for _, p := range e.Passed {
			ps = append(ps, Problem{Problem: p.File + ": " + p.What})
		}
		fmt.Fprintf(warn, "tsinspect: warning: %s: passed over %d newer %s that cannot be read: %s\n", arg, len(e.Passed), numfmt.Plural(len(e.Passed), "session", "sessions"), Summary(ps))
	}
	return e.Path, nil
}

// IsSessionFile reports whether path names a Claude Code session file (a
// .jsonl file, or one that does not exist yet: one to wait for), which is
// read as one or refused with what it holds instead, never taken for a
// capture.
func IsSessionFile(path string) bool {
	return strings.HasSuffix(path, ".jsonl")
}

var _ Source = (*Files)(nil)
