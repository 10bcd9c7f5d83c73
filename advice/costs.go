package advice

import (
	"sort"
)

// Ways CostsBy groups the tools.
const (
	ByTool   = "tool"
	ByServer = "server"
)

// OwnTools is the server name CostsBy gives the tools of no MCP server
// (Claude Code's own).
const OwnTools = "(Claude Code's own)"

// ToolCost is what one tool, or one MCP server's tools, did and cost
// over the sessions read.
type ToolCost struct {
	// Name is the tool's, or the server's (OwnTools for the tools of
	// none).
	Name     string `json:"name"`
	Sessions int    `json:"sessions"`
	Calls    int    `json:"calls"`
	Errors   int    `json:"errors,omitempty"`
	// ResultTokens estimates the results' size; SchemaTokens is the
	// schemas' size where known (for a server, the sum of its tools'
	// known sizes), 0 when not.
	ResultTokens int64 `json:"result_tokens"`
	SchemaTokens int64 `json:"schema_tokens,omitempty"`
	// Searches counts the searches that loaded it before a first call,
	// Blind the calls made before its schema was loaded.
	Searches int `json:"searches,omitempty"`
	Blind    int `json:"blind,omitempty"`
	// What it cost: its results, each once at the rate its request wrote
	// new tokens; the searches' round trips before first calls; its
	// schema where sent whole without a search; the refused blind calls;
	// its share of the cache rewrites after a search loaded it. CostUSD
	// is their sum.
	ResultUSD  float64 `json:"result_usd"`
	SearchUSD  float64 `json:"search_usd,omitempty"`
	SchemaUSD  float64 `json:"schema_usd,omitempty"`
	BlindUSD   float64 `json:"blind_usd,omitempty"`
	RewriteUSD float64 `json:"rewrite_usd,omitempty"`
	CostUSD    float64 `json:"cost_usd"`
}

// CostsBy sums what each tool (by ByTool) or each MCP server's tools (by
// ByServer) did and cost over fs, the costliest first.
func CostsBy(fs []*Facts, by string) []ToolCost {
	rows := map[string]*ToolCost{}
	in := map[string]map[*Facts]bool{}
	key := func(name string) string {
		if by != ByServer {
			return name
		}
		if s := serverOf(name); s != "" {
			return s
		}
		return OwnTools
	}
	row := func(f *Facts, name string) *ToolCost {
		k := key(name)
		r := rows[k]
		if r == nil {
			r = &ToolCost{Name: k}
			rows[k] = r
			in[k] = map[*Facts]bool{}
		}
		if !in[k][f] {
			in[k][f] = true
			r.Sessions++
		}
		return r
	}
	sizes := map[string]int64{}
	for _, f := range fs {
		for _, u := range f.Uses {
			r := row(f, u.Name)
			r.Calls += u.Calls
			r.Errors += u.Errors
			r.ResultTokens += u.ResultTokens
			r.ResultUSD += u.ResultUSD
		}
		for _, t := range f.Tools {
			if t.Calls == 0 && t.Inline == 0 && len(t.SearchTurns) == 0 {
				continue // announced only: the never-used advice counts it
			}
			r := row(f, t.Name)
			r.Searches += len(t.SearchTurns)
			r.SearchUSD += t.RoundTripUSD
			r.SchemaUSD += t.InlineUSD
			if t.SchemaTokens > 0 && t.SchemaFrom != SizeEstimate {
				sizes[t.Name] = max(sizes[t.Name], t.SchemaTokens)
			}
		}
		for _, b := range f.Blind {
			r := row(f, b.Tool)
			r.Blind++
			r.BlindUSD += b.USD
		}
		for _, b := range f.Breaks {
			for _, name := range b.Loaded {
				row(f, name).RewriteUSD += b.USD / float64(len(b.Loaded))
			}
		}
	}
	for name, n := range sizes {
		if r := rows[key(name)]; r != nil {
			r.SchemaTokens += n
		}
	}
	out := make([]ToolCost, 0, len(rows))
	for _, r := range rows {
		r.CostUSD = r.ResultUSD + r.SearchUSD + r.SchemaUSD + r.BlindUSD + r.RewriteUSD
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CostUSD != out[j].CostUSD {
			return out[i].CostUSD > out[j].CostUSD
		}
		return out[i].Name < out[j].Name
	})
	return out
}
