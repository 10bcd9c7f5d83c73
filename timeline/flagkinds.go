package timeline

import "slices"

// FlagKind is one kind of flag, whole: the check that raises it, how
// severe it is, and what a person reads about it. Build runs the checks;
// reports, the UI and the flag table in docs/flags.md take the rest from here.
type FlagKind struct {
	// Kind names the kind, as Flag.Kind does: cache_break, retry, ...
	Kind string
	// Severity is the severity of every flag of the kind: SeverityError,
	// SeverityWarning or SeverityInfo.
	Severity string
	// When says in one line of Markdown when a flag of the kind is
	// raised, with the Flag fields it fills (README.md's flag table).
	When string
	// Why says why the kind matters, and Todo what to do about it, for a
	// person reading a report or the UI's Flags tab.
	Why, Todo string
	// check raises the kind's flags on turn k. It sees the turn and its
	// thread through a ruleView, and nothing else; Build sets each flag's
	// Kind and Severity from the row.
	check func(v ruleView, k int) []Flag
}

// flagKinds is the table of flag kinds, a row each, in the order Build
// runs their checks over a turn (the contradictions between what the
// model is told of tools and what it can do last). A new kind is a row
// here, its check (rules.go, contradictions.go) and its name's constant.
// Nothing writes the table.
var flagKinds = [...]FlagKind{
	{
		Kind:     FlagAPIError,
		Severity: SeverityError,
		check:    ruleAPIError,
		When:     "HTTP status ≥ 400, or an SSE `error` event (type and message)",
		Why:      "The API refused or failed the request, with an error status or with an error event in the middle of the stream. The turn produced nothing and the client has to retry or give up.",
		Todo:     "Read the error type: 429 rate_limit_error and 529 overloaded_error pass with time (honour retry-after); 400 invalid_request_error is a bug in the request (for tool search, often a tool_reference to a tool no longer sent in tools); 401/403 are credentials; 5xx are the server's.",
	},
	{
		Kind:     FlagStreamIncomplete,
		Severity: SeverityWarning,
		check:    ruleStreamIncomplete,
		When:     "the stream ended without `message_stop`, or a `200 text/event-stream` response sent no event at all; the detail says who ended it (the client hung up, the connection to the API broke) when the capture tells, live or imported",
		Why:      "The response stream stopped before message_stop: the connection broke or the client hung up. The client has no complete reply, usually retries the same request, and pays for both.",
		Todo:     "Look at the exchange's error and timing: a proxy or network timeout, the client's own timeout, or the recorder being stopped mid-request. A retry flag on a later turn shows whether the client recovered.",
	},
	{
		Kind:     FlagRetry,
		Severity: SeverityInfo,
		check:    ruleRetry,
		When:     "the same request (model, system prompt, tools, messages) sent again, after the earlier one ended, because it failed, was cut off or came back empty",
		Why:      "The client sent the same request again because the previous attempt failed, was cut off or came back empty. It is how clients recover, but each attempt costs time and tokens.",
		Todo:     "Look at the flag on the attempt before (api_error, stream_incomplete or stop_sequence_anomaly) to see why the retry was needed. Many retries in a row point to a persistent problem rather than a passing one.",
	},
	{
		Kind:     FlagCallBeforeLoad,
		Severity: SeverityError,
		check:    ruleCallBeforeLoad,
		When:     "the response calls a deferred tool in the catalog whose schema is not in this turn's working set (`tool`; the detail says whether Claude Code then refused it with InputValidationError)",
		Why:      "The model called a deferred tool whose schema it had never loaded. The API only shows the model the schemas of loaded tools, so the call was made blind: Claude Code either refuses it (InputValidationError) or guesses the input, and the turn is wasted or the tool runs with wrong arguments.",
		Todo:     "Check the turns before: did a ToolSearch for this tool run and return it? If the catalog announcement was read but no search followed, the model skipped the search step; if a search ran but matched other tools, improve the tool's name and description so that it is found, or keep the tool non-deferred.",
	},
	{
		Kind:     FlagUnknownTool,
		Severity: SeverityError,
		check:    ruleUnknownTool,
		When:     "a call to a name in neither the working set nor the catalog (`tool`)",
		Why:      "The model called a tool that exists neither in the request's tools nor in the deferred-tool catalog: a hallucinated name, a tool from an earlier session, or one whose MCP server has gone. The call cannot run and the turn is wasted.",
		Todo:     "Compare the name with the catalog and the working set of this turn. If the tool used to exist, look for a catalog removal (an MCP server that disconnected) or a resumed session; otherwise the model invented it, and a clearer tool list or a ToolSearch first would help.",
	},
	{
		Kind:     FlagStopSequence,
		Severity: SeverityWarning,
		check:    ruleStopSequence,
		When:     "`stop_sequence` on a request that set none, or an empty reply ending on one; says whether a `tool_reference` and `Tool loaded.` were in the last user message",
		Why:      "The reply ended on a stop sequence the request never set, usually with no content at all. This is the known failure right after a tool_reference result: with freshly expanded schemas at the end of the prompt the model samples a stop sequence and says nothing. The client has to notice and retry.",
		Todo:     "Check that the user message carrying the tool_reference also carries a short text block after it (Claude Code adds \"Tool loaded.\"). If that text was there, this is the model's side; the retry that follows should succeed, and a retry flag on the next turn shows it.",
	},
	{
		Kind:     FlagEmptySearch,
		Severity: SeverityWarning,
		check:    ruleEmptySearch,
		When:     "a search that loaded nothing (no match, or a server search error)",
		Why:      "A tool search loaded no tool. The model looked for a capability and found nothing, so it will either give up, guess, or call a tool it has not loaded.",
		Todo:     "Compare the query with the catalog: if the tool the model wanted exists, its name or description does not match how the model asks for it; if it does not exist, the model is reaching for a capability you have not given it. Repeated empty searches are worth a better tool description or a non-deferred tool.",
	},
	{
		Kind:     FlagSearchPartial,
		Severity: SeverityWarning,
		check:    ruleSearchPartial,
		When:     "a search whose query names tools (a `select:` list, or keywords and `+required` terms that are exact names of tools in the catalog, of Claude Code's own tools, or of tools loaded earlier in the thread) and whose result loaded tools but not all of them, the rest not loaded otherwise (`tool`: the first left out, `missing`: all of them, `search`; the detail names the calls the thread made next; `cost_usd`: the thread's turns that ran without it). Replaces `search_missed`; a search that loaded nothing is an `empty_search` instead",
		Why:      "The model asked for tools by name and did not get all of them, usually because `max_results` was smaller than the number of names, or a name lost in the ranking. Nothing fails: the model works around the missing tool (another tool, a shell command, a guess), often for many turns, and nobody notices.",
		Todo:     "Load tools by name with `select:A,B` (every named tool is returned), or raise `max_results` to at least the number of tools named. Read the calls that followed: a tool used instead, or errors, show what the missing tool cost. If the model keeps searching with keywords that are tool names, a non-deferred tool or a clearer description may serve it better.",
	},
	{
		Kind:     FlagSearchRepeated,
		Severity: SeverityInfo,
		check:    ruleSearchRepeated,
		When:     "a search asks what an earlier search of its thread asked and was answered (the same tool and query; a `select:` list in any order, keywords in any case) (`search`: the one asked again)",
		Why:      "The model searched again for what it had already searched for in this thread and been answered: a round trip, and the tokens of a whole request, for nothing new. It usually means the model lost track of what it loaded (a long context, a compaction) or did not trust the first answer.",
		Todo:     "Read the first search's answer. If it loaded the tools and they are still in the working set, the model does not see them as loaded: look at what it was told after that search. If it found nothing, the model keeps looking for a capability that is not there: give it the tool, or a name and description that match how it asks.",
	},
	{
		Kind:     FlagCacheBreak,
		Severity: SeverityWarning,
		check:    ruleCacheBreak,
		When:     "cache read fell below 95 % of what the thread's previous turn left in the cache, and by at least 2,000 tokens (`cause`, `tokens_lost`; the API's `cache_miss_reason` too when present, and whether it agrees)",
		Why:      "The prompt cache was not read where it should have been, so the tokens that could have been read at a tenth of the price were billed again as cache writes (at 1.25 times the price or more) and the request took longer. Anything that changes the prompt prefix (model, tool definitions, system prompt, betas, earlier messages) breaks the cache from that point on; so does waiting longer than the cache lifetime.",
		Todo:     "Read the cause. For model, tools, system, betas or messages, find what changed between the two turns and keep it stable within a session (switch models, MCP servers or system-prompt flags only between sessions). For ttl_expired, the gap was longer than the cache lifetime: use the 1-hour TTL for long pauses. For unexplained breaks nothing in the request changed: the server lost the entry, and there is nothing to fix on the client.",
	},
	{
		Kind:     FlagToolSearchOff,
		Severity: SeverityInfo,
		check:    ruleToolSearchOff,
		When:     "a Claude Code agent thread offers `mcp__` tools but neither ToolSearch nor any `defer_loading` (not raised on side queries such as one-tool `max_tokens: 1` probes)",
		Why:      "The thread sends every MCP tool with its full schema on every request and has no ToolSearch: tool search is off. With many tools this makes each request much larger and more expensive, and more tools can make the model choose worse.",
		Todo:     "If this was not intended: Claude Code turns tool search off with ENABLE_TOOL_SEARCH=false, with ENABLE_TOOL_SEARCH=auto while the tools' definitions stay below its threshold (a share of the context window), behind a non-Anthropic ANTHROPIC_BASE_URL (a proxy or gateway) while ENABLE_TOOL_SEARCH is unset, and on clients or models that do not support it. Set ENABLE_TOOL_SEARCH=true to defer tools always.",
	},
	{
		Kind:     FlagCatalogNoSearch,
		Severity: SeverityWarning,
		check:    ruleCatalogNoSearch,
		When:     "deferred tools are announced (the \"available via ToolSearch ... calling them directly will fail\" reminder) but the request offers no ToolSearch nor server tool search; says where the announcement is and how many announced tools are sent inline (once per thread; not on a request with no tools at all, such as a compaction summary)",
		Why:      "The model is told that deferred tools exist and must be loaded with ToolSearch before use, but the request offers no ToolSearch. The model may try to call a tool that does not exist, avoid tools it could call, or waste a turn.",
		Todo:     "Usually the client decided against tool search (ENABLE_TOOL_SEARCH=auto below its threshold, false, or a model without tool_reference) but kept the announcement. Check ENABLE_TOOL_SEARCH and the model; a recorder must not change it (tsinspect record keeps your value).",
	},
	{
		Kind:     FlagSearchNoCatalog,
		Severity: SeverityWarning,
		check:    ruleSearchNoCatalog,
		When:     "ToolSearch is offered but no deferred tool is announced (once per thread)",
		Why:      "ToolSearch is offered, but the model has been told of no deferred tool to search for: every search returns nothing, and the tool costs prompt tokens for nothing.",
		Todo:     "Look for a catalog announcement that was lost (a compaction, a resumed session) or tools that were all inlined; a client should offer ToolSearch only with deferred tools.",
	},
	{
		Kind:     FlagDeferredInline,
		Severity: SeverityWarning,
		check:    ruleDeferredInline,
		When:     "tools announced as deferred are sent inline with full schemas (each tool once per thread, `tool` when one)",
		Why:      "A tool is announced as deferred (\"calling them directly will fail\") yet its full schema is in tools: the model is told to search for a tool it could call at once, and pays for the schema in every request anyway.",
		Todo:     "The client's deferral decision and its announcement disagree: with ENABLE_TOOL_SEARCH=auto below its threshold Claude Code inlines the tools but still announces them. Pick one: defer the tools or stop announcing them.",
	},
	{
		Kind:     FlagUnknownReference,
		Severity: SeverityError,
		check:    ruleUnknownReference,
		When:     "a search returned a `tool_reference` to a name in neither the catalog nor the tools (`tool`, `search`)",
		Why:      "A search returned a tool_reference to a name that is neither announced nor sent: the tool cannot be loaded, and the API refuses a request whose history references a tool missing from tools.",
		Todo:     "Compare the name with the catalog: a renamed or disconnected MCP tool, or a search that answers from a stale list.",
	},
	{
		Kind:     FlagReferenceNotSent,
		Severity: SeverityError,
		check:    ruleReferenceNotSent,
		When:     "a tool loaded by a `tool_reference` in the history is absent from this request's tools (`tool`; once per thread and tool; a request with no tools at all only when the API refused it)",
		Why:      "A tool_reference in the history loaded a tool, but this request does not send its schema: the model believes the tool is loaded, and the API answers 400 \"Tool reference not found in available tools\".",
		Todo:     "Check the turn where the tool disappeared from tools: a disconnected MCP server, a compaction that dropped it, or a client that forgot its loaded tools.",
	},
}

// FlagKinds returns the table of flag kinds, in the order their checks
// run.
func FlagKinds() []FlagKind { return slices.Clone(flagKinds[:]) }

// kindRow returns the row of a flag kind; ok is false for an unknown
// kind.
func kindRow(kind string) (row FlagKind, ok bool) {
	for _, r := range flagKinds {
		if r.Kind == kind {
			return r, true
		}
	}
	return FlagKind{}, false
}

// Kinds lists every flag kind, in the order the checks run.
func Kinds() []string {
	out := make([]string, len(flagKinds))
	for i := range flagKinds {
		out[i] = flagKinds[i].Kind
	}
	return out
}

// Severity returns the severity of a flag kind, from its row, or "" for
// an unknown kind.
func Severity(kind string) string {
	if r, ok := kindRow(kind); ok {
		return r.Severity
	}
	return ""
}

// Explain says why a flag kind matters and what to do about it, for a
// person reading a report, from its row. Unknown kinds get empty strings.
func Explain(kind string) (why, todo string) {
	if r, ok := kindRow(kind); ok {
		return r.Why, r.Todo
	}
	return "", ""
}
