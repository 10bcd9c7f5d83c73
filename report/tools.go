package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/toolsearch/claudetools"
)

// CharsPerToken is the densest rate the token estimates assume
// (timeline.CharsPerToken): a part of n bytes is never counted as more
// than n / 2.5 tokens.
const CharsPerToken = timeline.CharsPerToken

// Sources of a token figure (ToolDefinition.TokensFrom).
const (
	// FromEstimate: the definition's share of its request's measured
	// prompt tokens, by bytes (see TokenMethod).
	FromEstimate = "estimate"
	// FromCountTokens: the difference between two recorded count_tokens
	// answers for requests that differ by this definition alone.
	FromCountTokens = "count_tokens"
)

// TokenMethod says in words how the tool-definition token figures are
// made, for every format to print beside them.
const TokenMethod = "Token figures of parts of a request are estimates calibrated against the usage the API recorded for that request: " +
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
type Counts map[string]int64

// CountTokens derives definition sizes from the capture's count_tokens
// exchanges: when two answered count_tokens requests have the same model,
// system prompt and messages and their tools differ by one definition, the
// difference of their input_tokens is that definition's size.
func CountTokens(exs []exchange.Exchange) Counts {
	type answer struct {
		tools  []string // definition hashes, sorted
		tokens int64
	}
	groups := map[string][]answer{}
	for i := range exs {
		ex := &exs[i]
		// Only count_tokens exchanges count: the others, long Messages
		// requests, are not decoded again here.
		if ex.Status != 200 || !strings.Contains(ex.URL, "count_tokens") {
			continue
		}
		d := decode.Decode(ex)
		if d.Request.Kind != decode.KindCountTokens || d.Response.Usage.InputTokens <= 0 {
			continue
		}
		a := answer{tokens: d.Response.Usage.InputTokens}
		for _, t := range d.Request.Tools {
			a.tools = append(a.tools, definitionHash(t.Raw))
		}
		sort.Strings(a.tools)
		groups[restKey(&d.Request)] = append(groups[restKey(&d.Request)], a)
	}
	out := Counts{}
	for _, as := range groups {
		for _, small := range as {
			for _, big := range as {
				if len(big.tools) != len(small.tools)+1 || big.tokens <= small.tokens {
					continue
				}
				extra, ok := oneMore(small.tools, big.tools)
				if !ok {
					continue
				}
				if _, seen := out[extra]; !seen {
					out[extra] = big.tokens - small.tokens
				}
			}
		}
	}
	return out
}

// restKey identifies everything of a count_tokens request but its tools.
func restKey(r *decode.Request) string {
	h := sha256.New()
	h.Write([]byte(r.Model))
	for _, s := range r.System {
		h.Write([]byte{0})
		h.Write([]byte(s.Text))
		h.Write(s.Raw)
	}
	for _, m := range r.Messages {
		h.Write([]byte{1})
		h.Write([]byte(m.Role))
		h.Write([]byte(m.Text))
		for _, b := range m.Blocks {
			h.Write([]byte{2})
			h.Write(timeline.CanonicalJSON(b.Raw))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// oneMore returns the one element of big (sorted) that small (sorted)
// lacks, when big is small plus that element.
func oneMore(small, big []string) (string, bool) {
	extra := ""
	i := 0
	for _, b := range big {
		if i < len(small) && small[i] == b {
			i++
			continue
		}
		if extra != "" {
			return "", false
		}
		extra = b
	}
	return extra, i == len(small) && extra != ""
}

// definitionHash is the hex SHA-256 of a definition's canonical JSON.
func definitionHash(raw json.RawMessage) string {
	sum := sha256.Sum256(timeline.CanonicalJSON(raw))
	return hex.EncodeToString(sum[:])
}

// definition is what the report knows of one tool definition: its size
// in bytes (compact JSON, cache_control left out), or in tokens when
// count_tokens answers measured it.
type definition struct {
	hash   string
	bytes  int
	tokens int64 // from count_tokens; 0 when only bytes are known
}

// tokens is the definition's size in tokens at rate tokens per byte, and
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
	// unknown and estimated list, per turn index, the catalog tools of
	// unknown and of estimated size.
	unknown, estimated map[int][]string
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
		unknown: map[int][]string{}, estimated: map[int][]string{}, measured: map[string]definition{},
		est: timeline.NewEstimates(), rates: map[string]float64{}}
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
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return ""
	}
	server, _, ok := strings.Cut(rest, "__")
	if !ok {
		return ""
	}
	return "mcp__" + server + "__"
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

// toolSection fills the turn's ToolDefinitions and ToolTokens.
func (ds *definitions) toolSection(rt *Turn, d *decode.Turn) {
	rate, _ := ds.rate(rt.Thread, d)
	rt.ToolDefinitions = make([]ToolDefinition, 0, len(d.Request.Tools))
	own := map[string]int64{}
	for _, tool := range d.Request.Tools {
		m := ds.measure(tool.Raw)
		n, from := m.at(rate)
		if tool.Name != "" {
			if _, ok := own[tool.Name]; !ok {
				own[tool.Name] = n
			}
		}
		rt.ToolDefinitions = append(rt.ToolDefinitions, ToolDefinition{
			Name: tool.Name, Type: tool.Type, Deferred: tool.DeferLoading, Placeholder: tool.Placeholder,
			Loaded: d.InWorkingSet(tool.Name) && !tool.Placeholder,
			SHA256: m.hash, Tokens: n, TokensFrom: from,
		})
	}
	tt := ToolTokens{Prompt: d.Response.Usage.TotalInput(), BytesPerToken: math.Round(100/rate) / 100}
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
			ds.estimated[rt.Index] = append(ds.estimated[rt.Index], name)
			tt.Inlined += timeline.Tokens(b, rate)
			continue
		}
		tt.Unknown++
		ds.unknown[rt.Index] = append(ds.unknown[rt.Index], name)
	}
	tt.Announcement = timeline.Tokens(announcementBytes(d), rate)
	tt.Saved = tt.Inlined - tt.Sent - tt.Announcement
	rt.ToolTokens = tt
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

// summariseTokens sums the turns' tool tokens per thread.
func summariseTokens(r *Report, ds *definitions) {
	r.TokenSummary = TokenSummary{Method: TokenMethod, CharsPerToken: CharsPerToken, Threads: []ThreadTokens{}}
	counted := map[string]bool{}
	for _, t := range r.Turns {
		for _, d := range t.ToolDefinitions {
			if d.TokensFrom == FromCountTokens && !counted[d.SHA256] {
				counted[d.SHA256] = true
				r.TokenSummary.CountTokensUsed++
			}
		}
	}
	byID := map[string]int{}
	for _, th := range r.Threads {
		byID[th.ID] = len(r.TokenSummary.Threads)
		r.TokenSummary.Threads = append(r.TokenSummary.Threads, ThreadTokens{Thread: th.ID, LoadedTools: []string{}, Unknown: []string{}, Estimated: []string{}})
	}
	for i := range r.Turns {
		t := &r.Turns[i]
		k, ok := byID[t.Thread]
		if !ok {
			continue
		}
		s := &r.TokenSummary.Threads[k]
		s.Turns++
		s.Searches += len(t.ToolSearches)
		for _, q := range t.ToolSearches {
			if len(q.Results) == 0 {
				s.EmptySearches++
			}
		}
		for _, n := range t.WorkingSet.Added {
			if v := t.WorkingSet.Via[n]; v != decode.ViaAlways && !slices.Contains(s.LoadedTools, n) {
				s.LoadedTools = append(s.LoadedTools, n)
			}
		}
		tt := t.ToolTokens
		s.Sent += tt.Sent
		s.Loaded += tt.Loaded
		s.SearchTool += tt.SearchTool
		s.Announcement += tt.Announcement
		s.Inlined += tt.Inlined
		s.Saved += tt.Saved
		s.UnknownSlots += int64(tt.Unknown)
	}
	// The deferred tools of known size, per thread, each counted once.
	known := make([]map[string]int64, len(r.TokenSummary.Threads))
	for i := range r.Turns {
		t := &r.Turns[i]
		k, ok := byID[t.Thread]
		if !ok {
			continue
		}
		for _, d := range t.ToolDefinitions {
			if d.Deferred && !d.Placeholder && d.Tokens > 0 {
				if known[k] == nil {
					known[k] = map[string]int64{}
				}
				known[k][d.Name] = d.Tokens
			}
		}
	}
	for k := range r.TokenSummary.Threads {
		s := &r.TokenSummary.Threads[k]
		var sum int64
		for _, n := range known[k] {
			sum += n
		}
		if s.KnownDeferred = len(known[k]); s.KnownDeferred > 0 {
			s.KnownDeferredAverage = (sum + int64(s.KnownDeferred)/2) / int64(s.KnownDeferred)
		}
		if s.Saved < 0 && s.UnknownSlots > 0 {
			s.BreakEven = (-s.Saved + s.UnknownSlots - 1) / s.UnknownSlots
		}
	}
	// The unknown and estimated names, from the turns' catalogs.
	for i := range r.Turns {
		t := &r.Turns[i]
		k, ok := byID[t.Thread]
		if !ok || ds == nil {
			continue
		}
		s := &r.TokenSummary.Threads[k]
		for _, n := range ds.unknown[t.Index] {
			if !slices.Contains(s.Unknown, n) {
				s.Unknown = append(s.Unknown, n)
			}
		}
		for _, n := range ds.estimated[t.Index] {
			if !slices.Contains(s.Estimated, n) {
				s.Estimated = append(s.Estimated, n)
			}
		}
	}
	for i := range r.TokenSummary.Threads {
		sort.Strings(r.TokenSummary.Threads[i].Unknown)
		sort.Strings(r.TokenSummary.Threads[i].Estimated)
	}
}

// ShortHash is the first 12 hex digits of a definition hash, for tables.
func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
