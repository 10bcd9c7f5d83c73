package report

import (
	"fmt"
	"github.com/tsinspect/tsinspect/exchange"
	"strconv"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/timeline"
)

// RenderOptions tune the Markdown and HTML formats.
type RenderOptions struct {
	// Redaction says in a sentence what was removed from the report (or
	// that nothing was); it is printed near the top. Empty prints nothing.
	Redaction string
	// Unredacted marks a report that was not redacted: the note is shown
	// as a warning.
	Unredacted bool
}

// threadView is one thread with its turns, for the human formats.
type threadView struct {
	Thread
	Label  string // "main agent", "subagent", "side query"
	Turns  []*Turn
	Tokens ThreadTokens
	// DefChanges says which tool definitions changed within the thread.
	DefChanges []string
}

// threadViews groups r's turns by thread, in thread order.
func (r *Report) threadViews() []threadView {
	byIndex := map[int]*Turn{}
	for i := range r.Turns {
		byIndex[r.Turns[i].Index] = &r.Turns[i]
	}
	tokens := map[string]ThreadTokens{}
	for _, tt := range r.TokenSummary.Threads {
		tokens[tt.Thread] = tt
	}
	var out []threadView
	for _, th := range r.Threads {
		v := threadView{Thread: th, Label: threadLabel(th.Kind), Tokens: tokens[th.ID]}
		if th.QuerySource != "" {
			v.Label += ", " + th.QuerySource
		}
		if th.Session != "" {
			v.Label += ", session " + th.Session
		}
		for _, i := range th.Turns {
			if t := byIndex[i]; t != nil {
				v.Turns = append(v.Turns, t)
			}
		}
		v.DefChanges = defChanges(v.Turns)
		out = append(out, v)
	}
	return out
}

// defChanges lists, for a thread's turns, each tool whose definition hash
// changed from one turn to the next: "turn 7: Bash".
func defChanges(turns []*Turn) []string {
	var out []string
	prev := map[string]string{}
	for k, t := range turns {
		var changed []string
		for _, d := range t.ToolDefinitions {
			if h, ok := prev[d.Name]; ok && h != d.SHA256 && k > 0 {
				changed = append(changed, d.Name)
			}
		}
		for _, d := range t.ToolDefinitions {
			prev[d.Name] = d.SHA256
		}
		if len(changed) > 0 {
			out = append(out, fmt.Sprintf("turn %d: %s", t.Index, strings.Join(changed, ", ")))
		}
	}
	return out
}

func threadLabel(kind string) string {
	switch kind {
	case timeline.KindMain:
		return "main agent"
	case timeline.KindSubagent:
		return "subagent"
	case timeline.KindSide:
		return "side query"
	case timeline.KindConversation:
		return "conversation"
	}
	return kind
}

// flagGroup is every flag of one kind, with the explanation.
type flagGroup struct {
	Kind, Severity string
	Why, Todo      string
	Items          []flagItem
}

// flagItem is one flag, placed.
type flagItem struct {
	N      int // 1-based number over the whole report
	Turn   int
	Thread string
	// Cost is " (cost $X)" when the flag has a cost, else "".
	Cost string
	Flag
}

// flagGroups groups the flags of r by kind, the most severe kinds first,
// then in order of first appearance; items are numbered in turn order.
func (r *Report) flagGroups() []flagGroup {
	var groups []flagGroup
	at := map[string]int{}
	n := 0
	for _, t := range r.Turns {
		for _, f := range t.Flags {
			n++
			k, ok := at[f.Kind]
			if !ok {
				why, todo := timeline.Explain(f.Kind)
				sev := f.Severity
				if s := timeline.Severity(f.Kind); s != "" {
					sev = s
				}
				k = len(groups)
				at[f.Kind] = k
				groups = append(groups, flagGroup{Kind: f.Kind, Severity: sev, Why: why, Todo: todo})
			}
			groups[k].Items = append(groups[k].Items, flagItem{N: n, Turn: t.Index, Thread: t.Thread, Cost: flagCostText(f), Flag: f})
		}
	}
	rank := map[string]int{timeline.SeverityError: 0, timeline.SeverityWarning: 1, timeline.SeverityInfo: 2}
	sorted := make([]flagGroup, 0, len(groups))
	for _, sev := range []int{0, 1, 2, 3} {
		for _, g := range groups {
			r, ok := rank[g.Severity]
			if !ok {
				r = 3
			}
			if r == sev {
				sorted = append(sorted, g)
			}
		}
	}
	return sorted
}

// flagNumbers maps a turn index to the numbers of its flags, as
// flagGroups numbers them.
func (r *Report) flagNumbers() map[int][]int {
	out := map[int][]int{}
	n := 0
	for _, t := range r.Turns {
		for range t.Flags {
			n++
			out[t.Index] = append(out[t.Index], n)
		}
	}
	return out
}

// severityCounts counts the flags of r by severity.
func (r *Report) severityCounts() (errs, warns, infos int) {
	for _, t := range r.Turns {
		for _, f := range t.Flags {
			switch f.Severity {
			case timeline.SeverityError:
				errs++
			case timeline.SeverityWarning:
				warns++
			default:
				infos++
			}
		}
	}
	return errs, warns, infos
}

// usageTotals sums the usage of turns.
func usageTotals(turns []*Turn) Usage {
	var u Usage
	for _, t := range turns {
		u.InputTokens += t.Usage.InputTokens
		u.OutputTokens += t.Usage.OutputTokens
		u.CacheReadInputTokens += t.Usage.CacheReadInputTokens
		u.CacheCreationInputTokens += t.Usage.CacheCreationInputTokens
	}
	return u
}

// allTurns returns pointers to r's turns.
func (r *Report) allTurns() []*Turn {
	out := make([]*Turn, len(r.Turns))
	for i := range r.Turns {
		out[i] = &r.Turns[i]
	}
	return out
}

// neverSeenText explains the catalog tools whose schema the capture does
// not hold: counted at an estimated size (estimated), or left out
// (unknown). "" when there are none.
func neverSeenText(unknown, estimated []string) string {
	var out []string
	if n := len(estimated); n > 0 {
		out = append(out, fmt.Sprintf("%s never had %s schema sent in this capture (Claude Code sends a deferred tool's schema only once it is loaded): "+
			"\"all inlined\" and \"saved\" count %s at the average size of the deferred schemas the capture holds from the same MCP server (else from all of them), so they are estimates (≈).",
			numfmt.Count(n, "catalog tool", "catalog tools"), numfmt.Plural(n, "its", "their"), numfmt.Plural(n, "it", "each")))
	}
	if n := len(unknown); n > 0 {
		out = append(out, fmt.Sprintf("%s never had %s schema sent in this capture, nor did any other deferred tool, so what inlining %s would cost is unknown: \"all inlined\" leaves %s out and \"saved\" is a lower bound (≥).",
			numfmt.Count(n, "catalog tool", "catalog tools"), numfmt.Plural(n, "its", "their"), numfmt.Plural(n, "it", "them"), numfmt.Plural(n, "it", "them")))
	}
	return strings.Join(out, " ")
}

// breakEven says, for a thread whose "saved" is a negative lower bound,
// how large the tools of unknown size must be for deferral to come out
// ahead, against the deferred tools of known size; "" otherwise.
func breakEven(t ThreadTokens) string {
	if t.BreakEven <= 0 {
		return ""
	}
	s := fmt.Sprintf("In thread %s deferral comes out ahead if the %s of unknown size %s at least %s each",
		t.Thread, numfmt.Count(len(t.Unknown), "tool", "tools"), numfmt.Plural(len(t.Unknown), "averages", "average"), numfmt.Count(int(t.BreakEven), "token", "tokens"))
	if t.KnownDeferred > 0 {
		s += fmt.Sprintf("; the %s of known size %s %s", numfmt.Count(t.KnownDeferred, "deferred tool", "deferred tools"),
			numfmt.Plural(t.KnownDeferred, "is", "average"), numfmt.Count(int(t.KnownDeferredAverage), "token", "tokens"))
	}
	return s + "."
}

// sizeChange writes a count with its change: "56", "12 (+1)", "9 (+2 −1)".
func sizeChange(n, added, removed int) string {
	s := strconv.Itoa(n)
	var parts []string
	if added > 0 {
		parts = append(parts, "+"+strconv.Itoa(added))
	}
	if removed > 0 {
		parts = append(parts, "−"+strconv.Itoa(removed))
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, " ") + ")"
	}
	return s
}

// StopText is the turn's stop reason, or what went wrong instead: "no
// response", "HTTP 429 rate_limit_error", "error: overloaded_error",
// "incomplete", "-" when none was given.
func (t *Turn) StopText() string {
	switch {
	case t.Status == 0:
		return "no response"
	case t.Status != 200:
		s := fmt.Sprintf("HTTP %d", t.Status)
		if t.Error != nil && t.Error.Type != "" {
			s += " " + t.Error.Type
		}
		return s
	case t.Error != nil:
		return "error: " + t.Error.Type
	case t.Incomplete:
		return "incomplete"
	case t.StopReason == "":
		return "-"
	}
	return t.StopReason
}

// timeText writes a time in UTC to the second, "" for nil.
func timeText(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// searchText describes a search's result in a few words.
func searchResult(s Search) string {
	switch {
	case len(s.Results) > 0:
		return "loaded " + strings.Join(s.Results, ", ")
	case s.ErrorCode != "":
		return "failed: " + s.ErrorCode
	case s.NoMatch:
		return "no match"
	case s.IsError:
		return "error"
	}
	return "loaded nothing"
}

// callText writes a call's name with a mark when its schema was not
// loaded.
func callNote(c ToolCall) string {
	switch {
	case c.Loaded:
		return ""
	case c.InCatalog:
		return "not loaded"
	}
	return "unknown tool"
}

// flagKindsOf lists the distinct kinds of a turn's flags.
func flagKindsOf(t *Turn) []string {
	var kinds []string
	for _, f := range t.Flags {
		if !contains(kinds, f.Kind) {
			kinds = append(kinds, f.Kind)
		}
	}
	return kinds
}

// captureSentence says what the capture holds, in one sentence.
func (r *Report) captureSentence() string {
	s := fmt.Sprintf("%d Messages API %s in %d %s, out of %d recorded %s",
		r.Capture.Turns, numfmt.Plural(r.Capture.Turns, "turn", "turns"),
		len(r.Threads), numfmt.Plural(len(r.Threads), "thread", "threads"),
		r.Capture.Exchanges, numfmt.Plural(r.Capture.Exchanges, "exchange", "exchanges"))
	if r.Capture.FirstAt != nil {
		s += ", from " + timeText(r.Capture.FirstAt)
		if r.Capture.LastAt != nil && !r.Capture.LastAt.Equal(*r.Capture.FirstAt) {
			s += " to " + timeText(r.Capture.LastAt)
		}
	}
	s += "."
	for _, src := range r.Capture.Sources {
		verb, what := exchange.SourcePhrase(src.Source)
		s += fmt.Sprintf(" %d %s %s %s, which lacks: %s.", src.Turns, numfmt.Plural(src.Turns, "turn was", "turns were"), verb, what, strings.Join(src.Lacks, "; "))
	}
	return s
}

// sessions counts the distinct Claude Code sessions of threads.
func sessions(threads []Thread) int {
	seen := map[string]bool{}
	for _, th := range threads {
		if th.Session != "" {
			seen[th.Session] = true
		}
	}
	return len(seen)
}

// models lists the distinct request models of r, in order.
func (r *Report) models() []string {
	var out []string
	for _, th := range r.Threads {
		for _, m := range th.Models {
			if !contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// searchCounts counts r's searches and those that loaded nothing.
func (r *Report) searchCounts() (all, empty int) {
	for _, t := range r.Turns {
		for _, s := range t.ToolSearches {
			all++
			if len(s.Results) == 0 {
				empty++
			}
		}
	}
	return all, empty
}

// loadedTools lists every deferred tool loaded in any thread.
func (r *Report) loadedTools() []string {
	var out []string
	for _, th := range r.TokenSummary.Threads {
		for _, n := range th.LoadedTools {
			if !contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}
