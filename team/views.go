package team

import (
	"context"
	"fmt"
	"io"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/catalog"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// Catalog reads the sessions f keeps from the store at rawURL as the
// catalog's: a Catalog whose root is the store (its address without a
// password) and whose entries are the sessions, and their summaries, so
// that 'sessions' and 'sessions --by' list them as they list those on
// disk.
func Catalog(ctx context.Context, rawURL string, f Filter) (*catalog.Catalog, []*sessionfiles.Summary, error) {
	s, err := Open(ctx, rawURL)
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	sums, err := s.Summaries(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	c := &catalog.Catalog{Roots: []string{s.Shown()}, Root: s.Shown()}
	for _, sum := range sums {
		c.Entries = append(c.Entries, sessionfiles.Entry{ID: sum.ID, Project: sum.Cwd, ModTime: sum.End})
	}
	return c, sums, nil
}

// List is the catalog's answer to q over the sessions f keeps in the
// store at rawURL (Store.Listing), with a Catalog whose root is the store
// and whose entries are the rows, for 'sessions' to write as it writes
// the listing of the sessions on disk.
func List(ctx context.Context, rawURL string, f Filter, q catalog.Query) (*catalog.Catalog, catalog.Listing, error) {
	s, err := Open(ctx, rawURL)
	if err != nil {
		return nil, catalog.Listing{}, err
	}
	defer s.Close()
	l, err := s.Listing(ctx, f, q)
	if err != nil {
		return nil, catalog.Listing{}, err
	}
	c := &catalog.Catalog{Roots: []string{s.Shown()}, Root: s.Shown()}
	for _, r := range l.Rows {
		c.Entries = append(c.Entries, sessionfiles.Entry{ID: r.ID, Project: r.Cwd, ModTime: r.End})
	}
	return c, l, nil
}

// Advise is the team's advice: that of the facts of the sessions f keeps
// in the store at rawURL, priced as pushed (tab describes the prices the
// result names); nil, with a line on log, when the store holds none.
func Advise(ctx context.Context, rawURL string, f Filter, minSessions int, tab *pricing.Table, log io.Writer) (*advice.Result, error) {
	s, err := Open(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	facts, err := s.Facts(ctx, f)
	if err != nil {
		return nil, err
	}
	if len(facts) == 0 {
		fmt.Fprintf(log, "tsinspect: no sessions with advice facts in %s%s\n", s.Shown(), f.said())
		return nil, nil
	}
	fmt.Fprintf(log, "read the advice facts of %d sessions from %s\n", len(facts), s.Shown())
	return advice.Advise(facts, advice.Options{MinSessions: minSessions, Prices: tab.Describe()}), nil
}

// said is what a filter kept, for the line that says nothing was found.
func (f Filter) said() string {
	s := ""
	if f.Person != "" {
		s += fmt.Sprintf(" of %q", f.Person)
	}
	if f.Project != "" {
		s += fmt.Sprintf(" in a project containing %q", f.Project)
	}
	if !f.Since.IsZero() {
		s += " active since " + f.Since.Format("2006-01-02 15:04")
	}
	return s
}
