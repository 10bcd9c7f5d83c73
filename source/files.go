package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// Files is a Claude Code session read in place from its own session
// files.
type Files struct {
	s *sessionfiles.Session
}

// OpenFiles reads the session whose main file is path.
func OpenFiles(path string) (*Files, error) {
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
	err := f.s.Stream(ctx, fn)
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
//
// A missing file named like the start of a session ID too short to name
// one (sessionfiles.ShortPrefix) is an error saying which sessions it
// could be, when any could.
func Resolve(arg string) (string, error) {
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
	return e.Path, nil
}

// IsSession reports whether src is a Claude Code session read from its
// files.
func IsSession(src Source) bool {
	_, ok := src.(*Files)
	return ok
}

var _ Source = (*Files)(nil)
