package advice

import "slices"

// Kinds of advice, in the order Advise lists them (the order of the
// table of kinds).
const (
	KindLoadUpFront  = "load_up_front"
	KindNeverUsed    = "never_used"
	KindSearchMisses = "search_misses"
	KindBlindCalls   = "blind_calls"
	KindCacheBreaks  = "cache_breaks"
	KindToolSearch   = "tool_search"
	KindToolLoads    = "tool_loads"
	KindPartial      = "search_partial"
	KindPauses       = "pauses"
)

// KindRow is one kind of advice, whole: what finds it, its heading, and
// what a person reads about it. Advise runs the finders; the text, JSON,
// Markdown and HTML writers and the table in docs/advise.md take the rest
// from here.
type KindRow struct {
	// Kind names the kind, as Advice.Kind does: load_up_front, ...
	Kind string
	// Title is the kind's heading.
	Title string
	// Costs: the kind's figure is what the pattern cost (searches that
	// miss, blind calls, cache breaks) rather than what a change saves;
	// both are what following the advice spares.
	Costs bool
	// Pattern is what it looks for, Advice what it advises and Figure how
	// its figure is made, each in Markdown (docs/advise.md's table).
	Pattern, Advice, Figure string
	// find adds the kind's advice (and what it leaves out) to the
	// adviser's result.
	find func(a *adviser)
}

// kinds is the table of kinds of advice, a row each, in the order Advise
// lists them. A new kind is a row here, its name's constant and its
// finder. Nothing writes the table.
var kinds = [...]KindRow{
	{
		Kind:    KindLoadUpFront,
		Title:   "Load up front",
		Costs:   false,
		find:    (*adviser).loadUpFront,
		Pattern: "an MCP tool searched for before its first call in most sessions that call it",
		Advice:  "mark it `_meta[\"anthropic/alwaysLoad\"]: true` in its server (Claude Code 2.1.100 and later send it from the first request), or the whole server `\"alwaysLoad\": true` in the MCP configuration (verified in 2.1.299, 2.1.328, 2.1.332), or name it in CLAUDE.md",
		Figure:  "the searches' round trips (the request made only to carry each search's result, and the search call; a search that loaded several tools the thread then called is shared among them), less what carrying the schema in every request that announced the tool without it would cost. Given only where that is positive",
	},
	{
		Kind:    KindNeverUsed,
		Title:   "Never used",
		Costs:   false,
		find:    (*adviser).neverUsed,
		Pattern: "an MCP server (or some of its tools) announced in many sessions and never called",
		Advice:  "drop the server where it is not used, or leave the tools out if the server can be told",
		Figure:  "the tools' catalog lines (one token per 2.5 bytes of the name, an upper bound) in every request that announced them, and their schemas where tool search was off",
	},
	{
		Kind:    KindSearchMisses,
		Title:   "Searches that miss",
		Costs:   true,
		find:    (*adviser).searchMisses,
		Pattern: "searches that found nothing (`empty_search`), by the tool the model wanted (what its thread loaded next)",
		Advice:  "the words of the queries that score nothing for that tool, to put in its description (+2 each in ToolSearch's published scoring) or search hint (+4); with how many of the queries would then have found it in the catalog of the moment. A query that named tools beyond `max_results`: load by `select:`. Nothing loaded later: the model wants a capability none of the tools offers",
		Figure:  "the round trips of the searches that missed",
	},
	{
		Kind:    KindBlindCalls,
		Title:   "Blind calls",
		Costs:   true,
		find:    (*adviser).blindCalls,
		Pattern: "calls of a deferred tool before its schema was loaded (`call_before_load`), by tool and Claude Code release",
		Advice:  "load it up front or have the model load it first; all on one release: a newer one may not make them",
		Figure:  "what the refusals wasted (the call's output, the error's round trip); a call Claude Code ran anyway costs nothing here but its arguments may be wrong",
	},
	{
		Kind:    KindCacheBreaks,
		Title:   "Cache breaks by cause",
		Costs:   true,
		find:    (*adviser).cacheBreaks,
		Pattern: "`cache_break` flags of one cause (tools, system prompt, model, betas, messages, compaction, lookback, not recorded, the API's side), costliest first; pauses and tool loads have kinds of their own",
		Advice:  "what usually causes that kind of break in Claude Code, and what to change",
		Figure:  "the lost tokens billed again as cache writes or input instead of read",
	},
	{
		Kind:    KindToolLoads,
		Title:   "Cache rewrites after tool loads",
		Costs:   true,
		find:    (*adviser).toolLoads,
		Pattern: "`cache_break` flags right after a tool search that loaded tools (the API's `tools_changed`, or nothing else changed in the files), by MCP server, Claude Code's own tools apart",
		Advice:  "load the server's tools up front (`\"alwaysLoad\": true` in its MCP configuration entry, or `_meta[\"anthropic/alwaysLoad\"]` per tool) where that costs less than the rewrites and the searches; else leave them deferred",
		Figure:  "the breaks' lost tokens billed again (a break shared among the tools it loaded); beside it, loading up front: each schema in every request of those sessions that announced it without it, less the searches before first calls it spares",
	},
	{
		Kind:    KindPartial,
		Title:   "Searches that loaded part of what they named",
		Costs:   true,
		find:    (*adviser).partialSearches,
		Pattern: "searches that named several tools and loaded only some (`search_partial`), by the tool left out, with what followed in the thread: its turns, their cost, error results, whether the tool was loaded later, next to the sessions' other subagent threads",
		Advice:  "load tools by name with `select:`, which returns every tool it names",
		Figure:  "the round trips of the later searches that loaded the tool left out; the turns that ran without it are given beside, not counted",
	},
	{
		Kind:    KindPauses,
		Title:   "Pauses and the cache's lifetime",
		Costs:   true,
		find:    (*adviser).pauses,
		Pattern: "`ttl_expired` breaks, by what would have survived the pause: within an hour on a 5-minute cache (a 1-hour cache would have), or over an hour (nothing would); threads whose writes changed lifetime mid-session (the usage's `ephemeral_5m`/`ephemeral_1h` split)",
		Advice:  "the 1-hour cache (`promptCacheTtl`, `CLAUDE_CODE_PROMPT_CACHE_TTL`, `ENABLE_PROMPT_CACHING_1H`; verified in 2.1.299, 2.1.328, 2.1.332) where it costs less than the pauses did; `/compact` before breaks of hours; pin the lifetime where it changed mid-session",
		Figure:  "the breaks' lost tokens billed again; for the 1-hour cache, less what every 5-minute write of the sessions read would cost more at the 1-hour rate (2× input instead of 1.25×). Pauses over an hour are a cost, never a saving",
	},
	{
		Kind:    KindToolSearch,
		Title:   "Tool search on or off",
		Costs:   false,
		find:    (*adviser).toolSearch,
		Pattern: "sessions where deferring tools cost more than it saved, or where tool search was off and deferring would have saved",
		Advice:  "the `ENABLE_TOOL_SEARCH` setting (`true`, `false`, or `auto:N`, which defers only past N % of the context window) that would have cost least over the sessions read",
		Figure:  "deferral's worth per session: what it kept out of each request (the report's \"saved by deferral\") less what its searches cost; for a session with tool search off, estimated from the schemas of the MCP tools and Claude Code's own deferrable tools sent whole, with one search per tool and thread called, its round trip priced as the calling request's prompt read from the cache",
	},
}

// KindRows is the table of kinds of advice, in order (a copy).
func KindRows() []KindRow { return slices.Clone(kinds[:]) }

// Kinds lists the kinds of advice, in order.
func Kinds() []string {
	out := make([]string, len(kinds))
	for i := range kinds {
		out[i] = kinds[i].Kind
	}
	return out
}

// kindRow is the row of a kind of advice; ok is false for an unknown one.
func kindRow(kind string) (row KindRow, ok bool) {
	for _, r := range kinds {
		if r.Kind == kind {
			return r, true
		}
	}
	return KindRow{}, false
}

// KindTitle is the heading of a kind of advice (the kind's name for an
// unknown one).
func KindTitle(kind string) string {
	if r, ok := kindRow(kind); ok {
		return r.Title
	}
	return kind
}

// Costs reports whether a kind of advice is about what something cost
// (searches that miss, blind calls, cache breaks) rather than what a
// change saves; both are what following the advice spares.
func Costs(kind string) bool {
	r, _ := kindRow(kind)
	return r.Costs
}
