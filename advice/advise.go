package advice

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
)

// DefaultMinSessions is how many sessions a piece of advice must rest on
// unless Options say otherwise: one session is no pattern.
const DefaultMinSessions = 3

// Options tune Advise.
type Options struct {
	// MinSessions is how many sessions a piece of advice must rest on;
	// 0 means DefaultMinSessions.
	MinSessions int
	// Prices describes the price table the facts were priced at
	// (pricing.Table.Describe), for the result to say.
	Prices string
}

// Result is the advice across many sessions.
type Result struct {
	// Sessions counts the sessions read, Turns their turns, USD what they
	// cost; From and To span their starts and ends.
	Sessions int       `json:"sessions"`
	Turns    int       `json:"turns"`
	USD      float64   `json:"usd"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Prices   string    `json:"prices,omitempty"`
	// MinSessions is the threshold applied.
	MinSessions int `json:"min_sessions"`
	// Advice lists the advice, by kind (Kinds order), each kind's by what
	// it saves.
	Advice []Advice `json:"advice"`
	// Totals are what each kind of pattern cost or would save over all
	// the sessions read, advised or not, the largest first.
	Totals []Total `json:"totals"`
	// Tools and Servers are what each tool, and each MCP server's tools,
	// did and cost (CostsBy), the costliest first.
	Tools   []ToolCost `json:"tools"`
	Servers []ToolCost `json:"servers"`
	// LeftOut lists what would be advice but rests on too few sessions,
	// or does not pay.
	LeftOut []LeftOut `json:"left_out"`
	// Notes say what limits the figures (sessions made from transcripts
	// alone, models without a price).
	Notes []string `json:"notes"`
}

// Advice is one thing to change.
type Advice struct {
	Kind string `json:"kind"`
	// Subject is what it is about: a tool, an MCP server, a cause, a
	// setting.
	Subject string `json:"subject"`
	// Title says what to do in one line; Do says how.
	Title string `json:"title"`
	Do    string `json:"do"`
	// Why is the pattern seen, with its counts.
	Why string `json:"why"`
	// Sessions is how many sessions it rests on, Of how many it could
	// have shown in (e.g. the sessions that used the tool).
	Sessions int `json:"sessions"`
	Of       int `json:"of"`
	// SavesUSD is what following it saves over the sessions read
	// (negative: what it costs); CostUSD what the pattern cost in them
	// (what was paid), for the kinds that count a cost; an item may
	// carry both (a cost, and what a change would save of it). Tokens
	// are the tokens behind the headline figure. PerSessionUSD is the
	// headline figure per session it rests on.
	SavesUSD      float64 `json:"saves_usd,omitempty"`
	CostUSD       float64 `json:"cost_usd,omitempty"`
	Tokens        int64   `json:"tokens"`
	PerSessionUSD float64 `json:"per_session_usd"`
	// PerMonthUSD, when set, is what it saves over the 30 days up to the
	// newest session read.
	PerMonthUSD *float64 `json:"per_month_usd,omitempty"`
	// PerMonthSessions counts the sessions of those 30 days it rests on.
	PerMonthSessions int `json:"per_month_sessions,omitempty"`
	// Figures say how the figure is made, a line each; Assumes states its
	// assumptions in one line. Estimated: it rests on estimated sizes.
	Figures   []string `json:"figures"`
	Assumes   string   `json:"assumes"`
	Estimated bool     `json:"estimated,omitempty"`
	// Evidence names the sessions, and their turns, it rests on.
	Evidence []Evidence `json:"evidence"`
}

// Evidence is one session behind a piece of advice.
type Evidence struct {
	// Session is the session's ID (or a capture's path); Open is what
	// 'tsinspect open' takes: the shortest prefix of the ID, 8
	// characters at least, that no other session read shares.
	Session string `json:"session"`
	Open    string `json:"open"`
	Project string `json:"project,omitempty"`
	// Turns are the turns that show it (1-based, as in the timeline).
	Turns []int `json:"turns,omitempty"`
	// Note says what the session shows, briefly.
	Note string `json:"note,omitempty"`
	// USD is the session's share of the figure.
	USD float64 `json:"usd"`
	// Link, when set, is where a view shows the session at its first
	// turn (the web view's address); the HTML writers make it a link.
	Link string `json:"link,omitempty"`
}

// LeftOut is what would be advice but is not given.
type LeftOut struct {
	Kind     string `json:"kind"`
	Subject  string `json:"subject"`
	Sessions int    `json:"sessions"`
	// Reason: "too few sessions" or why it does not pay.
	Reason string `json:"reason"`
}

// Advise reads facts of many sessions for advice. A piece of advice rests
// on at least Options.MinSessions sessions; what rests on fewer is listed
// in LeftOut.
func Advise(facts []*Facts, o Options) *Result {
	if o.MinSessions <= 0 {
		o.MinSessions = DefaultMinSessions
	}
	r := &Result{Prices: o.Prices, MinSessions: o.MinSessions, Advice: []Advice{}, LeftOut: []LeftOut{}, Notes: []string{}}
	var fs []*Facts
	transcript, unpriced := 0, 0
	for _, f := range facts {
		if f == nil {
			continue
		}
		fs = append(fs, f)
		r.Sessions++
		r.Turns += f.Turns
		r.USD += f.USD
		if !f.Start.IsZero() && (r.From.IsZero() || f.Start.Before(r.From)) {
			r.From = f.Start
		}
		if f.End.After(r.To) {
			r.To = f.End
		}
		if f.Turns > 0 && f.Transcript == f.Turns {
			transcript++
		}
		unpriced += f.Unpriced
	}
	if transcript > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s made from the transcript alone (Claude Code before 2.1.300, or its request records off): the tools each request sent are not known, so they count in what needs no tools (searches, blind calls, cache breaks) but not in schema sizes or deferral savings",
			numfmt.Count(transcript, "session was", "sessions were")))
	}
	if unpriced > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s of a model with no price count as $0", numfmt.Count(unpriced, "turn", "turns")))
	}
	a := &adviser{fs: fs, o: o, r: r, newest: r.To}
	for _, k := range kinds {
		k.find(a)
	}
	prefixes := openPrefixes(fs)
	for i := range r.Advice {
		for j := range r.Advice[i].Evidence {
			e := &r.Advice[i].Evidence[j]
			e.Open = prefixes[e.Session]
			if e.Open == "" {
				e.Open = e.Session
			}
		}
	}
	order := map[string]int{}
	for i, k := range Kinds() {
		order[k] = i
	}
	// By money, whatever the kind: the largest amount first.
	sort.SliceStable(r.Advice, func(i, j int) bool {
		ai, aj := r.Advice[i], r.Advice[j]
		if ai.Amount() != aj.Amount() {
			return ai.Amount() > aj.Amount()
		}
		if ai.Kind != aj.Kind {
			return order[ai.Kind] < order[aj.Kind]
		}
		return ai.Subject < aj.Subject
	})
	r.Totals = totals(fs)
	r.Tools, r.Servers = CostsBy(fs, ByTool), CostsBy(fs, ByServer)
	sort.SliceStable(r.LeftOut, func(i, j int) bool {
		li, lj := r.LeftOut[i], r.LeftOut[j]
		if li.Kind != lj.Kind {
			return order[li.Kind] < order[lj.Kind]
		}
		return li.Subject < lj.Subject
	})
	return r
}

// Amount is the figure a piece of advice is ordered by: the larger of
// what it saves and what the pattern cost.
func (a Advice) Amount() float64 { return max(a.SavesUSD, a.CostUSD) }

// openPrefixes gives each session ID its shortest prefix of 8
// characters or more that no other ID of fs starts with (the whole ID
// when it is a prefix of another).
func openPrefixes(fs []*Facts) map[string]string {
	ids := make([]string, 0, len(fs))
	for _, f := range fs {
		ids = append(ids, f.ID)
	}
	sort.Strings(ids)
	ids = slices.Compact(ids)
	common := func(a, b string) int {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		return n
	}
	out := make(map[string]string, len(ids))
	for i, id := range ids {
		need := 8
		if i > 0 {
			need = max(need, common(ids[i-1], id)+1)
		}
		if i+1 < len(ids) {
			need = max(need, common(ids[i+1], id)+1)
		}
		out[id] = id[:min(need, len(id))]
	}
	return out
}

// adviser holds the state of one Advise.
type adviser struct {
	fs     []*Facts
	o      Options
	r      *Result
	newest time.Time
}

// enough reports whether n sessions are enough to advise from; when they
// are not, it lists the would-be advice as left out.
func (a *adviser) enough(kind, subject string, n int) bool {
	if n >= a.o.MinSessions {
		return true
	}
	if n > 0 {
		a.r.LeftOut = append(a.r.LeftOut, LeftOut{Kind: kind, Subject: subject, Sessions: n,
			Reason: fmt.Sprintf("rests on %s, fewer than %d", numfmt.Count(n, "session", "sessions"), a.o.MinSessions)})
	}
	return false
}

// monthly sums per-session figures over the sessions of the 30 days up
// to the newest one read, and counts them.
func (a *adviser) monthly(perSession map[*Facts]float64) (*float64, int) {
	if a.newest.IsZero() {
		return nil, 0
	}
	from := a.newest.Add(-30 * 24 * time.Hour)
	sum, n := 0.0, 0
	for _, f := range inOrder(a.fs, perSession) {
		if !f.End.Before(from) {
			sum += perSession[f]
			n++
		}
	}
	return &sum, n
}

// inOrder lists the keys of m in the order of fs, so that sums over
// them come out the same on every run.
func inOrder[T any](fs []*Facts, m map[*Facts]T) []*Facts {
	out := make([]*Facts, 0, len(m))
	for _, f := range fs {
		if _, ok := m[f]; ok {
			out = append(out, f)
		}
	}
	return out
}

// breakEvidence is the evidence of breaks by session, the costliest first:
// each session's turns and what its breaks cost, with note's words on its
// breaks (nil: none).
func breakEvidence(fs []*Facts, hits map[*Facts][]Break, note func([]Break) string) []Evidence {
	var ev []Evidence
	for _, f := range inOrder(fs, hits) {
		e := Evidence{Session: f.ID, Project: f.Project}
		for _, b := range hits[f] {
			e.Turns = append(e.Turns, b.Turn)
			e.USD += b.USD
		}
		if note != nil {
			e.Note = note(hits[f])
		}
		ev = append(ev, e)
	}
	return evidence(ev)
}

// evidence lists the sessions behind a piece of advice, the costliest
// first.
func evidence(ev []Evidence) []Evidence {
	sort.SliceStable(ev, func(i, j int) bool {
		if ev[i].USD != ev[j].USD {
			return ev[i].USD > ev[j].USD
		}
		return ev[i].Session < ev[j].Session
	})
	for i := range ev {
		sort.Ints(ev[i].Turns)
		ev[i].Turns = slices.Compact(ev[i].Turns)
	}
	return ev
}

// usd writes dollars for the advice's text.
func usd(v float64) string { return pricing.Format(v, true) }

// tokens writes a token count.
func tokens(n int64) string { return numfmt.Thousands(n) }

// lineTokens is the size of a tool's line in the catalog announcement,
// at one token per 2.5 bytes (an upper bound).
func lineTokens(name string) int64 { return int64(float64(len(name)+1) / 2.5) }

// names lists at most n names, then how many more.
func names(ss []string, n int) string {
	if len(ss) <= n {
		return strings.Join(ss, ", ")
	}
	return strings.Join(ss[:n], ", ") + fmt.Sprintf(" and %d more", len(ss)-n)
}
