package otlp

import (
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/tsinspect/tsinspect/report"
)

// Span names.
const (
	// SessionSpanName names the root span of a session's trace.
	SessionSpanName = "claude_code.session"
	// ThreadSpanPrefix starts the name of a thread's span: "thread main",
	// "thread sub1".
	ThreadSpanPrefix = "thread "
	// OperationChat is gen_ai.operation.name of a Messages API turn; the
	// turn's span is named "chat MODEL" as the conventions ask.
	OperationChat = "chat"
	// Provider is gen_ai.provider.name.
	Provider = "anthropic"
	// ScopeName is the instrumentation scope of every span.
	ScopeName = "github.com/tsinspect/tsinspect/otlp"
)

// Session is a session's report with what the spans need beside it. The
// report should be redacted already: the spans carry what it holds.
type Session struct {
	Report *report.Report
	// Seed identifies the session; the trace id is derived from it, so
	// that exporting the same session twice gives the same trace. Use
	// [Seed].
	Seed string
	// Ends maps an exchange id to the end of its exchange; a turn without
	// one ends when it starts.
	Ends map[int64]time.Time
	// ClientVersion is the Claude Code version (from its User-Agent or
	// its billing header), "" when unknown.
	ClientVersion string
	// Policy names the redaction policy the report went through.
	Policy string
}

// Seed makes a session seed from what identifies a capture: its
// started_at metadata or, failing that, the start of its first exchange.
func Seed(startedAt string, firstStart time.Time) string {
	if startedAt != "" {
		return "started_at=" + startedAt
	}
	return "first=" + firstStart.UTC().Format(time.RFC3339Nano)
}

// TraceID returns the 16-byte trace id of a session seed.
func TraceID(seed string) []byte {
	h := sha256.Sum256([]byte("tsinspect trace\x00" + seed))
	return h[:16]
}

// spanID returns a span id derived from the trace id and a name. It is
// never all zeros.
func spanID(trace []byte, name string) []byte {
	h := sha256.Sum256(append(append([]byte{}, trace...), "\x00"+name...))
	id := h[:8]
	if allZero(id) {
		id[7] = 1
	}
	return id
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func sessionSpanID(trace []byte) []byte { return spanID(trace, "session") }
func threadSpanID(trace []byte, id string) []byte {
	return spanID(trace, "thread\x00"+id)
}
func turnSpanID(trace []byte, exchangeID int64, index int) []byte {
	if exchangeID != 0 {
		return spanID(trace, fmt.Sprintf("exchange\x00%d", exchangeID))
	}
	return spanID(trace, fmt.Sprintf("turn\x00%d", index))
}

// turnTimes returns a turn's start and end.
func (s *Session) turnTimes(t *report.Turn) (time.Time, time.Time) {
	var start time.Time
	if t.At != nil {
		start = *t.At
	}
	end := s.Ends[t.ExchangeID]
	if end.Before(start) {
		end = start
	}
	return start, end
}

// TurnSpan makes the span of one turn of the session's report.
func (s *Session) TurnSpan(t *report.Turn) *tracepb.Span {
	trace := TraceID(s.Seed)
	start, end := s.turnTimes(t)
	model := t.Model
	respModel := t.ResponseModel
	if respModel == "" && t.ResponseID != "" {
		respModel = t.Model
	}
	name := OperationChat
	if model != "" {
		name += " " + model
	}
	u := t.Usage
	a := attrs{}
	a.str("gen_ai.operation.name", OperationChat)
	a.str("gen_ai.provider.name", Provider)
	a.str("gen_ai.request.model", model)
	a.str("gen_ai.response.model", respModel)
	a.str("gen_ai.response.id", t.ResponseID)
	if t.StopReason != "" {
		a.strs("gen_ai.response.finish_reasons", []string{t.StopReason})
	}
	// The conventions count every input token in input_tokens, cached or
	// not; Anthropic's input_tokens leaves the cached ones out.
	a.int("gen_ai.usage.input_tokens", u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens)
	a.int("gen_ai.usage.output_tokens", u.OutputTokens)
	a.int("gen_ai.usage.cache_read.input_tokens", u.CacheReadInputTokens)
	a.int("gen_ai.usage.cache_creation.input_tokens", u.CacheCreationInputTokens)
	if t.Status != 0 {
		a.int("http.response.status_code", int64(t.Status))
	}
	if t.Error != nil {
		a.str("error.type", t.Error.Type)
	} else if t.Status >= 400 {
		a.str("error.type", fmt.Sprint(t.Status))
	}

	a.int("tsinspect.turn.index", int64(t.Index))
	a.str("tsinspect.thread.id", t.Thread)
	a.str("tsinspect.turn.link", t.Link)
	if t.Incomplete {
		a.bool("tsinspect.turn.incomplete", true)
	}
	a.int("tsinspect.usage.uncached_input_tokens", u.InputTokens)
	a.int("tsinspect.catalog.size", int64(t.Catalog.Count))
	a.strs("tsinspect.catalog.added", t.Catalog.Added)
	a.strs("tsinspect.catalog.removed", t.Catalog.Removed)
	a.int("tsinspect.working_set.size", int64(t.WorkingSet.Count))
	a.strs("tsinspect.working_set.added", t.WorkingSet.Added)
	a.strs("tsinspect.working_set.removed", t.WorkingSet.Removed)
	a.int("tsinspect.tool_tokens.sent", t.ToolTokens.Sent)
	a.int("tsinspect.tool_tokens.inlined", t.ToolTokens.Inlined)
	a.int("tsinspect.tool_tokens.saved", t.ToolTokens.Saved)
	if n := len(t.ToolSearches); n > 0 {
		queries := make([]string, n)
		results := make([]string, n)
		modes := make([]string, n)
		for i, q := range t.ToolSearches {
			queries[i], modes[i] = q.Query, q.Mode
			results[i] = strings.Join(q.Results, ",")
		}
		a.int("tsinspect.search.count", int64(n))
		a.strs("tsinspect.search.queries", queries)
		a.strs("tsinspect.search.modes", modes)
		// One entry per search, the tools it loaded joined by commas
		// ("" when it loaded none).
		a.strs("tsinspect.search.results", results)
	}
	if len(t.ToolCalls) > 0 {
		var names, blind []string
		for _, c := range t.ToolCalls {
			names = append(names, c.Name)
			if !c.Loaded && !c.Server {
				blind = append(blind, c.Name)
			}
		}
		a.strs("tsinspect.tool_calls", names)
		a.strs("tsinspect.tool_calls.blind", blind)
	}
	var lost int64
	for _, f := range t.Flags {
		lost += f.TokensLost
	}
	a.int("tsinspect.cache_break.tokens_lost", lost)
	if c := t.Cost; c != nil {
		a.double("tsinspect.cost.usd", c.USD)
		if c.Estimated {
			a.bool("tsinspect.cost.estimated", true)
			a.str("tsinspect.cost.priced_as", c.PricedAs)
		}
	}

	sp := &tracepb.Span{
		TraceId:           trace,
		SpanId:            turnSpanID(trace, t.ExchangeID, t.Index),
		ParentSpanId:      threadSpanID(trace, t.Thread),
		Name:              name,
		Kind:              tracepb.Span_SPAN_KIND_CLIENT,
		StartTimeUnixNano: nanos(start),
		EndTimeUnixNano:   nanos(end),
		Attributes:        a.kv,
		Status:            &tracepb.Status{},
	}
	worst := ""
	for _, f := range t.Flags {
		ea := attrs{}
		if f.CostUSD != nil && *f.CostUSD != 0 {
			ea.double("tsinspect.flag.cost_usd", *f.CostUSD)
		}
		ea.str("tsinspect.flag.kind", f.Kind)
		ea.str("tsinspect.flag.severity", f.Severity)
		ea.str("tsinspect.flag.cause", f.Cause)
		ea.str("tsinspect.flag.detail", f.Detail)
		ea.str("tsinspect.flag.tool", f.Tool)
		ea.int("tsinspect.flag.tokens_lost", f.TokensLost)
		ea.str("tsinspect.flag.cache_miss_reason", f.CacheMissReason)
		sp.Events = append(sp.Events, &tracepb.Span_Event{
			TimeUnixNano: nanos(end), Name: f.Kind, Attributes: ea.kv,
		})
		if f.Severity == "error" {
			worst = f.Kind
		}
	}
	switch {
	case t.Error != nil || t.Status >= 400:
		sp.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "API error"}
		if t.Error != nil && t.Error.Type != "" {
			sp.Status.Message = t.Error.Type
		}
	case worst != "":
		sp.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: worst}
	}
	return sp
}

// ThreadSpans makes the span of each thread of the session's report,
// spanning its turns.
func (s *Session) ThreadSpans() []*tracepb.Span {
	trace := TraceID(s.Seed)
	byIndex := map[int]*report.Turn{}
	for i := range s.Report.Turns {
		byIndex[s.Report.Turns[i].Index] = &s.Report.Turns[i]
	}
	var out []*tracepb.Span
	for _, th := range s.Report.Threads {
		var start, end time.Time
		var in, outTok, flags int64
		for _, idx := range th.Turns {
			t := byIndex[idx]
			if t == nil {
				continue
			}
			ts, te := s.turnTimes(t)
			if start.IsZero() || ts.Before(start) {
				start = ts
			}
			if te.After(end) {
				end = te
			}
			u := t.Usage
			in += u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
			outTok += u.OutputTokens
			flags += int64(len(t.Flags))
		}
		a := attrs{}
		a.str("tsinspect.thread.id", th.ID)
		a.str("tsinspect.thread.kind", th.Kind)
		a.int("tsinspect.thread.turns", int64(len(th.Turns)))
		a.strs("tsinspect.thread.models", th.Models)
		a.int("gen_ai.usage.input_tokens", in)
		a.int("gen_ai.usage.output_tokens", outTok)
		a.int("tsinspect.flags", flags)
		out = append(out, &tracepb.Span{
			TraceId:           trace,
			SpanId:            threadSpanID(trace, th.ID),
			ParentSpanId:      sessionSpanID(trace),
			Name:              ThreadSpanPrefix + th.ID,
			Kind:              tracepb.Span_SPAN_KIND_INTERNAL,
			StartTimeUnixNano: nanos(start),
			EndTimeUnixNano:   nanos(end),
			Attributes:        a.kv,
			Status:            &tracepb.Status{},
		})
	}
	return out
}

// SessionSpan makes the root span of the session.
func (s *Session) SessionSpan() *tracepb.Span {
	trace := TraceID(s.Seed)
	r := s.Report
	var start, end time.Time
	if r.Capture.FirstAt != nil {
		start = *r.Capture.FirstAt
	}
	var lost int64
	for i := range r.Turns {
		ts, te := s.turnTimes(&r.Turns[i])
		if start.IsZero() || (!ts.IsZero() && ts.Before(start)) {
			start = ts
		}
		if te.After(end) {
			end = te
		}
		for _, f := range r.Turns[i].Flags {
			lost += f.TokensLost
		}
	}
	if end.Before(start) {
		end = start
	}
	a := attrs{}
	a.str("tsinspect.client.version", s.ClientVersion)
	a.int("tsinspect.session.turns", int64(r.Capture.Turns))
	a.int("tsinspect.session.threads", int64(len(r.Threads)))
	a.int("tsinspect.session.exchanges", int64(r.Capture.Exchanges))
	a.str("tsinspect.redaction", s.Policy)
	kinds := make([]string, 0, len(r.Capture.Flags))
	for k := range r.Capture.Flags {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		a.int("tsinspect.flags."+k, int64(r.Capture.Flags[k]))
	}
	a.int("tsinspect.cache_break.tokens_lost", lost)
	if c := r.Costs; c != nil {
		a.double("tsinspect.cost.usd", c.TotalUSD)
		a.double("tsinspect.flags_cost.usd", c.CacheBreaksUSD+c.BlindCallsUSD)
		a.str("tsinspect.prices", c.Prices)
		if len(c.Estimated) > 0 {
			a.bool("tsinspect.cost.estimated", true)
			a.strs("tsinspect.cost.priced_as", c.Estimated)
		}
		a.double("tsinspect.deferral_saved.usd", c.DeferralSavedUSD)
	}
	return &tracepb.Span{
		TraceId:           trace,
		SpanId:            sessionSpanID(trace),
		Name:              SessionSpanName,
		Kind:              tracepb.Span_SPAN_KIND_INTERNAL,
		StartTimeUnixNano: nanos(start),
		EndTimeUnixNano:   nanos(end),
		Attributes:        a.kv,
		Status:            &tracepb.Status{},
	}
}

// Spans makes every span of the session: the root, the threads, the
// turns.
func (s *Session) Spans() []*tracepb.Span {
	out := []*tracepb.Span{s.SessionSpan()}
	out = append(out, s.ThreadSpans()...)
	for i := range s.Report.Turns {
		out = append(out, s.TurnSpan(&s.Report.Turns[i]))
	}
	return out
}

func nanos(t time.Time) uint64 {
	if t.IsZero() || t.UnixNano() < 0 {
		return 0
	}
	return uint64(t.UnixNano())
}

// attrs collects span attributes, leaving out empty values.
type attrs struct{ kv []*commonpb.KeyValue }

func (a *attrs) str(k, v string) {
	if v == "" {
		return
	}
	a.kv = append(a.kv, &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}})
}

func (a *attrs) int(k string, v int64) {
	a.kv = append(a.kv, &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}})
}

func (a *attrs) double(k string, v float64) {
	a.kv = append(a.kv, &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v}}})
}

func (a *attrs) bool(k string, v bool) {
	a.kv = append(a.kv, &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v}}})
}

func (a *attrs) strs(k string, vs []string) {
	if len(vs) == 0 {
		return
	}
	arr := &commonpb.ArrayValue{}
	for _, v := range vs {
		arr.Values = append(arr.Values, &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}})
	}
	a.kv = append(a.kv, &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: arr}}})
}

// newTurnSpans makes the spans of the turns whose exchange done accepts and
// sent does not hold yet, and marks them sent.
func (s *Session) newTurnSpans(sent map[int64]bool, done func(exchangeID int64) bool) []*tracepb.Span {
	var out []*tracepb.Span
	for i := range s.Report.Turns {
		t := &s.Report.Turns[i]
		if sent[t.ExchangeID] || !done(t.ExchangeID) {
			continue
		}
		sent[t.ExchangeID] = true
		out = append(out, s.TurnSpan(t))
	}
	return out
}
