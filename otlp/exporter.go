package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Options tune an Exporter. Zero values take the defaults.
type Options struct {
	// QueueSize is how many batches may wait to be sent (default 64);
	// past it, new batches are dropped and counted.
	QueueSize int
	// BatchSize is the most spans sent in one request (default 256).
	BatchSize int
	// MaxAttempts bounds the tries of one batch (default 5).
	MaxAttempts int
	// Backoff is the wait before the first retry (default 500ms); it
	// doubles after each retry, up to MaxBackoff (default 8s).
	Backoff, MaxBackoff time.Duration
	// ServiceVersion is written as service.version.
	ServiceVersion string
	// Client sends the requests (default: a client with Config.Timeout).
	Client *http.Client
}

// Stats says what became of the spans given to an Exporter.
type Stats struct {
	// Spans counts the spans given to the exporter.
	Spans int
	// Sent counts the spans the collector accepted.
	Sent int
	// Dropped counts the spans dropped because the queue was full or the
	// exporter was closed before it could send them.
	Dropped int
	// Failed counts the spans the collector refused, or that were still
	// not delivered after the last retry.
	Failed int
	// Retries counts the requests tried again.
	Retries int
	// LastError describes the last failure, "" if none.
	LastError string
}

// Undelivered is Dropped plus Failed.
func (s Stats) Undelivered() int { return s.Dropped + s.Failed }

// Exporter sends spans to a collector from its own goroutine. Its methods
// may be called from any goroutine.
type Exporter struct {
	cfg      Config
	opts     Options
	resource *resourcepb.Resource
	queue    chan []*tracepb.Span
	ctx      context.Context // cancelled when Close gives up waiting
	cancel   context.CancelFunc
	done     chan struct{}

	mu     sync.Mutex
	closed bool
	stats  Stats
}

// NewExporter starts an exporter sending to cfg.URL.
func NewExporter(cfg Config, opts Options) *Exporter {
	if opts.QueueSize <= 0 {
		opts.QueueSize = 64
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 5
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 8 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: cfg.Timeout}
		if cfg.GRPC {
			// gRPC is HTTP/2 only: with prior knowledge over cleartext
			// for http://, negotiated by TLS for https://.
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.Protocols = new(http.Protocols)
			tr.Protocols.SetHTTP2(true)
			tr.Protocols.SetUnencryptedHTTP2(true)
			opts.Client.Transport = tr
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Exporter{
		cfg: cfg, opts: opts, resource: resource(cfg, opts.ServiceVersion),
		queue: make(chan []*tracepb.Span, opts.QueueSize),
		ctx:   ctx, cancel: cancel, done: make(chan struct{}),
	}
	go e.loop()
	return e
}

// resource builds the resource every span is sent under.
func resource(cfg Config, version string) *resourcepb.Resource {
	a := attrs{}
	name := cfg.ServiceName
	if name == "" {
		name = cfg.Resource["service.name"]
	}
	if name == "" {
		name = "tsinspect"
	}
	a.str("service.name", name)
	a.str("service.version", version)
	a.str("telemetry.sdk.name", "tsinspect")
	a.str("telemetry.sdk.language", "go")
	keys := make([]string, 0, len(cfg.Resource))
	for k := range cfg.Resource {
		if k != "service.name" && k != "service.version" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		a.str(k, cfg.Resource[k])
	}
	return &resourcepb.Resource{Attributes: a.kv}
}

// Enqueue queues spans to be sent, in batches of at most BatchSize. It
// never blocks: a batch that finds the queue full is dropped and counted.
// It reports whether every batch was queued.
func (e *Exporter) Enqueue(spans []*tracepb.Span) bool {
	ok := true
	for len(spans) > 0 {
		n := min(len(spans), e.opts.BatchSize)
		batch := spans[:n:n]
		spans = spans[n:]
		e.mu.Lock()
		e.stats.Spans += len(batch)
		if e.closed {
			e.stats.Dropped += len(batch)
			e.mu.Unlock()
			ok = false
			continue
		}
		select {
		case e.queue <- batch:
		default:
			e.stats.Dropped += len(batch)
			e.stats.LastError = "queue full"
			ok = false
		}
		e.mu.Unlock()
	}
	return ok
}

// Stats returns what became of the spans so far.
func (e *Exporter) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// Close stops taking spans and waits until the queued ones are sent or
// ctx is done; what is still unsent then is dropped and counted. It
// returns the final stats.
func (e *Exporter) Close(ctx context.Context) Stats {
	e.mu.Lock()
	if !e.closed {
		e.closed = true
		close(e.queue)
	}
	e.mu.Unlock()
	select {
	case <-e.done:
	case <-ctx.Done():
		e.cancel()
		<-e.done
	}
	e.cancel()
	return e.Stats()
}

func (e *Exporter) loop() {
	defer close(e.done)
	for batch := range e.queue {
		if e.ctx.Err() != nil {
			e.count(func(s *Stats) { s.Dropped += len(batch) })
			continue
		}
		e.send(batch)
	}
}

func (e *Exporter) count(f func(*Stats)) {
	e.mu.Lock()
	f(&e.stats)
	e.mu.Unlock()
}

// send delivers one batch, retrying what the OTLP specification calls
// retryable (network errors, 429, 502, 503, 504) with exponential backoff,
// or the server's Retry-After when it gives one.
func (e *Exporter) send(batch []*tracepb.Span) {
	body, err := e.marshal(batch)
	if err != nil {
		e.count(func(s *Stats) { s.Failed += len(batch); s.LastError = err.Error() })
		return
	}
	wait := e.opts.Backoff
	for attempt := 1; ; attempt++ {
		rejected, retryAfter, err := e.post(body)
		if err == nil {
			e.count(func(s *Stats) { s.Sent += len(batch) - rejected; s.Failed += rejected })
			return
		}
		var perm *permanentError
		if errors.As(err, &perm) || attempt >= e.opts.MaxAttempts || e.ctx.Err() != nil {
			e.count(func(s *Stats) { s.Failed += len(batch); s.LastError = err.Error() })
			return
		}
		e.count(func(s *Stats) { s.Retries++; s.LastError = err.Error() })
		d := wait
		if retryAfter > 0 {
			d = min(retryAfter, e.opts.MaxBackoff)
		}
		select {
		case <-time.After(d):
		case <-e.ctx.Done():
			e.count(func(s *Stats) { s.Dropped += len(batch) })
			return
		}
		wait = min(wait*2, e.opts.MaxBackoff)
	}
}

func (e *Exporter) marshal(batch []*tracepb.Span) ([]byte, error) {
	// TracesData is ExportTraceServiceRequest on the wire (both are
	// "repeated ResourceSpans resource_spans = 1"), without the gRPC
	// service package and what it pulls in.
	req := &tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: e.resource,
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: &commonpb.InstrumentationScope{Name: ScopeName, Version: e.opts.ServiceVersion},
			Spans: batch,
		}},
	}}}
	b, err := proto.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("otlp: marshal: %w", err)
	}
	if e.cfg.Gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(b); err != nil {
			return nil, fmt.Errorf("otlp: gzip: %w", err)
		}
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("otlp: gzip: %w", err)
		}
		b = buf.Bytes()
	}
	if !e.cfg.GRPC {
		return b, nil
	}
	// A gRPC message: a compressed flag, a 4-byte big-endian length.
	framed := make([]byte, 5, 5+len(b))
	if e.cfg.Gzip {
		framed[0] = 1
	}
	binary.BigEndian.PutUint32(framed[1:], uint32(len(b)))
	return append(framed, b...), nil
}

// permanentError is a refusal that retrying will not change.
type permanentError struct{ msg string }

func (p *permanentError) Error() string { return p.msg }

// post sends one request. It returns how many spans the collector
// rejected in a partial success, and the Retry-After of a retryable
// refusal.
func (e *Exporter) post(body []byte) (rejected int, retryAfter time.Duration, err error) {
	if e.cfg.GRPC {
		return e.postGRPC(body)
	}
	ctx, cancel := context.WithTimeout(e.ctx, e.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return 0, 0, &permanentError{fmt.Sprintf("otlp: request: %v", err)}
	}
	for k, v := range e.cfg.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "tsinspect/"+e.opts.ServiceVersion)
	if e.cfg.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.opts.Client.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("otlp: post: %w", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return rejectedSpans(data), 0, nil
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusBadGateway,
		resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			retryAfter = time.Duration(s) * time.Second
		}
		return 0, retryAfter, fmt.Errorf("otlp: collector answered %s", resp.Status)
	}
	return 0, 0, &permanentError{fmt.Sprintf("otlp: collector answered %s", resp.Status)}
}

// grpcExportPath is the method the OTLP trace service exports through.
const grpcExportPath = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

// postGRPC makes one unary gRPC call of the trace service's Export over
// HTTP/2. Retryable are the codes the OTLP specification names: CANCELLED,
// DEADLINE_EXCEEDED, ABORTED, OUT_OF_RANGE, UNAVAILABLE, DATA_LOSS, and
// RESOURCE_EXHAUSTED.
func (e *Exporter) postGRPC(body []byte) (rejected int, retryAfter time.Duration, err error) {
	ctx, cancel := context.WithTimeout(e.ctx, e.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.URL+grpcExportPath, bytes.NewReader(body))
	if err != nil {
		return 0, 0, &permanentError{fmt.Sprintf("otlp: request: %v", err)}
	}
	for k, v := range e.cfg.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	req.Header.Set("User-Agent", "tsinspect/"+e.opts.ServiceVersion)
	req.Header.Set("Grpc-Timeout", fmt.Sprintf("%dm", e.cfg.Timeout.Milliseconds()))
	if e.cfg.Gzip {
		req.Header.Set("Grpc-Encoding", "gzip")
	}
	resp, err := e.opts.Client.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("otlp: grpc: %w", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("otlp: grpc: collector answered %s", resp.Status)
	}
	// A failure may come with the headers alone (Trailers-Only).
	code := resp.Trailer.Get("Grpc-Status")
	msg := resp.Trailer.Get("Grpc-Message")
	if code == "" {
		code, msg = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	switch code {
	case "0":
		if len(data) >= 5 && data[0] == 0 {
			return rejectedSpans(data[5:]), 0, nil
		}
		return 0, 0, nil
	case "1", "4", "8", "10", "11", "14", "15":
		return 0, 0, fmt.Errorf("otlp: grpc status %s: %s", code, msg)
	case "":
		return 0, 0, fmt.Errorf("otlp: grpc: no status in the answer")
	}
	return 0, 0, &permanentError{fmt.Sprintf("otlp: grpc status %s: %s", code, msg)}
}

// rejectedSpans reads partial_success.rejected_spans from a protobuf
// ExportTraceServiceResponse (field 1, a message whose field 1 is an
// int64), 0 when absent or unreadable.
func rejectedSpans(b []byte) int {
	partial := field(b, 1, protowire.BytesType)
	if partial == nil {
		return 0
	}
	n := field(partial, 1, protowire.VarintType)
	if n == nil {
		return 0
	}
	v, k := protowire.ConsumeVarint(n)
	if k < 0 {
		return 0
	}
	return int(v)
}

// field returns the value of the first field num of type typ in a
// protobuf message: the bytes of a length-delimited field, the encoded
// varint of a varint field; nil when there is none.
func field(b []byte, num protowire.Number, typ protowire.Type) []byte {
	for len(b) > 0 {
		n, t, k := protowire.ConsumeTag(b)
		if k < 0 {
			return nil
		}
		b = b[k:]
		if n == num && t == typ && typ == protowire.BytesType {
			v, k := protowire.ConsumeBytes(b)
			if k < 0 {
				return nil
			}
			return v
		}
		k = protowire.ConsumeFieldValue(n, t, b)
		if k < 0 {
			return nil
		}
		if n == num && t == typ {
			return b[:k]
		}
		b = b[k:]
	}
	return nil
}
