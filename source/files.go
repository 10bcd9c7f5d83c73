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
	if err := sessionfiles.Recognise(path); err != nil {
		if errors.Is(err, sessionfiles.ErrNotSession) {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return nil, err
	}
	s, err := sessionfiles.Open(path)
	if err != nil {
		return nil, err
	}
	return &Files{s: s}, nil
}

// Session is what the files held.
func (f *Files) Session() *sessionfiles.Session { return f.s }

// Name is the main file's path.
func (f *Files) Name() string { return f.s.Path }

// Stream hands every request the files hold, rebuilt, to fn.
func (f *Files) Stream(ctx context.Context, fn func(*exchange.Exchange) error) ([]Problem, error) {
	if !f.s.Requests {
		return f.problems(), fmt.Errorf("%s: %w", f.s.Path, ErrNoRequests)
	}
	err := f.s.Stream(ctx, fn)
	return f.problems(), err
}

func (f *Files) problems() []Problem {
	var ps []Problem
	for _, p := range f.s.Problems {
		ps = append(ps, Problem{Problem: p.String()})
	}
	if u := sessionfiles.UnknownSummary(f.s.Unknown); u != "" {
		ps = append(ps, Problem{Problem: u})
	}
	return ps
}

// Get rebuilds one exchange.
func (f *Files) Get(_ context.Context, id int64) (*exchange.Exchange, error) { return f.s.Get(id) }

// Close does nothing: the files are read whole when opened.
func (f *Files) Close() error { return nil }

// ErrNoRequests is returned for session files without request records.
var ErrNoRequests = errors.New("the session files hold no request records (Claude Code before 2.1.300, or the records were off): the requests, catalog and working set are not in them; 'tsinspect sessions' shows what they hold")

// Open opens what a command was given: a capture file, or a Claude Code
// session (a .jsonl path, "latest", a session ID or a prefix of one, found
// under the directory sessionfiles.Root names).
func Open(arg string) (Source, error) {
	path, err := Resolve(arg, nil)
	if err != nil {
		return nil, err
	}
	if IsSessionFile(path) {
		return OpenFiles(path)
	}
	return OpenCapture(path)
}

// Resolve is the file arg names: itself when it exists (or does not look
// like a session), else the main file of the Claude Code session it names.
// For "latest", the newer sessions passed over because they could not be
// read are named in one warning line on warn (nil: not named).
func Resolve(arg string, warn io.Writer) (string, error) {
	if _, err := os.Stat(arg); err == nil || !sessionfiles.LooksLikeSession(arg) || strings.ContainsRune(arg, filepath.Separator) {
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

// IsSession reports whether src is a Claude Code session read from its
// files.
func IsSession(src Source) bool {
	_, ok := src.(*Files)
	return ok
}

var _ Source = (*Files)(nil)
