package advice

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/timeline"
)

// group is the searches that wanted one tool, or asked the same.
type group struct {
	wanted string
	key    string
	hits   map[*Facts][]Search
}

// searchMisses advises, per tool the model wanted, what to put in its
// description so that the searches that missed it find it; searches after
// which nothing was ever loaded are grouped by their words.
func (a *adviser) searchMisses() {
	groups := map[string]*group{}
	for _, f := range a.fs {
		for _, q := range f.Searches {
			if q.Kind == timeline.FlagSearchPartial {
				continue // partialSearches
			}
			if q.Sent {
				q.Wanted += " (sent whole)"
			}
			key := q.Wanted
			if key == "" {
				key = "query: " + queryKey(q.Query)
			}
			g := groups[key]
			if g == nil {
				g = &group{wanted: q.Wanted, key: key, hits: map[*Facts][]Search{}}
				groups[key] = g
			}
			g.hits[f] = append(g.hits[f], q)
		}
	}
	keys := slices.Sorted(maps.Keys(groups))
	for _, k := range keys {
		g := groups[k]
		subject := g.wanted
		if subject == "" {
			subject = fmt.Sprintf("%q (nothing loaded later)", g.firstQuery(a.fs))
		}
		if !a.enough(KindSearchMisses, subject, len(g.hits)) {
			continue
		}
		var total float64
		var toks int64
		n, empty, missed, keyword, would, descKnown := 0, 0, 0, 0, 0, 0
		termMiss := map[string]int{}
		queries := map[string]int{}
		var ev []Evidence
		cutByLimit, never, sent := 0, 0, 0
		for _, f := range inOrder(a.fs, g.hits) {
			qs := g.hits[f]
			e := Evidence{Session: f.ID, Project: f.Project}
			var qtexts []string
			for _, q := range qs {
				n++
				total += q.RoundTripUSD
				toks += q.RoundTripTokens
				e.USD += q.RoundTripUSD
				e.Turns = append(e.Turns, q.Turn)
				queries[q.Query]++
				if q.Sent {
					sent++
				} else if q.WantedAt == 0 {
					never++
				}
				if len(qtexts) < 3 {
					qtexts = append(qtexts, fmt.Sprintf("%q", q.Query))
				}
				switch q.Kind {
				case timeline.FlagEmptySearch:
					empty++
				case timeline.FlagSearchPartial:
					missed++
					if q.MaxResults > 0 && q.MaxResults < len(q.Missing)+1 {
						cutByLimit++
					}
				}
				if len(q.Terms) > 0 {
					keyword++
					if q.WouldFind {
						would++
					}
					if q.DescriptionKnown {
						descKnown++
					}
					for _, t := range q.Terms {
						if !t.Scores {
							termMiss[t.Term]++
						}
					}
				}
			}
			e.Note = strings.Join(qtexts, ", ")
			ev = append(ev, e)
		}
		adv := Advice{Kind: KindSearchMisses, Subject: subject, Sessions: len(g.hits), Of: len(g.hits),
			CostUSD: total, Tokens: toks, PerSessionUSD: total / float64(len(g.hits)),
			Assumes:  "a search that finds its tool at once spares the round trip of each search that found nothing, or of the later search that loaded a tool one left out (the request made only to carry its result, and the call); the work done without the tool is not counted. Terms are scored as Claude Code's ToolSearch does (its published keyword scoring).",
			Evidence: evidence(ev),
		}
		what := []string{}
		if empty > 0 {
			what = append(what, numfmt.Count(empty, "search found nothing", "searches found nothing"))
		}
		if missed > 0 {
			what = append(what, numfmt.Count(missed, "search left it out", "searches left it out"))
		}
		adv.Figures = []string{fmt.Sprintf("%s missed: %s; their round trips cost %s (%s tokens)", numfmt.Count(n, "search", "searches"), strings.Join(what, ", "), usd(total), tokens(toks))}
		if never > 0 && g.wanted != "" {
			adv.Figures = append(adv.Figures, fmt.Sprintf("after %s the thread never loaded it and worked without it; what that cost is not counted", numfmt.Count(never, "search", "searches")))
		}
		if len(queries) > 0 {
			adv.Figures = append(adv.Figures, "queries: "+topQueries(queries, 5))
		}
		switch {
		case sent > 0:
			tool := strings.TrimSuffix(g.wanted, " (sent whole)")
			adv.Title = fmt.Sprintf("Tell the model that %s needs no search", tool)
			adv.Why = fmt.Sprintf("%s asked for %s, which the request that searched already carried whole (it is not deferred): the search found nothing and cost a round trip.", numfmt.Count(n, "search", "searches"), tool)
			adv.Do = fmt.Sprintf("Say in CLAUDE.md that %s is always available and needs no ToolSearch.", tool)
		case g.wanted == "":
			adv.Title = fmt.Sprintf("Give the model what it searches for as %s, or tell it there is none", subject)
			adv.Why = fmt.Sprintf("%s found nothing, and no later search of the thread loaded anything: the model reached for a capability none of your tools offers.", numfmt.Count(n, "search", "searches"))
			adv.Do = "If one of your tools does this, put these words in its description; if none does, add an MCP server that does, or say in CLAUDE.md that there is none so the model stops searching."
		case cutByLimit > 0:
			adv.Title = fmt.Sprintf("Have the model load %s by name with select:", g.wanted)
			adv.Why = fmt.Sprintf("%s named %s among more tools than its max_results returns, and left it out; the model had to search again or do without it.", numfmt.Count(cutByLimit, "search", "searches"), g.wanted)
			adv.Do = fmt.Sprintf("Say in CLAUDE.md to load tools by name with ToolSearch \"select:%s,...\" (a select: list returns every tool it names, whatever max_results).", g.wanted)
		case keyword > 0 && len(termMiss) > 0:
			terms := topTerms(termMiss, 8)
			adv.Title = fmt.Sprintf("Put %s in %s's description", quoteList(terms), g.wanted)
			adv.Why = fmt.Sprintf("%s missed %s, which the model loaded afterwards; in %d keyword %s these words scored nothing for it.",
				numfmt.Count(n, "search", "searches"), g.wanted, keyword, numfmt.Plural(keyword, "query", "queries"))
			adv.Do = fmt.Sprintf("Add the words to %s's description (each word found there scores +2 in ToolSearch's ranking)", g.wanted)
			if serverOf(g.wanted) != "" {
				adv.Do += " or to its search hint, `_meta[\"anthropic/searchHint\"]` in its MCP server (+4 a word)"
			}
			adv.Do += "."
			if keyword > 0 {
				adv.Figures = append(adv.Figures, fmt.Sprintf("with these words in its description, %d of the %d keyword %s would have returned it from the catalog of the moment (ToolSearch's published scoring)", would, keyword, numfmt.Plural(keyword, "query", "queries")))
			}
			if descKnown < keyword {
				adv.Figures = append(adv.Figures, fmt.Sprintf("its description is not known in %d of them (no request of the session sent its schema): a word it already holds may be among these", keyword-descKnown))
			}
		default:
			adv.Title = fmt.Sprintf("Name %s in CLAUDE.md", g.wanted)
			adv.Why = fmt.Sprintf("%s missed %s, which the model loaded afterwards.", numfmt.Count(n, "search", "searches"), g.wanted)
			adv.Do = fmt.Sprintf("The model asked for it under another name (a select: list or a prefix): name it in CLAUDE.md (\"load %s with ToolSearch select:%s\").", g.wanted, g.wanted)
		}
		a.r.Advice = append(a.r.Advice, adv)
	}
}

// firstQuery is the group's first query as the model wrote it.
func (g *group) firstQuery(fs []*Facts) string {
	for _, f := range inOrder(fs, g.hits) {
		for _, q := range g.hits[f] {
			return q.Query
		}
	}
	return ""
}

// queryKey normalises a query to group the searches that ask the same:
// lower case, words sorted.
func queryKey(q string) string {
	w := strings.Fields(strings.ToLower(q))
	sort.Strings(w)
	return strings.Join(w, " ")
}

// topTerms lists the terms that missed most often, most first.
func topTerms(m map[string]int, n int) []string {
	ts := byCount(m)
	return ts[:min(n, len(ts))]
}

// byCount lists the keys of m, the highest count first, then by name.
func byCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// topQueries lists the commonest queries with their counts.
func topQueries(m map[string]int, n int) string {
	qs := byCount(m)
	var out []string
	for i, x := range qs {
		if i == n {
			out = append(out, fmt.Sprintf("%d more", len(qs)-n))
			break
		}
		s := fmt.Sprintf("%q", x)
		if m[x] > 1 {
			s += fmt.Sprintf(" ×%d", m[x])
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

func quoteList(ts []string) string {
	q := make([]string, len(ts))
	for i, t := range ts {
		q[i] = fmt.Sprintf("%q", t)
	}
	return strings.Join(q, ", ")
}

// blindCalls advises, per tool, loading before calling: the calls made
// before its schema was loaded, by release.
func (a *adviser) blindCalls() {
	type group struct {
		hits     map[*Facts][]Blind
		releases map[string]int
	}
	groups := map[string]*group{}
	for _, f := range a.fs {
		for _, b := range f.Blind {
			g := groups[b.Tool]
			if g == nil {
				g = &group{hits: map[*Facts][]Blind{}, releases: map[string]int{}}
				groups[b.Tool] = g
			}
			g.hits[f] = append(g.hits[f], b)
			rel := b.Release
			if rel == "" {
				rel = "unknown release"
			}
			g.releases[rel]++
		}
	}
	toolNames := slices.Sorted(maps.Keys(groups))
	for _, tool := range toolNames {
		g := groups[tool]
		if !a.enough(KindBlindCalls, tool, len(g.hits)) {
			continue
		}
		var total float64
		n, refused, unpriced := 0, 0, 0
		var ev []Evidence
		for _, f := range inOrder(a.fs, g.hits) {
			bs := g.hits[f]
			e := Evidence{Session: f.ID, Project: f.Project}
			for _, b := range bs {
				n++
				if b.Refused {
					refused++
				}
				if b.Priced {
					total += b.USD
					e.USD += b.USD
				} else {
					unpriced++
				}
				e.Turns = append(e.Turns, b.Turn)
				if b.Release != "" && !strings.Contains(e.Note, b.Release) {
					e.Note = strings.TrimPrefix(e.Note+", "+b.Release, ", ")
				}
			}
			ev = append(ev, e)
		}
		rels := slices.Sorted(maps.Keys(g.releases))
		var byRel []string
		for _, r := range rels {
			byRel = append(byRel, fmt.Sprintf("%s: %d", r, g.releases[r]))
		}
		adv := Advice{Kind: KindBlindCalls, Subject: tool, Sessions: len(g.hits), Of: len(g.hits),
			Title:   fmt.Sprintf("Have %s loaded before it is called", tool),
			Why:     fmt.Sprintf("The model called %s before its schema was loaded %s (%d refused by Claude Code); by release: %s.", tool, numfmt.Count(n, "time", "times"), refused, strings.Join(byRel, ", ")),
			CostUSD: total, PerSessionUSD: total / float64(len(g.hits)),
			Figures:  []string{fmt.Sprintf("the refused calls cost %s: the calls' output tokens and the round trips that carried their errors back", usd(total))},
			Assumes:  "a call made with the schema loaded is not refused, so its output and the error's round trip are spared (a call Claude Code ran anyway costs nothing here); calls whose answer is not in the session are not counted.",
			Evidence: evidence(ev),
		}
		if unpriced > 0 {
			adv.Figures = append(adv.Figures, fmt.Sprintf("%s not priced (no answer in the session, or no price for its model)", numfmt.Count(unpriced, "call", "calls")))
		}
		if ran := n - refused; ran > 0 {
			adv.Why += fmt.Sprintf(" Claude Code ran %s all the same, on input the model wrote without seeing the schema: nothing was paid twice, but the arguments may be wrong.", numfmt.Count(ran, "call", "calls"))
		}
		if serverOf(tool) != "" {
			adv.Do = fmt.Sprintf("Load it up front (`_meta[\"anthropic/alwaysLoad\"]: true` on the tool in the %s MCP server, Claude Code 2.1.100 and later; or `\"alwaysLoad\": true` on the server's entry in your MCP configuration, verified in %s), or say in CLAUDE.md to load it with ToolSearch select:%s before calling it.", serverOf(tool), verifiedReleases, tool)
		} else {
			adv.Do = fmt.Sprintf("Say in CLAUDE.md to load it with ToolSearch select:%s before calling it.", tool)
		}
		if len(rels) == 1 && rels[0] != "unknown release" {
			adv.Do += fmt.Sprintf(" All of them were made by Claude Code %s: a newer release may not make them.", rels[0])
		}
		a.r.Advice = append(a.r.Advice, adv)
	}
}

// causeText is what usually causes a kind of cache break in Claude Code,
// and what to do about it.
func causeText(cause string) (title, why, do string) {
	switch cause {
	case timeline.CauseTools:
		return "Keep the tool list stable within a session",
			"The tool definitions sent whole changed mid-session: in Claude Code, an MCP server that connected late, reconnected or changed its tools' descriptions, a server added or removed with /mcp, or a tool whose description carries something that changes (a date, a count).",
			"Connect MCP servers before starting (Claude Code waits for them in recent releases), avoid toggling them mid-session, and keep tool descriptions free of changing text. (Breaks right after a tool search loaded tools are counted apart, under cache rewrites after tool loads.)"
	case timeline.CauseSystem:
		return "Keep the system prompt stable within a session",
			"The system prompt changed mid-session: in Claude Code, a CLAUDE.md or memory file edited while the session runs, an output style or fast mode switched, or a plugin or hook that rewrites it.",
			"Edit CLAUDE.md and switch output styles between sessions, not during them."
	case timeline.CauseModel:
		return "Switch models between sessions, not within them",
			"The model changed mid-session, and each model has its own cache: in Claude Code, /model, a plan mode that plans on one model and works on another, or a fallback to another model when one is overloaded or a limit is reached.",
			"Pick the model at the start; if a fallback causes it, the limits or overloads behind it are the thing to look at."
	case timeline.CauseBetas:
		return "Keep Claude Code's features the same within a session",
			"The betas sent changed mid-session: a session resumed in another Claude Code release, or a feature (thinking, context management, fast mode) turned on or off while it ran.",
			"Resume sessions with the release that started them, and toggle features between sessions."
	case timeline.CauseMessages:
		return "Do not rewrite the conversation's history",
			"Earlier messages changed: /rewind or an edited message, Claude Code clearing old tool results to save context (context management), or a hook that rewrites what was sent.",
			"Expected after a rewind; if it happens without one, look at the turns the evidence names: the detail says which message changed first."
	case timeline.CauseTTL:
		return "Pauses longer than the cache's lifetime",
			"More than 5 minutes (or an hour, with the 1-hour cache) passed between two requests of a thread, and the cached prefix expired: a pause while reading, a long tool run, a permission prompt left waiting.",
			"Nothing in the setup is wrong. Where pauses are many and long, a 1-hour cache lifetime costs 2× the input price on writes instead of 1.25× and survives them."
	case timeline.CauseLookback:
		return "Too many content blocks between cache breakpoints",
			"The request's cache breakpoint sat 20 or more content blocks after the previous one (many parallel tool calls and results in one step), beyond the API's lookback.",
			"Fewer parallel tool calls per step keep the previous breakpoint in reach."
	case timeline.CauseCompaction:
		return "Compactions rewrite the whole prompt",
			"After a compaction the history restarts from a summary and nothing cached is read: the price of compacting.",
			"Compact less often (start new sessions for new tasks), or earlier, when less is lost."
	case timeline.CauseNotRecorded:
		return "Breaks the session files cannot explain",
			"The model and the messages the files hold were the same and their times show no long pause, but the files do not hold the system prompt, tools or betas (no request records), so the cause is not known from them.",
			"Record such sessions with Claude Code 2.1.300 or later (which writes request records) or through 'tsinspect record' to see the cause."
	case timeline.CauseUnexplained:
		return "Breaks on the API's side",
			"Nothing in the cached prefix changed and the gap was short: the cache entry was lost on the server's side.",
			"Nothing to change in the setup; if they are many, report them with the evidence."
	}
	return "Cache breaks: " + cause, "The cache broke; the API's diagnostics name the cause " + cause + " (its cache_miss_reason, which Claude Code wrote with the answer).", "Read the break's detail on the turns the evidence names."
}

// cacheBreaks advises on the causes of cache breaks, costliest first.
func (a *adviser) cacheBreaks() {
	type group struct {
		hits   map[*Facts][]Break
		usd    float64
		tokens int64
		n      int
	}
	groups := map[string]*group{}
	for _, f := range a.fs {
		for _, b := range f.Breaks {
			if len(b.Loaded) > 0 || pauseClass(b) != "" {
				continue // toolLoads, pauses
			}
			g := groups[b.Cause]
			if g == nil {
				g = &group{hits: map[*Facts][]Break{}}
				groups[b.Cause] = g
			}
			g.hits[f] = append(g.hits[f], b)
			g.usd += b.USD
			g.tokens += b.TokensLost
			g.n++
		}
	}
	causes := slices.Sorted(maps.Keys(groups))
	for _, cause := range causes {
		g := groups[cause]
		if !a.enough(KindCacheBreaks, cause, len(g.hits)) {
			continue
		}
		ev := breakEvidence(a.fs, g.hits, nil)
		title, why, do := causeText(cause)
		partial := 0
		for _, f := range a.fs {
			for _, b := range g.hits[f] {
				if b.Read > 0 {
					partial++
				}
			}
		}
		if cause == timeline.CauseNotRecorded && partial > 0 {
			why += fmt.Sprintf(" In %d of the %d the request still read part of its prompt from the cache: its start (the tools, the system prompt, the first messages) was kept and what came after was lost, which points at the history changing (old tool results cleared by context management, a rewind) rather than the tools or the system prompt.", partial, g.n)
		}
		adv := Advice{Kind: KindCacheBreaks, Subject: cause, Title: title, Do: do, Sessions: len(g.hits), Of: len(g.hits),
			Why:     why,
			CostUSD: g.usd, Tokens: g.tokens, PerSessionUSD: g.usd / float64(len(g.hits)),
			Figures:  []string{fmt.Sprintf("%s (%s): %s tokens written to the cache again instead of read, %s", numfmt.Count(g.n, "break", "breaks"), cause, tokens(g.tokens), usd(g.usd))},
			Assumes:  "a kept cache would have read the lost tokens at the cache-read rate; they were billed as cache writes or input instead.",
			Evidence: ev,
		}
		a.r.Advice = append(a.r.Advice, adv)
	}
}
