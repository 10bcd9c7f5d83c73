package advice

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/timeline"
)

// alwaysLoadDo says how to load an MCP server's tools up front, with the
// releases each way was verified in (docs/advise.md, "Sources").
func alwaysLoadDo(server string) string {
	return fmt.Sprintf("Load them up front: `\"alwaysLoad\": true` in the %s server's entry of your MCP configuration (.mcp.json, or the mcpServers of ~/.claude.json; verified in Claude Code %s) loads every tool of the server from the first request; `_meta[\"anthropic/alwaysLoad\"]: true` on a tool in the server does it for one tool (2.1.100 and later). Loaded up front, the tools are in the tool list from the first request, so no load changes it mid-session.",
		server, verifiedReleases)
}

// toolLoads advises, by MCP server (Claude Code's own tools apart), on
// the cache breaks that followed a search loading its tools: their
// schemas joined the tools, first in the cached prefix, and the whole
// prompt was written again. Loading the tools up front instead costs
// their schemas in every request that announced them; the advice to do
// so is given only where it costs less.
func (a *adviser) toolLoads() {
	type group struct {
		hits  map[*Facts][]Break
		usd   float64
		toks  int64
		n     int
		tools map[string]float64
	}
	groups := map[string]*group{}
	for _, f := range a.fs {
		for _, b := range f.Breaks {
			if len(b.Loaded) == 0 {
				continue
			}
			share := b.USD / float64(len(b.Loaded))
			seen := map[string]bool{}
			for _, name := range b.Loaded {
				s := serverOf(name)
				g := groups[s]
				if g == nil {
					g = &group{hits: map[*Facts][]Break{}, tools: map[string]float64{}}
					groups[s] = g
				}
				g.tools[name] += share
				g.usd += share
				if !seen[s] {
					seen[s] = true
					g.hits[f] = append(g.hits[f], b)
					g.n++
					g.toks += b.TokensLost / int64(len(b.Loaded))
				}
			}
		}
	}
	across := map[string]*toolAcross{}
	for _, ta := range a.toolsAcross() {
		across[ta.name] = ta
	}
	for _, server := range slices.Sorted(maps.Keys(groups)) {
		g := groups[server]
		subject := "mcp__" + server
		if server == "" {
			subject = "Claude Code's own tools"
		}
		if !a.enough(KindToolLoads, subject, len(g.hits)) {
			continue
		}
		names := slices.Sorted(maps.Keys(g.tools))
		ev := breakEvidence(a.fs, g.hits, func(bs []Break) string {
			var loaded []string
			for _, b := range bs {
				for _, n := range b.Loaded {
					if !slices.Contains(loaded, n) {
						loaded = append(loaded, n)
					}
				}
			}
			return "after loading " + names3(loaded)
		})
		var byTool []string
		for _, n := range names {
			byTool = append(byTool, fmt.Sprintf("%s %s", n, usd(g.tools[n])))
		}
		adv := Advice{Kind: KindToolLoads, Subject: subject, Sessions: len(g.hits), Of: len(g.hits),
			CostUSD: g.usd, Tokens: g.toks, PerSessionUSD: g.usd / float64(len(g.hits)),
			Why: fmt.Sprintf("%s followed a tool search that loaded %s: the loaded schemas joined the tool list, which comes first in the cached prompt, and everything after it was written to the cache again.",
				numfmt.Count(g.n, "cache break", "cache breaks"), names3(names)),
			Figures:  []string{fmt.Sprintf("%s written again instead of read: %s tokens, %s; by tool (a break shared among the tools it loaded): %s", numfmt.Count(g.n, "break", "breaks"), tokens(g.toks), usd(g.usd), strings.Join(byTool, ", "))},
			Assumes:  "a break right after a search that loaded tools is caused by the load (the API's cache_miss_reason says tools_changed, or the files show nothing else that changed); loaded up front, a tool's schema rides in every request that announced it, at the rate each paid for the start of its prompt, and spares the searches before its first calls.",
			Evidence: ev,
		}
		if server == "" {
			adv.Title = "Tool loads of Claude Code's own tools rewrite the cache"
			adv.Do = "Nothing marks Claude Code's own deferred tools to load up front; ENABLE_TOOL_SEARCH=false (or auto:N) sends every tool whole, which spares these rewrites at the price of the schemas in every request (see the tool search item where it pays). Naming the tool in CLAUDE.md to load it at the start of a session moves the rewrite to where the prompt is still small."
			a.r.Advice = append(a.r.Advice, adv)
			continue
		}
		// What loading them up front would cost instead: each tool's
		// schema in the requests that announced it without it, less the
		// searches before its first calls it would spare.
		var carry, trips float64
		unknown := []string{}
		for _, n := range names {
			ta := across[n]
			if ta == nil || ta.sizeFrom == "" {
				unknown = append(unknown, n)
				continue
			}
			for f, t := range ta.per {
				if _, ok := g.hits[f]; !ok {
					continue
				}
				carry += float64(ta.size) * t.WaitingRate / 1e6
				trips += t.RoundTripUSD
			}
		}
		adv.Title = fmt.Sprintf("Loading the %s server's tools rewrites the cache", server)
		if len(unknown) > 0 {
			adv.Do = alwaysLoadDo(server)
			adv.Figures = append(adv.Figures, fmt.Sprintf("what loading them up front would cost is not known: no session sent the schema of %s", names3(unknown)))
			a.r.Advice = append(a.r.Advice, adv)
			continue
		}
		adv.Figures = append(adv.Figures, fmt.Sprintf("loaded up front, their schemas in the requests of these sessions that announced them would cost %s, and spare %s of searches before their first calls", usd(carry), usd(trips)))
		if save := g.usd + trips - carry; save > 0 {
			adv.Title = fmt.Sprintf("Load the %s server's tools up front", server)
			adv.SavesUSD = save
			adv.Do = alwaysLoadDo(server)
		} else {
			adv.Do = fmt.Sprintf("Loading them up front would cost %s more than the rewrites and searches (%s): leave them deferred. Naming them in CLAUDE.md, to load at the start of a session, moves the rewrite to where the prompt is still small.", usd(carry-g.usd-trips), usd(g.usd+trips))
		}
		a.r.Advice = append(a.r.Advice, adv)
	}
}

// names3 lists at most three names, then how many more.
func names3(ss []string) string { return names(ss, 3) }

// partialSearches advises, by the tool left out, on the searches that
// named tools and loaded only some of them: what followed in their
// threads (the turns run without the tool, the errors, whether the tool
// was loaded later) next to the session's other subagent threads.
func (a *adviser) partialSearches() {
	type group struct {
		hits map[*Facts][]Search
	}
	groups := map[string]*group{}
	for _, f := range a.fs {
		for _, q := range f.Searches {
			if q.Kind != timeline.FlagSearchPartial || q.Wanted == "" {
				continue
			}
			g := groups[q.Wanted]
			if g == nil {
				g = &group{hits: map[*Facts][]Search{}}
				groups[q.Wanted] = g
			}
			g.hits[f] = append(g.hits[f], q)
		}
	}
	for _, tool := range slices.Sorted(maps.Keys(groups)) {
		g := groups[tool]
		if !a.enough(KindPartial, tool, len(g.hits)) {
			continue
		}
		n, never, turns, errs, later := 0, 0, 0, 0, 0
		var after, trips float64
		var tripToks int64
		var ev []Evidence
		queries := map[string]int{}
		partialThreads := map[*Facts]map[string]bool{}
		for _, f := range inOrder(a.fs, g.hits) {
			e := Evidence{Session: f.ID, Project: f.Project}
			partialThreads[f] = map[string]bool{}
			for _, q := range g.hits[f] {
				n++
				queries[q.Query]++
				turns += q.TurnsAfter
				errs += q.ErrorsAfter
				after += q.USDAfter
				trips += q.RoundTripUSD
				tripToks += q.RoundTripTokens
				partialThreads[f][q.Thread] = true
				if q.WantedAt == 0 {
					never++
				} else {
					later++
				}
				e.Turns = append(e.Turns, q.Turn)
				e.USD += q.RoundTripUSD
			}
			e.Note = fmt.Sprintf("%q", g.hits[f][0].Query)
			ev = append(ev, e)
		}
		// The other subagent threads of the same sessions, for what a
		// thread ran like with the tool.
		otherN, otherTurns := 0, 0
		for f, ths := range partialThreads {
			for _, th := range f.Threads {
				if th.Main || ths[th.ID] {
					continue
				}
				otherN++
				otherTurns += th.Turns
			}
		}
		// The turns beyond what the other subagent threads ran, at what
		// the threads' turns after the search cost on average: the
		// estimate of what doing without the tool cost.
		var extra float64
		avgAfter := float64(turns) / float64(n)
		avgOther := 0.0
		if otherN > 0 {
			avgOther = float64(otherTurns) / float64(otherN)
			if avgAfter > avgOther && turns > 0 {
				extra = after * (1 - avgOther/avgAfter)
			}
		}
		adv := Advice{Kind: KindPartial, Subject: tool, Sessions: len(g.hits), Of: len(g.hits),
			Title:   fmt.Sprintf("Searches that named %s loaded the others and left it out", tool),
			CostUSD: trips + extra, Tokens: tripToks, PerSessionUSD: (trips + extra) / float64(len(g.hits)), Estimated: extra > 0,
			Why: fmt.Sprintf("%s named %s with other tools and loaded only some of them (a keyword query loads only the tools that score); after %d of them the thread never loaded it and worked without it, after %d a later search loaded it.",
				numfmt.Count(n, "search", "searches"), tool, never, later),
			Do: fmt.Sprintf("Have the model load tools by name with select: (\"select:%s,...\" returns every tool it names): say so in CLAUDE.md or in the agent's prompt.", tool),
			Figures: []string{
				fmt.Sprintf("the later searches that loaded it cost %s (%s tokens)", usd(trips), tokens(tripToks)),
				fmt.Sprintf("what followed in those threads, from the turn that carried the result: %s (%s), %s", numfmt.Count(turns, "turn", "turns"), usd(after), numfmt.Count(errs, "error result", "error results")),
				"queries: " + topQueries(queries, 5),
			},
			Assumes:  "a select: query loads every tool it names; the turns a thread ran after the search beyond the average of the sessions' other subagent threads are counted as what doing without the tool cost, at the average cost of its turns after the search (an estimate).",
			Evidence: evidence(ev),
		}
		if otherN > 0 {
			adv.Figures = append(adv.Figures, fmt.Sprintf("those threads ran %.1f turns on average after the search; the other %s of these sessions ran %.1f in all: the turns beyond, %s", avgAfter, numfmt.Count(otherN, "subagent thread", "subagent threads"), avgOther, usd(extra)))
		} else {
			adv.Figures = append(adv.Figures, "no other subagent thread of these sessions to compare with: what doing without the tool cost is not counted")
		}
		a.r.Advice = append(a.r.Advice, adv)
	}
}
