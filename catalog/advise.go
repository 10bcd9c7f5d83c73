package catalog

import (
	"fmt"
	"io"
	"time"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/gather"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/timeline"
)

// Progress is how far a reading of facts has come.
type Progress = gather.Progress

// SessionFacts is the advice facts of one session already read (its
// timeline s, and the deferred tools' schemas its reading found:
// source.ReadFileSchemas), as Facts reads them: for a reader that needs
// the timeline for more than the facts.
func SessionFacts(s *timeline.Session, f source.Found, tab *pricing.Table, schemas map[string]int) *advice.Facts {
	return gather.SessionFacts(s, f, tab, schemas)
}

// FactsOptions say how Facts reads.
type FactsOptions struct {
	// Prices prices the facts.
	Prices *pricing.Table
	// NoCache reads every session afresh, neither using nor updating the
	// facts cache (kept beside the listing's index; read and never
	// written when the catalog is read-only).
	NoCache bool
	// Progress, when set, is told how far the reading has come.
	Progress func(Progress)
}

// Found is what q keeps of the sessions and captures found (but .jsonl
// files that are not Claude Code's sessions): the project
// filter as the listing's (a capture has no project), and those written
// at or after q.Since (a session's last write is its end). The other
// bounds need the sessions read (Facts applies them).
func (c *Catalog) Found(q Query) []source.Found {
	var out []source.Found
	for i := range c.Entries {
		e := &c.Entries[i]
		out = append(out, source.Found{Kind: source.KindSession, Path: e.Path, ID: e.ID, Project: e.Project, Size: e.Size, ModTime: e.ModTime, Entry: e})
	}
	out = append(out, c.Captures...)
	kept := out[:0]
	for _, f := range out {
		if f.Foreign() {
			continue
		}
		if !ProjectMatches(q.Project, "", f.Project) {
			continue
		}
		if !q.Since.IsZero() && f.ModTime.Before(q.Since) {
			continue
		}
		kept = append(kept, f)
	}
	return kept
}

// Facts reads the advice facts of the sessions and captures q keeps (see
// Found), in parallel, through the facts cache (unless o.NoCache): only
// the sessions that changed since are read. Sessions that end before
// q.Since or start at or after q.Until are left out once read.
func (c *Catalog) Facts(q Query, o FactsOptions) ([]*advice.Facts, gather.Stats, error) {
	gopts := gather.Options{Prices: o.Prices, ReadOnly: c.readOnly, Progress: o.Progress}
	var warn []string
	if !o.NoCache {
		path, err := gather.CachePath()
		if err != nil {
			warn = append(warn, fmt.Sprintf("%v: reading every session", err))
		}
		gopts.Cache = path
	}
	facts, st, err := gather.Read(c.Found(q), gopts)
	st.Warnings = append(warn, st.Warnings...)
	kept := facts[:0]
	for _, f := range facts {
		if !q.Since.IsZero() && f.End.Before(q.Since) || !q.Until.IsZero() && !f.Start.Before(q.Until) {
			continue
		}
		kept = append(kept, f)
	}
	return kept, st, err
}

// AdviceQuery is which sessions advice is read from, and how.
type AdviceQuery struct {
	// Query keeps the sessions (Project, Since, Until).
	Query
	// SinceText is --since as the user wrote it, for what is said when
	// nothing is left.
	SinceText   string
	MinSessions int
	FactsOptions
	// Quiet says nothing when no session is found (the caller does).
	Quiet bool
}

// Advise opens the catalog of roots (none: Claude Code's projects
// directory), reads the facts of the sessions q keeps (Facts) and returns
// their advice, writing its warnings and a line of what it read to log;
// nil, with a line on log unless q.Quiet, when no session is left.
func Advise(roots []string, q AdviceQuery, log io.Writer) (*advice.Result, error) {
	c, err := Open(Options{NoIndex: true}, roots...)
	if err != nil {
		return nil, fmt.Errorf("advise: %w", err)
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(log, "tsinspect: warning: %s\n", w)
	}
	if len(c.Found(q.Query)) == 0 {
		if !q.Quiet {
			fmt.Fprintf(log, "tsinspect: no sessions under %s%s\n", c.Root, filterText(q.Project, q.SinceText))
		}
		return nil, nil
	}
	started := time.Now()
	facts, st, err := c.Facts(q.Query, q.FactsOptions)
	if err != nil {
		fmt.Fprintf(log, "tsinspect: warning: %v\n", err)
	}
	for _, e := range st.Failed {
		fmt.Fprintf(log, "tsinspect: warning: skipped %v\n", e)
	}
	for _, w := range st.Warnings {
		fmt.Fprintf(log, "tsinspect: warning: %s\n", w)
	}
	fmt.Fprintf(log, "read %s (%s) in %s; %d from the cache\n", numfmt.Count(st.Read, "session", "sessions"), numfmt.Bytes(st.Bytes), time.Since(started).Round(time.Millisecond), st.Cached)
	return advice.Advise(facts, advice.Options{MinSessions: q.MinSessions, Prices: q.Prices.Describe()}), nil
}

// ProgressLine draws a facts reading's progress on the terminal w,
// redrawn in place at most five times a second, and cleared at the end.
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
