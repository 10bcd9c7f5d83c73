package advice

import (
	"slices"
	"sort"
	"time"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/tooltokens"
)

// FactsVersion changes whenever Facts, or the way Of fills them, does: a
// cache of facts of another version is read afresh.
const FactsVersion = 4

// Where a tool's schema size comes from (Tool.SchemaFrom).
const (
	// SizeRequest: a request of the session sent the schema.
	SizeRequest = "request"
	// SizeFiles: the session's files hold the definition apart from any
	// request (Claude Code's deferred_tools_record attachments), counted
	// at one token per 2.5 bytes.
	SizeFiles = "files"
	// SizeEstimate: the average of the deferred schemas the session sent
	// from the same MCP server (else from any).
	SizeEstimate = "estimate"
)

// Deferral modes (Deferral.Mode).
const (
	// ModeOn: tool search was on: deferred tools were announced and a
	// search tool offered.
	ModeOn = "on"
	// ModeOff: MCP tools were sent whole with no search tool (the
	// tool_search_off flag).
	ModeOff = "off"
)

// Context windows assumed for ENABLE_TOOL_SEARCH=auto:N.
const (
	window200k = 200_000
	window1m   = 1_000_000
)

// Ref names a session for a person and for 'tsinspect open'.
type Ref struct {
	// ID is what 'tsinspect open' takes: a Claude Code session ID, or a
	// capture file's path.
	ID string `json:"id"`
	// Project is the session's project directory as Claude Code names it
	// (the working directory, / as -), "" for a capture.
	Project string `json:"project,omitempty"`
}

// FactsOptions say how Of prices and measures a session.
type FactsOptions struct {
	// Prices prices the figures; nil leaves every dollar figure 0.
	Prices *pricing.Table
	// Schemas gives, by tool name, the size in bytes of deferred tools'
	// definitions that the session's files hold apart from its requests
	// (Claude Code's deferred_tools_record attachments): used, in a
	// session made from its transcript, where no request carries the
	// schema.
	Schemas map[string]int
}

// Facts is what the advice needs of one session. Its fields are plain
// values, so that facts can be cached and read back.
type Facts struct {
	Ref
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Releases are the Claude Code versions of its threads; Models the
	// request models.
	Releases []string `json:"releases"`
	Models   []string `json:"models"`
	// Turns counts the Messages API turns, Transcript those made from a
	// transcript (Claude Code's files without request records: the tools
	// sent are not known).
	Turns      int `json:"turns"`
	Transcript int `json:"transcript_turns,omitempty"`
	// USD is what the turns cost; Unpriced counts the billed turns whose
	// model has no price.
	USD      float64 `json:"usd"`
	Unpriced int     `json:"unpriced_turns,omitempty"`
	// Tools are the deferred tools (announced in the catalog) and the MCP
	// tools of the session, by name.
	Tools []Tool `json:"tools"`
	// Searches are the tool searches that loaded nothing or left out a
	// catalog tool they named.
	Searches []Search `json:"searches"`
	// Blind are the calls made before the tool's schema was loaded
	// (call_before_load flags).
	Blind []Blind `json:"blind"`
	// Breaks are the cache breaks (cache_break flags).
	Breaks []Break `json:"breaks"`
	// Deferral is what deferring tools saved, or would have.
	Deferral Deferral `json:"deferral"`
	// Cache is what the usage tells of the cache's lifetime.
	Cache CacheLife `json:"cache"`
	// Threads are the session's threads, in order of their first turn.
	Threads []Thread `json:"threads"`
	// Uses are the tools called, Claude Code's own too, in order of
	// their first call.
	Uses []ToolUse `json:"uses"`
}

// Thread is one thread of a session: its turns and what they cost.
type Thread struct {
	ID string `json:"id"`
	// Main: the main conversation (else a subagent or a side query).
	Main  bool    `json:"main,omitempty"`
	Turns int     `json:"turns"`
	USD   float64 `json:"usd"`
}

// Tool is what one tool cost and did in a session.
type Tool struct {
	Name string `json:"name"`
	// Server is the MCP server of an mcp__server__tool, "" for another.
	Server string `json:"server,omitempty"`
	// Deferred: announced in the deferred-tool catalog.
	Deferred bool `json:"deferred,omitempty"`
	// Requests counts the billed requests that offered it (in the catalog
	// or with its schema).
	Requests int `json:"requests"`
	// Waiting counts the billed requests that announced it without its
	// schema; WaitingRate sums the rate each paid for the start of its
	// prompt, in US dollars per million tokens. Loaded up front, its
	// schema would ride in these requests.
	Waiting     int     `json:"waiting"`
	WaitingRate float64 `json:"waiting_rate"`
	// Inline counts the billed requests that sent its schema without a
	// search loading it (tool search off, or a tool loaded up front);
	// InlineTokens and InlineUSD are what that schema cost them.
	Inline       int     `json:"inline,omitempty"`
	InlineTokens int64   `json:"inline_tokens,omitempty"`
	InlineUSD    float64 `json:"inline_usd,omitempty"`
	// Calls counts its calls.
	Calls int `json:"calls"`
	// UsedThreads counts the threads that called it; SearchedThreads
	// those where a search loaded it before its first call there.
	UsedThreads     int `json:"used_threads,omitempty"`
	SearchedThreads int `json:"searched_threads,omitempty"`
	// SearchTurns are the turns whose requests carried those searches'
	// results.
	SearchTurns []int `json:"search_turns,omitempty"`
	// RoundTrips, RoundTripTokens and RoundTripUSD are its share of what
	// those searches cost: the requests made only to carry a search's
	// result (their prompt), and the search calls' output tokens, shared
	// among the tools each search loaded that the thread then called.
	RoundTrips      float64 `json:"round_trips,omitempty"`
	RoundTripTokens int64   `json:"round_trip_tokens,omitempty"`
	RoundTripUSD    float64 `json:"round_trip_usd,omitempty"`
	// SchemaTokens is its definition's size in tokens, SchemaFrom where
	// that comes from (SizeRequest, SizeFiles, SizeEstimate; "" unknown).
	SchemaTokens int64  `json:"schema_tokens,omitempty"`
	SchemaFrom   string `json:"schema_from,omitempty"`
}

// Search is a tool search that loaded nothing (empty_search) or left out
// tools it named (search_partial).
type Search struct {
	// Turn is the turn whose request carried its result.
	Turn   int    `json:"turn"`
	Thread string `json:"thread"`
	// Kind is timeline.FlagEmptySearch or timeline.FlagSearchPartial.
	Kind       string `json:"kind"`
	Query      string `json:"query"`
	Mode       string `json:"mode"`
	MaxResults int    `json:"max_results,omitempty"`
	// Missing are the tools the query named and did not load (the
	// search_partial flag's).
	Missing []string `json:"missing,omitempty"`
	// Wanted is the tool the model wanted: for a search that loaded
	// nothing, what the thread's next search that loaded anything loaded
	// (the first of it the thread then called); for one that left out
	// tools, the first left out. WantedAt is the turn that later loaded
	// it, 0 when none did.
	Wanted   string `json:"wanted,omitempty"`
	WantedAt int    `json:"wanted_at,omitempty"`
	// Terms are a keyword query's terms, each with whether it scores for
	// Wanted under ToolSearch's keyword scoring.
	Terms []Term `json:"terms,omitempty"`
	// DescriptionKnown: a request of the session sent Wanted's schema, so
	// its description was scored.
	DescriptionKnown bool `json:"description_known,omitempty"`
	// Sent: Wanted was already in the working set when the model
	// searched for it (a tool sent whole in every request, or loaded
	// before): the search was needless.
	Sent bool `json:"sent,omitempty"`
	// WouldFind: with the terms that did not score added to Wanted's
	// description, the query returns Wanted from the catalog of the turn.
	WouldFind bool `json:"would_find,omitempty"`
	// RoundTripTokens and RoundTripUSD are what the search cost: the
	// request made only to carry its result, and the call's output.
	RoundTripTokens int64   `json:"round_trip_tokens,omitempty"`
	RoundTripUSD    float64 `json:"round_trip_usd,omitempty"`
	// What followed a search that left tools out, in its thread, from the
	// turn that carried its result on: the turns, what they cost, and the
	// error results they carried.
	TurnsAfter  int     `json:"turns_after,omitempty"`
	USDAfter    float64 `json:"usd_after,omitempty"`
	ErrorsAfter int     `json:"errors_after,omitempty"`
}

// Term is one term of a keyword query.
type Term struct {
	Term   string `json:"term"`
	Scores bool   `json:"scores"`
}

// Blind is a call of a deferred tool whose schema was not loaded.
type Blind struct {
	Turn    int    `json:"turn"`
	Tool    string `json:"tool"`
	Release string `json:"release,omitempty"`
	// Refused: Claude Code answered it with an error.
	Refused bool `json:"refused,omitempty"`
	// USD is what it wasted (timeline.BlindCost); Priced is false when
	// that is not known (no answer in the session, or no price).
	USD    float64 `json:"usd"`
	Priced bool    `json:"priced"`
}

// Break is a cache break.
type Break struct {
	Turn       int    `json:"turn"`
	Cause      string `json:"cause"`
	Model      string `json:"model"`
	TokensLost int64  `json:"tokens_lost"`
	// Read is what the request still read from the cache: more than 0,
	// the start of the prompt was kept and what followed was lost.
	Read int64 `json:"read"`
	// USD is what it cost: the lost tokens billed again instead of read.
	USD    float64 `json:"usd"`
	Priced bool    `json:"priced"`
	// GapSeconds is the time since the turn it continues started (0 when
	// not known); Lifetime the cache lifetime the thread's writes showed
	// before it (Life5m, Life1h, "" unknown); Release the Claude Code
	// release that sent it.
	GapSeconds float64 `json:"gap_s,omitempty"`
	Lifetime   string  `json:"lifetime,omitempty"`
	Release    string  `json:"release,omitempty"`
	// Loaded are the tools a search loaded right before a tools_changed
	// break: their schemas joined the tools, first in the cached prefix.
	Loaded []string `json:"loaded,omitempty"`
}

// Deferral is what deferring tools saved in a session (tool search on),
// or would have saved (off).
type Deferral struct {
	// Mode is ModeOn, ModeOff, or "" when the session had neither deferred
	// nor MCP tools.
	Mode string `json:"mode,omitempty"`
	// Known: the requests' tools are known (not a transcript alone).
	Known bool `json:"known"`
	// SavedUSD and SavedTokens (on): what deferral saved, tooltokens'
	// figures priced as the report prices them (negative: it cost).
	// Estimated: some sizes are estimates; LowerBound: some are unknown.
	SavedUSD    float64 `json:"saved_usd"`
	SavedTokens int64   `json:"saved_tokens"`
	Estimated   bool    `json:"estimated,omitempty"`
	LowerBound  bool    `json:"lower_bound,omitempty"`
	// (off) GrossUSD and GrossTokens are the schemas of the deferrable
	// tools (MCP tools, and those Claude Code's release defers) not yet
	// called in their thread that deferring would have kept out of each
	// request, less their catalog lines; Requests and RateSum count those
	// requests and sum their prefix rates (to charge the search tool's
	// definition to each); RoundTrips and RoundTripUSD are the searches
	// deferring would have added: one per deferrable tool and thread,
	// priced as the prompt of the request whose response first called it
	// read from the cache.
	GrossUSD     float64 `json:"gross_usd,omitempty"`
	GrossTokens  int64   `json:"gross_tokens,omitempty"`
	Requests     int     `json:"requests,omitempty"`
	RateSum      float64 `json:"rate_sum,omitempty"`
	RoundTrips   int     `json:"round_trips,omitempty"`
	RoundTripUSD float64 `json:"round_trip_usd,omitempty"`
	// PoolTokens is the size of the tools deferral puts behind the search
	// (the catalog's, on; the MCP tools sent whole, off), in the largest
	// request; Window the context window assumed for auto:N.
	PoolTokens int64 `json:"pool_tokens"`
	Window     int64 `json:"window"`
	// SearchToolTokens is the size of the search tool's definition where
	// the session sent it.
	SearchToolTokens int64 `json:"search_tool_tokens,omitempty"`
	// Searches counts the client searches with a result, SearchUSD what
	// they cost (their round trips and calls): the price of deferral that
	// SavedUSD does not count.
	Searches  int     `json:"searches,omitempty"`
	SearchUSD float64 `json:"search_usd,omitempty"`
}

// serverOf is the MCP server of a tool name, "" for another tool.
func serverOf(name string) string {
	server, _, ok := decode.SplitMCP(name)
	if !ok {
		return ""
	}
	return server
}

// usageOf is what pricing bills for turn t.
func usageOf(t *timeline.Turn) pricing.Usage {
	u := timeline.PricingUsage(t.Decoded.Response.Usage)
	if t.Exchange != nil {
		u.At = t.Exchange.Start
	}
	return u
}

// promptCost is the price of a turn's prompt alone (its usage less the
// output), and its prompt tokens.
func promptCost(tab *pricing.Table, t *timeline.Turn) (usd float64, tokens int64) {
	if t == nil || t.Decoded == nil {
		return 0, 0
	}
	tokens = t.Decoded.Response.Usage.TotalInput()
	if c, _, ok := timeline.TurnCost(tab, t); ok {
		usd = c.Total - c.Output
	}
	return usd, tokens
}

// extractor holds the state of one Of.
type extractor struct {
	s    *timeline.Session
	tab  *pricing.Table
	f    *Facts
	figs *tooltokens.Figures
	// tools by name, into f.Tools at the end.
	tools map[string]*Tool
	// firstCall is, per thread and tool, the first turn whose response
	// called it, and whether that call was blind.
	firstCall map[string]map[string]int
	// searched marks, per thread, the tools a search loaded before their
	// first call there.
	searched map[string]map[string]bool
	// sizes holds the schema sizes the session's requests show.
	sizes map[string]int64
	// defTokens and offered are requests' own, kept from one request to
	// the next.
	defTokens map[string]int64
	offered   map[string]bool
}

func (x *extractor) tool(name string) *Tool {
	t := x.tools[name]
	if t == nil {
		t = &Tool{Name: name, Server: serverOf(name)}
		x.tools[name] = t
	}
	return t
}

// Of reads what the advice needs of session s. It holds no pointer into
// s: the session can be dropped once Of returns.
func Of(s *timeline.Session, ref Ref, o FactsOptions) *Facts {
	f := &Facts{Ref: ref, Releases: []string{}, Models: []string{}, Tools: []Tool{}, Searches: []Search{}, Blind: []Blind{}, Breaks: []Break{}, Threads: []Thread{}, Uses: []ToolUse{}}
	if s == nil {
		return f
	}
	f.Start, f.End = s.FirstAt, s.LastAt
	x := &extractor{s: s, tab: o.Prices, f: f, figs: tooltokens.Compute(s, nil), tools: map[string]*Tool{},
		firstCall: map[string]map[string]int{}, searched: map[string]map[string]bool{}, sizes: map[string]int64{},
		defTokens: map[string]int64{}, offered: map[string]bool{}}
	for _, th := range s.Threads {
		if th.Client.ClaudeCode() && th.Client.Version != "" && !slices.Contains(f.Releases, th.Client.Version) {
			f.Releases = append(f.Releases, th.Client.Version)
		}
	}
	for _, t := range s.Turns {
		if !messages(t) {
			continue
		}
		x.requests(t)
	}
	x.searches()
	for _, t := range s.Turns {
		if !messages(t) {
			continue
		}
		x.flags(t)
	}
	x.cacheLife()
	x.threadStats()
	x.toolUse()
	x.deferral()
	// The files' schemas stand in where no request carries the tools: a
	// session made from its transcript.
	files := o.Schemas
	if f.Transcript == 0 {
		files = nil
	}
	x.finishTools(files)
	sort.Strings(f.Releases)
	sort.Strings(f.Models)
	return f
}

// messages reports whether t is a decoded Messages API turn.
func messages(t *timeline.Turn) bool {
	return t != nil && t.Decoded != nil && t.Decoded.Request.Kind == decode.KindMessages
}

// billed reports whether t's response carried usage: a request nobody
// knows to have been billed saves or costs nothing.
func billed(t *timeline.Turn) bool { return t.Decoded.Response.Usage.TotalInput() > 0 }

// rateOf is the rate t paid for the start of its prompt, in US dollars
// per million tokens; 0 without a price.
func (x *extractor) rateOf(t *timeline.Turn) float64 {
	if x.tab == nil || !billed(t) {
		return 0
	}
	r, ok := x.tab.PrefixRate(t.Decoded.Request.Model, usageOf(t))
	if !ok {
		return 0
	}
	return r
}

// requests counts what each request carried of each tool, and its cost.
func (x *extractor) requests(t *timeline.Turn) {
	f, d := x.f, t.Decoded
	f.Turns++
	if d.Request.Transcript != nil {
		f.Transcript++
	}
	if m := d.Request.Model; m != "" && !slices.Contains(f.Models, m) {
		f.Models = append(f.Models, m)
	}
	if billed(t) {
		if c, _, ok := timeline.TurnCost(x.tab, t); ok {
			f.USD += c.Total
		} else if x.tab != nil {
			f.Unpriced++
		}
	}
	ft := x.figs.Turn(t.Index)
	defTokens := x.defTokens
	clear(defTokens)
	if ft != nil {
		for _, def := range ft.Definitions {
			if def.Placeholder || def.Name == "" {
				continue
			}
			if _, ok := defTokens[def.Name]; !ok {
				defTokens[def.Name] = def.Tokens
			}
			if (def.Deferred || serverOf(def.Name) != "") && def.Tokens > 0 {
				if _, ok := x.sizes[def.Name]; !ok {
					x.sizes[def.Name] = def.Tokens
				}
			}
		}
	}
	// Calls, per thread, first.
	for _, c := range d.ToolCalls {
		if c.Server {
			continue
		}
		if !c.InCatalog && serverOf(c.Name) == "" && x.tools[c.Name] == nil {
			continue
		}
		x.tool(c.Name).Calls++
		fc := x.firstCall[t.Thread]
		if fc == nil {
			fc = map[string]int{}
			x.firstCall[t.Thread] = fc
		}
		if _, ok := fc[c.Name]; !ok {
			fc[c.Name] = t.Index
		}
	}
	if !billed(t) {
		return
	}
	rate := x.rateOf(t)
	offered := x.offered
	clear(offered)
	for _, name := range d.Catalog {
		tl := x.tool(name)
		tl.Deferred = true
		offered[name] = true
		if !d.InWorkingSet(name) {
			tl.Waiting++
			tl.WaitingRate += rate
		}
	}
	for _, w := range d.WorkingSet {
		if w.Name == decode.ClientSearchTool || isServerSearch(d, w.Name) {
			continue
		}
		if !w.Deferred && serverOf(w.Name) == "" && x.tools[w.Name] == nil {
			continue // Claude Code's own tools, always sent
		}
		tl := x.tool(w.Name)
		offered[w.Name] = true
		if w.Via == decode.ViaAlways && !w.Deferred {
			n := defTokens[w.Name]
			tl.Inline++
			tl.InlineTokens += n
			tl.InlineUSD += float64(n) * rate / 1e6
		}
	}
	for name := range offered {
		x.tool(name).Requests++
	}
}

// flags keeps turn t's blind calls and cache breaks, priced.
func (x *extractor) flags(t *timeline.Turn) {
	for _, fl := range t.Flags {
		switch fl.Kind {
		case timeline.FlagCallBeforeLoad:
			usd, ok := timeline.FlagCost(x.tab, x.s, t, fl)
			x.f.Blind = append(x.f.Blind, Blind{Turn: t.Index, Tool: fl.Tool, Release: t.Client.Version, Refused: fl.Refused, USD: usd, Priced: ok})
		case timeline.FlagCacheBreak:
			usd, ok := timeline.FlagCost(x.tab, x.s, t, fl)
			x.f.Breaks = append(x.f.Breaks, Break{Turn: t.Index, Cause: fl.Cause, Model: t.Decoded.Request.Model, TokensLost: fl.TokensLost,
				Read: t.Decoded.Response.Usage.CacheReadInputTokens, USD: usd, Priced: ok})
		}
	}
}
