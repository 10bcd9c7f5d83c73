// Package redact makes a report fit to share: it removes or pseudonymises
// everything private in a [report.Report] before the report is written, in
// any format.
//
// The design is an allow-list. [Apply] builds a new report field by field:
// fields known to be safe (counts, token figures, enums such as stop
// reasons and flag kinds, tool names that look like tool names, hashes)
// are copied after a check of their shape; free text (flag details, API
// error messages, decoding problems, search queries, stop sequences) goes
// through a scrubber; identifiers are replaced by stable pseudonyms. A
// field the redactor does not know is not copied at all, so a field added
// to the report later stays out of redacted exports until it is
// classified here.
//
// The report itself holds no message text, tool inputs or outputs,
// thinking, system prompt or images: [report.Build] never copies them. What
// could carry them is the free text that quotes them (a flag detail quoting
// a tool_result, the text a retry added): the scrubber replaces every
// quoted excerpt in free text by its length, unless it is a search query
// of the same report, a stop sequence, or one of a few fixed phrases of
// the client.
//
// The scrubber replaces, with the same pseudonym for the same value
// throughout a report ("[email-1]", "[path-2]", "[secret-1]", ...): e-mail
// addresses; absolute paths and home directories; IP addresses; host names
// other than the API's; URLs other than the API's; API keys (sk-ant-...
// and the like), bearer tokens, JWTs, key=value credentials, long hex and
// base64 secrets; UUIDs; and every value [Collect] found private in the
// capture itself (session and device ids, account ids, user names, the
// hosts the client talked to). Tool names are kept; tool schemas appear
// only as a hash and a token count. Under [Strict], MCP server names are
// pseudonymised too: mcp__github__create_issue becomes
// mcp__s1__create_issue.
package redact

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/report"
	"github.com/tsinspect/tsinspect/timeline"
)

// Policy says how much Apply removes.
type Policy string

// The policies.
const (
	// Default removes everything private and keeps tool names and
	// search queries (scrubbed).
	Default Policy = "default"
	// Strict is Default with MCP server names pseudonymised too.
	Strict Policy = "strict"
	// Off removes nothing.
	Off Policy = "off"
)

// Policies lists the policies, the default first.
func Policies() []Policy { return []Policy{Default, Strict, Off} }

// ParsePolicy reads a policy name.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range Policies() {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("redact: unknown policy %q (want default, strict or off)", s)
}

// Describe says in one sentence what a policy removed, for the reader of a
// report.
func Describe(p Policy) string {
	switch p {
	case Off:
		return "Not redacted: this report may hold private data (paths, e-mail addresses, identifiers, secrets quoted in errors)."
	case Strict:
		return "Redacted (strict): no message text, tool inputs or outputs, thinking, system prompt or images; e-mail addresses, paths, addresses, host names, identifiers and secrets are replaced by pseudonyms such as [path-1]; MCP server names are pseudonymised (mcp__s1__tool); tool schemas appear as a hash and a token count."
	}
	return "Redacted (default): no message text, tool inputs or outputs, thinking, system prompt or images; e-mail addresses, paths, addresses, host names, identifiers and secrets are replaced by pseudonyms such as [path-1]; tool schemas appear as a hash and a token count."
}

// Apply returns a redacted copy of r under policy p; r is not changed.
// known holds the capture's own private values (from [Collect]); it may be
// nil. Under Off the copy is exact.
func Apply(r *report.Report, p Policy, known *Known) *report.Report {
	if r == nil {
		return nil
	}
	if p == Off {
		return deepCopy(r)
	}
	a := &applier{s: newScrubber(known), strict: p == Strict, toolMemo: map[string]string{}}
	if a.strict {
		a.s.servers = map[string]string{}
		a.registerServers(r)
	}
	for _, t := range r.Turns {
		for _, q := range t.ToolSearches {
			if q.Query != "" {
				a.queries = append(a.queries, q.Query)
			}
		}
		if t.StopSequence != nil && *t.StopSequence != "" {
			a.stops = append(a.stops, *t.StopSequence)
		}
	}
	return a.report(r)
}

// deepCopy copies r through JSON, which carries every field. A report
// holds plain values only, so this cannot fail; if it did, the copy would
// be shallow.
func deepCopy(r *report.Report) *report.Report {
	var out report.Report
	b, err := json.Marshal(r)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		out = *r
	}
	return &out
}

// applier holds the state of one Apply call.
type applier struct {
	s      *scrubber
	strict bool
	// queries and stops are the raw search queries and stop sequences of
	// the report: quoted excerpts equal to one of them may stay in free
	// text (scrubbed).
	queries []string
	stops   []string
	// toolMemo remembers what tool made of each name.
	toolMemo map[string]string
	// modelMemo remembers what model made of each model name, idMemo
	// what id made of each identifier.
	modelMemo, idMemo map[string]string
}

// registerServers numbers the MCP servers of every tool name in r in order
// of appearance (strict policy).
func (a *applier) registerServers(r *report.Report) {
	reg := func(names ...string) {
		for _, n := range names {
			if srv, _, ok := mcpParts(n); ok {
				a.s.addServer(srv)
			}
		}
	}
	for _, t := range r.Turns {
		for _, d := range t.ToolDefinitions {
			reg(d.Name)
		}
		reg(t.WorkingSet.Names...)
		reg(t.Catalog.Added...)
		reg(t.Catalog.Removed...)
		reg(t.Unreferenced...)
		reg(t.MissingReferences...)
		for _, q := range t.ToolSearches {
			reg(q.Tool)
			reg(q.Results...)
			reg(q.Selected...)
		}
		for _, c := range t.ToolCalls {
			reg(c.Name)
		}
		for _, f := range t.Flags {
			reg(f.Tool)
		}
	}
	for _, th := range r.TokenSummary.Threads {
		reg(th.LoadedTools...)
		reg(th.Unknown...)
		reg(th.Estimated...)
	}
}

// mcpParts splits mcp__SERVER__tool.
func mcpParts(name string) (server, tool string, ok bool) {
	server, tool, ok = decode.SplitMCP(name)
	return server, tool, ok && server != ""
}

var (
	toolNameRe = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,128}$`)
	modelRe    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@\-]{0,99}$`)
	longNumRe  = regexp.MustCompile(`\d{10,}`)
	wordRe     = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	typeRe     = regexp.MustCompile(`^[a-z][a-z0-9_]{0,79}$`)
	threadRe   = regexp.MustCompile(`^(?:main|sub[0-9]{1,6}|side[0-9]{1,6}|conv[0-9]{1,6})$`)
	sdkNameRe  = regexp.MustCompile(`^Anthropic [A-Za-z#]{1,20} SDK$`)
	versionRe  = regexp.MustCompile(`^[0-9][0-9A-Za-z.+\-]{0,39}$`)
	hashRe     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	genRe      = regexp.MustCompile(`^tsinspect(?: [0-9A-Za-z.+\-]{1,40})?$`)
	idRe       = regexp.MustCompile(`^([a-z]{2,12})_[A-Za-z0-9]{8,}$`)
)

func (a *applier) report(r *report.Report) *report.Report {
	out := &report.Report{
		SchemaVersion: r.SchemaVersion,
		Generator:     "tsinspect",
		Capture: report.Capture{
			Exchanges: r.Capture.Exchanges,
			Turns:     r.Capture.Turns,
			FirstAt:   r.Capture.FirstAt,
			LastAt:    r.Capture.LastAt,
			Flags:     map[string]int{},
		},
	}
	// Sources name formats and what they lack in tsinspect's own words:
	// kept for the sources tsinspect knows, the words said anew.
	for _, src := range r.Capture.Sources {
		o := report.Source{Source: "other", Turns: src.Turns, Lacks: []string{"unknown to this tsinspect"}}
		if lacks := exchange.Limits(src.Source); lacks != nil {
			o.Source, o.Lacks = src.Source, lacks
		}
		out.Capture.Sources = append(out.Capture.Sources, o)
	}
	if genRe.MatchString(r.Generator) {
		out.Generator = r.Generator
	}
	for k, n := range r.Capture.Flags {
		out.Capture.Flags[a.kind(k)] += n
	}
	for _, c := range r.Capture.Clients {
		out.Capture.Clients = append(out.Capture.Clients, a.s.text(c))
	}
	for _, b := range r.Capture.Betas {
		out.Capture.Betas = append(out.Capture.Betas, a.enum(b))
	}
	for _, th := range r.Threads {
		o := report.Thread{ID: a.thread(th.ID), Kind: a.enum(th.Kind), Turns: slices.Clone(th.Turns), Client: a.client(th.Client), QuerySource: a.enum(th.QuerySource), Session: a.session(th.Session)}
		for _, m := range th.Models {
			o.Models = append(o.Models, a.model(m))
		}
		out.Threads = append(out.Threads, o)
	}
	if len(r.Turns) > 0 {
		// Made whole: grown by appending, a long session's turns (large
		// values) were copied over about four times.
		out.Turns = make([]report.Turn, 0, len(r.Turns))
	}
	for i := range r.Turns {
		out.Turns = append(out.Turns, a.turn(&r.Turns[i]))
	}
	ts := r.TokenSummary
	out.TokenSummary = report.TokenSummary{Method: report.TokenMethod, CharsPerToken: ts.CharsPerToken, CountTokensUsed: ts.CountTokensUsed}
	for _, th := range ts.Threads {
		out.TokenSummary.Threads = append(out.TokenSummary.Threads, report.ThreadTokens{
			Thread: a.thread(th.Thread), Turns: th.Turns, Searches: th.Searches, EmptySearches: th.EmptySearches,
			LoadedTools: a.tools(th.LoadedTools), Sent: th.Sent, Loaded: th.Loaded, SearchTool: th.SearchTool,
			Announcement: th.Announcement, Inlined: th.Inlined, Saved: th.Saved, Unknown: a.tools(th.Unknown), Estimated: a.tools(th.Estimated),
			UnknownSlots: th.UnknownSlots, BreakEven: th.BreakEven, KnownDeferred: th.KnownDeferred, KnownDeferredAverage: th.KnownDeferredAverage,
			SavedUSD: th.SavedUSD,
		})
	}
	if c := r.Costs; c != nil {
		oc := &report.Costs{
			Prices: a.s.text(c.Prices), PricesTaken: a.s.text(c.PricesTaken), TotalUSD: c.TotalUSD,
			CacheBreaks: c.CacheBreaks, CacheBreaksUSD: c.CacheBreaksUSD, BlindCalls: c.BlindCalls, BlindCallsUSD: c.BlindCallsUSD, BlindCallsUnknown: c.BlindCallsUnknown,
			DeferralSavedUSD: c.DeferralSavedUSD, DeferralSavedLowerBound: c.DeferralSavedLowerBound, DeferralSavedEstimated: c.DeferralSavedEstimated, DeferralUnknown: c.DeferralUnknown, UsageProblems: c.UsageProblems, OutputPlaceholders: c.OutputPlaceholders,
		}
		for _, th := range c.Threads {
			oc.Threads = append(oc.Threads, report.ThreadCost{Thread: a.thread(th.Thread), USD: th.USD})
		}
		for _, m := range c.Unpriced {
			if base, ok := strings.CutSuffix(m, " (fast mode)"); ok {
				oc.Unpriced = append(oc.Unpriced, a.model(base)+" (fast mode)")
				continue
			}
			oc.Unpriced = append(oc.Unpriced, a.model(m))
		}
		for _, e := range c.Estimated {
			m, as, _ := strings.Cut(e, " as ")
			oc.Estimated = append(oc.Estimated, a.model(m)+" as "+a.model(as))
		}
		out.Costs = oc
	}
	out.Normalize()
	return out
}

func (a *applier) turn(t *report.Turn) report.Turn {
	o := report.Turn{
		Index: t.Index, Thread: a.thread(t.Thread), Prev: t.Prev, Link: a.enum(t.Link),
		ExchangeID: t.ExchangeID, At: t.At, Model: a.model(t.Model), Status: t.Status,
		Incomplete: t.Incomplete, ResponseID: a.id(t.ResponseID), StopReason: a.enum(t.StopReason), OutputPlaceholder: t.OutputPlaceholder,
		Usage: a.usage(t.Usage),
		Catalog: report.Catalog{
			Count: t.Catalog.Count, Added: a.tools(t.Catalog.Added), Removed: a.tools(t.Catalog.Removed), NotRecorded: t.Catalog.NotRecorded,
		},
		WorkingSet: report.WorkingSet{
			Count: t.WorkingSet.Count, Names: a.tools(t.WorkingSet.Names),
			Added: a.tools(t.WorkingSet.Added), Removed: a.tools(t.WorkingSet.Removed),
			Via: map[string]string{}, DeferredOnly: t.WorkingSet.DeferredOnly,
		},
		Unreferenced:      a.tools(t.Unreferenced),
		MissingReferences: a.tools(t.MissingReferences),
		ToolTokens:        t.ToolTokens,
		Client:            a.s.text(t.Client),
		Timing:            t.Timing,
	}
	for _, b := range t.Betas {
		o.Betas = append(o.Betas, a.enum(b))
	}
	if c := t.Cost; c != nil {
		oc := *c
		oc.PricedAs = a.model(c.PricedAs)
		o.Cost = &oc
	}
	if t.ResponseModel != "" {
		o.ResponseModel = a.model(t.ResponseModel)
	}
	if t.Error != nil {
		o.Error = &report.Error{Type: a.enum(t.Error.Type), Message: a.s.text(t.Error.Message), Event: t.Error.Event}
	}
	if t.StopSequence != nil {
		s := a.s.text(*t.StopSequence)
		o.StopSequence = &s
	}
	for n, via := range t.WorkingSet.Via {
		o.WorkingSet.Via[a.tool(n)] = a.enum(via)
	}
	for _, q := range t.ToolSearches {
		o.ToolSearches = append(o.ToolSearches, report.Search{
			ToolUseID: a.id(q.ToolUseID), Tool: a.tool(q.Tool), Server: q.Server,
			Query: a.s.text(q.Query), Mode: a.enum(q.Mode), Selected: a.tools(q.Selected),
			MaxResults: q.MaxResults, Results: a.tools(q.Results), NoMatch: q.NoMatch,
			ToolLoaded: q.ToolLoaded, IsError: q.IsError, ErrorCode: a.enum(q.ErrorCode),
		})
	}
	for _, c := range t.ToolCalls {
		o.ToolCalls = append(o.ToolCalls, report.ToolCall{
			ID: a.id(c.ID), Name: a.tool(c.Name), Server: c.Server,
			Loaded: c.Loaded, Via: a.enum(c.Via), InCatalog: c.InCatalog,
		})
	}
	for _, f := range t.Flags {
		o.Flags = append(o.Flags, report.Flag{
			Kind: a.kind(f.Kind), Severity: a.enum(f.Severity), Detail: a.freeText(f.Detail),
			Tool: a.tool(f.Tool), Cause: a.enum(f.Cause), TokensLost: f.TokensLost,
			CacheMissReason: a.enum(f.CacheMissReason), Agrees: f.Agrees, Search: a.id(f.Search),
			Answer: f.Answer, Refused: f.Refused, CallTokens: f.CallTokens, ErrorTokens: f.ErrorTokens, RoundTrip: f.RoundTrip,
			CostUSD: f.CostUSD,
		})
	}
	for _, p := range t.Problems {
		o.Problems = append(o.Problems, a.freeText(p))
	}
	for _, d := range t.ToolDefinitions {
		od := report.ToolDefinition{
			Name: a.tool(d.Name), Deferred: d.Deferred, Placeholder: d.Placeholder, Loaded: d.Loaded,
			Tokens: d.Tokens, TokensFrom: report.FromEstimate,
		}
		if typeRe.MatchString(d.Type) {
			od.Type = d.Type
		} else if d.Type != "" {
			od.Type = "other"
		}
		if hashRe.MatchString(d.SHA256) {
			od.SHA256 = d.SHA256
		}
		if d.TokensFrom == report.FromCountTokens {
			od.TokensFrom = report.FromCountTokens
		}
		o.ToolDefinitions = append(o.ToolDefinitions, od)
	}
	return o
}

// enum passes a lower-case word (stop reasons, links, modes, causes,
// error types); anything else is free text.
// usage keeps a turn's token counts; its speed is an enum of the API's.
func (a *applier) usage(u report.Usage) report.Usage {
	u.Speed = a.enum(u.Speed)
	return u
}

func (a *applier) enum(s string) string {
	if s == "" || wordRe.MatchString(s) {
		return s
	}
	return a.s.text(s)
}

// kind passes a known flag kind.
func (a *applier) kind(k string) string {
	if slices.Contains(timeline.Kinds(), k) {
		return k
	}
	return a.enum(k)
}

// client passes the client families, the names tsinspect gives Claude Code
// and the official SDKs, and versions; another client's name (from its
// User-Agent, which may name a private application) is scrubbed like text.
func (a *applier) client(c timeline.Client) timeline.Client {
	out := timeline.Client{Family: c.Family, Name: c.Name, Version: c.Version}
	switch c.Family {
	case "", timeline.ClientClaudeCode, timeline.ClientSDK, timeline.ClientOther:
	default:
		out.Family = a.enum(c.Family)
	}
	if c.Name != "Claude Code" && c.Name != "unknown" && !sdkNameRe.MatchString(c.Name) {
		out.Name = a.s.text(c.Name)
	}
	if c.Version != "" && (!versionRe.MatchString(c.Version) || a.s.hasSecret(c.Version)) {
		out.Version = a.s.text(c.Version)
	}
	return out
}

// thread passes the timeline's thread ids (main, subN, sideN, convN).
func (a *applier) thread(id string) string {
	if id == "" || threadRe.MatchString(id) {
		return id
	}
	return a.s.pseudonym(classThread, id)
}

// session replaces a Claude Code session id by a pseudonym: it identifies
// a user's session.
func (a *applier) session(id string) string {
	if id == "" {
		return ""
	}
	return a.s.pseudonym("session", id)
}

// model passes a model name, unless it holds a long number (an account in
// a cloud ARN) or a known private value.
func (a *applier) model(m string) string {
	if out, ok := a.modelMemo[m]; ok {
		return out
	}
	out := m
	if !(m == "" || modelRe.MatchString(m) && !longNumRe.MatchString(m) && !a.s.hasSecret(m)) {
		out = a.s.pseudonym(classModel, m)
	}
	if a.modelMemo == nil {
		a.modelMemo = map[string]string{}
	}
	a.modelMemo[m] = out
	return out
}

// id replaces an API identifier (msg_..., toolu_..., srvtoolu_...) by a
// pseudonym with the same prefix, the same id by the same pseudonym.
func (a *applier) id(s string) string {
	if s == "" {
		return s
	}
	if out, ok := a.idMemo[s]; ok {
		return out
	}
	prefix := "id"
	if m := idRe.FindStringSubmatch(s); m != nil {
		prefix = m[1]
	}
	out := fmt.Sprintf("%s_%d", prefix, a.s.number("api-id:"+prefix, s))
	if a.idMemo == nil {
		a.idMemo = map[string]string{}
	}
	a.idMemo[s] = out
	return out
}

// tool passes a tool name that looks like one and holds no secret; under
// Strict its MCP server becomes a pseudonym.
func (a *applier) tool(n string) string {
	if n == "" {
		return n
	}
	if out, ok := a.toolMemo[n]; ok {
		return out
	}
	out := a.toolName(n)
	a.toolMemo[n] = out
	return out
}

func (a *applier) toolName(n string) string {
	if !toolNameRe.MatchString(n) || a.s.hasSecret(n) {
		return a.s.pseudonym(classTool, n)
	}
	if a.strict {
		if srv, tool, ok := mcpParts(n); ok {
			return "mcp__" + a.s.addServer(srv) + "__" + tool
		}
	}
	return n
}

func (a *applier) tools(ns []string) []string {
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		out = append(out, a.tool(n))
	}
	return out
}

// quotedRe finds the excerpts free text quotes: Go-quoted strings and
// backtick spans.
var quotedRe = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`")

// safePhrases are client texts a flag may quote; they stay.
var safePhrases = []string{
	decode.NoMatchText,
	"Tool loaded.",
	decode.NoSuchToolText,
	decode.InputValidationText,
}

// freeText scrubs the text of a flag detail or a problem: every quoted
// excerpt is replaced by its length unless it is a query, a stop sequence,
// a safe phrase or a lower-case word (a JSON key such as "budget_tokens"),
// then the rest goes through the scrubber.
func (a *applier) freeText(t string) string {
	if out, ok := a.s.freeMemo[t]; ok {
		return out
	}
	out := a.freeTextOf(t)
	if a.s.memoBytes+len(t)+len(out) <= maxMemoBytes { // the scrubber's memo's bound
		if a.s.freeMemo == nil {
			a.s.freeMemo = map[string]string{}
		}
		a.s.freeMemo[t] = out
		a.s.memoBytes += len(t) + len(out)
	}
	return out
}

// freeTextOf is freeText without the memo.
func (a *applier) freeTextOf(t string) string {
	var b strings.Builder
	last := 0
	for _, m := range quotedRe.FindAllStringIndex(t, -1) {
		b.WriteString(a.s.text(t[last:m[0]]))
		b.WriteString(a.quoted(t[m[0]:m[1]]))
		last = m[1]
	}
	b.WriteString(a.s.text(t[last:]))
	return b.String()
}

// quoted redacts one quoted excerpt.
func (a *applier) quoted(q string) string {
	if strings.HasPrefix(q, "`") {
		return fmt.Sprintf("`[%d bytes removed]`", len(q)-2)
	}
	v, err := strconv.Unquote(q)
	if err != nil {
		v = q[1 : len(q)-1]
	}
	cut := strings.TrimSuffix(v, "…")
	for _, known := range append(slices.Clone(a.queries), a.stops...) {
		if v == known || cut != v && cut != "" && strings.HasPrefix(known, cut) {
			return strconv.Quote(a.s.text(v))
		}
	}
	for _, p := range safePhrases {
		if v == p || strings.TrimSuffix(v, ".") == strings.TrimSuffix(p, ".") {
			return strconv.Quote(p)
		}
		if strings.HasPrefix(v, p) {
			return strconv.Quote(p + " […]")
		}
	}
	if v == "" || wordRe.MatchString(v) && len(v) <= 32 {
		return q // empty, or a lower-case word: a JSON key or enum value
	}
	return fmt.Sprintf("\"[%d characters removed]\"", len([]rune(v)))
}
