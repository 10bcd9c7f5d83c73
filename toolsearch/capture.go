package toolsearch

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/timeline"
)

// Options say how Session re-runs searches.
type Options struct {
	// Extra holds tool definitions from outside the capture (an MCP
	// server's tools/list, by Claude Code name); they win over the
	// capture's, as they carry search hints.
	Extra map[string]Tool
	// Algorithm is the keyword scoring; "" means Published.
	Algorithm Algorithm
}

// Explained is one recorded search re-run offline.
type Explained struct {
	Turn   int    // the turn where the search's result is new
	Thread string // its thread
	Search decode.Search
	// Sim is the simulation; Err is set when it could not run (a regex
	// RE2 does not take).
	Sim Result
	Err error
	// Recorded is what the recorded result loaded; Diff is "" when the
	// simulation agrees, else how they differ, and Because the likely
	// reasons.
	Recorded []string
	Diff     string
	Because  []string
	// Pool is the number of deferred tools the search ran over.
	Pool int
}

// Agrees reports whether the simulation ran and matches the recorded
// result.
func (e Explained) Agrees() bool { return e.Err == nil && e.Diff == "" }

// Session re-runs every search of the session once, on the turn where its
// result is new, over the catalog of the moment the model made the call.
// Descriptions come from the tool definitions any request of the session
// carries (a capture announces deferred tools by name only); a tool whose
// definition never appears scores without one, unless Options.Extra has
// it. Searches without a recorded result are skipped.
func Session(s *timeline.Session, o Options) []Explained {
	defs := Definitions(s)
	for n, t := range o.Extra {
		defs[n] = t
	}
	if o.Algorithm == "" {
		o.Algorithm = Published
	}
	byIndex := map[int]*timeline.Turn{}
	for _, t := range s.Turns {
		byIndex[t.Index] = t
	}
	var out []Explained
	for _, t := range s.Turns {
		d := t.Decoded
		if d == nil || d.Request.Kind != decode.KindMessages {
			continue
		}
		for _, sr := range t.NewSearches {
			if !sr.HasResult {
				continue
			}
			e := Explained{Turn: t.Index, Thread: t.Thread, Search: sr, Recorded: sr.Results}
			if sr.Server {
				e = explainServer(e, d, defs)
			} else {
				callTools := d.Request.Tools
				if p := byIndex[t.Prev]; p != nil && p.Decoded != nil {
					callTools = p.Decoded.Request.Tools
				}
				e = explainClient(e, o.Algorithm, d, callTools, defs)
			}
			out = append(out, e)
		}
	}
	return out
}

// explainClient re-runs a ToolSearch over the catalog as it stood before
// the call.
func explainClient(e Explained, alg Algorithm, d *decode.Turn, callTools []decode.Tool, defs map[string]Tool) Explained {
	names := catalogBefore(d.CatalogEvents, e.Search.Call.Message)
	var deferred, all []Tool
	unknown := 0
	for _, n := range names {
		tl := toolFor(n, defs)
		if tl.DescriptionUnknown {
			unknown++
		}
		deferred = append(deferred, tl)
	}
	for _, tl := range callTools {
		if tl.Name != "" && !tl.Placeholder {
			all = append(all, toolFor(tl.Name, defs))
		}
	}
	e.Pool = len(deferred)
	e.Sim = ClientAs(alg, e.Search.Query, int(e.Search.MaxResults), deferred, all)
	if e.Search.NoMatch || e.Search.IsError {
		e.Recorded = nil
	}
	e.Diff = Diff(e.Sim.Names, e.Recorded)
	if e.Diff == "" {
		return e
	}
	if unknown > 0 && (e.Sim.Mode == ModeKeyword || e.Sim.Mode == ModeRequired) {
		e.Because = append(e.Because, fmt.Sprintf("the descriptions of %d of the %d catalog tools are unknown (no request of the capture sends their schema), so their description points are missing", unknown, len(deferred)))
	}
	if e.Sim.Mode == ModeKeyword || e.Sim.Mode == ModeRequired {
		var builtin []string
		for _, n := range append(append([]string{}, e.Recorded...), e.Sim.Names...) {
			if !strings.HasPrefix(n, "mcp__") && !containsName(builtin, n) {
				builtin = append(builtin, n)
			}
		}
		if len(builtin) > 0 {
			e.Because = append(e.Because, fmt.Sprintf("Claude Code's own tools (%s) carry search hints, +4 per term at word boundaries, that no request carries", strings.Join(builtin, ", ")))
		} else {
			e.Because = append(e.Because, "search hints (MCP _meta) are not on the wire and score nothing here, unless --mcp-config supplies them")
		}
	}
	for _, n := range e.Recorded {
		if !containsName(names, n) && !toolsHave(callTools, n) {
			e.Because = append(e.Because, n+" is in neither the catalog nor the tools of the request that made the call")
		}
	}
	if alg == Published {
		e.Because = append(e.Because, "Claude Code's algorithm may have drifted from the published one (try --algorithm "+string(Observed)+")")
	} else {
		e.Because = append(e.Because, "Claude Code's algorithm may have changed since "+string(Observed))
	}
	return e
}

// explainServer re-runs a server search over the deferred definitions the
// request carries.
func explainServer(e Explained, d *decode.Turn, defs map[string]Tool) Explained {
	var deferred []Tool
	for _, tl := range d.Request.Tools {
		if tl.DeferLoading && !tl.Placeholder && tl.Name != "" {
			deferred = append(deferred, parseTool(tl.Raw))
		}
	}
	e.Pool = len(deferred)
	switch e.Search.Mode {
	case decode.ModeRegex:
		e.Sim, e.Err = Regex(e.Search.Query, int(e.Search.MaxResults), deferred)
	default:
		e.Sim = BM25(e.Search.Query, int(e.Search.MaxResults), deferred)
	}
	if e.Err != nil {
		e.Diff = "not simulated: " + e.Err.Error()
		e.Because = []string{"the pattern uses Python re syntax that Go's RE2 does not take"}
		return e
	}
	e.Diff = Diff(e.Sim.Names, e.Recorded)
	if e.Diff != "" {
		e.Because = []string{"the API's server-side ranking and limits are not published; this is an approximation"}
	}
	return e
}

// catalogBefore replays the catalog events placed before message msg
// (the deferred entries of tools count from the start), keeping the order
// of first announcement.
func catalogBefore(events []decode.CatalogEvent, msg int) []string {
	var order []string
	in := map[string]bool{}
	for _, ev := range events {
		if ev.Message >= msg {
			continue
		}
		for _, n := range ev.Names {
			switch {
			case ev.Remove:
				in[n] = false
			case !in[n]:
				in[n] = true
				order = append(order, n)
			}
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range order {
		if in[n] && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// Definitions collects, by name, the first definition of every tool any
// request of the session sends.
func Definitions(s *timeline.Session) map[string]Tool {
	out := map[string]Tool{}
	for _, t := range s.Turns {
		if t.Decoded == nil {
			continue
		}
		for _, tl := range t.Decoded.Request.Tools {
			if _, ok := out[tl.Name]; ok || tl.Name == "" || tl.Placeholder || tl.ServerSearch {
				continue
			}
			out[tl.Name] = parseTool(tl.Raw)
		}
	}
	return out
}

func toolFor(name string, defs map[string]Tool) Tool {
	if t, ok := defs[name]; ok {
		return t
	}
	return Tool{Name: name, DescriptionUnknown: true}
}

// ParseTool reads a tool definition (Messages API or MCP tools/list form:
// name, description, input_schema or inputSchema, and an MCP
// _meta["anthropic/searchHint"]).
func ParseTool(raw json.RawMessage) Tool { return parseTool(raw) }

func parseTool(raw json.RawMessage) Tool {
	var def struct {
		Name        string                     `json:"name"`
		Description string                     `json:"description"`
		Schema      *schema                    `json:"input_schema"`
		MCPSchema   *schema                    `json:"inputSchema"`
		Meta        map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(raw, &def) != nil {
		return Tool{DescriptionUnknown: true}
	}
	t := Tool{Name: def.Name, Description: def.Description}
	if def.Meta != nil {
		_ = json.Unmarshal(def.Meta["anthropic/searchHint"], &t.SearchHint)
	}
	sc := def.Schema
	if sc == nil {
		sc = def.MCPSchema
	}
	if sc != nil {
		keys := make([]string, 0, len(sc.Properties))
		for k := range sc.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if d := sc.Properties[k].Description; d != "" {
				p += ": " + d
			}
			t.Params = append(t.Params, p)
		}
	}
	return t
}

type schema struct {
	Properties map[string]struct {
		Description string `json:"description"`
	} `json:"properties"`
}

func containsName(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func toolsHave(tools []decode.Tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// Summary counts, over explained searches, how many were simulated and
// how many agreed, in one line.
func Summary(es []Explained) string {
	agree := 0
	for _, e := range es {
		if e.Agrees() {
			agree++
		}
	}
	return fmt.Sprintf("%d %s re-run offline: %d agree with the recording, %d differ", len(es), plural(len(es), "search", "searches"), agree, len(es)-agree)
}

// Text renders an explained search: the recorded call, the simulation and
// the comparison.
func (e Explained) Text() string {
	var b strings.Builder
	where := "client"
	if e.Search.Server {
		where = "server"
	}
	fmt.Fprintf(&b, "turn %d (%s): %s %q (%s, %d deferred tools in the pool)\n", e.Turn, e.Thread, e.Search.Tool, e.Search.Query, where, e.Pool)
	rec := "nothing"
	if len(e.Recorded) > 0 {
		rec = strings.Join(e.Recorded, ", ")
	}
	fmt.Fprintf(&b, "  recorded: %s\n", rec)
	if e.Err == nil {
		b.WriteString(e.Sim.Text("  "))
	}
	if e.Diff == "" {
		b.WriteString("  simulation agrees with the recording\n")
	} else {
		fmt.Fprintf(&b, "  DIFFERS: %s\n", e.Diff)
		for _, why := range e.Because {
			fmt.Fprintf(&b, "    possible cause: %s\n", why)
		}
	}
	return b.String()
}

// Thread is Session's searches of one thread (all of them for "").
func Thread(s *timeline.Session, thread string, o Options) []Explained {
	var kept []Explained
	for _, e := range Session(s, o) {
		if thread == "" || e.Thread == thread {
			kept = append(kept, e)
		}
	}
	return kept
}

// ClaudeCodeVersion is the version of the first Claude Code client among
// the session's threads, "" when none says.
func ClaudeCodeVersion(s *timeline.Session) string {
	for _, th := range s.Threads {
		if th.Client.ClaudeCode() && th.Client.Version != "" {
			return th.Client.Version
		}
	}
	return ""
}
