package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/democapture"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline"
)

// otelcolName is the binary .ci/otelcol-builder.yaml builds.
const otelcolName = "otelcol-tsinspect"

// otelcolPath finds the OpenTelemetry Collector built from
// .ci/otelcol-builder.yaml: $TSINSPECT_OTELCOL, else where .ci/run puts
// it. It skips tb when there is none, or fails it when
// TSINSPECT_REQUIRE_OTELCOL is set (as CI does).
func otelcolPath(tb testing.TB) string {
	kit.Skips.Short(tb, "the OpenTelemetry Collector")
	tb.Helper()
	p := os.Getenv("TSINSPECT_OTELCOL")
	if p == "" {
		tools := os.Getenv("TSINSPECT_TOOLS")
		if tools == "" {
			home := os.Getenv("HOME")
			if home == "" {
				home = os.TempDir()
			}
			tools = filepath.Join(home, ".cache", "tsinspect-ci")
		}
		p = filepath.Join(tools, "otelcol-0.160.0", otelcolName)
	}
	if _, err := os.Stat(p); err == nil {
		return p
	}
	msg := "OpenTelemetry Collector not found at " + p + ": build it with the official builder from .ci/otelcol-builder.yaml (see .ci/run) or set TSINSPECT_OTELCOL"
	if os.Getenv("TSINSPECT_REQUIRE_OTELCOL") != "" {
		tb.Fatal(msg)
	}
	skipFor(tb, "the OpenTelemetry Collector", installOtelcol, msg+"; set TSINSPECT_REQUIRE_OTELCOL=1 to make this a failure")
	return ""
}

// collector is a running OpenTelemetry Collector whose debug exporter
// prints every span it receives, in detail, on its standard output.
type collector struct {
	URL     string // the OTLP/HTTP base URL
	GRPCURL string // the OTLP/gRPC address
	mu      sync.Mutex
	out     bytes.Buffer // the debug exporter's output
	log     bytes.Buffer // the collector's own log
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// Output returns what the debug exporter printed so far.
func (c *collector) Output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startCollector starts the collector on 127.0.0.1 and stops it when tb
// ends.
func startCollector(tb testing.TB) *collector {
	tb.Helper()
	bin := otelcolPath(tb)
	dir := tb.TempDir()
	port, grpcPort := freePort(tb), freePort(tb)
	cfg := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
      grpc:
        endpoint: 127.0.0.1:%d
exporters:
  debug:
    verbosity: detailed
    use_internal_logger: false
service:
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [debug]
  telemetry:
    metrics:
      level: none
`, port, grpcPort)
	path := filepath.Join(dir, "otelcol.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	c := &collector{URL: fmt.Sprintf("http://127.0.0.1:%d", port), GRPCURL: fmt.Sprintf("http://127.0.0.1:%d", grpcPort)}
	cmd := exec.Command(bin, "--config", "file:"+path)
	cmd.Stdout = lockedWriter{&c.mu, &c.out}
	cmd.Stderr = lockedWriter{&c.mu, &c.log}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(patience)
	for {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			conn.Close()
			return c
		}
		select {
		case err := <-exited:
			c.mu.Lock()
			defer c.mu.Unlock()
			tb.Fatalf("collector exited: %v\n%s", err, c.log.String())
		default:
		}
		if time.Now().After(deadline) {
			c.mu.Lock()
			defer c.mu.Unlock()
			tb.Fatalf("collector not listening after 30s\n%s", c.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rxSpan is a span as the debug exporter printed it.
type rxSpan struct {
	TraceID, ParentID, ID, Name, Kind, Status string
	Attrs                                     map[string]string
	Events                                    []rxEvent
	Resource                                  map[string]string
}

type rxEvent struct {
	Name  string
	Attrs map[string]string
}

// parseDebug reads the debug exporter's detailed output. Attribute values
// are kept as printed: Str(x), Int(5), Slice(["a","b"]).
func parseDebug(out string) (spans []*rxSpan, requests int) {
	var sp *rxSpan
	var ev *rxEvent
	resource := map[string]string{}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "ResourceSpans #"):
			requests++
			resource = map[string]string{}
			sp, ev, section = nil, nil, "resource"
			continue
		case strings.HasPrefix(line, "Resource attributes:"):
			section = "resource"
			continue
		case strings.HasPrefix(line, "ScopeSpans #"):
			section = "scope"
			continue
		case strings.HasPrefix(line, "Span #"):
			sp = &rxSpan{Attrs: map[string]string{}, Resource: resource}
			spans = append(spans, sp)
			ev, section = nil, "span"
			continue
		case strings.HasPrefix(line, "Attributes:") && sp != nil:
			section = "attrs"
			continue
		case strings.HasPrefix(line, "Events:") && sp != nil:
			section = "events"
			continue
		case strings.HasPrefix(line, "SpanEvent #") && sp != nil:
			sp.Events = append(sp.Events, rxEvent{Attrs: map[string]string{}})
			ev = &sp.Events[len(sp.Events)-1]
			section = "event"
			continue
		case strings.HasPrefix(line, "Links:"):
			section = "links"
			continue
		}
		switch section {
		case "resource":
			if k, v, ok := arrow(trimmed); ok {
				resource[k] = v
			}
		case "span":
			k, v, ok := strings.Cut(trimmed, ":")
			if !ok {
				continue
			}
			v = strings.TrimSpace(v)
			switch strings.TrimSpace(k) {
			case "Trace ID":
				sp.TraceID = v
			case "Parent ID":
				sp.ParentID = v
			case "ID":
				sp.ID = v
			case "Name":
				sp.Name = v
			case "Kind":
				sp.Kind = v
			case "Status code":
				sp.Status = v
			}
		case "attrs":
			if k, v, ok := arrow(trimmed); ok {
				sp.Attrs[k] = v
			}
		case "event":
			if k, v, ok := arrow(trimmed); ok {
				switch {
				case k == "Name" && ev.Name == "":
					ev.Name = v
				case strings.HasPrefix(line, "          ->"):
					ev.Attrs[k] = v
				}
			}
		}
	}
	return spans, requests
}

// arrow splits "-> key: value".
func arrow(s string) (string, string, bool) {
	rest, ok := strings.CutPrefix(s, "-> ")
	if !ok {
		return "", "", false
	}
	k, v, ok := strings.Cut(rest, ": ")
	return k, v, ok
}

// waitSpans waits until the collector printed at least n spans.
func waitSpans(tb testing.TB, c *collector, n int) ([]*rxSpan, int) {
	tb.Helper()
	deadline := time.Now().Add(patience)
	for {
		spans, _ := parseDebug(c.Output())
		if len(spans) >= n {
			// Let a straggler in, so that too many spans show too.
			time.Sleep(300 * time.Millisecond)
			return parseDebug(c.Output())
		}
		if time.Now().After(deadline) {
			out := c.Output()
			if len(out) > 4000 {
				out = out[len(out)-4000:]
			}
			tb.Fatalf("collector printed %d spans, want %d; its output ends:\n%s", len(spans), n, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkTrace checks the shape of one session's trace as the collector
// received it, and returns its turn spans.
func checkTrace(t *testing.T, spans []*rxSpan, s *timeline.Session) []*rxSpan {
	t.Helper()
	byID := map[string]*rxSpan{}
	traces := map[string]bool{}
	for _, sp := range spans {
		byID[sp.ID] = sp
		traces[sp.TraceID] = true
	}
	if len(traces) != 1 {
		t.Errorf("spans in %d traces, want 1 (a session is one trace)", len(traces))
	}
	var roots, threads []*rxSpan
	var turns []*rxSpan
	for _, sp := range spans {
		switch {
		case sp.Name == "claude_code.session":
			roots = append(roots, sp)
			if sp.ParentID != "" {
				t.Errorf("session span has parent %q", sp.ParentID)
			}
		case strings.HasPrefix(sp.Name, "thread "):
			threads = append(threads, sp)
			if p := byID[sp.ParentID]; p == nil || p.Name != "claude_code.session" {
				t.Errorf("%s: parent is not the session span", sp.Name)
			}
		default:
			turns = append(turns, sp)
			p := byID[sp.ParentID]
			if p == nil || !strings.HasPrefix(p.Name, "thread ") {
				t.Errorf("%s: parent %q is not a thread span", sp.Name, sp.ParentID)
				continue
			}
			if want := "thread " + unStr(sp.Attrs["tsinspect.thread.id"]); p.Name != want {
				t.Errorf("turn of %s under %s", want, p.Name)
			}
			for k, want := range map[string]string{
				"gen_ai.operation.name": "Str(chat)", "gen_ai.provider.name": "Str(anthropic)",
			} {
				if sp.Attrs[k] != want {
					t.Errorf("%s: %s = %q, want %q", sp.Name, k, sp.Attrs[k], want)
				}
			}
			for _, k := range []string{"gen_ai.request.model", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens",
				"gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_creation.input_tokens",
				"tsinspect.catalog.size", "tsinspect.working_set.size", "tsinspect.turn.index", "tsinspect.cost.usd"} {
				if sp.Attrs[k] == "" {
					t.Errorf("%s: no %s", sp.Name, k)
				}
			}
			if sp.Kind != "Client" {
				t.Errorf("%s: kind %q, want Client", sp.Name, sp.Kind)
			}
		}
	}
	if len(roots) != 1 || len(threads) != len(s.Threads) || len(turns) != len(s.Turns) {
		t.Errorf("%d session spans, %d thread spans, %d turn spans; want 1, %d, %d",
			len(roots), len(threads), len(turns), len(s.Threads), len(s.Turns))
	}
	return turns
}

func unStr(v string) string {
	return strings.TrimSuffix(strings.TrimPrefix(v, "Str("), ")")
}

func sessionOf(t *testing.T, path string) *timeline.Session {
	t.Helper()
	db, err := store.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exs, err := db.Exchanges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return timeline.Build(exs)
}

// TestOTLPExportDemo sends the bundled real Claude Code session to a real
// collector and checks what it received.
func TestOTLPExportDemo(t *testing.T) {
	col := startCollector(t)
	demo := filepath.Join(t.TempDir(), "demo.db")
	if err := os.WriteFile(demo, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	s := sessionOf(t, demo)
	const headerSecret = "otel-header-secret-4242"
	cmd := exec.Command(kit.Tsinspect, "export", demo, "--format", "otlp", "--endpoint", col.URL)
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20"+headerSecret,
		"OTEL_RESOURCE_ATTRIBUTES=team=e2e,deployment.environment=ci")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	want := 1 + len(s.Threads) + len(s.Turns)
	if !strings.Contains(string(out), fmt.Sprintf("sent %d of %d spans", want, want)) {
		t.Errorf("export said %q, want all %d spans sent", out, want)
	}
	if bytes.Contains(out, []byte(headerSecret)) {
		t.Errorf("export printed the header value")
	}
	spans, _ := waitSpans(t, col, want)
	turns := checkTrace(t, spans, s)

	if r := spans[0].Resource; r["service.name"] != "Str(tsinspect)" || r["team"] != "Str(e2e)" || r["deployment.environment"] != "Str(ci)" {
		t.Errorf("resource %v", r)
	}
	events := map[string]rxEvent{}
	var queries, finish []string
	for _, sp := range turns {
		for _, ev := range sp.Events {
			events[ev.Name] = ev
		}
		queries = append(queries, sp.Attrs["tsinspect.search.queries"])
		finish = append(finish, sp.Attrs["gen_ai.response.finish_reasons"])
	}
	// The demo: a keyword search that matches nothing, a tool called
	// before its schema was loaded, a cache lost at the end.
	for _, k := range []string{"empty_search", "call_before_load", "cache_break"} {
		ev, ok := events[k]
		if !ok {
			t.Errorf("no %s event; events %v", k, events)
			continue
		}
		if ev.Attrs["tsinspect.flag.kind"] != "Str("+k+")" || ev.Attrs["tsinspect.flag.severity"] == "" {
			t.Errorf("%s event attributes %v", k, ev.Attrs)
		}
	}
	if cb := events["cache_break"]; cb.Attrs["tsinspect.flag.cause"] == "" || cb.Attrs["tsinspect.flag.tokens_lost"] == "" ||
		!strings.HasPrefix(cb.Attrs["tsinspect.flag.cost_usd"], "Double(") {
		t.Errorf("cache_break event without cause or tokens lost: %v", cb.Attrs)
	}
	if j := strings.Join(queries, " "); !strings.Contains(j, "weather forecast") || !strings.Contains(j, "select:mcp__demo__echo") {
		t.Errorf("search queries %q", j)
	}
	if j := strings.Join(finish, " "); !strings.Contains(j, "tool_use") || !strings.Contains(j, "end_turn") {
		t.Errorf("finish reasons %q", j)
	}
	// Nothing private reached the collector: no message text, tool input,
	// path, credential.
	all := col.Output()
	for _, secret := range []string{headerSecret, "sk-ant", "Show me what the demo MCP tools can do",
		"hello from the demo", "/home/dev", "Say what the demo tools did"} {
		if strings.Contains(all, secret) {
			t.Errorf("the collector received %q", secret)
		}
	}
	t.Logf("collector received %d spans; first turn span:\n%s\nthe cache break:\n%s", len(spans),
		excerpt(all, "Name           : chat", 1600), excerpt(all, "-> Name: cache_break", 700))
}

// TestOTLPExportDemoGRPC sends the bundled session over OTLP/gRPC,
// gzip-compressed.
func TestOTLPExportDemoGRPC(t *testing.T) {
	col := startCollector(t)
	demo := filepath.Join(t.TempDir(), "demo.db")
	if err := os.WriteFile(demo, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	s := sessionOf(t, demo)
	cmd := exec.Command(kit.Tsinspect, "export", demo, "--format", "otlp")
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_ENDPOINT="+col.GRPCURL,
		"OTEL_EXPORTER_OTLP_COMPRESSION=gzip")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	want := 1 + len(s.Threads) + len(s.Turns)
	spans, _ := waitSpans(t, col, want)
	checkTrace(t, spans, s)
	t.Logf("%s", bytes.TrimSpace(out))
}

// excerpt returns n bytes of s from the first occurrence of mark.
func excerpt(s, mark string, n int) string {
	i := strings.Index(s, mark)
	if i < 0 {
		return ""
	}
	return s[i:min(len(s), i+n)]
}

// TestOTLPRecordLive records real Claude Code with --otlp and checks that
// each turn reached the collector, as its own request, with the session's
// thread and root spans at the end.
func TestOTLPRecordLive(t *testing.T) {
	kit.RequireClaude(t)
	col := startCollector(t)
	sc, _ := fixtures.Scenario("demo")
	_, url := session.StandIn(t, sc, fixtures.Options{})
	res := kit.Record(t, url, session.Options{RecordArgs: []string{"--otlp", col.URL}})
	if res.Err != nil {
		t.Fatalf("record: %v\n%s", res.Err, res.Output)
	}
	s := sessionOf(t, res.DB)
	want := 1 + len(s.Threads) + len(s.Turns)
	if !strings.Contains(res.Output, fmt.Sprintf("OTLP: sent %d of %d spans", want, want)) {
		t.Errorf("record output lacks the OTLP summary with %d spans:\n%s", want, res.Output)
	}
	spans, requests := waitSpans(t, col, want)
	turns := checkTrace(t, spans, s)
	// Turns are sent as they complete, the threads and the session at the
	// end: more than one request.
	if len(s.Turns) > 1 && requests < 2 {
		t.Errorf("the collector got %d requests for %d turns; want turns sent as they complete", requests, len(s.Turns))
	}
	models := map[string]bool{}
	events := map[string]bool{}
	for _, sp := range turns {
		models[sp.Attrs["gen_ai.request.model"]] = true
		for _, ev := range sp.Events {
			events[ev.Name] = true
		}
	}
	if !models["Str(claude-sonnet-4-5)"] {
		t.Errorf("request models %v", models)
	}
	// The scripted session searches for a weather tool that is not there.
	if !events["empty_search"] {
		t.Errorf("no empty_search event among %v", events)
	}
	t.Logf("%d turns, %d spans in %d requests; %s", len(s.Turns), len(spans), requests, excerpt(res.Output, "OTLP: sent", 80))
	// Exporting the capture afterwards gives the same trace and span ids:
	// a collector or backend sees the same session, not a second one.
	if out, err := exec.Command(kit.Tsinspect, "export", res.DB, "--format", "otlp", "--endpoint", col.URL).CombinedOutput(); err != nil {
		t.Fatalf("export after record: %v\n%s", err, out)
	}
	again, _ := waitSpans(t, col, 2*want)
	live := map[string]bool{}
	for _, sp := range spans {
		live[sp.TraceID+"/"+sp.ID] = true
	}
	for _, sp := range again[len(spans):] {
		if !live[sp.TraceID+"/"+sp.ID] {
			t.Errorf("exported span %s (%s/%s) was not among the live ones", sp.Name, sp.TraceID, sp.ID)
		}
	}
	all := col.Output()
	for _, secret := range []string{session.APIKey, "sk-ant", "use the demo tools", "hello from the demo", res.Dir, res.Home} {
		if strings.Contains(all, secret) {
			t.Errorf("the collector received %q", secret)
		}
	}
}

// TestOTLPStuckCollectorDoesNotSlowRecording records through a collector
// that accepts connections and never answers, with the exporter's request
// timeout (OTEL_EXPORTER_OTLP_TIMEOUT) an hour: the proxied requests end
// all the same, so they never wait for the collector; recording ends, so
// its wait for the spans is bounded; and the summary counts the spans not
// delivered.
func TestOTLPStuckCollectorDoesNotSlowRecording(t *testing.T) {
	kit.Skips.Short(t, "a stuck collector's timeouts (about 5 s)")
	stuck, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	release := make(chan struct{})
	defer close(release)
	go func() {
		for {
			c, err := stuck.Accept()
			if err != nil {
				return
			}
			go func() { <-release; c.Close() }()
		}
	}()
	sc, _ := fixtures.Scenario("toolsearch")
	_, up := session.StandIn(t, sc, fixtures.Options{})
	db := filepath.Join(t.TempDir(), "s.db")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "3600000")
	addr, stop := startRecorder(t, "--db", db, "--mode", "reverse", "--upstream", up, "--quiet",
		"--otlp", "http://"+stuck.Addr().String())
	body := `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`
	sent := make(chan error, 1)
	go func() {
		for i := 0; i < 5; i++ {
			req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages", strings.NewReader(body))
			req.Header.Set("x-api-key", session.APIKey)
			req.Header.Set("content-type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				sent <- err
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				sent <- fmt.Errorf("request %d: status %d", i, resp.StatusCode)
				return
			}
		}
		sent <- nil
	}()
	select {
	case err := <-sent:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(patience):
		t.Fatalf("5 requests through the recorder not answered within %v with the collector stuck", patience)
	}
	ended := make(chan string, 1)
	go func() { ended <- stop() }()
	var stderr string
	select {
	case stderr = <-ended:
	case <-time.After(patience):
		t.Fatalf("recording not ended %v after it was stopped, with the collector stuck", patience)
	}
	if !strings.Contains(stderr, "OTLP: sent 0 of") || !strings.Contains(stderr, "not delivered") {
		t.Errorf("summary does not count the undelivered spans:\n%s", stderr)
	}
}
