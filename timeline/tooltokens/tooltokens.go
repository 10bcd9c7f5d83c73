// Package tooltokens works out what tool definitions cost a session's
// requests in tokens, and what deferring tools saved: per turn, the
// definitions sent and loaded, the search tool, the catalog announcement
// and what the request would have carried with every deferred tool
// inlined; per thread, their sums. The figures are estimates calibrated
// against each request's measured usage ([timeline.Estimates]), or the
// sizes count_tokens answers gave ([CountTokens]).
//
// Package report writes these figures as JSON, Markdown and HTML;
// package timeline/view shows them under the terminal's Catalog tab.
package tooltokens

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"sort"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/toolsearch/claudetools"
)

// CharsPerToken is the densest rate the token estimates assume
// (timeline.CharsPerToken): a part of n bytes is never counted as more
// than n / 2.5 tokens.
const CharsPerToken = timeline.CharsPerToken

// Sources of a token figure (Definition.TokensFrom).
const (
	// FromEstimate: the definition's share of its request's measured
	// prompt tokens, by bytes (see Method).
	FromEstimate = "estimate"
	// FromCountTokens: the difference between two recorded count_tokens
	// answers for requests that differ by this definition alone.
	FromCountTokens = "count_tokens"
)

// Method says in words how the tool-definition token figures are made,
// for every format to print beside them.
const Method = "Token figures of parts of a request are estimates calibrated against the usage the API recorded for that request: " +
	"each part gets its share of the request's prompt tokens (input, cache reads and writes) by bytes, images and documents aside, " +
	"and never more than one token per 2.5 bytes, so the parts of a request never add up to more than its measured prompt. " +
	"A definition whose size two count_tokens answers give (requests that differ by it alone) takes that size instead. " +
	"\"Sent\" counts the definitions the model sees in a request: the tools sent without defer_loading and the deferred tools loaded so far. " +
	"\"All inlined\" is what the same request would carry with every tool of the deferred-tool catalog inlined and no search tool. " +
	"Claude Code sends a deferred tool's schema only once it is loaded, so most catalog tools are never seen: " +
	"one of Claude Code's own is counted at its size in the Claude Code release the project recorded that stands for the capture's, " +
	"an MCP tool at the average size of the deferred schemas the capture holds from its server " +
	"(else, as for a tool of neither kind, of all the deferred schemas the capture holds), and the figures that use such sizes are estimates (≈); " +
	"when the capture holds no deferred schema at all, such tools are left out and \"saved\" is a lower bound (≥). " +
	"\"Saved\" is all inlined minus sent minus the catalog announcement (the lines that list the deferred tools' names, not the message around them); " +
	"it is priced at the rate each request paid for the start of its prompt."

// Definition is one entry of a request's tools, measured.
type Definition struct {
	Name string
	// Type is the tool's type for server and built-in tools
	// (tool_search_tool_regex_20251119, web_search_20250305, ...), "" for
	// custom tools.
	Type string
	// Deferred is set for defer_loading tools.
	Deferred bool
	// Placeholder is set for Claude Code's DeferredToolPlaceholder.
	Placeholder bool
	// Loaded is set when the model sees the schema in this request: a tool
	// of the working set.
	Loaded bool
	// SHA256 is the definition's [Hash].
	SHA256 string
	// Tokens is the definition's size in tokens, TokensFrom where that
	// figure comes from (FromEstimate or FromCountTokens).
	Tokens     int64
	TokensFrom string
}

// Tokens is what tool definitions cost one request, in tokens.
type Tokens struct {
	// Sent is the definitions the model sees: the working set.
	Sent int64
	// Loaded is the part of Sent that deferred tools loaded so far make up
	// (by search, addition, or restored after compaction).
	Loaded int64
	// SearchTool is the part of Sent the search tools make up (ToolSearch,
	// tool_search_tool_*).
	SearchTool int64
	// Announcement is the catalog announcement: the text blocks in the
	// messages that list the deferred tools' names.
	Announcement int64
	// Inlined is what the request would carry with every catalog tool
	// inlined and no search tool, tools of unknown size left out.
	Inlined int64
	// Saved is Inlined minus Sent minus Announcement: what deferral saved
	// on this request (negative when it cost). An estimate when Estimated
	// is not 0, a lower bound when Unknown is not 0.
	Saved int64
	// Unknown counts the catalog tools whose size is unknown: their
	// schema never appears in the capture and no other deferred schema
	// does either (Turn.Unknown names them). They are left out of
	// Inlined.
	Unknown int
	// Estimated counts the catalog tools whose schema never appears in the
	// capture, counted in Inlined at the average size of the deferred
	// schemas it holds (Turn.Estimated names them).
	Estimated int
	// Prompt is the request's prompt as the API measured it (input, cache
	// reads and writes), 0 when its response carried no usage; the
	// figures above that the request carried sum to at most it.
	Prompt int64
	// BytesPerToken is the rate the estimates of this request used: its
	// body's bytes (images and documents aside) per prompt token, at least
	// CharsPerToken.
	BytesPerToken float64
	// NotRecorded: the request's tools are not known (a request made from
	// a transcript); every figure above but Prompt is 0.
	NotRecorded bool
}

// Turn is the figures of one turn of the session.
type Turn struct {
	Index  int
	Thread string
	// Definitions lists the request's tools as sent, measured; nil when
	// the turn was not decoded.
	Definitions []Definition
	// Tokens is what the definitions cost the request; zero when the turn
	// was not decoded.
	Tokens Tokens
	// Unknown and Estimated name the catalog tools of unknown and of
	// estimated size, in catalog order.
	Unknown, Estimated []string
}

// Thread sums Tokens over the turns of a thread: the tool-definition
// tokens the thread's requests carried, and what they would have carried
// with every deferred tool inlined.
type Thread struct {
	Thread string
	Turns  int
	// Searches counts the thread's tool searches; EmptySearches those that
	// loaded nothing.
	Searches      int
	EmptySearches int
	// LoadedTools lists the deferred tools the thread loaded, in order.
	LoadedTools  []string
	Sent         int64
	Loaded       int64
	SearchTool   int64
	Announcement int64
	Inlined      int64
	Saved        int64
	// Unknown lists the catalog tools of unknown size in any of the
	// thread's turns, Estimated those whose size is estimated, sorted.
	Unknown   []string
	Estimated []string
	// UnknownSlots sums, over the thread's requests, the catalog tools of
	// unknown size each request left out of Inlined.
	UnknownSlots int64
	// BreakEven, when Saved is negative and some sizes are unknown, is the
	// average size in tokens the tools of unknown size would need for
	// deferral to have saved anything: -Saved / UnknownSlots, rounded up.
	BreakEven int64
	// KnownDeferred counts the thread's deferred tools whose size is
	// known (their schema was sent); KnownDeferredAverage is their
	// average size in tokens, a yardstick for BreakEven.
	KnownDeferred        int
	KnownDeferredAverage int64
}

// Figures are the tool-definition figures of a whole session.
type Figures struct {
	// Turns has one entry per turn of the session, in its order.
	Turns []Turn
	// Threads has one entry per thread of the session, in its order.
	Threads []Thread
	// CountTokensUsed counts the distinct definitions whose size comes
	// from count_tokens answers.
	CountTokensUsed int
	// byIndex finds a turn's entry in Turns by its index.
	byIndex map[int]int
}

// Turn returns the figures of the turn with the given index, or nil.
func (f *Figures) Turn(index int) *Turn {
	if f == nil {
		return nil
	}
	i, ok := f.byIndex[index]
	if !ok {
		return nil
	}
	return &f.Turns[i]
}

// Compute works out the figures of s, with the definition sizes counts
// gives (see [CountTokens]; nil for none) used instead of estimates. A
// nil session has no figures.
func Compute(s *timeline.Session, counts Counts) *Figures {
	f := &Figures{Turns: []Turn{}, Threads: []Thread{}, byIndex: map[int]int{}}
	if s == nil {
		return f
	}
	ds := newDefinitions(s, counts)
	f.Turns = make([]Turn, 0, len(s.Turns))
	for _, t := range s.Turns {
		if t == nil {
			continue
		}
		ft := Turn{Index: t.Index, Thread: t.Thread}
		switch {
		case t.Decoded != nil && t.Decoded.Request.Transcript != nil:
			ft.Tokens = Tokens{Prompt: t.Decoded.Response.Usage.TotalInput(), NotRecorded: true}
		case t.Decoded != nil:
			ds.turn(&ft, t.Decoded)
		}
		f.byIndex[t.Index] = len(f.Turns)
		f.Turns = append(f.Turns, ft)
	}
	summarise(f, s)
	return f
}

// definition is what is known of one tool definition: its size in bytes
// (compact JSON, cache_control left out), or in tokens when count_tokens
// answers measured it.
type definition struct {
	hash   string
	bytes  int
	tokens int64 // from count_tokens; 0 when only bytes are known
}

// at is the definition's size in tokens at rate tokens per byte, and
// where that figure comes from.
func (d definition) at(rate float64) (int64, string) {
	if d.tokens > 0 {
		return d.tokens, FromCountTokens
	}
	return timeline.Tokens(d.bytes, rate), FromEstimate
}

// definitions measures tool definitions, remembering the first definition
// seen of each tool name in the whole capture.
type definitions struct {
	counts Counts
	byName map[string]definition
	// deferred sums the sizes of the deferred definitions the capture
	// holds (each tool once), by MCP server ("" for all of them).
	deferred map[string]*sizeSum
	// measured holds each distinct definition measured, by its raw bytes:
	// every turn sends the same tools again.
	measured map[string]definition
	est      *timeline.Estimates
	// rates is the last measured rate of each thread, for a request whose
	// response carried no usage.
	rates map[string]float64
	// claudeCode is the Claude Code version of the capture's first Claude
	// Code thread, "" when none: its own deferred tools' sizes are those
	// the project recorded of that release (claudetools).
	claudeCode string
}

// sizeSum is the sum and count of definition sizes, in bytes.
type sizeSum struct{ bytes, n int }

func newDefinitions(s *timeline.Session, counts Counts) *definitions {
	ds := &definitions{counts: counts, byName: map[string]definition{}, deferred: map[string]*sizeSum{},
		measured: map[string]definition{}, est: timeline.NewEstimates(), rates: map[string]float64{}}
	for _, th := range s.Threads {
		if th.Client.ClaudeCode() && th.Client.Version != "" {
			ds.claudeCode = th.Client.Version
			break
		}
	}
	for _, t := range s.Turns {
		if t == nil || t.Decoded == nil {
			continue
		}
		for _, tool := range t.Decoded.Request.Tools {
			if tool.Placeholder || tool.Name == "" {
				continue
			}
			if _, ok := ds.byName[tool.Name]; ok {
				continue
			}
			d := ds.measure(tool.Raw)
			ds.byName[tool.Name] = d
			if tool.DeferLoading {
				ds.addDeferred("", d.bytes)
				if srv := mcpServer(tool.Name); srv != "" {
					ds.addDeferred(srv, d.bytes)
				}
			}
		}
	}
	return ds
}

func (ds *definitions) addDeferred(key string, n int) {
	sum := ds.deferred[key]
	if sum == nil {
		sum = &sizeSum{}
		ds.deferred[key] = sum
	}
	sum.bytes += n
	sum.n++
}

// mcpServer is "mcp__server__" for an MCP tool's name, "" for another.
func mcpServer(name string) string {
	server, _, ok := decode.SplitMCP(name)
	if !ok {
		return ""
	}
	return decode.MCPPrefix + server + "__"
}

// guess is the size, in bytes, a catalog tool whose schema the capture
// does not hold is counted at: for one of Claude Code's own tools, its
// size in the release the project recorded that stands for the
// capture's; else the average deferred schema of its MCP server, else of
// all deferred schemas. ok is false when there is none.
func (ds *definitions) guess(name string) (int, bool) {
	srv := mcpServer(name)
	if srv == "" && ds.claudeCode != "" {
		if n, ok := claudetools.Size(ds.claudeCode, name); ok {
			return n, true
		}
	}
	if srv != "" {
		if sum := ds.deferred[srv]; sum != nil {
			return (sum.bytes + sum.n/2) / sum.n, true
		}
	}
	if sum := ds.deferred[""]; sum != nil {
		return (sum.bytes + sum.n/2) / sum.n, true
	}
	return 0, false
}

func (ds *definitions) measure(raw json.RawMessage) definition {
	if d, ok := ds.measured[string(raw)]; ok {
		return d
	}
	d := ds.measureNew(raw)
	ds.measured[string(raw)] = d
	return d
}

func (ds *definitions) measureNew(raw json.RawMessage) definition {
	c := timeline.CanonicalJSON(raw)
	sum := sha256.Sum256(c)
	d := definition{hash: hex.EncodeToString(sum[:]), bytes: len(c)}
	if n, ok := ds.counts[d.hash]; ok && n > 0 {
		d.tokens = n
	}
	return d
}

// rate is the tokens per byte of d's request (timeline.Estimates), or,
// when its response carried no usage, the last measured rate of its
// thread.
func (ds *definitions) rate(thread string, d *decode.Turn) (float64, bool) {
	r, ok := ds.est.PromptRate(d)
	if ok {
		ds.rates[thread] = r
		return r, true
	}
	if last, ok := ds.rates[thread]; ok {
		return last, false
	}
	return r, false
}

// turn fills ft's Definitions, Tokens, Unknown and Estimated from its
// decoded turn d. Turns must come in the session's order: a request
// without usage takes the rate of the one before it in its thread.
func (ds *definitions) turn(ft *Turn, d *decode.Turn) {
	rate, _ := ds.rate(ft.Thread, d)
	ft.Definitions = make([]Definition, 0, len(d.Request.Tools))
	own := map[string]int64{}
	for _, tool := range d.Request.Tools {
		m := ds.measure(tool.Raw)
		n, from := m.at(rate)
		if tool.Name != "" {
			if _, ok := own[tool.Name]; !ok {
				own[tool.Name] = n
			}
		}
		ft.Definitions = append(ft.Definitions, Definition{
			Name: tool.Name, Type: tool.Type, Deferred: tool.DeferLoading, Placeholder: tool.Placeholder,
			Loaded: d.InWorkingSet(tool.Name) && !tool.Placeholder,
			SHA256: m.hash, Tokens: n, TokensFrom: from,
		})
	}
	tt := Tokens{Prompt: d.Response.Usage.TotalInput(), BytesPerToken: math.Round(100/rate) / 100}
	working := map[string]bool{}
	for _, w := range d.WorkingSet {
		working[w.Name] = true
		n, ok := own[w.Name]
		if !ok {
			continue
		}
		tt.Sent += n
		switch {
		case isSearchTool(d, w.Name):
			tt.SearchTool += n
		case w.Deferred || w.Via != decode.ViaAlways:
			tt.Loaded += n
			tt.Inlined += n
		default:
			tt.Inlined += n
		}
	}
	for _, name := range d.Catalog {
		if working[name] {
			continue
		}
		if n, ok := own[name]; ok {
			tt.Inlined += n
			continue
		}
		if m, ok := ds.byName[name]; ok {
			n, _ := m.at(rate)
			tt.Inlined += n
			continue
		}
		if b, ok := ds.guess(name); ok {
			tt.Estimated++
			ft.Estimated = append(ft.Estimated, name)
			tt.Inlined += timeline.Tokens(b, rate)
			continue
		}
		tt.Unknown++
		ft.Unknown = append(ft.Unknown, name)
	}
	tt.Announcement = timeline.Tokens(announcementBytes(d), rate)
	tt.Saved = tt.Inlined - tt.Sent - tt.Announcement
	ft.Tokens = tt
}

// isSearchTool reports whether name is the request's search tool: Claude
// Code's ToolSearch, or a server tool_search_tool_*.
func isSearchTool(d *decode.Turn, name string) bool {
	if name == decode.ClientSearchTool {
		return true
	}
	for _, t := range d.Request.Tools {
		if t.Name == name && t.ServerSearch {
			return true
		}
	}
	return false
}

// announcementBytes measures the announcements and removals of deferred
// tools in the messages: the lines that list the names, not the rest of
// the text block or message they sit in.
func announcementBytes(d *decode.Turn) int {
	n := 0
	for _, ev := range d.CatalogEvents {
		if ev.Message >= 0 {
			n += ev.Len
		}
	}
	return n
}

// summarise sums the turns' figures per thread of s.
func summarise(f *Figures, s *timeline.Session) {
	counted := map[string]bool{}
	for _, t := range f.Turns {
		for _, d := range t.Definitions {
			if d.TokensFrom == FromCountTokens && !counted[d.SHA256] {
				counted[d.SHA256] = true
				f.CountTokensUsed++
			}
		}
	}
	byID := map[string]int{}
	for _, th := range s.Threads {
		if th == nil {
			continue
		}
		byID[th.ID] = len(f.Threads)
		f.Threads = append(f.Threads, Thread{Thread: th.ID, LoadedTools: []string{}, Unknown: []string{}, Estimated: []string{}})
	}
	// f.Turns holds the session's turns but the nil ones, in order.
	i := -1
	for _, t := range s.Turns {
		if t == nil {
			continue
		}
		i++
		ft := &f.Turns[i]
		k, ok := byID[ft.Thread]
		if !ok {
			continue
		}
		th := &f.Threads[k]
		th.Turns++
		if t.Decoded != nil {
			th.Searches += len(t.NewSearches)
			for _, q := range t.NewSearches {
				if len(q.Results) == 0 {
					th.EmptySearches++
				}
			}
		}
		for _, n := range t.WorkingAdded {
			if v := via(t.Decoded, n); v != decode.ViaAlways && !slices.Contains(th.LoadedTools, n) {
				th.LoadedTools = append(th.LoadedTools, n)
			}
		}
		tt := ft.Tokens
		th.Sent += tt.Sent
		th.Loaded += tt.Loaded
		th.SearchTool += tt.SearchTool
		th.Announcement += tt.Announcement
		th.Inlined += tt.Inlined
		th.Saved += tt.Saved
		th.UnknownSlots += int64(tt.Unknown)
	}
	// The deferred tools of known size, per thread, each counted once.
	known := make([]map[string]int64, len(f.Threads))
	for i := range f.Turns {
		ft := &f.Turns[i]
		k, ok := byID[ft.Thread]
		if !ok {
			continue
		}
		for _, d := range ft.Definitions {
			if d.Deferred && !d.Placeholder && d.Tokens > 0 {
				if known[k] == nil {
					known[k] = map[string]int64{}
				}
				known[k][d.Name] = d.Tokens
			}
		}
	}
	for k := range f.Threads {
		th := &f.Threads[k]
		var sum int64
		for _, n := range known[k] {
			sum += n
		}
		if th.KnownDeferred = len(known[k]); th.KnownDeferred > 0 {
			th.KnownDeferredAverage = (sum + int64(th.KnownDeferred)/2) / int64(th.KnownDeferred)
		}
		if th.Saved < 0 && th.UnknownSlots > 0 {
			th.BreakEven = (-th.Saved + th.UnknownSlots - 1) / th.UnknownSlots
		}
	}
	// The unknown and estimated names, from the turns' catalogs.
	for i := range f.Turns {
		ft := &f.Turns[i]
		k, ok := byID[ft.Thread]
		if !ok {
			continue
		}
		th := &f.Threads[k]
		for _, n := range ft.Unknown {
			if !slices.Contains(th.Unknown, n) {
				th.Unknown = append(th.Unknown, n)
			}
		}
		for _, n := range ft.Estimated {
			if !slices.Contains(th.Estimated, n) {
				th.Estimated = append(th.Estimated, n)
			}
		}
	}
	for i := range f.Threads {
		sort.Strings(f.Threads[i].Unknown)
		sort.Strings(f.Threads[i].Estimated)
	}
}

// via is how name got into d's working set (always, search, addition,
// restored), "" when d is nil or its working set lacks name.
func via(d *decode.Turn, name string) string {
	if d == nil {
		return ""
	}
	v := ""
	for _, w := range d.WorkingSet {
		if w.Name == name {
			v = w.Via
		}
	}
	return v
}

// SavedUSD prices saved tool-definition tokens (Tokens.Saved, negative
// when deferral cost) of a request of the given model and usage at the
// rate it paid for the start of its prompt (cache read, cache write or
// input). ok is false when the model has no price.
func SavedUSD(tab *pricing.Table, model string, u pricing.Usage, saved int64) (usd float64, ok bool) {
	if tab == nil || model == "" {
		return 0, false
	}
	// A request with no usage (an HTTP error, or an answer whose usage was
	// not recorded) was not billed as far as anyone knows: it saved
	// nothing in dollars.
	if u.Prompt() == 0 {
		return 0, true
	}
	rate, ok := tab.PrefixRate(model, u)
	if !ok {
		return 0, false
	}
	return float64(saved) * rate / 1e6, true
}

// Mark is how exact a deferral figure is: "≥ " when catalog tools of
// unknown size are left out of it (a lower bound), "≈" when some are
// counted at an estimated size, "" when every size was seen.
func Mark(unknown, estimated int) string {
	switch {
	case unknown > 0:
		return "≥ "
	case estimated > 0:
		return "≈"
	}
	return ""
}

// TokensText writes a deferral token figure with its mark: "≈2,263",
// "≥ −1,092", "2,263".
func TokensText(n int64, unknown, estimated int) string {
	return Mark(unknown, estimated) + numfmt.Thousands(n)
}
