// Package coverage answers the question an MCP server author asks of a
// capture: for each tool, was the model told about it, did a tool search
// find it, when was its schema loaded, and was it called, before or after
// loading? It also lists every tool search once, with what it loaded and
// when the model then called those tools.
//
// It reads a [timeline.Session] and does no I/O.
package coverage

import (
	"slices"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/timeline"
)

// Outcomes of a search.
const (
	OutcomeLoaded  = "loaded"   // the result loaded at least one tool
	OutcomeNoMatch = "no_match" // the result loaded nothing
	OutcomeError   = "error"    // the result was an error
	OutcomePending = "pending"  // no result in the capture
)

// Search is one tool search, listed once, on the turn where its result
// is new.
type Search struct {
	Turn   int    // the turn whose request (client) or response (server) holds the result
	Thread string // the turn's thread
	Tool   string // ToolSearch, tool_search_tool_regex, ...
	Server bool   // a server-side search
	Mode   string // decode.ModeSelect, ...
	Query  string
	// Outcome is one of the Outcome constants; Detail is the error code
	// or the result's first line when nothing was loaded.
	Outcome string
	Detail  string
	Results []string // the tools the result loaded
	// CalledAt maps a loaded tool to the first later turn of the thread
	// whose response calls it; tools never called are absent.
	CalledAt map[string]int
	// Missing are the tools the query named that the result left out (the
	// turn's search_partial flag).
	Missing []string
}

// Tool is what happened to one tool across the session.
type Tool struct {
	Name string
	// Deferred: announced in the deferred-tool catalog (or sent with
	// defer_loading) in some turn; otherwise the tool was always loaded.
	Deferred bool
	// Turns counts the turns whose catalog or working set held the tool.
	Turns int
	// FoundBy lists the searches whose results held it, in order.
	FoundBy []*Search
	// MissedBy lists the select: searches that named it but did not load
	// it.
	MissedBy []*Search
	// FirstLoaded is the first turn whose working set held it as a
	// deferred tool loaded by a search (or restored), 0 if never.
	FirstLoaded int
	// Calls counts tool_use blocks naming it; Blind counts those made
	// while its schema was not in the turn's working set.
	Calls, Blind int
	// FirstCall is the first turn whose response called it, 0 if never.
	FirstCall int
}

// Options narrow what is reported.
type Options struct {
	// Thread, when set, keeps that thread's turns only.
	Thread string
	// Match, when set, picks the tools to report; nil reports every tool
	// the catalog announced (deferred tools) and none of the always-loaded
	// ones.
	Match func(name string) bool
}

// Of lists the searches of the session in turn order, and the tools Options
// picks, by name.
func Of(s *timeline.Session, opts Options) ([]*Search, []*Tool) {
	var searches []*Search
	tools := map[string]*Tool{}
	tool := func(name string) *Tool {
		t := tools[name]
		if t == nil {
			t = &Tool{Name: name}
			tools[name] = t
		}
		return t
	}
	// pending maps a thread to its searches whose loaded tools have not
	// been called yet, to fill CalledAt.
	pending := map[string][]*Search{}
	for _, t := range s.Turns {
		d := t.Decoded
		if d == nil || d.Request.Kind != decode.KindMessages || (opts.Thread != "" && t.Thread != opts.Thread) {
			continue
		}
		seen := map[string]bool{}
		for _, name := range d.Catalog {
			tool(name).Deferred = true
			seen[name] = true
		}
		for _, w := range d.WorkingSet {
			tt := tool(w.Name)
			if w.Deferred {
				tt.Deferred = true
				if tt.FirstLoaded == 0 {
					tt.FirstLoaded = t.Index
				}
			}
			seen[w.Name] = true
		}
		for name := range seen {
			tool(name).Turns++
		}
		for _, sr := range t.NewSearches {
			out := newSearch(t, sr)
			searches = append(searches, out)
			pending[t.Thread] = append(pending[t.Thread], out)
			for _, name := range out.Results {
				tool(name).FoundBy = append(tool(name).FoundBy, out)
			}
			for _, name := range sr.Selected {
				if !slices.Contains(out.Results, name) {
					tool(name).MissedBy = append(tool(name).MissedBy, out)
				}
			}
		}
		for _, c := range d.ToolCalls {
			tt := tool(c.Name)
			tt.Calls++
			if !c.Loaded {
				tt.Blind++
			}
			if tt.FirstCall == 0 {
				tt.FirstCall = t.Index
			}
			for _, sr := range pending[t.Thread] {
				if sr.Turn <= t.Index && slices.Contains(sr.Results, c.Name) {
					if _, ok := sr.CalledAt[c.Name]; !ok {
						sr.CalledAt[c.Name] = t.Index
					}
				}
			}
		}
	}
	var picked []*Tool
	for name, t := range tools {
		if opts.Match != nil && opts.Match(name) || opts.Match == nil && t.Deferred {
			picked = append(picked, t)
		}
	}
	sort.Slice(picked, func(i, j int) bool { return picked[i].Name < picked[j].Name })
	return searches, picked
}

func newSearch(t *timeline.Turn, sr decode.Search) *Search {
	out := &Search{
		Turn: t.Index, Thread: t.Thread, Tool: sr.Tool, Server: sr.Server,
		Mode: sr.Mode, Query: sr.Query, CalledAt: map[string]int{},
	}
	switch {
	case !sr.HasResult:
		out.Outcome = OutcomePending
	case sr.IsError || sr.ErrorCode != "":
		out.Outcome, out.Detail = OutcomeError, sr.ErrorCode
		if out.Detail == "" {
			out.Detail = firstLine(sr.Text)
		}
	case sr.NoMatch || len(sr.Results) == 0:
		out.Outcome, out.Detail = OutcomeNoMatch, firstLine(sr.Text)
	default:
		out.Outcome = OutcomeLoaded
		out.Results = append([]string(nil), sr.Results...)
		for _, f := range t.Flags {
			if f.Kind == timeline.FlagSearchPartial && f.Search == sr.ToolUseID {
				out.Missing = append(out.Missing, f.Missing...)
			}
		}
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
