package report

import (
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline/tooltokens"
)

// CharsPerToken is the densest rate the token estimates assume
// (timeline.CharsPerToken): a part of n bytes is never counted as more
// than n / 2.5 tokens.
const CharsPerToken = tooltokens.CharsPerToken

// Sources of a token figure (ToolDefinition.TokensFrom).
const (
	// FromEstimate: the definition's share of its request's measured
	// prompt tokens, by bytes (see TokenMethod).
	FromEstimate = tooltokens.FromEstimate
	// FromCountTokens: the difference between two recorded count_tokens
	// answers for requests that differ by this definition alone.
	FromCountTokens = tooltokens.FromCountTokens
)

// TokenMethod says in words how the tool-definition token figures are
// made, for every format to print beside them.
const TokenMethod = tooltokens.Method

// ToolDefinition is one entry of a request's tools.
type ToolDefinition struct {
	Name string `json:"name"`
	// Type is the tool's type for server and built-in tools
	// (tool_search_tool_regex_20251119, web_search_20250305, ...), "" for
	// custom tools.
	Type string `json:"type,omitempty"`
	// Deferred is set for defer_loading tools.
	Deferred bool `json:"deferred"`
	// Placeholder is set for Claude Code's DeferredToolPlaceholder.
	Placeholder bool `json:"placeholder,omitempty"`
	// Loaded is set when the model sees the schema in this request: a tool
	// of the working set.
	Loaded bool `json:"loaded"`
	// SHA256 is the hex SHA-256 of the definition in canonical JSON (keys
	// sorted, no spaces, cache_control left out), to tell whether two
	// definitions are the same without showing either.
	SHA256 string `json:"sha256"`
	// Tokens is the definition's size in tokens, TokensFrom where that
	// figure comes from (estimate or count_tokens).
	Tokens     int64  `json:"tokens"`
	TokensFrom string `json:"tokens_from"`
}

// ToolTokens is what tool definitions cost one request, in tokens.
type ToolTokens struct {
	// Sent is the definitions the model sees: the working set.
	Sent int64 `json:"sent"`
	// Loaded is the part of Sent that deferred tools loaded so far make up
	// (by search, addition, or restored after compaction).
	Loaded int64 `json:"loaded"`
	// SearchTool is the part of Sent the search tools make up (ToolSearch,
	// tool_search_tool_*).
	SearchTool int64 `json:"search_tool"`
	// Announcement is the catalog announcement: the text blocks in the
	// messages that list the deferred tools' names.
	Announcement int64 `json:"announcement"`
	// Inlined is what the request would carry with every catalog tool
	// inlined and no search tool, tools of unknown size left out.
	Inlined int64 `json:"inlined"`
	// Saved is Inlined minus Sent minus Announcement: what deferral saved
	// on this request (negative when it cost). An estimate when Estimated
	// is not 0, a lower bound when Unknown is not 0.
	Saved int64 `json:"saved"`
	// Unknown counts the catalog tools whose size is unknown: their
	// schema never appears in the capture and no other deferred schema
	// does either (ThreadTokens.Unknown names them). They are left out of
	// Inlined.
	Unknown int `json:"unknown"`
	// Estimated counts the catalog tools whose schema never appears in the
	// capture, counted in Inlined at the average size of the deferred
	// schemas it holds (ThreadTokens.Estimated names them).
	Estimated int `json:"estimated"`
	// Prompt is the request's prompt as the API measured it (input, cache
	// reads and writes), 0 when its response carried no usage; the
	// figures above that the request carried sum to at most it.
	Prompt int64 `json:"prompt"`
	// BytesPerToken is the rate the estimates of this request used: its
	// body's bytes (images and documents aside) per prompt token, at least
	// CharsPerToken.
	BytesPerToken float64 `json:"bytes_per_token"`
	// NotRecorded: the request's tools are not known (a request made from
	// Claude Code's transcript); every figure but Prompt is 0.
	NotRecorded bool `json:"not_recorded,omitempty"`
}

// TokenSummary sums the tool-definition costs of each thread.
type TokenSummary struct {
	// Method says how the figures are made.
	Method string `json:"method"`
	// CharsPerToken is the estimate's ratio.
	CharsPerToken float64 `json:"chars_per_token"`
	// CountTokensUsed counts the distinct definitions whose size comes
	// from count_tokens answers.
	CountTokensUsed int            `json:"count_tokens_used"`
	Threads         []ThreadTokens `json:"threads"`
}

// ThreadTokens sums ToolTokens over the turns of a thread: the
// tool-definition tokens the thread's requests carried, and what they
// would have carried with every deferred tool inlined.
type ThreadTokens struct {
	Thread string `json:"thread"`
	Turns  int    `json:"turns"`
	// Searches counts the thread's tool searches; EmptySearches those that
	// loaded nothing.
	Searches      int `json:"searches"`
	EmptySearches int `json:"empty_searches"`
	// LoadedTools lists the deferred tools the thread loaded, in order.
	LoadedTools  []string `json:"loaded_tools"`
	Sent         int64    `json:"sent"`
	Loaded       int64    `json:"loaded"`
	SearchTool   int64    `json:"search_tool"`
	Announcement int64    `json:"announcement"`
	Inlined      int64    `json:"inlined"`
	Saved        int64    `json:"saved"`
	// Unknown lists the catalog tools of unknown size in any of the
	// thread's turns, Estimated those whose size is estimated.
	Unknown   []string `json:"unknown"`
	Estimated []string `json:"estimated"`
	// UnknownSlots sums, over the thread's requests, the catalog tools of
	// unknown size each request left out of Inlined.
	UnknownSlots int64 `json:"unknown_slots"`
	// BreakEven, when Saved is negative and some sizes are unknown, is the
	// average size in tokens the tools of unknown size would need for
	// deferral to have saved anything: -Saved / UnknownSlots, rounded up.
	BreakEven int64 `json:"break_even"`
	// KnownDeferred counts the thread's deferred tools whose size is
	// known (their schema was sent); KnownDeferredAverage is their
	// average size in tokens, a yardstick for BreakEven.
	KnownDeferred        int   `json:"known_deferred"`
	KnownDeferredAverage int64 `json:"known_deferred_average"`
	// SavedUSD is Saved in US dollars: each request's saved tokens at the
	// rate it paid for the start of its prompt (see [Report.Price]); an
	// estimate when Estimated is not empty, a lower bound when Unknown is
	// not empty.
	SavedUSD float64 `json:"saved_usd"`
}

// Counts maps a tool definition's SHA256 (as in ToolDefinition) to its
// size in tokens according to count_tokens answers.
type Counts = tooltokens.Counts

// CountTokens derives definition sizes from the capture's count_tokens
// exchanges (see [tooltokens.CountTokens]).
func CountTokens(exs []exchange.Exchange) Counts {
	return tooltokens.CountTokens(exs)
}

// toolSection fills the turn's ToolDefinitions and ToolTokens from its
// figures.
func toolSection(rt *Turn, ft *tooltokens.Turn) {
	if ft == nil || (ft.Definitions == nil && !ft.Tokens.NotRecorded) {
		return
	}
	rt.ToolDefinitions = make([]ToolDefinition, 0, len(ft.Definitions))
	for _, d := range ft.Definitions {
		rt.ToolDefinitions = append(rt.ToolDefinitions, ToolDefinition(d))
	}
	rt.ToolTokens = ToolTokens(ft.Tokens)
}

// summariseTokens writes the figures' per-thread sums as r's
// TokenSummary; f is nil for an empty report.
func summariseTokens(r *Report, f *tooltokens.Figures) {
	r.TokenSummary = TokenSummary{Method: TokenMethod, CharsPerToken: CharsPerToken, Threads: []ThreadTokens{}}
	if f == nil {
		return
	}
	r.TokenSummary.CountTokensUsed = f.CountTokensUsed
	for _, th := range f.Threads {
		r.TokenSummary.Threads = append(r.TokenSummary.Threads, ThreadTokens{
			Thread: th.Thread, Turns: th.Turns, Searches: th.Searches, EmptySearches: th.EmptySearches,
			LoadedTools: strs(th.LoadedTools),
			Sent:        th.Sent, Loaded: th.Loaded, SearchTool: th.SearchTool, Announcement: th.Announcement,
			Inlined: th.Inlined, Saved: th.Saved,
			Unknown: strs(th.Unknown), Estimated: strs(th.Estimated),
			UnknownSlots: th.UnknownSlots, BreakEven: th.BreakEven,
			KnownDeferred: th.KnownDeferred, KnownDeferredAverage: th.KnownDeferredAverage,
		})
	}
}

// ShortHash is the first 12 hex digits of a definition hash, for tables.
func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
