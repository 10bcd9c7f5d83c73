package gather

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// Query is which sessions advice is read from, and how.
type Query struct {
	// Project keeps the sessions whose project directory contains it;
	// Since (as the user wrote it) and From the sessions active since.
	Project, Since string
	From           time.Time
	MinSessions    int
	// NoCache reads every session afresh, neither using nor updating the
	// cache.
	NoCache bool
	// Quiet says nothing when no session is found (the caller does).
	Quiet bool
	// Progress, when set, is told how far the reading has come.
	Progress func(Progress)
}

// Advise reads the sessions under root (""; Claude Code's projects
// directory) that q keeps, in parallel (with
// the cache unless q.NoCache), and returns their advice, writing its
// warnings and a line of what it read to log; nil, with a line on log
// unless q.Quiet, when no session is left.
func Advise(root string, q Query, tab *pricing.Table, log io.Writer) (*advice.Result, error) {
	if root == "" {
		var err error
		if root, err = sessionfiles.Root(os.Getenv); err != nil {
			return nil, err
		}
	}
	items, err := Items(root)
	if err != nil {
		return nil, fmt.Errorf("advise: %w", err)
	}
	items = Filter(items, q.Project, q.From)
	if len(items) == 0 {
		if !q.Quiet {
			fmt.Fprintf(log, "tsinspect: no sessions under %s%s\n", root, filterText(q.Project, q.Since))
		}
		return nil, nil
	}
	cachePath := ""
	if !q.NoCache {
		if cachePath, err = CachePath(); err != nil {
			fmt.Fprintf(log, "tsinspect: warning: %v: reading every session\n", err)
		}
	}
	started := time.Now()
	facts, st, err := Read(items, Options{Prices: tab, Cache: cachePath, Progress: q.Progress})
	if err != nil {
		fmt.Fprintf(log, "tsinspect: warning: %v\n", err)
	}
	for _, e := range st.Failed {
		fmt.Fprintf(log, "tsinspect: warning: skipped %v\n", e)
	}
	for _, w := range st.Warnings {
		fmt.Fprintf(log, "tsinspect: warning: %s\n", w)
	}
	if !q.From.IsZero() {
		kept := facts[:0]
		for _, f := range facts {
			if !f.End.Before(q.From) {
				kept = append(kept, f)
			}
		}
		facts = kept
	}
	fmt.Fprintf(log, "read %s (%s) in %s; %d from the cache\n", numfmt.Count(st.Read, "session", "sessions"), numfmt.Bytes(st.Bytes), time.Since(started).Round(time.Millisecond), st.Cached)
	return advice.Advise(facts, advice.Options{MinSessions: q.MinSessions, Prices: tab.Describe()}), nil
}

// ProgressLine draws a Read's progress on the terminal w, redrawn in
// place at most five times a second, and cleared at the end.
func ProgressLine(w io.Writer) func(Progress) {
	last := time.Time{}
	return func(p Progress) {
		if p.Done < p.Total && time.Since(last) < 200*time.Millisecond {
			return
		}
		last = time.Now()
		fmt.Fprintf(w, "\rreading sessions: %d of %d (%s read)\x1b[K", p.Done, p.Total, numfmt.Bytes(p.Bytes))
		if p.Done == p.Total {
			fmt.Fprint(w, "\r\x1b[K")
		}
	}
}

// filterText says which filters left nothing.
func filterText(project, since string) string {
	s := ""
	if project != "" {
		s += fmt.Sprintf(" in a project containing %q", project)
	}
	if since != "" {
		s += " active since " + since
	}
	return s
}
