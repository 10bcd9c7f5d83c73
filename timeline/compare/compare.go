// Package compare sets two sessions side by side: a summary of their
// figures, the shape of the requests they sent (betas, system blocks, tool
// definitions, catalog, announcement, parameters), their turns aligned per
// thread with what differs in each pair, and, for the tools a caller picks,
// how each was searched for and found on either side.
//
// Identifiers (message, request and tool_use ids), times and signatures
// never count as differences. Turns are aligned per thread by order and
// content, so a turn one side has and the other lacks shows as inserted
// or deleted rather than making every later turn differ.
//
// It reads two [timeline.Session] values and does no I/O.
package compare

import (
	"slices"
	"sort"

	"github.com/tsinspect/tsinspect/coverage"
	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/timeline"
)

// Side is one of the two sessions, with what the caller priced.
type Side struct {
	Session *timeline.Session
	// Cost prices a turn in US dollars (ok false: not priced); nil when
	// the caller priced nothing.
	Cost func(t *timeline.Turn) (usd float64, ok bool)
	// CacheBreaksUSD and BlindCallsUSD are what the caller priced the
	// session's cache breaks and blind calls at (parts of its cost).
	CacheBreaksUSD, BlindCallsUSD float64
}

// Options tune Compare.
type Options struct {
	// Tools, when set, picks the tools whose searches Diff.Tools compares
	// (tsinspect diff --tools PREFIX).
	Tools func(name string) bool
}

// Diff is what two sessions have in common and what differs.
type Diff struct {
	// Summary lists the sessions' figures side by side.
	Summary []Figure `json:"summary"`
	// Shape lists the changes in the requests' shape, per thread pair.
	Shape []Change `json:"shape"`
	// Threads aligns the threads and, within each pair, the turns.
	Threads []ThreadDiff `json:"threads"`
	// Tools compares, per tool Options.Tools picked, its searches.
	Tools []ToolDiff `json:"tools,omitempty"`
	// Same is set when nothing tsinspect compares differs.
	Same bool `json:"same"`
}

// Figure units.
const (
	UnitCount  = "count"
	UnitTokens = "tokens"
	UnitUSD    = "usd"
	UnitList   = "list"
)

// Figure is one figure of each session. For UnitList, AText and BText
// hold the values; otherwise A and B.
type Figure struct {
	Name    string  `json:"name"`
	Unit    string  `json:"unit"`
	A       float64 `json:"a"`
	B       float64 `json:"b"`
	AText   string  `json:"a_text,omitempty"`
	BText   string  `json:"b_text,omitempty"`
	Differs bool    `json:"differs"`
}

// Areas of a request-shape change.
const (
	AreaClient       = "client"
	AreaModel        = "model"
	AreaBetas        = "betas"
	AreaSystem       = "system"
	AreaTools        = "tools"
	AreaCatalog      = "catalog"
	AreaAnnouncement = "announcement"
	AreaParams       = "params"
)

// Change is one difference in the shape of the requests, as the first
// turn of a thread pair sent it.
type Change struct {
	// Threads are the thread pairs ("main", "sub1/sub2" when the ids
	// differ) whose first requests show the change.
	Threads []string `json:"threads"`
	Area    string   `json:"area"`
	// Item names what changed: a beta, "block 2", a tool, a parameter.
	Item string `json:"item"`
	// Op is "added" (in B only), "removed" (in A only) or "changed".
	Op string `json:"op"`
	// A and B are the values, when short enough to show.
	A string `json:"a,omitempty"`
	B string `json:"b,omitempty"`
	// Detail says more: "+120 tokens", "description, schema".
	Detail string `json:"detail,omitempty"`
	// Lines are the lines that changed, for a changed system block or
	// tool description: "- " A's, "+ " B's, a few of them, each cut to
	// what a line shows around where it changed.
	Lines []string `json:"lines,omitempty"`
	// Added and Removed are the names a changed catalog has in B only and
	// in A only.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// Row operations.
const (
	OpSame     = "same"
	OpChanged  = "changed"
	OpInserted = "inserted" // a turn of B with no counterpart in A
	OpDeleted  = "deleted"  // a turn of A with no counterpart in B
)

// ThreadDiff is a pair of threads (or a thread of one side only) and its
// turns aligned.
type ThreadDiff struct {
	A    string `json:"a"` // thread id in A, "" when B's thread has no counterpart
	B    string `json:"b"`
	Kind string `json:"kind"`
	Rows []Row  `json:"rows"`
}

// Row is a run of aligned turns: identical pairs folded into one row
// (Count of them), or one changed pair, or inserted or deleted turns.
// Turn indexes are 1-based capture indexes; 0 on the side that has none.
type Row struct {
	Op     string  `json:"op"`
	AFirst int     `json:"a_first"`
	ALast  int     `json:"a_last"`
	BFirst int     `json:"b_first"`
	BLast  int     `json:"b_last"`
	Count  int     `json:"count"`
	Fields []Field `json:"fields,omitempty"`
	// What sums up an inserted or deleted turn: its model, searches and
	// calls.
	What string `json:"what,omitempty"`
}

// Field is one difference of an aligned pair of turns.
type Field struct {
	Name string `json:"name"`
	A    string `json:"a"`
	B    string `json:"b"`
	// Added and Removed are, for a list (catalog, working set), the names
	// B's has and A's lacks, and the other way round; B ends with them.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// ToolDiff is how one tool was searched for and found on each side.
type ToolDiff struct {
	Name    string   `json:"name"`
	A       ToolSide `json:"a"`
	B       ToolSide `json:"b"`
	Differs bool     `json:"differs"`
}

// ToolSide is what happened to a tool in one session.
type ToolSide struct {
	Present  bool     `json:"present"`
	Deferred bool     `json:"deferred"`
	FoundBy  []string `json:"found_by"`  // the queries whose results held it, in order, once each
	MissedBy []string `json:"missed_by"` // select: queries that named it and did not load it
	Loaded   bool     `json:"loaded"`
	Calls    int      `json:"calls"`
	Blind    int      `json:"blind"`
}

// Compare sets a and b side by side.
func Compare(a, b Side, opts Options) *Diff {
	fa, fb := factsOf(a), factsOf(b)
	d := &Diff{Summary: summary(a, b, fa, fb), Shape: []Change{}, Threads: []ThreadDiff{}}
	pairs := pairThreads(a.Session, b.Session)
	for _, p := range pairs {
		d.Threads = append(d.Threads, threadDiff(p, fa, fb))
		if p.a != nil && p.b != nil {
			d.Shape = mergeChanges(d.Shape, shapeChanges(p, a.Session, b.Session))
		}
	}
	if opts.Tools != nil {
		d.Tools = tools(a.Session, b.Session, opts.Tools)
	}
	d.Same = true
	for _, f := range d.Summary {
		d.Same = d.Same && !f.Differs
	}
	d.Same = d.Same && len(d.Shape) == 0
	for _, t := range d.Threads {
		for _, r := range t.Rows {
			d.Same = d.Same && r.Op == OpSame
		}
	}
	for _, t := range d.Tools {
		d.Same = d.Same && !t.Differs
	}
	return d
}

// threadPair is a thread of A and its counterpart in B (either may be nil).
type threadPair struct {
	a, b *timeline.Thread
}

// pairThreads pairs the threads of each kind in order of their first
// turn: A's first subagent with B's first subagent, and so on.
func pairThreads(a, b *timeline.Session) []threadPair {
	byKind := func(s *timeline.Session) map[string][]*timeline.Thread {
		m := map[string][]*timeline.Thread{}
		for _, t := range s.Threads {
			m[t.Kind] = append(m[t.Kind], t)
		}
		return m
	}
	ka, kb := byKind(a), byKind(b)
	var out []threadPair
	used := map[*timeline.Thread]bool{}
	for _, t := range a.Threads {
		i := slices.Index(ka[t.Kind], t)
		p := threadPair{a: t}
		if i < len(kb[t.Kind]) {
			p.b = kb[t.Kind][i]
			used[p.b] = true
		}
		out = append(out, p)
	}
	for _, t := range b.Threads {
		if !used[t] {
			out = append(out, threadPair{b: t})
		}
	}
	return out
}

// pairName names a thread pair: "main", or "sub1/sub2" when the ids differ.
func pairName(p threadPair) string {
	switch {
	case p.a == nil:
		return p.b.ID
	case p.b == nil || p.a.ID == p.b.ID:
		return p.a.ID
	}
	return p.a.ID + "/" + p.b.ID
}

func mergeChanges(have, add []Change) []Change {
	for _, c := range add {
		found := false
		for i := range have {
			h := &have[i]
			if h.Area == c.Area && h.Item == c.Item && h.Op == c.Op && h.A == c.A && h.B == c.B && h.Detail == c.Detail && slices.Equal(h.Lines, c.Lines) {
				h.Threads = append(h.Threads, c.Threads...)
				found = true
				break
			}
		}
		if !found {
			have = append(have, c)
		}
	}
	return have
}

// tools compares the searches that found each picked tool.
func tools(a, b *timeline.Session, match func(string) bool) []ToolDiff {
	side := func(s *timeline.Session) map[string]ToolSide {
		_, ts := coverage.Of(s, coverage.Options{Match: match})
		m := map[string]ToolSide{}
		for _, t := range ts {
			ts := ToolSide{Present: true, Deferred: t.Deferred, Loaded: t.FirstLoaded > 0, Calls: t.Calls, Blind: t.Blind,
				FoundBy: []string{}, MissedBy: []string{}}
			for _, sr := range t.FoundBy {
				if !slices.Contains(ts.FoundBy, sr.Query) {
					ts.FoundBy = append(ts.FoundBy, sr.Query)
				}
			}
			for _, sr := range t.MissedBy {
				if !slices.Contains(ts.MissedBy, sr.Query) {
					ts.MissedBy = append(ts.MissedBy, sr.Query)
				}
			}
			m[t.Name] = ts
		}
		return m
	}
	ma, mb := side(a), side(b)
	names := map[string]bool{}
	for n := range ma {
		names[n] = true
	}
	for n := range mb {
		names[n] = true
	}
	var out []ToolDiff
	for n := range names {
		ta, tb := ma[n], mb[n]
		differs := ta.Present != tb.Present || ta.Deferred != tb.Deferred || ta.Loaded != tb.Loaded ||
			ta.Calls != tb.Calls || ta.Blind != tb.Blind ||
			!slices.Equal(ta.FoundBy, tb.FoundBy) || !slices.Equal(ta.MissedBy, tb.MissedBy)
		out = append(out, ToolDiff{Name: n, A: ta, B: tb, Differs: differs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// isMessages reports whether t is a Messages API turn with a decoded
// request.
func isMessages(t *timeline.Turn) bool {
	return t != nil && t.Decoded != nil && t.Decoded.Request.Kind == decode.KindMessages
}
