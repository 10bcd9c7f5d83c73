package advice

import (
	"slices"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/toolsearch"
	"github.com/tsinspect/tsinspect/toolsearch/claudetools"
)

// isServerSearch reports whether name is one of d's server tool-search
// tools.
func isServerSearch(d *decode.Turn, name string) bool {
	for _, t := range d.Request.Tools {
		if t.Name == name && t.ServerSearch {
			return true
		}
	}
	return false
}

// searchTrip is what a client search cost, found in turn a (whose
// request carries its result): the request a when the turn before made
// only searches (shared among them), and the search call's output.
func (x *extractor) searchTrip(a *timeline.Turn, sr decode.Search) (usd float64, tokens int64) {
	p := x.s.Turn(a.Prev)
	if p == nil || !messages(p) {
		return 0, 0
	}
	pd := p.Decoded
	searches, others := 0, 0
	for _, c := range pd.ToolCalls {
		switch {
		case c.Server:
		case c.Name == sr.Tool || c.Name == decode.ClientSearchTool:
			searches++
		default:
			others++
		}
	}
	if others == 0 && searches > 0 {
		pu, pt := promptCost(x.tab, a)
		usd += pu / float64(searches)
		tokens += pt / int64(searches)
	}
	// The call's own output tokens.
	for _, c := range pd.ToolCalls {
		if c.ID != sr.ToolUseID || c.Block < 0 || c.Block >= len(pd.Response.Content) {
			continue
		}
		outRate, _ := timeline.OutputRate(pd)
		b := &pd.Response.Content[c.Block]
		n := len(b.Raw)
		if n == 0 {
			n = len(b.Name) + len(b.Input)
		}
		out := timeline.Tokens(n, outRate)
		tokens += out
		if x.tab != nil {
			if r, ok := x.tab.Rates(pd.Request.Model, usageOf(p)); ok {
				usd += float64(out) * r.Output / 1e6
			}
		}
	}
	return usd, tokens
}

// searches works out, for each client search, what it cost and which
// tools it loaded ahead of their first call (a round trip loading them up
// front would spare), and keeps those that loaded nothing or left out a
// tool they named.
func (x *extractor) searches() {
	s := x.s
	defs := toolsearch.Definitions(s)
	rel, _ := claudetools.For(firstOr(x.f.Releases))
	alg, _ := toolsearch.ForVersion(firstOr(x.f.Releases))
	for _, a := range s.Turns {
		if !messages(a) {
			continue
		}
		for _, sr := range a.NewSearches {
			if !sr.HasResult {
				continue
			}
			var usd float64
			var tokens int64
			if !sr.Server {
				usd, tokens = x.searchTrip(a, sr)
				x.f.Deferral.Searches++
				x.f.Deferral.SearchUSD += usd
			}
			if len(sr.Results) == 0 {
				q := Search{Turn: a.Index, Thread: a.Thread, Kind: timeline.FlagEmptySearch, Query: sr.Query, Mode: sr.Mode,
					MaxResults: int(sr.MaxResults), RoundTripTokens: tokens, RoundTripUSD: usd}
				if name := x.alreadySent(a, sr); name != "" {
					q.Wanted, q.Sent = name, true
				} else {
					q.Wanted, q.WantedAt = x.nextLoaded(a)
					x.explain(&q, a, defs, rel, alg)
				}
				x.f.Searches = append(x.f.Searches, q)
				continue
			}
			if missing := x.leftOut(a, sr); len(missing) > 0 {
				q := Search{Turn: a.Index, Thread: a.Thread, Kind: timeline.FlagSearchPartial, Query: sr.Query, Mode: sr.Mode,
					MaxResults: int(sr.MaxResults), Missing: missing, Wanted: missing[0]}
				q.WantedAt = x.loadedAt(a, missing[0])
				q.RoundTripUSD, q.RoundTripTokens = x.loadTrip(q.WantedAt, missing[0])
				x.f.Searches = append(x.f.Searches, q)
			}
			if sr.Server {
				continue
			}
			// The tools this search loaded that the thread then called,
			// not loaded before it.
			p := s.Turn(a.Prev)
			var wanted []string
			for _, name := range sr.Results {
				at, called := x.firstCall[a.Thread][name]
				if !called || at < a.Index || x.searched[a.Thread][name] {
					continue
				}
				if p != nil && messages(p) && p.Decoded.InWorkingSet(name) {
					continue
				}
				wanted = append(wanted, name)
			}
			for _, name := range wanted {
				if x.searched[a.Thread] == nil {
					x.searched[a.Thread] = map[string]bool{}
				}
				x.searched[a.Thread][name] = true
				tl := x.tool(name)
				tl.SearchTurns = append(tl.SearchTurns, a.Index)
				share := 1 / float64(len(wanted))
				tl.RoundTrips += share
				tl.RoundTripUSD += usd * share
				tl.RoundTripTokens += int64(float64(tokens) * share)
			}
		}
	}
}

func firstOr(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[len(ss)-1]
}

// nextLoaded finds what the thread of turn a loaded with its next search
// that loaded anything: the first of its tools the thread then called,
// else its first; and the turn that carried it.
func (x *extractor) nextLoaded(a *timeline.Turn) (string, int) {
	for _, t := range x.s.Turns {
		if t.Index <= a.Index || t.Thread != a.Thread || !messages(t) {
			continue
		}
		for _, sr := range t.NewSearches {
			if len(sr.Results) == 0 {
				continue
			}
			for _, name := range sr.Results {
				if at, ok := x.firstCall[t.Thread][name]; ok && at >= t.Index {
					return name, t.Index
				}
			}
			return sr.Results[0], t.Index
		}
	}
	return "", 0
}

// alreadySent finds a tool a search named (a select: name, or a word of
// the query equal to a tool's name, in any case) that the request which
// made the search already sent whole: "" when none.
func (x *extractor) alreadySent(a *timeline.Turn, sr decode.Search) string {
	p := x.s.Turn(a.Prev)
	if p == nil || !messages(p) {
		return ""
	}
	words := sr.Selected
	if len(words) == 0 {
		words = strings.FieldsFunc(sr.Query, func(r rune) bool { return r == ' ' || r == ',' || r == '+' })
	}
	for _, w := range words {
		for _, ws := range p.Decoded.WorkingSet {
			if strings.EqualFold(ws.Name, w) && ws.Name != decode.ClientSearchTool {
				return ws.Name
			}
		}
	}
	return ""
}

// loadedAt is the first turn of a's thread after a whose working set
// holds name, 0 if none.
func (x *extractor) loadedAt(a *timeline.Turn, name string) int {
	for _, t := range x.s.Turns {
		if t.Index > a.Index && t.Thread == a.Thread && messages(t) && t.Decoded.InWorkingSet(name) {
			return t.Index
		}
	}
	return 0
}

// loadTrip is what the search that loaded name on turn at cost (0 when
// no search did: a tool restored, or never loaded).
func (x *extractor) loadTrip(at int, name string) (float64, int64) {
	t := x.s.Turn(at)
	if t == nil || !messages(t) {
		return 0, 0
	}
	for _, sr := range t.NewSearches {
		if !sr.Server && slices.Contains(sr.Results, name) {
			return x.searchTrip(t, sr)
		}
	}
	return 0, 0
}

// leftOut lists the tools a search named and did not load, as the
// timeline's search_partial flag on the turn that carried its result says
// (the rule is the timeline's: timeline.SearchLeftOut).
func (x *extractor) leftOut(a *timeline.Turn, sr decode.Search) []string {
	for _, f := range a.Flags {
		if f.Kind == timeline.FlagSearchPartial && f.Search == sr.ToolUseID {
			return f.Missing
		}
	}
	return nil
}

// explain scores a keyword query's terms against the wanted tool, and
// tries the query again with the terms that scored nothing added to the
// tool's description.
func (x *extractor) explain(q *Search, a *timeline.Turn, defs map[string]toolsearch.Tool, rel claudetools.Release, alg toolsearch.Algorithm) {
	if q.Wanted == "" || (q.Mode != decode.ModeKeyword && q.Mode != decode.ModeRequired) {
		return
	}
	toolFor := func(name string) toolsearch.Tool {
		if t, ok := defs[name]; ok {
			return t
		}
		for _, t := range rel.Tools {
			if t.Name == name {
				return toolsearch.Tool{Name: name, Description: t.Description}
			}
		}
		return toolsearch.Tool{Name: name, DescriptionUnknown: true}
	}
	w := toolFor(q.Wanted)
	q.DescriptionKnown = !w.DescriptionUnknown
	var missing []string
	for _, term := range strings.Fields(strings.ToLower(q.Query)) {
		term = strings.TrimPrefix(term, "+")
		if term == "" || slices.ContainsFunc(q.Terms, func(t Term) bool { return t.Term == term }) {
			continue
		}
		ok, _ := toolsearch.Loads(alg, term, w.Name, toolsearch.DefaultMaxResults, []toolsearch.Tool{w})
		q.Terms = append(q.Terms, Term{Term: term, Scores: ok})
		if !ok {
			missing = append(missing, term)
		}
	}
	if len(missing) == 0 {
		return
	}
	// The catalog the model searched: the request before the one that
	// carried the result (it made the call).
	catalog := a.Decoded.Catalog
	if p := x.s.Turn(a.Prev); p != nil && messages(p) {
		catalog = p.Decoded.Catalog
	}
	better := w
	better.Description = strings.TrimSpace(better.Description + " " + strings.Join(missing, " "))
	better.DescriptionUnknown = false
	pool := make([]toolsearch.Tool, 0, len(catalog)+1)
	for _, name := range catalog {
		if name == w.Name {
			continue
		}
		pool = append(pool, toolFor(name))
	}
	pool = append(pool, better)
	sort.SliceStable(pool, func(i, j int) bool { return pool[i].Name < pool[j].Name })
	limit := q.MaxResults
	if limit <= 0 {
		limit = toolsearch.DefaultMaxResults
	}
	q.WouldFind, _ = toolsearch.Loads(alg, q.Query, w.Name, limit, pool)
}
