package otlp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/internal/testwait"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/report"
)

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name     string
		vars     map[string]string
		endpoint string
		url      string
		timeout  time.Duration
		headers  map[string]string
		wantErr  string
	}{
		{name: "default", url: "http://localhost:4318/v1/traces", timeout: DefaultTimeout},
		{name: "flag base", endpoint: "http://127.0.0.1:9/", url: "http://127.0.0.1:9/v1/traces", timeout: DefaultTimeout},
		{name: "flag full", endpoint: "http://127.0.0.1:9/v1/traces", url: "http://127.0.0.1:9/v1/traces", timeout: DefaultTimeout},
		{name: "flag wins", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1"}, endpoint: "http://b:2", url: "http://b:2/v1/traces", timeout: DefaultTimeout},
		{name: "env base", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel.example:4318/otlp"}, url: "https://otel.example:4318/otlp/v1/traces", timeout: DefaultTimeout},
		{name: "traces endpoint as is", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:3/custom"}, url: "http://c:3/custom", timeout: DefaultTimeout},
		{name: "insecure no scheme", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318", "OTEL_EXPORTER_OTLP_INSECURE": "true"}, url: "http://collector:4318/v1/traces", timeout: DefaultTimeout},
		{name: "secure no scheme", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, url: "https://collector:4318/v1/traces", timeout: DefaultTimeout},
		{name: "headers and timeout", vars: map[string]string{
			"OTEL_EXPORTER_OTLP_HEADERS":        "api-key=abc%3D1, x-team = core",
			"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-team=traces",
			"OTEL_EXPORTER_OTLP_TIMEOUT":        "2500",
		}, url: "http://localhost:4318/v1/traces", timeout: 2500 * time.Millisecond,
			headers: map[string]string{"api-key": "abc=1", "x-team": "traces"}},
		{name: "json refused", vars: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, wantErr: "want http/protobuf or grpc"},
		{name: "grpc default", vars: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, url: "http://localhost:4317", timeout: DefaultTimeout},
		{name: "grpc endpoint", vars: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_INSECURE": "true"}, url: "http://collector:4317", timeout: DefaultTimeout},
		{name: "bad timeout", vars: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}, wantErr: "want milliseconds"},
		{name: "user in url", endpoint: "http://me:pw@h:1", wantErr: "OTEL_EXPORTER_OTLP_HEADERS"},
		{name: "bad header", vars: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "secretvalue"}, wantErr: "OTEL_EXPORTER_OTLP_HEADERS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ConfigFromEnv(env(c.vars), c.endpoint)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, c.wantErr)
				}
				if strings.Contains(err.Error(), "secretvalue") || strings.Contains(err.Error(), "pw") {
					t.Errorf("error quotes a secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.URL != c.url || cfg.Timeout != c.timeout {
				t.Errorf("URL %q timeout %v, want %q %v", cfg.URL, cfg.Timeout, c.url, c.timeout)
			}
			for k, v := range c.headers {
				if cfg.Headers[k] != v {
					t.Errorf("header %q = %q, want %q", k, cfg.Headers[k], v)
				}
			}
		})
	}
}

// demoExchanges reads the bundled capture.
func demoExchanges(t *testing.T) []exchange.Exchange {
	t.Helper()
	return session.DemoExchanges(t)
}

func attr(kvs []*commonpb.KeyValue, key string) *commonpb.AnyValue {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

func TestDemoSpans(t *testing.T) {
	exs := demoExchanges(t)
	s := FromExchanges(exs, "seed", redact.Default, "test", pricing.Default())
	spans := s.Spans()
	trace := TraceID("seed")
	byID := map[string]*tracepb.Span{}
	for _, sp := range spans {
		if !bytes.Equal(sp.TraceId, trace) {
			t.Fatalf("span %q in trace %x, want %x", sp.Name, sp.TraceId, trace)
		}
		if _, dup := byID[string(sp.SpanId)]; dup {
			t.Fatalf("span id of %q used twice", sp.Name)
		}
		byID[string(sp.SpanId)] = sp
	}
	var roots, threads, turns, events int
	flagKinds := map[string]bool{}
	for _, sp := range spans {
		parent := byID[string(sp.ParentSpanId)]
		switch {
		case sp.Name == SessionSpanName:
			roots++
			if len(sp.ParentSpanId) != 0 {
				t.Errorf("root span has a parent")
			}
		case strings.HasPrefix(sp.Name, ThreadSpanPrefix):
			threads++
			if parent == nil || parent.Name != SessionSpanName {
				t.Errorf("thread span %q is not a child of the session span", sp.Name)
			}
		default:
			turns++
			if parent == nil || !strings.HasPrefix(parent.Name, ThreadSpanPrefix) {
				t.Fatalf("turn span %q is not a child of a thread span", sp.Name)
			}
			if got := attr(sp.Attributes, "gen_ai.operation.name").GetStringValue(); got != "chat" {
				t.Errorf("%s: gen_ai.operation.name %q", sp.Name, got)
			}
			if got := attr(sp.Attributes, "gen_ai.provider.name").GetStringValue(); got != "anthropic" {
				t.Errorf("%s: gen_ai.provider.name %q", sp.Name, got)
			}
			model := attr(sp.Attributes, "gen_ai.request.model").GetStringValue()
			if model == "" || sp.Name != "chat "+model {
				t.Errorf("span %q, model %q", sp.Name, model)
			}
			if attr(sp.Attributes, "gen_ai.usage.output_tokens") == nil || attr(sp.Attributes, "tsinspect.catalog.size") == nil {
				t.Errorf("%s: usage or catalog attribute missing", sp.Name)
			}
			if thr := attr(sp.Attributes, "tsinspect.thread.id").GetStringValue(); parent.Name != ThreadSpanPrefix+thr {
				t.Errorf("turn of thread %q under %q", thr, parent.Name)
			}
			if sp.StartTimeUnixNano == 0 || sp.EndTimeUnixNano < sp.StartTimeUnixNano {
				t.Errorf("%s: times %d..%d", sp.Name, sp.StartTimeUnixNano, sp.EndTimeUnixNano)
			}
			if attr(sp.Attributes, "tsinspect.cost.usd").GetDoubleValue() <= 0 {
				t.Errorf("%s: no cost", sp.Name)
			}
			for _, ev := range sp.Events {
				if ev.Name == "cache_break" && attr(ev.Attributes, "tsinspect.flag.cost_usd").GetDoubleValue() <= 0 {
					t.Errorf("cache_break event without a cost")
				}
				events++
				flagKinds[ev.Name] = true
				if attr(ev.Attributes, "tsinspect.flag.kind").GetStringValue() != ev.Name || attr(ev.Attributes, "tsinspect.flag.severity") == nil {
					t.Errorf("event %q lacks kind or severity", ev.Name)
				}
			}
		}
	}
	if roots != 1 || threads < 2 || turns != len(s.Report.Turns) || turns == 0 {
		t.Errorf("%d roots, %d threads, %d turns (report: %d)", roots, threads, turns, len(s.Report.Turns))
	}
	// The demo loads a tool blind and loses its cache at the end.
	for _, k := range []string{"call_before_load", "cache_break"} {
		if !flagKinds[k] {
			t.Errorf("no %s event; events: %v", k, flagKinds)
		}
	}
	var queries []string
	for _, sp := range spans {
		if v := attr(sp.Attributes, "tsinspect.search.queries"); v != nil {
			for _, q := range v.GetArrayValue().GetValues() {
				queries = append(queries, q.GetStringValue())
			}
		}
	}
	if !strings.Contains(strings.Join(queries, "|"), "weather forecast") {
		t.Errorf("search queries %q lack the demo's keyword search", queries)
	}
	// No message text, tool input or path of the session.
	wire, err := proto.Marshal(&tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"Show me what the demo MCP tools can do", "hello from the demo", "/home/dev", "Say what the demo tools did"} {
		if bytes.Contains(wire, []byte(secret)) {
			t.Errorf("spans hold %q", secret)
		}
	}
	// Same seed, same ids: a second export does not make a second trace.
	again := FromExchanges(exs, "seed", redact.Default, "test", pricing.Default()).Spans()
	if !bytes.Equal(again[len(again)-1].SpanId, spans[len(spans)-1].SpanId) {
		t.Errorf("span ids differ between two builds of the same session")
	}
}

// TestSpansMarkEstimatedPrices: a model the price table does not know is
// priced as its nearest neighbour in the table in the spans as everywhere else, and
// marked so; the session span names the price table and its date, and
// its flag cost is the sum of the flags' own.
func TestSpansMarkEstimatedPrices(t *testing.T) {
	exs := demoExchanges(t)
	for i := range exs {
		exs[i].ReqBody = bytes.ReplaceAll(exs[i].ReqBody, []byte(`"model":"claude-sonnet-4-5"`), []byte(`"model":"claude-opus-5-7"`))
	}
	s := FromExchanges(exs, "seed", redact.Default, "test", pricing.Default())
	var turns int
	for _, sp := range s.Spans() {
		switch {
		case sp.Name == SessionSpanName:
			if got := attr(sp.Attributes, "tsinspect.prices").GetStringValue(); got != "built-in prices taken 2026-11-26" {
				t.Errorf("session prices %q", got)
			}
			if !attr(sp.Attributes, "tsinspect.cost.estimated").GetBoolValue() {
				t.Error("session cost not marked estimated")
			}
			c := s.Report.Costs
			if got := attr(sp.Attributes, "tsinspect.flags_cost.usd").GetDoubleValue(); got != c.CacheBreaksUSD+c.BlindCallsUSD || got <= 0 {
				t.Errorf("flags cost %v, report %v + %v", got, c.CacheBreaksUSD, c.BlindCallsUSD)
			}
			if got := attr(sp.Attributes, "tsinspect.client.version").GetStringValue(); got != "2.1.328" {
				t.Errorf("client version %q", got)
			}
		case strings.HasPrefix(sp.Name, "chat claude-opus-5-7"):
			turns++
			if !attr(sp.Attributes, "tsinspect.cost.estimated").GetBoolValue() || attr(sp.Attributes, "tsinspect.cost.priced_as").GetStringValue() != "claude-opus-5-5" {
				t.Errorf("%s: cost not marked as priced as claude-opus-5-5", sp.Name)
			}
		}
	}
	if turns == 0 {
		t.Fatal("no opus-5-5 turn span")
	}
}

// collector is a stand-in OTLP/HTTP receiver.
type collector struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	headers []http.Header
	fail    int // answer 503 to this many requests first
	calls   int
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.headers = append(c.headers, r.Header.Clone())
	if c.fail > 0 {
		c.fail--
		w.Header().Set("Retry-After", "0")
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	var td tracepb.TracesData
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &td) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	for _, rs := range td.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
}

func (c *collector) received() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...)
}

func TestExporterRetriesAndHeaders(t *testing.T) {
	col := &collector{fail: 2}
	srv := httptest.NewServer(col)
	defer srv.Close()
	cfg, err := ConfigFromEnv(func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=k1"}[k]
	}, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	exp := NewExporter(cfg, Options{Backoff: time.Millisecond, BatchSize: 4, ServiceVersion: "t"})
	s := FromExchanges(demoExchanges(t), "seed", redact.Default, "t", pricing.Default())
	spans := s.Spans()
	if !exp.Enqueue(spans) {
		t.Fatal("Enqueue dropped spans with an empty queue")
	}
	ctx := testwait.Context(t)
	st := exp.Close(ctx)
	if st.Sent != len(spans) || st.Undelivered() != 0 || st.Retries != 2 {
		t.Fatalf("stats %+v, want %d sent after 2 retries", st, len(spans))
	}
	if got := len(col.received()); got != len(spans) {
		t.Errorf("collector got %d spans, want %d", got, len(spans))
	}
	for _, h := range col.headers {
		if h.Get("X-Api-Key") != "k1" {
			t.Fatalf("request without the configured header: %v", h)
		}
	}
}

func TestExporterNeverBlocks(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	cfg, err := ConfigFromEnv(func(string) string { return "" }, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	exp := NewExporter(cfg, Options{QueueSize: 2, BatchSize: 1})
	one := FromExchanges(demoExchanges(t), "seed", redact.Default, "t", pricing.Default()).Spans()[:1]
	// The collector answers nothing until the test ends: an Enqueue that
	// waited for it would never return.
	enqueued := make(chan struct{})
	go func() {
		defer close(enqueued)
		for i := 0; i < 200; i++ {
			exp.Enqueue(one)
		}
	}()
	select {
	case <-enqueued:
	case <-time.After(2 * time.Minute):
		t.Fatal("200 Enqueue calls against a stuck collector have not returned")
	}
	if st := exp.Stats(); st.Dropped < 190 || st.Spans != 200 {
		t.Errorf("stats %+v: want most of 200 spans dropped", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	closed := make(chan Stats, 1)
	go func() { closed <- exp.Close(ctx) }()
	var st Stats
	select {
	case st = <-closed:
	case <-time.After(2 * time.Minute):
		t.Fatal("Close has not returned past its deadline, the collector stuck")
	}
	if st.Sent != 0 || st.Undelivered() != 200 {
		t.Errorf("final stats %+v: want all 200 undelivered", st)
	}
}

func TestLiveSendsTurnsAsTheyComplete(t *testing.T) {
	col := &collector{}
	srv := httptest.NewServer(col)
	defer srv.Close()
	cfg, err := ConfigFromEnv(func(string) string { return "" }, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	exs := demoExchanges(t)
	live := NewLive(NewExporter(cfg, Options{}), "live", redact.Default, "t", pricing.Default())
	// The first half, as the recorder reports it: in flight, then done.
	half := len(exs) / 2
	for i := 0; i < half; i++ {
		ex := exs[i]
		inflight := ex
		inflight.State = exchange.StateInFlight
		live.Observe(&inflight)
		live.Observe(&ex)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for len(col.received()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	early := col.received()
	if len(early) == 0 {
		t.Fatal("no span reached the collector before the session ended")
	}
	for _, sp := range early {
		if !strings.HasPrefix(sp.Name, OperationChat) {
			t.Errorf("span %q sent before the session ended; want turn spans only", sp.Name)
		}
	}
	for i := half; i < len(exs); i++ {
		live.Observe(&exs[i])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st := live.Close(ctx)
	want := len(FromExchanges(exs, "live", redact.Default, "t", pricing.Default()).Spans())
	got := col.received()
	if st.Sent != want || len(got) != want {
		t.Fatalf("sent %d (stats %+v), collector got %d, want %d", st.Sent, st, len(got), want)
	}
	seen := map[string]bool{}
	for _, sp := range got {
		if seen[string(sp.SpanId)] {
			t.Errorf("span %q sent twice", sp.Name)
		}
		seen[string(sp.SpanId)] = true
	}
}

func TestRejectedSpans(t *testing.T) {
	var partial []byte
	partial = protowire.AppendTag(partial, 1, protowire.VarintType)
	partial = protowire.AppendVarint(partial, 7)
	partial = protowire.AppendTag(partial, 2, protowire.BytesType)
	partial = protowire.AppendString(partial, "too old")
	var resp []byte
	resp = protowire.AppendTag(resp, 1, protowire.BytesType)
	resp = protowire.AppendBytes(resp, partial)
	if got := rejectedSpans(resp); got != 7 {
		t.Errorf("rejectedSpans = %d, want 7", got)
	}
	if got := rejectedSpans(nil); got != 0 {
		t.Errorf("rejectedSpans(empty) = %d", got)
	}
}

func TestExporterGRPC(t *testing.T) {
	var mu sync.Mutex
	var got []*tracepb.Span
	calls := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		calls++
		if r.ProtoMajor != 2 || r.URL.Path != grpcExportPath || r.Header.Get("Content-Type") != "application/grpc" || r.Header.Get("X-Team") != "t1" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/grpc")
		if calls == 1 { // UNAVAILABLE, Trailers-Only: retried
			w.Header().Set("Grpc-Status", "14")
			w.Header().Set("Grpc-Message", "starting")
			return
		}
		var td tracepb.TracesData
		if len(body) < 5 || body[0] != 0 || proto.Unmarshal(body[5:], &td) != nil {
			w.Header().Set(http.TrailerPrefix+"Grpc-Status", "3")
			return
		}
		for _, rs := range td.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				got = append(got, ss.Spans...)
			}
		}
		w.Write([]byte{0, 0, 0, 0, 0}) // an empty ExportTraceServiceResponse
		w.Header().Set(http.TrailerPrefix+"Grpc-Status", "0")
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	cfg, err := ConfigFromEnv(func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_HEADERS": "x-team=t1"}[k]
	}, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	exp := NewExporter(cfg, Options{Backoff: time.Millisecond})
	spans := FromExchanges(demoExchanges(t), "seed", redact.Default, "t", nil).Spans()
	exp.Enqueue(spans)
	ctx := testwait.Context(t)
	st := exp.Close(ctx)
	mu.Lock()
	defer mu.Unlock()
	if st.Sent != len(spans) || st.Retries != 1 || len(got) != len(spans) {
		t.Fatalf("stats %+v, server got %d spans in %d calls; want %d after one retry", st, len(got), calls, len(spans))
	}
}

func TestErrorTurnSpan(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &Session{Seed: "e", Ends: map[int64]time.Time{7: at.Add(time.Second)}, Report: &report.Report{}}
	sp := s.TurnSpan(&report.Turn{
		Index: 2, Thread: "main", ExchangeID: 7, At: &at, Model: "claude-sonnet-4-5", Status: 529,
		Error: &report.Error{Type: "overloaded_error", Message: "Overloaded"},
		Flags: []report.Flag{{Kind: "cache_break", Severity: "warning", Cause: "ttl", TokensLost: 100}},
	})
	if sp.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || sp.Status.GetMessage() != "overloaded_error" {
		t.Errorf("status %v", sp.Status)
	}
	if got := attr(sp.Attributes, "error.type").GetStringValue(); got != "overloaded_error" {
		t.Errorf("error.type %q", got)
	}
	if got := attr(sp.Attributes, "http.response.status_code").GetIntValue(); got != 529 {
		t.Errorf("http.response.status_code %d", got)
	}
	if sp.EndTimeUnixNano-sp.StartTimeUnixNano != uint64(time.Second) {
		t.Errorf("span lasts %dns, want the exchange's second", sp.EndTimeUnixNano-sp.StartTimeUnixNano)
	}
	if len(sp.Events) != 1 || attr(sp.Events[0].Attributes, "tsinspect.flag.cause").GetStringValue() != "ttl" ||
		attr(sp.Events[0].Attributes, "tsinspect.flag.tokens_lost").GetIntValue() != 100 {
		t.Errorf("events %v", sp.Events)
	}
	// No response, no response model or finish reason.
	if attr(sp.Attributes, "gen_ai.response.model") != nil || attr(sp.Attributes, "gen_ai.response.finish_reasons") != nil {
		t.Errorf("a failed turn has response attributes")
	}
}

func TestExporterDoesNotRetryARefusal(t *testing.T) {
	calls := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		http.Error(w, "bad", http.StatusBadRequest)
	}))
	defer srv.Close()
	cfg, err := ConfigFromEnv(func(string) string { return "" }, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	exp := NewExporter(cfg, Options{Backoff: time.Millisecond})
	spans := FromExchanges(demoExchanges(t), "seed", redact.Default, "t", nil).Spans()
	exp.Enqueue(spans)
	ctx := testwait.Context(t)
	st := exp.Close(ctx)
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 || st.Retries != 0 || st.Failed != len(spans) || !strings.Contains(st.LastError, "400") {
		t.Errorf("%d calls, stats %+v: want one call, no retry, all failed with the 400", calls, st)
	}
}
