// Package catalog is the one road from Claude Code's sessions on disk to
// rows with totals: it finds the sessions under a directory, reads them
// through the listing's index, and answers a Query (which project, since
// and until when, which model, flagged or not, in which order, how many)
// with a Listing: the rows, their totals and the notes on their marks.
// The session listing ('tsinspect sessions', '--by'), 'advise', 'report
// DIR' and the web view's pages are renderers of what it answers; the
// project filter, the order and the notes mean the same in each.
package catalog

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/source"
)

// Sorts are the orders a Query may ask for.
var Sorts = []string{"time", "cost", "flags", "turns"}

// Query says which sessions a listing keeps and how it orders them.
type Query struct {
	// Project keeps the sessions whose project directory holds it: the
	// directory Claude Code ran in, or the name Claude Code gives that
	// directory under projects/ (every character but letters and digits
	// as -). Never the path of the session file (which holds
	// ~/.claude/projects for every session).
	Project string
	// Since and Until keep the sessions active at or after Since and
	// before Until (zero: no bound).
	Since, Until time.Time
	// Model keeps the sessions with an answer of a model whose name holds
	// it (any case).
	Model string
	// Flagged keeps the sessions with a cache break, a blind call, or a
	// search that loaded nothing or part of what it named.
	Flagged bool
	// Sort is one of Sorts ("" for time); Limit keeps the first Limit
	// rows (0: all).
	Sort  string
	Limit int
}

// Check says what is wrong with q's sort and limit, nil when nothing is.
func (q Query) Check() error {
	if q.Sort != "" && !slices.Contains(Sorts, q.Sort) {
		return fmt.Errorf("--sort %q: want %s", q.Sort, strings.Join(Sorts, ", "))
	}
	if q.Limit < 0 {
		return fmt.Errorf("--limit %d: want 0 or more", q.Limit)
	}
	return nil
}

// Keeps reports whether row passes q's filters.
func (q Query) Keeps(r sessionfiles.Row) bool {
	if !ProjectMatches(q.Project, r.Cwd, r.Project) {
		return false
	}
	if !q.Since.IsZero() && r.End.Before(q.Since) {
		return false
	}
	if !q.Until.IsZero() && !r.Start.Before(q.Until) {
		return false
	}
	if q.Model != "" && !slices.ContainsFunc(r.Models, func(m string) bool {
		return strings.Contains(strings.ToLower(m), strings.ToLower(q.Model))
	}) {
		return false
	}
	return !q.Flagged || Flagged(r)
}

// Flagged reports whether a row has something a user should look at: a
// cache break, a blind call, an empty or a partial search.
func Flagged(r sessionfiles.Row) bool {
	return r.CacheBreaks+r.BlindCalls+r.EmptySearches+r.PartialSearches > 0
}

// ProjectMatches is the one project filter: text ("" for any) is in the
// directory the session ran in (cwd), or in projectDir, the name Claude
// Code gives that directory (ProjectDirName of it).
func ProjectMatches(text, cwd, projectDir string) bool {
	if text == "" {
		return true
	}
	return strings.Contains(cwd, text) || strings.Contains(projectDir, text) || strings.Contains(projectDir, ProjectDirName(text))
}

// ProjectDirName writes text as Claude Code names a project's directory
// under projects/: every character but ASCII letters and digits as -.
func ProjectDirName(text string) string {
	b := []byte(text)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// KeepsSummary reports whether the session of s passes q's project filter
// (what a sum over periods of the sessions' answers filters on).
func (q Query) KeepsSummary(s *sessionfiles.Summary) bool {
	return ProjectMatches(q.Project, s.Cwd, s.Project)
}

// Totals are what the rows of a listing add up to.
type Totals struct {
	Sessions, Turns int
	CostUSD         float64
	BreaksUSD       float64
	// Mark is "≥" when the cost is a lower bound (a model with no price,
	// usage that could not be read, placeholder output tokens), "≈" when
	// some answers were priced as a neighbour, "" otherwise.
	Mark string
	// Estimated names the models priced as a neighbour, Unpriced those
	// with no price.
	Estimated, Unpriced []string
	// Newest is the end of the newest session.
	Newest time.Time
}

// Listing is a query's answer: the rows in order, their totals and the
// notes that explain the rows' marks.
type Listing struct {
	Rows   []sessionfiles.Row
	Totals Totals
	Notes  []string
}

// List works out the rows of sums at tab's prices (files that hold no
// conversation left out), keeps those q keeps, in q's order, and totals
// them.
func List(sums []*sessionfiles.Summary, tab *pricing.Table, q Query) Listing {
	rows := Select(sessionfiles.Rows(sums, tab), q)
	return Listing{Rows: rows, Totals: Total(rows), Notes: MarkNotes(rows)}
}

// Select keeps the rows q keeps, in q's order, the first q.Limit of them.
func Select(all []sessionfiles.Row, q Query) []sessionfiles.Row {
	var rows []sessionfiles.Row
	for _, r := range all {
		if q.Keeps(r) {
			rows = append(rows, r)
		}
	}
	sort := q.Sort
	if sort == "" {
		sort = "time"
	}
	sessionfiles.SortRows(rows, sort)
	if q.Limit > 0 && len(rows) > q.Limit {
		rows = rows[:q.Limit]
	}
	return rows
}

// Total adds rows up.
func Total(rows []sessionfiles.Row) Totals {
	var t Totals
	lower := false
	for _, r := range rows {
		t.Sessions++
		t.Turns += r.Turns
		t.CostUSD += r.CostUSD
		t.BreaksUSD += r.BreaksUSD
		for _, m := range r.PricedAs {
			if !slices.Contains(t.Estimated, m) {
				t.Estimated = append(t.Estimated, m)
			}
		}
		for _, m := range r.Unpriced {
			if !slices.Contains(t.Unpriced, m) {
				t.Unpriced = append(t.Unpriced, m)
			}
		}
		lower = lower || !r.CostKnown || r.OutputPlaceholders > 0
		if r.End.After(t.Newest) {
			t.Newest = r.End
		}
	}
	slices.Sort(t.Estimated)
	slices.Sort(t.Unpriced)
	switch {
	case lower || len(t.Unpriced) > 0:
		t.Mark = "≥"
	case len(t.Estimated) > 0:
		t.Mark = "≈"
	}
	return t
}

// MarkNotes are the lines that explain the marks of rows (*, COST ≥,
// AGENTS †, BLIND -), for each mark a row has.
func MarkNotes(rows []sessionfiles.Row) []string {
	var starred, dashed, orphans, placeholders int
	for _, r := range rows {
		placeholders += r.OutputPlaceholders
		if !r.Requests {
			starred++
		}
		if r.SubagentsOnly {
			orphans++
		}
		if !r.CatalogRecorded {
			dashed++
		}
	}
	var notes []string
	if starred > 0 {
		notes = append(notes, "*: no request records (Claude Code before 2.1.300, or the records were off): read from the transcript, without the system prompt or the tools sent")
	}
	if placeholders > 0 {
		notes = append(notes, fmt.Sprintf("COST ≥: %s whose output tokens are the placeholder Claude Code wrote when the answer began (Claude Code up to 2.1.52 writes no final count in its files): the cost is a lower bound", numfmt.Count(placeholders, "answer", "answers")))
	}
	if orphans > 0 {
		notes = append(notes, "AGENTS †: the session's main file is absent: read from its subagents' files alone")
	}
	if dashed > 0 {
		notes = append(notes, "BLIND -: the release wrote no deferred-tool catalog, so no call can be told to be blind")
	}
	return notes
}

// Options say how Open finds and reads the sessions.
type Options struct {
	// NoIndex reads every session afresh, neither using nor updating the
	// index; Index names the index file ("" for the user's cache
	// directory's); ReadOnly reads the index and never writes it (the
	// web view writes nothing).
	NoIndex  bool
	Index    string
	ReadOnly bool
	// Getenv reads the environment (CLAUDE_CONFIG_DIR, HOME, the cache
	// directory's variables); nil for os.Getenv.
	Getenv func(string) string
}

// Catalog is the sessions found under one or more directories, with the
// index they are read through.
type Catalog struct {
	// Roots are the directories (or session files) listed, Root the
	// first; Entries the sessions found in them, newest first, each once.
	Roots   []string
	Root    string
	Entries []sessionfiles.Entry
	// Captures are the capture files found in the roots, newest first:
	// what advice reads besides the sessions (the listing is of Claude
	// Code's sessions).
	Captures []source.Found
	// Warnings say what was passed over or could not be used (an
	// unreadable directory, an index that cannot be kept), each a line.
	Warnings []string
	ix       *sessionfiles.Index
	readOnly bool
}

// Open finds the sessions under roots (none: Claude Code's own, the
// projects directory of $CLAUDE_CONFIG_DIR or ~/.claude). A root that
// cannot be listed is an error.
func Open(o Options, roots ...string) (*Catalog, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if len(roots) == 0 {
		r, err := sessionfiles.Root(getenv)
		if err != nil {
			return nil, err
		}
		roots = []string{r}
	}
	c := &Catalog{Roots: roots, Root: roots[0], readOnly: o.ReadOnly}
	if err := c.find(true); err != nil {
		return nil, err
	}
	ixPath := o.Index
	if !o.NoIndex && ixPath == "" {
		var err error
		if ixPath, err = sessionfiles.IndexPath(); err != nil {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%v: reading every session", err))
		}
	}
	if o.NoIndex {
		ixPath = ""
	}
	if dir, in := sessionfiles.Inside(ixPath, getenv); ixPath != "" && in {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the session index %s would be in Claude Code's directory %s, which tsinspect never writes into: reading every session", ixPath, dir))
		ixPath = ""
	}
	c.ix = sessionfiles.LoadIndex(ixPath)
	if n := c.ix.Notice(); n != nil {
		// A damaged or foreign index, read afresh and rebuilt: said once.
		c.Warnings = append(c.Warnings, n.Error())
	}
	if len(roots) == 1 && !c.readOnly {
		c.ix.Prune(c.Root, c.Entries)
	}
	return c, nil
}

// Refresh finds the sessions again (those written since, and gone): a root
// that cannot be listed now is a warning, its sessions left out.
func (c *Catalog) Refresh() {
	c.Warnings = nil
	_ = c.find(false)
}

// find lists the roots through the kinds of source (source.Find); with
// strict the first failure is the error.
func (c *Catalog) find(strict bool) error {
	f, err := source.Find(strict, c.Roots...)
	if err != nil {
		return err
	}
	c.Warnings = append(c.Warnings, f.Skipped...)
	c.Entries = f.Sessions()
	c.Captures = nil
	for _, x := range f.Found {
		if x.Entry == nil {
			c.Captures = append(c.Captures, x)
		}
	}
	return nil
}

// Summaries reads every session found (those unchanged since the index
// kept them from it) and saves the index unless it is read-only; what
// could not be read is in the stats' Failed, what could not be saved a
// warning.
func (c *Catalog) Summaries(progress func(done, total int)) ([]*sessionfiles.Summary, sessionfiles.ScanStats) {
	return c.Read(c.Entries, progress)
}

// OpenRead opens the catalog of roots (Open) and reads the summaries of
// its sessions (Summaries), writing its warnings and each session it
// could not read to log as warnings.
func OpenRead(log io.Writer, o Options, roots ...string) (*Catalog, []*sessionfiles.Summary, sessionfiles.ScanStats, error) {
	c, err := Open(o, roots...)
	if err != nil {
		return nil, nil, sessionfiles.ScanStats{}, err
	}
	sums, st := c.Summaries(nil)
	for _, w := range c.Warnings {
		fmt.Fprintf(log, "tsinspect: warning: %s\n", w)
	}
	for _, e := range st.Failed {
		fmt.Fprintf(log, "tsinspect: warning: %v\n", e)
	}
	return c, sums, st, nil
}

// Read is Summaries of some of the sessions found (those a front end's
// bounds keep).
func (c *Catalog) Read(entries []sessionfiles.Entry, progress func(done, total int)) ([]*sessionfiles.Summary, sessionfiles.ScanStats) {
	sums, st := sessionfiles.Scan(entries, c.ix, progress)
	if !c.readOnly {
		if err := c.ix.Save(); err != nil {
			c.Warnings = append(c.Warnings, err.Error())
		}
	}
	return sums, st
}
