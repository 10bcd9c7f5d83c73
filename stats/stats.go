// Package stats answers questions across many captures at once: which MCP
// tools were offered, found by a search, loaded, called and called blind;
// how often each flag kind is raised per 100 turns and in which captures;
// what cache breaks cost, in tokens and, with a [pricing.Table], in US
// dollars; and how each client version and model fared.
//
// [Add] folds one decoded session into a [Table]; [Table.Merge] joins
// tables, so that captures can be read in parallel and only their sums
// kept. The package does no I/O besides writing a table.
package stats

import (
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/coverage"
	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
)

// Table sums many captures. Its JSON field names are a contract: fields
// may be added, never renamed.
type Table struct {
	Captures  int `json:"captures"`
	Turns     int `json:"turns"`
	Exchanges int `json:"exchanges"`
	// Servers lists the MCP servers whose tools the captures offered, by
	// name, each with its tools.
	Servers []Server `json:"servers"`
	// Flags lists each flag kind raised, in timeline.Kinds order.
	Flags []FlagKind `json:"flags"`
	// CacheBreaks sums the cache_break flags.
	CacheBreaks CacheBreaks `json:"cache_breaks"`
	// Clients and Models break the turns down by Claude Code version and
	// by request model.
	Clients []Group `json:"clients"`
	Models  []Group `json:"models"`
	// Priced is set when dollar figures were computed; Prices describes
	// the price table and PricesTaken is the date of its prices.
	Priced      bool   `json:"priced"`
	Prices      string `json:"prices,omitempty"`
	PricesTaken string `json:"prices_taken,omitempty"`
	// Estimated lists the models not in the price table that were priced
	// as their nearest neighbour in it, as "MODEL as PRICED_AS".
	Estimated []string `json:"estimated"`

	servers map[string]*Counts // per server: captures offering, loading
	tools   map[string]*ToolStats
	flags   map[string]*FlagKind
	clients map[string]*Group
	models  map[string]*Group
	prices  *pricing.Table
	// estimated holds Estimated as a set.
	estimated map[string]bool
}

// Server sums the tools of one MCP server. Its Offered and Loaded count
// the captures that offered (loaded) any of its tools; Found, Called and
// Blind sum its tools'.
type Server struct {
	Name string `json:"name"`
	Counts
	Tools []ToolStats `json:"tools"`
}

// ToolStats is what happened to one MCP tool across the captures.
type ToolStats struct {
	Name string `json:"name"` // the full name, mcp__server__tool
	Counts
}

// Counts are the per-tool (or per-server) figures.
type Counts struct {
	// Offered counts the captures whose catalog or working set held the
	// tool.
	Offered int `json:"offered"`
	// Found counts the tool searches whose results held it.
	Found int `json:"found"`
	// Loaded counts the captures in which its schema was loaded: by a
	// search (or restored), or always for a tool never deferred.
	Loaded int `json:"loaded"`
	// Called counts its calls; Blind those made while its schema was not
	// loaded.
	Called int `json:"called"`
	Blind  int `json:"blind"`
}

func (c *Counts) add(o Counts) {
	c.Offered += o.Offered
	c.Found += o.Found
	c.Loaded += o.Loaded
	c.Called += o.Called
	c.Blind += o.Blind
}

// FlagKind sums the flags of one kind.
type FlagKind struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
	// Per100Turns is Count per 100 turns of all the captures.
	Per100Turns float64 `json:"per_100_turns"`
	// Captures names the captures that raised it, sorted.
	Captures []string `json:"captures"`
}

// CacheBreaks sums the cache breaks.
type CacheBreaks struct {
	Count int `json:"count"`
	// TokensLost is the prompt tokens written to the cache again that a
	// kept cache would have read.
	TokensLost int64 `json:"tokens_lost"`
	// ByCause counts the breaks by their cause.
	ByCause map[string]int `json:"by_cause"`
	// USD is what the breaks cost in US dollars: their tokens_lost billed
	// again (as cache writes or uncached input) instead of read. Unpriced
	// counts the breaks on a model the price table does not know, left
	// out of USD; Estimated those on a model priced as a neighbour of its
	// family.
	USD       float64 `json:"usd"`
	Unpriced  int     `json:"unpriced"`
	Estimated int     `json:"estimated"`
}

// Group sums the turns of one client version or one model.
type Group struct {
	Name     string `json:"name"` // "" when unknown
	Captures int    `json:"captures"`
	Turns    int    `json:"turns"`
	Flags    int    `json:"flags"`
	// CacheBreaks and TokensLost sum the cache_break flags.
	CacheBreaks  int   `json:"cache_breaks"`
	TokensLost   int64 `json:"tokens_lost"`
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	CacheRead    int64 `json:"cache_read_input_tokens"`
	CacheWrite   int64 `json:"cache_creation_input_tokens"`
	// USD is what the turns cost in US dollars, BreakUSD what the cache
	// breaks among them cost; Unpriced counts the turns without a price,
	// Estimated those whose model is not in the price table and was
	// priced as a neighbour in the table.
	USD       float64 `json:"usd"`
	BreakUSD  float64 `json:"break_usd"`
	Unpriced  int     `json:"unpriced"`
	Estimated int     `json:"estimated"`
}

// New returns an empty table. prices, when not nil, gives dollar figures
// beside the token counts.
func New(prices *pricing.Table) *Table {
	t := &Table{prices: prices, Priced: prices != nil, estimated: map[string]bool{},
		servers: map[string]*Counts{}, tools: map[string]*ToolStats{}, flags: map[string]*FlagKind{},
		clients: map[string]*Group{}, models: map[string]*Group{},
		CacheBreaks: CacheBreaks{ByCause: map[string]int{}},
	}
	if prices != nil {
		t.Prices, t.PricesTaken = prices.Describe(), prices.Taken
	}
	return t
}

// IsMCP reports whether a tool name is an MCP tool's (mcp__server__tool).
func IsMCP(name string) bool { return strings.HasPrefix(name, "mcp__") }

// ServerOf returns the server part of an MCP tool name, "" for another
// tool.
func ServerOf(name string) string {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return ""
	}
	server, _, _ := strings.Cut(rest, "__")
	return server
}

// Add folds one capture's session into t. name identifies the capture in
// the flag lists. Each turn counts under its client as the timeline names
// it (Claude Code by its version, from its User-Agent or its billing
// header; another client by name and version); client is used for the
// turns whose request names none ("" if unknown).
func (t *Table) Add(name, client string, s *timeline.Session) {
	t.Captures++
	t.Exchanges += s.Exchanges
	_, tools := coverage.Of(s, coverage.Options{Match: IsMCP})
	offered, loaded := map[string]bool{}, map[string]bool{}
	for _, tool := range tools {
		c := Counts{Found: len(tool.FoundBy), Called: tool.Calls, Blind: tool.Blind}
		if tool.Turns > 0 {
			c.Offered = 1
		}
		if tool.FirstLoaded > 0 || (!tool.Deferred && tool.Turns > 0) {
			c.Loaded = 1
		}
		t.tool(tool.Name).add(c)
		srv := ServerOf(tool.Name)
		offered[srv] = offered[srv] || c.Offered > 0
		loaded[srv] = loaded[srv] || c.Loaded > 0
	}
	for srv := range offered {
		sc := t.server(srv)
		if offered[srv] {
			sc.Offered++
		}
		if loaded[srv] {
			sc.Loaded++
		}
	}
	groupSeen := map[*Group]bool{}
	flagSeen := map[string]bool{}
	for _, turn := range s.Turns {
		d := turn.Decoded
		if d == nil || d.Request.Kind != decode.KindMessages {
			continue
		}
		t.Turns++
		cg := group(t.clients, clientOf(turn, client))
		mg := group(t.models, d.Request.Model)
		u := d.Response.Usage
		cost, p, priced := timeline.TurnCost(t.prices, turn)
		if priced && p.Estimated {
			t.estimated[d.Request.Model+" as "+p.Model.Model] = true
		}
		for _, g := range []*Group{cg, mg} {
			if !groupSeen[g] {
				groupSeen[g] = true
				g.Captures++
			}
			if priced {
				g.USD += cost.Total
				if p.Estimated {
					g.Estimated++
				}
			} else if t.prices != nil {
				g.Unpriced++
			}
			g.Turns++
			g.Flags += len(turn.Flags)
			g.InputTokens += u.InputTokens
			g.OutputTokens += u.OutputTokens
			g.CacheRead += u.CacheReadInputTokens
			g.CacheWrite += u.CacheCreationInputTokens
		}
		for _, f := range turn.Flags {
			fk := t.flags[f.Kind]
			if fk == nil {
				fk = &FlagKind{Kind: f.Kind}
				t.flags[f.Kind] = fk
			}
			fk.Count++
			if !flagSeen[f.Kind] {
				flagSeen[f.Kind] = true
				fk.Captures = append(fk.Captures, name)
			}
			if f.Kind == timeline.FlagCacheBreak {
				t.CacheBreaks.Count++
				t.CacheBreaks.TokensLost += f.TokensLost
				t.CacheBreaks.ByCause[f.Cause]++
				usd, ok := timeline.FlagCost(t.prices, s, turn, f)
				if ok {
					t.CacheBreaks.USD += usd
					if p.Estimated {
						t.CacheBreaks.Estimated++
					}
				} else if t.prices != nil {
					t.CacheBreaks.Unpriced++
				}
				for _, g := range []*Group{cg, mg} {
					g.CacheBreaks++
					g.TokensLost += f.TokensLost
					g.BreakUSD += usd
				}
			}
		}
	}
}

// clientOf names the client a turn counts under: Claude Code's version,
// another client's name and version, else fallback.
func clientOf(turn *timeline.Turn, fallback string) string {
	c := turn.Client
	switch {
	case c.ClaudeCode() && c.Version != "":
		return c.Version
	case c.Family == timeline.ClientSDK, c.Family == timeline.ClientOther && c.Name != "":
		return c.String()
	}
	return fallback
}

func (t *Table) tool(name string) *ToolStats {
	ts := t.tools[name]
	if ts == nil {
		ts = &ToolStats{Name: name}
		t.tools[name] = ts
	}
	return ts
}

func (t *Table) server(name string) *Counts {
	c := t.servers[name]
	if c == nil {
		c = &Counts{}
		t.servers[name] = c
	}
	return c
}

func group(m map[string]*Group, name string) *Group {
	g := m[name]
	if g == nil {
		g = &Group{Name: name}
		m[name] = g
	}
	return g
}

// Merge adds the sums of o into t.
func (t *Table) Merge(o *Table) {
	t.Captures += o.Captures
	t.Turns += o.Turns
	t.Exchanges += o.Exchanges
	for name, ts := range o.tools {
		t.tool(name).add(ts.Counts)
	}
	for name, c := range o.servers {
		t.server(name).add(*c)
	}
	for k, f := range o.flags {
		fk := t.flags[k]
		if fk == nil {
			fk = &FlagKind{Kind: k}
			t.flags[k] = fk
		}
		fk.Count += f.Count
		fk.Captures = append(fk.Captures, f.Captures...)
	}
	t.CacheBreaks.Count += o.CacheBreaks.Count
	t.CacheBreaks.TokensLost += o.CacheBreaks.TokensLost
	t.CacheBreaks.USD += o.CacheBreaks.USD
	t.CacheBreaks.Unpriced += o.CacheBreaks.Unpriced
	t.CacheBreaks.Estimated += o.CacheBreaks.Estimated
	for e := range o.estimated {
		t.estimated[e] = true
	}
	for c, n := range o.CacheBreaks.ByCause {
		t.CacheBreaks.ByCause[c] += n
	}
	for _, pair := range [][2]map[string]*Group{{t.clients, o.clients}, {t.models, o.models}} {
		for name, g := range pair[1] {
			mine := group(pair[0], name)
			mine.Captures += g.Captures
			mine.Turns += g.Turns
			mine.Flags += g.Flags
			mine.CacheBreaks += g.CacheBreaks
			mine.TokensLost += g.TokensLost
			mine.InputTokens += g.InputTokens
			mine.OutputTokens += g.OutputTokens
			mine.CacheRead += g.CacheRead
			mine.CacheWrite += g.CacheWrite
			mine.USD += g.USD
			mine.BreakUSD += g.BreakUSD
			mine.Unpriced += g.Unpriced
			mine.Estimated += g.Estimated
		}
	}
}

// Finish fills the exported lists from the sums, sorted: servers and
// tools by name, flag kinds in timeline.Kinds order, clients and models
// by turns. Call it once all captures are added.
func (t *Table) Finish() {
	byServer := map[string]*Server{}
	var names []string
	for name := range t.tools {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
	for _, name := range names {
		ts := t.tools[name]
		srv := ServerOf(name)
		s := byServer[srv]
		if s == nil {
			s = &Server{Name: srv}
			byServer[srv] = s
		}
		s.Found += ts.Found
		s.Called += ts.Called
		s.Blind += ts.Blind
		s.Tools = append(s.Tools, *ts)
	}
	var servers []string
	for s := range byServer {
		servers = append(servers, s)
	}
	sort.Strings(servers)
	t.Servers = []Server{}
	for _, s := range servers {
		srv := *byServer[s]
		if c := t.servers[s]; c != nil {
			srv.Offered, srv.Loaded = c.Offered, c.Loaded
		}
		t.Servers = append(t.Servers, srv)
	}

	t.Flags = []FlagKind{}
	order := map[string]int{}
	for i, k := range timeline.Kinds() {
		order[k] = i + 1
	}
	var kinds []string
	for k := range t.flags {
		kinds = append(kinds, k)
	}
	rank := func(k string) int {
		if o, ok := order[k]; ok {
			return o
		}
		return len(order) + 1
	}
	sort.Slice(kinds, func(i, j int) bool {
		if ri, rj := rank(kinds[i]), rank(kinds[j]); ri != rj {
			return ri < rj
		}
		return kinds[i] < kinds[j]
	})
	for _, k := range kinds {
		f := *t.flags[k]
		f.Captures = append([]string{}, f.Captures...)
		sort.Strings(f.Captures)
		if t.Turns > 0 {
			f.Per100Turns = float64(f.Count) * 100 / float64(t.Turns)
		}
		t.Flags = append(t.Flags, f)
	}
	t.Clients = groups(t.clients)
	t.Models = groups(t.models)
	t.Estimated = []string{}
	for e := range t.estimated {
		t.Estimated = append(t.Estimated, e)
	}
	sort.Strings(t.Estimated)
}

func groups(m map[string]*Group) []Group {
	out := make([]Group, 0, len(m))
	for _, g := range m {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Turns != out[j].Turns {
			return out[i].Turns > out[j].Turns
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// naturalLess orders strings with their runs of digits compared as
// numbers: action_2 before action_10.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

// digits counts the ASCII digits s starts with.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
