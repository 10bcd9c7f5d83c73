package timeline

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/toolsearch/claudetools"
)

// Flag kinds.
const (
	FlagCallBeforeLoad   = "call_before_load"
	FlagUnknownTool      = "unknown_tool"
	FlagStopSequence     = "stop_sequence_anomaly"
	FlagCacheBreak       = "cache_break"
	FlagEmptySearch      = "empty_search"
	FlagSearchPartial    = "search_partial"
	FlagStreamIncomplete = "stream_incomplete"
	FlagAPIError         = "api_error"
	FlagRetry            = "retry"
	FlagToolSearchOff    = "tool_search_off"
	FlagSearchRepeated   = "search_repeated"
)

func ruleAPIError(v ruleView, k int) []Flag {
	in := v.turn(k)
	ex := in.t.Exchange
	r := &in.d.Response
	var what string
	if r.Error != nil {
		what = r.Error.Type
		if what == "" {
			what = "error"
		}
		if r.Error.Message != "" {
			what += ": " + r.Error.Message
		}
	}
	switch {
	case ex.Status >= 400:
		d := fmt.Sprintf("The API answered HTTP %d", ex.Status)
		if what != "" {
			d += " (" + what + ")"
		} else if ex.Error != "" {
			d += " (" + ex.Error + ")"
		}
		if ra := ex.RespHeader("retry-after"); ra != "" {
			d += fmt.Sprintf(", asking to retry after %s s", ra)
		}
		return []Flag{{Detail: d + "."}}
	case r.Error != nil:
		return []Flag{{Detail: fmt.Sprintf("The response started with HTTP %d, then the stream sent an error event (%s) instead of finishing the message.", ex.Status, what)}}
	}
	return nil
}

func ruleStreamIncomplete(v ruleView, k int) []Flag {
	in := v.turn(k)
	ex := in.t.Exchange
	r := &in.d.Response
	// An exchange still in flight is not finished yet; an error event is
	// an api_error; an error status is one too.
	if !r.Incomplete || ex.State == exchange.StateInFlight || r.Error != nil || ex.Status >= 400 {
		return nil
	}
	why := map[exchange.State]string{
		exchange.StateClientAborted:  "the client hung up",
		exchange.StateUpstreamFailed: "the connection to the API broke",
		exchange.StateInterrupted:    "the recorder stopped (crash or kill) before the response ended",
	}[ex.State]
	if ex.Error != "" {
		if why != "" {
			why += ": "
		}
		why += ex.Error
	}
	var d string
	switch {
	case r.Size == 0 && r.Streamed:
		d = fmt.Sprintf("The response stream started (HTTP %d, text/event-stream) but sent no event", ex.Status)
	case r.Size == 0:
		d = "No response body arrived"
	case r.Streamed:
		d = fmt.Sprintf("The response stream ended after %s and %s without message_stop", numfmt.Count(len(r.Events), "event", "events"), bytesText(r.Size))
	default:
		d = fmt.Sprintf("The JSON response body broke off after %s", bytesText(r.Size))
	}
	if why != "" {
		d += " (" + why + ")"
	}
	d += "; the client got no complete reply"
	if len(r.Content) > 0 {
		d += fmt.Sprintf(" (%d content %s had started)", len(r.Content), numfmt.Plural(len(r.Content), "block", "blocks"))
	}
	return []Flag{{Detail: d + "."}}
}

func ruleRetry(v ruleView, k int) []Flag {
	in := v.turn(k)
	if (in.t.Link != LinkRepeat && in.t.Link != LinkRetry) || in.t.Prev == 0 {
		return nil
	}
	p := in.t.Prev - 1
	pi := v.turn(p)
	var what string
	switch {
	case pi.t.Exchange.Status >= 400:
		what = fmt.Sprintf("it failed with HTTP %d", pi.t.Exchange.Status)
		if e := pi.d.Response.Error; e != nil && e.Type != "" {
			what += " " + e.Type
		}
	case pi.d.Response.Error != nil:
		what = "its stream ended in an error event"
		if e := pi.d.Response.Error; e.Type != "" {
			what += " (" + e.Type + ")"
		}
	case pi.d.Response.Incomplete || pi.t.Exchange.Status == 0:
		what = "its response was cut off"
	case pi.empty:
		what = "it came back empty"
		if pi.d.Response.StopReason != "" {
			what += " (stop_reason " + pi.d.Response.StopReason + ")"
		}
	default:
		return nil // a repeat of a request that worked is not a retry
	}
	gap := in.start.Sub(pi.end)
	d := fmt.Sprintf("The same request as %s was sent again after %s", v.ref(p), what)
	if in.t.Link == LinkRetry {
		d = fmt.Sprintf("The request of %s was asked again after %s, with its last user message changed", v.ref(p), what)
		if added := addedText(pi, in); added != "" {
			d += " (added: " + added + ")"
		}
	}
	if gap > 0 && !pi.end.IsZero() {
		d += ", " + durationText(gap) + " later"
	}
	return []Flag{{Detail: d + "."}}
}

// callResult describes what the client answered to a call of turn k.
// patterns pairs a text to look for in the tool_result with how to say it,
// first match wins.
func callResult(v ruleView, k int, call decode.ToolCall, patterns [][2]string) string {
	l, res := v.resultFor(k, call.ID)
	if l < 0 {
		return "No later request of this thread answers the call."
	}
	for _, p := range patterns {
		if res.ResultContains(p[0]) {
			return fmt.Sprintf("Its tool_result in %s says %s.", v.ref(l), p[1])
		}
	}
	if res.IsError {
		return fmt.Sprintf("Its tool_result in %s is an error: %s.", v.ref(l), quote(res.ResultText(), 160))
	}
	return fmt.Sprintf("The client ran it anyway: its tool_result in %s is not an error.", v.ref(l))
}

func ruleCallBeforeLoad(v ruleView, k int) []Flag {
	in := v.turn(k)
	var out []Flag
	for _, c := range in.d.ToolCalls {
		if c.Server || c.Loaded || !c.InCatalog {
			continue
		}
		d := fmt.Sprintf("The model called %s, a deferred tool the catalog lists, but its schema was not loaded in this request (no tool search had returned it, so it was not among the %s the model could call). ",
			c.Name, numfmt.Count(len(in.d.WorkingSet), "tool", "tools"))
		d += callResult(v, k, c, [][2]string{
			{"schema was not sent", "InputValidationError: the schema was not sent to the API"},
			{decode.InputValidationText, decode.InputValidationText},
			{decode.NoSuchToolText, `"` + decode.NoSuchToolText + `"`},
		})
		out = append(out, Flag{Tool: c.Name, Detail: d})
	}
	return out
}

func ruleUnknownTool(v ruleView, k int) []Flag {
	in := v.turn(k)
	var out []Flag
	for _, c := range in.d.ToolCalls {
		if c.Via == decode.ViaUnrecorded {
			// A request made from a transcript: the tools sent are not
			// known, and only the client's answer tells a tool that does
			// not exist.
			if l, res := v.resultFor(k, c.ID); l >= 0 && res.ResultContains(decode.NoSuchToolText) {
				out = append(out, Flag{Tool: c.Name, Detail: fmt.Sprintf("The model called %s, which is not in the deferred-tool catalog (%s), and the client answered in %s that it has no such tool (the transcript does not hold the tools sent).",
					c.Name, numfmt.Count(len(in.d.Catalog), "tool", "tools"), v.ref(l))})
			}
			continue
		}
		if c.Server || c.Loaded || c.InCatalog {
			continue
		}
		d := fmt.Sprintf("The model called %s, which is neither among the %s of this request nor in the deferred-tool catalog (%s). ",
			c.Name, numfmt.Count(len(in.d.Request.Tools), "tool", "tools"), numfmt.Count(len(in.d.Catalog), "tool", "tools"))
		d += callResult(v, k, c, [][2]string{
			{decode.NoSuchToolText, `"` + decode.NoSuchToolText + `"`},
			{decode.InputValidationText, decode.InputValidationText},
		})
		out = append(out, Flag{Tool: c.Name, Detail: d})
	}
	return out
}

func ruleStopSequence(v ruleView, k int) []Flag {
	in := v.turn(k)
	r := &in.d.Response
	// A final message with neither content nor a stop reason is an empty
	// reply whose ending was not recorded (Claude Code's session files
	// note only that it asked the model to continue).
	unrecorded := r.Status == 200 && !r.Incomplete && !r.Streamed && r.Role == "assistant" && r.StopReason == "" && len(r.Content) == 0
	if r.StopReason != "stop_sequence" && !unrecorded {
		return nil
	}
	noSeq := len(in.d.Request.StopSequences) == 0
	if !noSeq && len(r.Content) > 0 {
		return nil
	}
	seq := "(none given)"
	if r.StopSequence != nil {
		seq = fmt.Sprintf("%q", *r.StopSequence)
	}
	var d string
	switch {
	case unrecorded:
		d = "The reply is empty; how it ended was not recorded (the known case ends on a stop sequence the request never set)."
	case noSeq && len(r.Content) == 0:
		d = fmt.Sprintf("The reply is empty and ended on stop_sequence %s, though the request set no stop_sequences.", seq)
	case noSeq:
		d = fmt.Sprintf("The reply ended on stop_sequence %s after %d content blocks, though the request set no stop_sequences.", seq, len(r.Content))
	default:
		d = fmt.Sprintf("The reply is empty: it ended on stop_sequence %s before any content.", seq)
	}
	lu := in.d.LastUser
	if lu.HasToolReference {
		var refs []string
		for _, tr := range lu.ToolResults {
			refs = append(refs, tr.References...)
		}
		d += fmt.Sprintf(" The request's last user message held a tool_reference (%s)", strings.Join(refs, ", "))
		switch {
		case lu.ToolLoaded:
			d += " and the \"Tool loaded.\" text was there"
		case in.client.ClaudeCode():
			d += " without the \"Tool loaded.\" text Claude Code adds to prevent this"
		default:
			d += " and no text block after it"
		}
		d += "."
	} else {
		d += " The request's last user message held no tool_reference"
		if lu.ToolLoaded {
			d += ", but a \"Tool loaded.\" text"
		}
		d += "."
	}
	return []Flag{{Detail: d}}
}

// ruleSearchPartial raises a flag for a search that named tools and
// loaded some but not all of them (one that loaded nothing is an
// empty_search): the names it did not load, unless in the working set by
// other means, with the calls its thread made next (SearchNamed says which
// words of a query name tools).
func ruleSearchPartial(v ruleView, k int) []Flag {
	in := v.turn(k)
	var out []Flag
	for _, s := range in.t.NewSearches {
		named, missing := SearchLeftOut(s, func(name string) bool { return knownTool(v, k, name) }, in.d.InWorkingSet)
		if len(missing) == 0 {
			continue
		}
		limit := ""
		if s.MaxResults > 0 {
			limit = fmt.Sprintf(", max_results %d", s.MaxResults)
		}
		d := fmt.Sprintf("%s %q (%s query%s) named %d %s but loaded %s: %s left out, so the model cannot call %s.",
			s.Tool, s.Query, orUnknown(s.Mode), limit, len(named), plural(len(named), "tool", "tools"), strings.Join(s.Results, ", "),
			strings.Join(missing, ", "), plural(len(missing), "it", "them"))
		if then := callsAfter(v, k, missing); then != "" {
			d += " " + then
		}
		out = append(out, Flag{Tool: missing[0], Missing: missing, Search: s.ToolUseID, Detail: d})
	}
	return out
}

// SearchNamed lists the tools a search names, once each, in its query's
// order: every name of a select: list, and the words of a keyword query
// (a +required term's + dropped) for which isTool is true. The rule of
// search_partial; advice reads it too.
func SearchNamed(s decode.Search, isTool func(string) bool) []string {
	var out []string
	for _, name := range searchNames(s) {
		if name == "" || slices.Contains(out, name) || len(s.Selected) == 0 && !isTool(name) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// SearchLeftOut is the rule of search_partial: the tools search s named
// (SearchNamed, isTool telling which words are tools' names) and those of
// them its result did not load and that were not loaded otherwise (had).
// A search that loaded nothing leaves nothing out: it is an empty_search.
// The timeline and the session listing both apply it.
func SearchLeftOut(s decode.Search, isTool, had func(string) bool) (named, missing []string) {
	if s.Server || !s.HasResult || s.IsError || len(s.Results) == 0 {
		return nil, nil
	}
	named = SearchNamed(s, isTool)
	for _, name := range named {
		if !slices.Contains(s.Results, name) && !had(name) {
			missing = append(missing, name)
		}
	}
	return named, missing
}

// ClaudeCodeTool reports whether name is one of Claude Code's own tools,
// sent whole or deferred, in any release recorded.
func ClaudeCodeTool(name string) bool { return slices.Contains(claudeCodeTools(), name) }

// knownTool reports whether name is the exact name of a tool turn k's
// thread knows of: in the deferred-tool catalog, loaded in this turn or
// an earlier one, or one of Claude Code's own (for Claude Code).
func knownTool(v ruleView, k int, name string) bool {
	in := v.turn(k)
	if in.d.InCatalog(name) || in.d.InWorkingSet(name) {
		return true
	}
	if in.client.ClaudeCode() && ClaudeCodeTool(name) {
		return true
	}
	for p := in.t.Prev - 1; p >= 0; p = v.turn(p).t.Prev - 1 {
		if v.turn(p).d.InWorkingSet(name) {
			return true
		}
	}
	return false
}

// callsAfter says what the thread called from turn k's answer on (turn k
// carries the search's result), for the next few turns or until one of
// missing is loaded: each turn's calls, and which of them the client
// answered with an error.
func callsAfter(v ruleView, k int, missing []string) string {
	const turns = 4
	var parts []string
	for i, l := 0, k; i < turns && l >= 0; i++ {
		in := v.turn(l)
		if l != k && slices.ContainsFunc(missing, in.d.InWorkingSet) {
			parts = append(parts, fmt.Sprintf("%s loaded what was left out", v.ref(l)))
			break
		}
		var calls []string
		for _, c := range in.d.ToolCalls {
			what := c.Name
			if _, res := v.resultFor(l, c.ID); res != nil && res.IsError {
				what += " (an error: " + quote(firstLine(res.ResultText()), 80) + ")"
			}
			calls = append(calls, what)
		}
		if len(calls) > 0 {
			parts = append(parts, fmt.Sprintf("%s called %s", v.ref(l), strings.Join(calls, ", ")))
		}
		next := v.next(l)
		if len(next) == 0 {
			break
		}
		l = next[0]
	}
	if len(parts) == 0 {
		return ""
	}
	return "Then " + strings.Join(parts, "; ") + "."
}

// ruleSearchRepeated raises a flag for a search that asks what an earlier
// search of its thread (since a restart) asked and had its answer to: the
// same tool, mode and query (a select: list's names in any order, a keyword
// query's words in any case and spacing).
func ruleSearchRepeated(v ruleView, k int) []Flag {
	in := v.turn(k)
	var out []Flag
	for _, s := range in.t.NewSearches {
		if !s.HasResult {
			continue
		}
		j, first := v.earlierSearch(k, searchKey(s))
		if j < 0 || first.ToolUseID == s.ToolUseID && s.ToolUseID != "" {
			continue
		}
		d := fmt.Sprintf("%s %q asks again what %s asked (%q)", s.Tool, s.Query, v.ref(j), first.Query)
		if len(first.Results) == 0 {
			d += ", which loaded nothing"
		} else {
			d += ", which loaded " + strings.Join(first.Results, ", ")
			// The call was made in the turn before this one: were those
			// tools still loaded then?
			if p := in.t.Prev - 1; p >= 0 && p < k {
				still := true
				for _, n := range first.Results {
					still = still && v.turn(p).d.InWorkingSet(n)
				}
				if still {
					d += fmt.Sprintf("; %s still in the working set when the model asked again", plural(len(first.Results), "it was", "all were"))
				}
			}
		}
		out = append(out, Flag{Search: s.ToolUseID, Detail: d + "."})
	}
	return out
}

// searchKey is what a search asks: its tool and mode, and its query with
// a select: list's names sorted, or a keyword query's words lower-cased
// and single-spaced.
func searchKey(s decode.Search) string {
	q := strings.Join(strings.Fields(strings.ToLower(s.Query)), " ")
	if len(s.Selected) > 0 {
		names := slices.Clone(s.Selected)
		slices.Sort(names)
		q = "select:" + strings.Join(slices.Compact(names), ",")
	}
	return s.Tool + "\x00" + s.Mode + "\x00" + q
}

// searchNames are the words of a search that could name tools: a select:
// list's names, or a keyword query's words (a leading + dropped).
func searchNames(s decode.Search) []string {
	if len(s.Selected) > 0 {
		return s.Selected
	}
	var out []string
	for _, w := range strings.FieldsFunc(s.Query, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' }) {
		out = append(out, strings.TrimPrefix(w, "+"))
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func ruleEmptySearch(v ruleView, k int) []Flag {
	in := v.turn(k)
	var out []Flag
	for _, s := range in.t.NewSearches {
		if !s.HasResult || len(s.Results) > 0 {
			continue
		}
		mode := s.Mode
		if mode == "" {
			mode = "unknown"
		}
		d := fmt.Sprintf("%s %q (%s query) loaded nothing", s.Tool, s.Query, mode)
		switch {
		case s.ErrorCode != "":
			d += ": the server search failed with error_code " + s.ErrorCode
		case s.NoMatch:
			d += ": " + quote(firstLine(s.Text), 120)
		case s.IsError:
			d += ": its result is an error: " + quote(s.Text, 120)
		case strings.TrimSpace(s.Text) != "":
			d += ": " + quote(firstLine(s.Text), 120)
		default:
			d += ": the result holds no tool reference"
		}
		d += fmt.Sprintf(". The catalog held %d deferred tools", len(in.d.Catalog))
		if len(s.Selected) > 0 {
			var missing []string
			for _, n := range s.Selected {
				if !in.d.InCatalog(n) {
					missing = append(missing, n)
				}
			}
			if len(missing) > 0 {
				d += fmt.Sprintf("; %s %s not among them", strings.Join(missing, ", "), numfmt.Plural(len(missing), "is", "are"))
			}
		}
		out = append(out, Flag{Search: s.ToolUseID, Detail: d + "."})
	}
	return out
}

func ruleToolSearchOff(v ruleView, k int) []Flag {
	in := v.turn(k)
	// ToolSearch and the mcp__ names are Claude Code's; its side queries
	// (quota checks, token-count probes with one tool and max_tokens 1)
	// carry tools without being the agent that uses them.
	if !in.client.ClaudeCode() || in.side {
		return nil
	}
	// Once per thread: on the first turn where it shows.
	if v.earlierFlag(k, FlagToolSearchOff, "") {
		return nil
	}
	var mcp []string
	for _, t := range in.d.Request.Tools {
		if t.DeferLoading || t.ServerSearch || t.Name == decode.ClientSearchTool {
			return nil
		}
		if decode.IsMCP(t.Name) {
			mcp = append(mcp, t.Name)
		}
	}
	if len(mcp) == 0 {
		return nil
	}
	shown := mcp
	if len(shown) > 3 {
		shown = shown[:3]
	}
	list := strings.Join(shown, ", ")
	if len(mcp) > 3 {
		list += ", ..."
	}
	d := fmt.Sprintf("This thread sends %d MCP %s (%s) with full schemas in every request, and neither ToolSearch nor any defer_loading tool: tool search is off.",
		len(mcp), numfmt.Plural(len(mcp), "tool", "tools"), list)
	if in.t.Exchange.Source == "reverse" {
		d += " The capture was made through ANTHROPIC_BASE_URL, behind which Claude Code turns tool search off when ENABLE_TOOL_SEARCH is unset (tsinspect record sets it to true then) or set to false, or auto with tools below its threshold."
	}
	return []Flag{{Detail: d}}
}

// addedText quotes the text blocks turn t's last message has beyond the
// number of blocks of turn p's.
func addedText(p, t *info) string {
	pm, tm := p.d.Request.Messages, t.d.Request.Messages
	if len(pm) == 0 || len(pm) != len(tm) {
		return ""
	}
	pb, tb := messageBlocks(pm[len(pm)-1]), messageBlocks(tm[len(tm)-1])
	if len(tb) <= len(pb) {
		return ""
	}
	var texts []string
	for _, bl := range tb[len(pb):] {
		if bl.Type == "text" && strings.TrimSpace(bl.Text) != "" {
			texts = append(texts, quote(bl.Text, 120))
		}
	}
	return strings.Join(texts, ", ")
}

// coreTools are Claude Code's own tools that are sent whole, not
// deferred, in the releases seen; its deferred ones are in claudetools.
var coreTools = []string{"Agent", "AskUserQuestion", "Bash", "BashOutput", "Edit", "EnterPlanMode", "ExitPlanMode", "Glob", "Grep",
	"KillBash", "KillShell", "LS", "MultiEdit", "NotebookEdit", "NotebookRead", "Read", "Skill", "SlashCommand", "Task", "TaskOutput",
	"TodoRead", "TodoWrite", "ToolSearch", "WebFetch", "WebSearch", "Write"}

// claudeCodeTools are the names of Claude Code's own tools: coreTools and
// the deferred tools of every recorded release.
var claudeCodeTools = sync.OnceValue(func() []string {
	out := slices.Clone(coreTools)
	for _, r := range claudetools.Releases() {
		for _, t := range r.Tools {
			if !slices.Contains(out, t.Name) {
				out = append(out, t.Name)
			}
		}
	}
	return out
})
