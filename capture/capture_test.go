package capture

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

// memSink keeps exchanges in memory, keyed by ID.
type memSink struct {
	mu   sync.Mutex
	rows map[int64]exchange.Exchange
	next int64
	fail error
}

func (m *memSink) Insert(_ context.Context, ex *exchange.Exchange) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	if m.rows == nil {
		m.rows = map[int64]exchange.Exchange{}
	}
	m.next++
	ex.ID = m.next
	m.rows[ex.ID] = *ex
	return nil
}

func (m *memSink) Update(_ context.Context, ex *exchange.Exchange) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.rows[ex.ID] = *ex
	return nil
}

func (m *memSink) all() []exchange.Exchange {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []exchange.Exchange
	for i := int64(1); i <= m.next; i++ {
		out = append(out, m.rows[i])
	}
	return out
}

// sseEvents is what the test upstream streams.
var sseEvents = []string{
	"event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
	"event: ping\ndata: {\"type\":\"ping\"}\n\n",
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0}\n\n",
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
}

// sseHandler streams sseEvents gap apart and echoes what it saw.
func sseHandler(gap time.Duration, seen chan<- *http.Request) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if seen != nil {
			seen <- r
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Request-Id", "req_test")
		w.WriteHeader(200)
		for i, e := range sseEvents {
			if i > 0 {
				time.Sleep(gap)
			}
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	}
}

type rig struct {
	sink  *memSink
	rec   *Recorder
	proxy *Proxy
	url   string
	ca    *CA
}

func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	sink := &memSink{}
	return newRigSink(t, cfg, sink, sink)
}

// newRigSink is newRig recording into sink, whose rows mem holds.
func newRigSink(t *testing.T, cfg Config, sink Sink, mem *memSink) *rig {
	t.Helper()
	rec := NewRecorder(sink, io.Discard, nil)
	cfg.Recorder = rec
	if cfg.Mode == "" || cfg.Mode == ModeMITM {
		ca, err := LoadOrCreateCA(t.TempDir(), InterceptHosts(cfg.Intercept))
		if err != nil {
			t.Fatal(err)
		}
		cfg.CA = ca
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: p, ConnContext: p.ConnContext}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &rig{sink: mem, rec: rec, proxy: p, url: "http://" + ln.Addr().String(), ca: cfg.CA}
}

// flush waits for exchanges under way and the writer.
func (r *rig) flush(t *testing.T) []exchange.Exchange {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := r.proxy.Wait(ctx); err != nil {
		t.Fatalf("exchanges still under way: %v", err)
	}
	r.rec.Close()
	return r.sink.all()
}

func mitmClient(r *rig, extraRoots ...*x509.Certificate) *http.Client {
	pu, _ := url.Parse(r.url)
	roots := r.ca.Pool()
	for _, c := range extraRoots {
		roots.AddCert(c)
	}
	return &http.Client{Transport: &http.Transport{
		Proxy:              http.ProxyURL(pu),
		TLSClientConfig:    &tls.Config{RootCAs: roots},
		DisableCompression: true,
	}}
}

func TestMITMRecordsAndStreams(t *testing.T) {
	seen := make(chan *http.Request, 1)
	up := httptest.NewServer(sseHandler(0, seen))
	defer up.Close()
	r := newRig(t, Config{Mode: ModeMITM, Upstream: up.URL})

	body := `{"model":"claude-sonnet-4-5","stream":true}`
	req, _ := http.NewRequest("POST", "https://api.anthropic.com/v1/messages?beta=true", strings.NewReader(body))
	req.Header.Set("x-api-key", "sk-ant-secret-key")
	req.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := mitmClient(r).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := strings.Join(sseEvents, ""); string(got) != want {
		t.Fatalf("client got %q, want %q", got, want)
	}
	up_req := <-seen
	if ae := up_req.Header.Get("Accept-Encoding"); ae != "gzip, deflate, br, zstd" {
		t.Errorf("upstream saw Accept-Encoding %q, want the client's", ae)
	}
	if k := up_req.Header.Get("X-Api-Key"); k != "sk-ant-secret-key" {
		t.Errorf("upstream saw x-api-key %q: credentials must be forwarded", k)
	}
	rows := r.flush(t)
	if len(rows) != 1 {
		t.Fatalf("recorded %d exchanges, want 1", len(rows))
	}
	ex := rows[0]
	if ex.State != exchange.StateComplete || ex.Status != 200 {
		t.Errorf("state %s status %d", ex.State, ex.Status)
	}
	if string(ex.ReqBody) != body || string(ex.RespBody) != string(got) {
		t.Errorf("bodies not byte-exact")
	}
	if ex.URL != "https://api.anthropic.com/v1/messages?beta=true" || ex.Host != "api.anthropic.com" {
		t.Errorf("url %q host %q", ex.URL, ex.Host)
	}
	if k := ex.ReqHeader("X-Api-Key"); !strings.HasPrefix(k, exchange.FingerprintPrefix) {
		t.Errorf("recorded x-api-key %q, want a fingerprint", k)
	}
	if len(ex.Chunks) == 0 || ex.FirstByte.IsZero() || ex.End.Before(ex.Start) {
		t.Errorf("timing not recorded: %d chunks", len(ex.Chunks))
	}
}

// TestStreamingEventByEvent: each SSE event reaches the client through the
// proxy before the upstream sends the next one (the upstream waits for the
// client's word, so a proxy that held events back would leave it without
// them), in both modes; the record holds each event as read, timed no
// earlier than the upstream wrote it and no later than the client got it.
// How long an event takes through the proxy is BenchmarkStreamEventLag's.
func TestStreamingEventByEvent(t *testing.T) {
	for _, mode := range []string{ModeMITM, ModeReverse} {
		t.Run(mode, func(t *testing.T) {
			l := newLockstep()
			up := httptest.NewServer(l)
			defer up.Close()
			r := newRig(t, Config{Mode: mode, Upstream: up.URL})
			client, u := http.DefaultClient, r.url+"/v1/messages"
			if mode == ModeMITM {
				client, u = mitmClient(r), "https://api.anthropic.com/v1/messages"
			}
			resp, err := client.Post(u, "application/json", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			received := readLockstep(t, resp.Body, l)
			resp.Body.Close()
			written, heldBack := l.times()
			if heldBack > 0 {
				t.Fatalf("the upstream waited %v for the client to get an event it had sent: the proxy held the stream back", patience)
			}
			rows := r.flush(t)
			if len(rows) != 1 || rows[0].State != exchange.StateComplete {
				t.Fatalf("want one complete exchange, got %d rows", len(rows))
			}
			ex := rows[0]
			if want := strings.Join(sseEvents, ""); string(ex.RespBody) != want {
				t.Fatalf("recorded %q, want %q", ex.RespBody, want)
			}
			end := int64(0)
			for i, e := range sseEvents {
				end += int64(len(e))
				// The chunk that brought the event's last byte.
				k := slices.IndexFunc(ex.Chunks, func(c exchange.Chunk) bool { return c.Offset < end && end <= c.Offset+int64(c.Size) })
				if k < 0 {
					t.Fatalf("no chunk holds the end of event %d: %+v", i, ex.Chunks)
				}
				if at := ex.Chunks[k].At; at.Before(written[i]) || at.After(received[i]) {
					t.Errorf("event %d recorded at %v, outside its write at %v and its arrival at %v", i, at, written[i], received[i])
				}
			}
		})
	}
}

func TestTunnelNotIntercepted(t *testing.T) {
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "other host")
	}))
	defer other.Close()
	r := newRig(t, Config{Mode: ModeMITM})
	resp, err := mitmClient(r, other.Certificate()).Get(other.URL + "/x")
	if err != nil {
		t.Fatalf("tunnel to a host that is not intercepted: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "other host" {
		t.Fatalf("got %q through the tunnel", b)
	}
	// The tunnel carried the other server's own certificate, not ours.
	if resp.TLS == nil || resp.TLS.PeerCertificates[0].Issuer.CommonName == r.ca.Cert.Subject.CommonName {
		t.Fatal("a host that is not intercepted was served with the tsinspect CA")
	}
	if rows := r.flush(t); len(rows) != 0 {
		t.Fatalf("recorded %d rows for a tunnelled host, want 0", len(rows))
	}
}

func TestCANameConstraintsAndKeyMode(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, InterceptHosts([]string{"gateway.example.com"}))
	if err != nil {
		t.Fatal(err)
	}
	if !ca.Created {
		t.Error("first use must create the CA")
	}
	st, err := os.Stat(ca.KeyPath)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	c := ca.Cert
	if !c.PermittedDNSDomainsCritical {
		t.Error("name constraints must be critical")
	}
	if got := strings.Join(c.PermittedDNSDomains, ","); got != "api.anthropic.com,gateway.example.com" {
		t.Errorf("permitted %q", got)
	}
	if len(c.ExcludedIPRanges) != 2 {
		t.Errorf("excluded IP ranges %v, want all of IPv4 and IPv6", c.ExcludedIPRanges)
	}
	if c.PublicKeyAlgorithm != x509.ECDSA {
		t.Errorf("key algorithm %v, want ECDSA", c.PublicKeyAlgorithm)
	}
	// A leaf for a permitted host verifies; one for any other host does not.
	for host, ok := range map[string]bool{"api.anthropic.com": true, "gateway.example.com": true, "example.org": false} {
		leaf, err := ca.Leaf(host)
		if err != nil {
			t.Fatal(err)
		}
		_, err = leaf.Leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: ca.Pool()})
		if (err == nil) != ok {
			t.Errorf("verify leaf for %s: err=%v, want ok=%v", host, err, ok)
		}
	}
	again, _ := ca.Leaf("api.anthropic.com")
	first, _ := ca.Leaf("api.anthropic.com")
	if again != first {
		t.Error("leaf certificates must be cached")
	}
	// Loading again reuses the same CA.
	same, err := LoadOrCreateCA(dir, InterceptHosts(nil))
	if err != nil || same.Created || same.Fingerprint() != ca.Fingerprint() {
		t.Errorf("reload: created=%v err=%v", same.Created, err)
	}
}

func TestCAIsNeverReplacedWithoutRotate(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, InterceptHosts([]string{"gateway.example.com"}))
	if err != nil {
		t.Fatal(err)
	}
	certBefore, _ := os.ReadFile(ca.CertPath)
	keyBefore, _ := os.ReadFile(ca.KeyPath)

	// A host the CA does not permit is refused, and nothing changes.
	_, err = LoadOrCreateCA(dir, InterceptHosts([]string{"new.example.net"}))
	var np *NotPermittedError
	if !errors.As(err, &np) || strings.Join(np.Missing, ",") != "new.example.net" || np.Fingerprint != ca.Fingerprint() {
		t.Fatalf("widening without rotate: err = %v, want a NotPermittedError for new.example.net", err)
	}
	if c, _ := os.ReadFile(ca.CertPath); !bytes.Equal(c, certBefore) {
		t.Error("the refused call changed the CA certificate")
	}
	if k, _ := os.ReadFile(ca.KeyPath); !bytes.Equal(k, keyBefore) {
		t.Error("the refused call changed the CA key")
	}

	// Rotating makes a new CA for the union and keeps the old files.
	rotated, rot, err := RotateCA(dir, InterceptHosts([]string{"new.example.net"}))
	if err != nil {
		t.Fatal(err)
	}
	if !rotated.Created || rotated.Fingerprint() == ca.Fingerprint() {
		t.Error("rotate must make a new CA")
	}
	if got := strings.Join(rotated.Cert.PermittedDNSDomains, ","); got != "api.anthropic.com,gateway.example.com,new.example.net" {
		t.Errorf("rotated CA permits %q", got)
	}
	if rot == nil || rot.Fingerprint != ca.Fingerprint() || strings.Join(rot.Permitted, ",") != "api.anthropic.com,gateway.example.com" {
		t.Fatalf("rotation = %+v, want the old fingerprint and hosts", rot)
	}
	if filepath.Dir(rot.CertPath) != dir || filepath.Dir(rot.KeyPath) != dir {
		t.Errorf("old files %s, %s not kept beside the new ones", rot.CertPath, rot.KeyPath)
	}
	if c, _ := os.ReadFile(rot.CertPath); !bytes.Equal(c, certBefore) {
		t.Error("the kept old certificate differs from the old one")
	}
	if k, _ := os.ReadFile(rot.KeyPath); !bytes.Equal(k, keyBefore) {
		t.Error("the kept old key differs from the old one")
	}
	if st, err := os.Stat(rot.KeyPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("kept old key: %v, want mode 0600", err)
	}
	if again, err := LoadOrCreateCA(dir, InterceptHosts([]string{"new.example.net"})); err != nil || again.Fingerprint() != rotated.Fingerprint() {
		t.Errorf("after rotate, loading gives %v", err)
	}
	// A second rotation in the same second keeps both older generations.
	_, rot2, err := RotateCA(dir, nil)
	if err != nil || rot2.CertPath == rot.CertPath || rot2.Fingerprint != rotated.Fingerprint() {
		t.Fatalf("second rotation: %v %+v", err, rot2)
	}
	if c, _ := os.ReadFile(rot.CertPath); !bytes.Equal(c, certBefore) {
		t.Error("the second rotation overwrote the first kept certificate")
	}

	// Only one of the two files left: refused, not silently remade.
	os.Remove(filepath.Join(dir, CAKeyFile))
	if _, err := LoadOrCreateCA(dir, nil); err == nil {
		t.Error("a CA directory with the key missing must be refused")
	}
}

func TestUpstreamDownGives502AndIsRecorded(t *testing.T) {
	// An upstream that closes every connection at once. (A port listened
	// on and closed again could be handed to the next listener, the
	// rig's own among them, on a busy machine.)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dead := "http://" + ln.Addr().String()
	for _, mode := range []string{ModeMITM, ModeReverse} {
		t.Run(mode, func(t *testing.T) {
			r := newRig(t, Config{Mode: mode, Upstream: dead})
			var resp *http.Response
			var err error
			if mode == ModeMITM {
				resp, err = mitmClient(r).Post("https://api.anthropic.com/v1/messages", "application/json", strings.NewReader("{}"))
			} else {
				resp, err = http.Post(r.url+"/v1/messages", "application/json", strings.NewReader("{}"))
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 502 || !strings.Contains(string(b), "api_error") {
				t.Fatalf("status %d body %s", resp.StatusCode, b)
			}
			rows := r.flush(t)
			if len(rows) != 1 || rows[0].State != exchange.StateUpstreamFailed || rows[0].Status != 502 || rows[0].Error == "" {
				t.Fatalf("recorded %+v", rows)
			}
		})
	}
}

func TestUpstreamCertificateIsVerified(t *testing.T) {
	up := httptest.NewTLSServer(sseHandler(0, nil))
	defer up.Close()
	r := newRig(t, Config{Mode: ModeReverse, Upstream: up.URL})
	resp, err := http.Post(r.url+"/v1/messages", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 502 {
		t.Fatalf("untrusted upstream certificate: status %d, want 502", resp.StatusCode)
	}
	rows := r.flush(t)
	if !strings.Contains(rows[0].Error, "certificate") {
		t.Errorf("error %q should name the certificate problem", rows[0].Error)
	}
	// Trusted explicitly, the same upstream works.
	r2 := newRig(t, Config{Mode: ModeReverse, Upstream: up.URL, UpstreamRoots: []*x509.Certificate{up.Certificate()}})
	resp, err = http.Post(r2.url+"/v1/messages", "application/json", strings.NewReader("{}"))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("trusted upstream: %v %v", err, resp)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func TestClientAbortAndRecordFailure(t *testing.T) {
	up := httptest.NewServer(sseHandler(300*time.Millisecond, nil))
	defer up.Close()
	r := newRig(t, Config{Mode: ModeReverse, Upstream: up.URL})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", r.url+"/v1/messages", strings.NewReader("{}"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	resp.Body.Read(buf)
	cancel()
	resp.Body.Close()
	rows := r.flush(t)
	if len(rows) != 1 || rows[0].State != exchange.StateClientAborted {
		t.Fatalf("want a client-aborted exchange, got %+v", rows)
	}

	// A sink that fails never breaks the traffic.
	sink := &memSink{fail: fmt.Errorf("disk full")}
	var errs bytes.Buffer
	rec := NewRecorder(sink, &errs, nil)
	p, _ := New(Config{Mode: ModeReverse, Upstream: up.URL, Recorder: rec})
	srv := httptest.NewServer(p)
	defer srv.Close()
	for i := 0; i < 2; i++ {
		resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader("{}"))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("traffic broke when recording failed: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	p.Wait(context.Background())
	st := rec.Close()
	// Each exchange is written in flight, with its progress (the stream
	// runs 0.9 s) and complete: every failed write is counted.
	if st.RecordErrors < 4 || st.RecordErrors > 8 || strings.Count(errs.String(), "\n") != 1 || !strings.Contains(errs.String(), "disk full") {
		t.Fatalf("record errors %d, reported %q: want each failed write counted (4 to 8), reported once", st.RecordErrors, errs.String())
	}
	if st.Lost != 2 {
		t.Errorf("lost %d exchanges, want 2", st.Lost)
	}
}

// TestRecordingResumes: while the capture cannot be written the traffic
// goes on and one warning is printed; once it can, recording resumes,
// and the stats count the exchanges lost in between.
func TestRecordingResumes(t *testing.T) {
	up := httptest.NewServer(sseHandler(0, nil))
	defer up.Close()
	sink := &memSink{}
	var errs bytes.Buffer
	rec := NewRecorder(sink, &errs, nil)
	p, _ := New(Config{Mode: ModeReverse, Upstream: up.URL, Recorder: rec})
	srv := httptest.NewServer(p)
	defer srv.Close()
	send := func() {
		resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader("{}"))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("traffic broke: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		p.Wait(context.Background())
		for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			rec.mu.Lock()
			idle := len(rec.queue) == 0
			rec.mu.Unlock()
			if idle {
				break
			}
		}
		time.Sleep(20 * time.Millisecond) // the last write popped is being made
	}
	send()
	sink.mu.Lock()
	sink.fail = fmt.Errorf("disk full")
	sink.mu.Unlock()
	send()
	send()
	sink.mu.Lock()
	sink.fail = nil
	sink.mu.Unlock()
	send()
	st := rec.Close()
	rows := sink.all()
	if len(rows) != 2 || rows[0].State != exchange.StateComplete || rows[1].State != exchange.StateComplete {
		t.Fatalf("%d rows recorded, want the first and the last exchange, complete", len(rows))
	}
	if st.Lost != 2 || st.Exchanges != 4 || strings.Count(errs.String(), "\n") != 1 {
		t.Errorf("lost %d of %d, warnings %q; want 2 of 4 lost and one warning", st.Lost, st.Exchanges, errs.String())
	}
}

// TestRecorderNotify: notify sees each write, in order, with the store ID:
// an exchange under way longer than the hold (waiting for its headers or
// streaming its body) in flight, as it began, then in its final state; a
// shorter one once, in its final state; a failed write is not announced.
// The slow upstream answers only once the in-flight write has reached the
// sink, so the exchange is under way past the hold whatever the load.
func TestRecorderNotify(t *testing.T) {
	sink := &signalSink{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if string(body) == "slow headers" {
			sink.waitInFlight(t)
		}
		io.WriteString(w, `{"type":"message",`)
		w.(http.Flusher).Flush()
		if string(body) == "slow body" {
			sink.waitInFlight(t)
		}
		io.WriteString(w, `"id":"msg_1"}`)
	}))
	defer up.Close()
	var mu sync.Mutex
	var seen []string
	notified := make(chan string, 16)
	rec := NewRecorder(sink, io.Discard, func(ex *exchange.Exchange) {
		mu.Lock()
		defer mu.Unlock()
		n := fmt.Sprintf("%d %s %d", ex.ID, ex.State, ex.Status)
		seen = append(seen, n)
		notified <- n
	})
	p, _ := New(Config{Mode: ModeReverse, Upstream: up.URL, Recorder: rec})
	srv := httptest.NewServer(p)
	defer srv.Close()
	// send returns how long the exchange took, from before the request to
	// after the proxy had ended it: more than the proxy's own time.
	send := func(body string) time.Duration {
		t.Helper()
		sink.expect()
		start := time.Now()
		resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != `{"type":"message","id":"msg_1"}` {
			t.Fatalf("%s: client got %q", body, b)
		}
		p.Wait(context.Background())
		return time.Since(start)
	}
	// Under way longer than the hold, before or after the headers: the
	// in-flight state (as it began) is written first. Over sooner: the
	// final state only.
	send("slow headers")
	fast := send("fast")
	send("slow body")
	// The proxy is done with the third exchange; the recorder's writer may
	// not be yet: the sink fails only once its final state is written.
	for n := ""; n != "3 complete 200"; {
		select {
		case n = <-notified:
		case <-time.After(patience):
			t.Fatalf("the third exchange's final state was not written in %v", patience)
		}
	}
	sink.mu.Lock()
	sink.fail = fmt.Errorf("disk full")
	sink.mu.Unlock()
	send("slow headers")
	rec.Close()
	mu.Lock()
	defer mu.Unlock()
	want := "1 in_flight 0, 1 complete 200, 2 complete 200, 3 in_flight 0, 3 complete 200"
	if fast >= holdInsert {
		// A loaded machine kept the short exchange under way past the
		// hold: its in-flight write may have been due, and only then.
		if got := strings.Join(seen, ", "); got == strings.Replace(want, "2 complete", "2 in_flight 0, 2 complete", 1) {
			want = got
		}
	}
	if got := strings.Join(seen, ", "); got != want {
		t.Errorf("notified %q\nwant      %q", got, want)
	}
}

// signalSink is a memSink that tells a waiting upstream when an
// exchange's in-flight state has been handed to it.
type signalSink struct {
	memSink
	inFlight chan struct{}
	told     bool // inFlight is closed
}

// expect readies the sink for the next exchange.
func (s *signalSink) expect() {
	s.mu.Lock()
	s.inFlight, s.told = make(chan struct{}), false
	s.mu.Unlock()
}

// waitInFlight waits until the current exchange's in-flight state has
// reached the sink (written or failed), or fails the test after patience.
func (s *signalSink) waitInFlight(t *testing.T) {
	s.mu.Lock()
	ch := s.inFlight
	s.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(patience):
		t.Errorf("no in-flight write %v into an exchange under way", patience)
	}
}

func (s *signalSink) Insert(ctx context.Context, ex *exchange.Exchange) error {
	if ex.State == exchange.StateInFlight {
		s.mu.Lock()
		if s.inFlight != nil && !s.told {
			close(s.inFlight)
			s.told = true
		}
		s.mu.Unlock()
	}
	return s.memSink.Insert(ctx, ex)
}

// TestProgressOfALongResponse: a response still arriving a quarter second
// after its first byte is written in flight with its status and the bytes
// so far, again each second, so that a live view shows it moving; then
// complete, whole. The proxy's clock is the test's: the upstream sends an
// event every 400 ms of it, each once the client has the one before, so
// the writes fall on known events whatever the load.
func TestProgressOfALongResponse(t *testing.T) {
	const gap = 400 * time.Millisecond
	var events []string
	for i := range 7 {
		events = append(events, fmt.Sprintf("event: ping\ndata: {\"type\":\"ping\",\"n\":%d}\n\n", i))
	}
	next := make(chan struct{}, len(events))
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i, e := range events {
			if i > 0 {
				select {
				case <-next:
				case <-r.Context().Done():
					return
				case <-time.After(patience):
					t.Errorf("event %d: the client did not get event %d within %v", i, i-1, patience)
					return
				}
			}
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	var clock struct {
		sync.Mutex
		now time.Time
	}
	clock.now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := func() time.Time {
		clock.Lock()
		defer clock.Unlock()
		return clock.now
	}
	type seenState struct {
		state  exchange.State
		status int
		body   int
	}
	var mu sync.Mutex
	var seen []seenState
	rec := NewRecorder(&memSink{}, io.Discard, func(ex *exchange.Exchange) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, seenState{ex.State, ex.Status, len(ex.RespBody)})
	})
	p, _ := New(Config{Mode: ModeReverse, Upstream: up.URL, Recorder: rec, Now: now})
	srv := httptest.NewServer(p)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	var whole strings.Builder
	for i := range events {
		if i > 0 {
			if i == 1 {
				// The in-flight state is held back for a moment of real
				// time; progress is written only once it has been.
				waitSeen := time.Now().Add(patience)
				for {
					mu.Lock()
					n := len(seen)
					mu.Unlock()
					if n > 0 || time.Now().After(waitSeen) {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			clock.Lock()
			clock.now = clock.now.Add(gap)
			clock.Unlock()
			next <- struct{}{}
		}
		for !strings.HasSuffix(whole.String(), events[i]) {
			line, err := br.ReadString('\n')
			whole.WriteString(line)
			if err != nil {
				t.Fatalf("after %q: %v", whole.String(), err)
			}
		}
	}
	if rest, _ := io.ReadAll(br); len(rest) > 0 {
		t.Errorf("after the events: %q", rest)
	}
	resp.Body.Close()
	p.Wait(context.Background())
	rec.Close()
	mu.Lock()
	defer mu.Unlock()
	// Written: as it began; at 400 ms of it (past a quarter second) with
	// two events; at 1.6 s (a second later) with five; then whole.
	upTo := func(n int) int { return len(strings.Join(events[:n], "")) }
	want := []seenState{{exchange.StateInFlight, 0, 0}, {exchange.StateInFlight, 200, upTo(2)}, {exchange.StateInFlight, 200, upTo(5)}, {exchange.StateComplete, 200, upTo(len(events))}}
	if !slices.Equal(seen, want) {
		t.Errorf("writes %+v\nwant   %+v: in flight as it began, its progress about once a second, then complete", seen, want)
	}
}

// TestRecorderCloseWritesHeldExchanges: an exchange begun just before the
// recorder closes (its in-flight write still held back) is written in
// flight, as one begun earlier is, not lost; one that finished is written
// once, complete.
func TestRecorderCloseWritesHeldExchanges(t *testing.T) {
	sink := &memSink{}
	rec := NewRecorder(sink, io.Discard, nil)
	rec.begin(&exchange.Exchange{Method: "POST", URL: "/v1/messages", ReqBody: []byte(`{"a":1}`), State: exchange.StateInFlight}, time.Hour)
	done := &exchange.Exchange{Method: "POST", URL: "/v1/messages", ReqBody: []byte(`{"b":2}`), State: exchange.StateInFlight}
	e := rec.begin(done, time.Hour)
	done.State, done.Status = exchange.StateComplete, 200
	rec.finish(e, done)
	st := rec.Close()
	sink.mu.Lock()
	defer sink.mu.Unlock()
	var states []string
	for id := int64(1); id <= int64(len(sink.rows)); id++ {
		ex := sink.rows[id]
		states = append(states, string(ex.ReqBody)+" "+string(ex.State))
	}
	slices.Sort(states)
	if got, want := strings.Join(states, ", "), `{"a":1} in_flight, {"b":2} complete`; got != want {
		t.Errorf("written: %s\nwant:    %s", got, want)
	}
	if st.RecordErrors != 0 {
		t.Errorf("record errors: %+v", st)
	}
}

// TestClientHangUpBeforeHeaders: a client that gives up while the upstream
// has not answered yet is recorded as client_aborted, not as an upstream
// failure with a 502 it never received, and the upstream request is
// cancelled at once, in both modes.
func TestClientHangUpBeforeHeaders(t *testing.T) {
	for _, mode := range []string{ModeReverse, ModeMITM} {
		t.Run(mode, func(t *testing.T) { clientHangUp(t, mode) })
	}
}

func clientHangUp(t *testing.T, mode string) {
	cancelled := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // the server notices a closed connection only once the body is read
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(10 * time.Second):
		}
	}))
	defer up.Close()
	r := newRig(t, Config{Mode: mode, Upstream: up.URL})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	client, url := http.DefaultClient, r.url+"/v1/messages"
	if mode == ModeMITM {
		client, url = mitmClient(r), "https://api.anthropic.com/v1/messages"
	}
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(`{"model":"m"}`))
	if _, err := client.Do(req); err == nil {
		t.Fatal("the request should have timed out")
	}
	select {
	case <-cancelled:
	case <-time.After(patience):
		t.Error("the upstream request was not cancelled when the client hung up")
	}
	rows := r.flush(t)
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	if ex := rows[0]; ex.State != exchange.StateClientAborted || ex.Status != 0 || len(ex.RespBody) != 0 {
		t.Errorf("recorded state %s, status %d, %d body bytes; want client_aborted with no response", ex.State, ex.Status, len(ex.RespBody))
	}
}

// TestCompressedBodyDecodedBesideTheStream: a gzip body that takes a while
// to decode reaches the client as sent, whole, while the recorder's writer
// is held up and the exchange's end waits in its queue, not decoded yet
// (so the client never waits for the decoding); the writer decodes it
// afterwards for the record.
func TestCompressedBodyDecodedBesideTheStream(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(make([]byte, 48<<20)) // 48 MiB of zeros: about 50 KB compressed
	zw.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/messages/count_tokens" {
			io.WriteString(w, `{"input_tokens":1}`)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/json")
		w.Write(gz.Bytes())
	}))
	defer up.Close()
	for _, mode := range []string{ModeReverse, ModeMITM} {
		t.Run(mode, func(t *testing.T) {
			sink := &blockedSink{release: make(chan struct{})}
			r := newRigSink(t, Config{Mode: mode, Upstream: up.URL}, sink, &sink.memSink)
			released := false
			release := func() {
				if !released {
					released = true
					close(sink.release)
				}
			}
			defer release()
			client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			base := r.url
			if mode == ModeMITM {
				client = mitmClient(r)
				client.Transport.(*http.Transport).DisableCompression = true
				base = "https://api.anthropic.com"
			}
			post := func(path string) ([]byte, error) {
				resp, err := client.Post(base+path, "application/json", strings.NewReader("{}"))
				if err != nil {
					return nil, err
				}
				defer resp.Body.Close()
				return io.ReadAll(resp.Body)
			}
			// The first exchange's write holds the writer; the gzip one
			// queues behind it, not decoded yet.
			if _, err := post("/v1/messages/count_tokens"); err != nil {
				t.Fatal(err)
			}
			type result struct {
				body []byte
				err  error
			}
			got := make(chan result, 1)
			go func() {
				b, err := post("/v1/messages")
				got <- result{b, err}
			}()
			select {
			case res := <-got:
				if res.err != nil || !bytes.Equal(res.body, gz.Bytes()) {
					t.Fatalf("client got %d bytes (%v), want the %d compressed bytes as sent", len(res.body), res.err, gz.Len())
				}
				// The exchange's end waits in the writer's queue, still
				// to be decoded there.
				r.rec.mu.Lock()
				var waiting *exchange.Exchange
				for _, o := range r.rec.queue {
					if o.final && bytes.Equal(o.ex.RespBody, gz.Bytes()) {
						waiting = &o.ex
					}
				}
				r.rec.mu.Unlock()
				if waiting == nil || waiting.RespBodyDecoded != nil {
					t.Errorf("the gzip exchange's end is not queued undecoded behind the held writer (queued: %v)", waiting != nil)
				}
			case <-time.After(patience):
				release()
				t.Fatalf("the client did not get the body within %v while the recorder's writer was held up", patience)
			}
			release()
			rows := r.flush(t)
			if len(rows) != 2 || len(rows[1].RespBodyDecoded) != 48<<20 || !bytes.Equal(rows[1].RespBody, gz.Bytes()) {
				t.Fatalf("recorded %d rows; want the body as sent and decoded", len(rows))
			}
		})
	}
}

// TestTunnelErrorReported checks that a CONNECT to a host that is not
// intercepted and cannot be reached is told to OnTunnelError.
func TestTunnelErrorReported(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens there now
	got := make(chan string, 1)
	r := newRig(t, Config{Mode: ModeMITM, OnTunnelError: func(hostport string, err error) {
		select {
		case got <- hostport + ": " + err.Error():
		default:
		}
	}})
	if _, err := mitmClient(r).Get("https://" + dead + "/x"); err == nil {
		t.Fatal("a tunnel to a closed port worked")
	}
	select {
	case s := <-got:
		if !strings.HasPrefix(s, dead+": ") || !strings.Contains(s, "refused") {
			t.Errorf("OnTunnelError got %q", s)
		}
	case <-time.After(patience):
		t.Fatal("OnTunnelError was not called")
	}
}

// blockedSink holds every write until released.
type blockedSink struct {
	memSink
	release chan struct{}
}

func (s *blockedSink) Insert(ctx context.Context, ex *exchange.Exchange) error {
	<-s.release
	return s.memSink.Insert(ctx, ex)
}

func (s *blockedSink) Update(ctx context.Context, ex *exchange.Exchange) error {
	<-s.release
	return s.memSink.Update(ctx, ex)
}

// TestRecorderQueueBounded: with the writer stuck, newer states replace
// queued writes, the queued bodies never pass MaxQueuedBytes, what does
// not fit is counted as dropped, and what was queued is written in the
// end.
func TestRecorderQueueBounded(t *testing.T) {
	sink := &blockedSink{release: make(chan struct{})}
	rec := NewRecorder(sink, io.Discard, nil)
	body := bytes.Repeat([]byte("x"), 8<<20)
	const n = 40 // 320 MB of requests, with the writer stuck
	for i := 0; i < n; i++ {
		ex := &exchange.Exchange{Method: "POST", ReqBody: body, State: exchange.StateInFlight}
		e := rec.begin(ex, 0)
		ex.State, ex.Status, ex.RespBody = exchange.StateComplete, 200, []byte("ok")
		rec.finish(e, ex)
		rec.mu.Lock()
		queued := rec.bytes
		rec.mu.Unlock()
		if queued > MaxQueuedBytes {
			t.Fatalf("after %d exchanges %d bytes queued, over the bound", i+1, queued)
		}
	}
	close(sink.release)
	st := rec.Close()
	if st.Dropped == 0 || st.Dropped != st.RecordErrors {
		t.Errorf("dropped %d, record errors %d: want drops, each counted as an error", st.Dropped, st.RecordErrors)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	written := 0
	for _, ex := range sink.rows {
		if ex.State != exchange.StateComplete {
			t.Errorf("exchange %d written %s, want its final state", ex.ID, ex.State)
		}
		written++
	}
	if written == 0 || written+st.Dropped < n {
		t.Errorf("%d exchanges written, %d dropped, of %d", written, st.Dropped, n)
	}
}

// eofReader returns all of its bytes and io.EOF in one read.
type eofReader struct{ b []byte }

func (e *eofReader) Read(p []byte) (int, error) {
	n := copy(p, e.b)
	e.b = e.b[n:]
	return n, io.EOF
}

func (e *eofReader) Close() error { return nil }

// TestLastBytesBeforeEnd: a read that brings the last bytes with io.EOF
// returns the bytes alone, the exchange still under way, so that they
// reach the client before the recorder works on the end; the next read,
// or a Close, ends it complete with every byte.
func TestLastBytesBeforeEnd(t *testing.T) {
	for _, closeOnly := range []bool{false, true} {
		rec := NewRecorder(&memSink{}, io.Discard, nil)
		p, err := New(Config{Mode: ModeReverse, Upstream: "http://127.0.0.1:1", Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		ex := &exchange.Exchange{Method: "POST", State: exchange.StateInFlight}
		p.inflight.Add(1)
		ctx, cancel := context.WithCancel(context.Background())
		b := &recordingBody{p: p, ent: rec.begin(ex, time.Hour), ex: ex, rc: &eofReader{b: []byte("data: last\n\n")}, ctx: ctx, cancel: cancel}
		buf := make([]byte, 64)
		n, err := b.Read(buf)
		if n != 12 || err != nil {
			t.Fatalf("first read: %d, %v; want 12 bytes and no error", n, err)
		}
		if st := rec.Stats(); st.Complete+st.Failed != 0 {
			t.Fatalf("exchange ended before its last bytes were passed on: %+v", st)
		}
		if closeOnly {
			b.Close()
		} else if n, err := b.Read(buf); n != 0 || err != io.EOF {
			t.Fatalf("second read: %d, %v; want io.EOF", n, err)
		}
		b.Close()
		st := rec.Close()
		if st.Complete != 1 || st.Failed != 0 || ex.State != exchange.StateComplete || string(ex.RespBody) != "data: last\n\n" {
			t.Errorf("close only %v: complete %d failed %d, state %s, body %q", closeOnly, st.Complete, st.Failed, ex.State, ex.RespBody)
		}
	}
}

// TestReadBody: a body is read whole whatever length was declared, in one
// buffer when the declared length is right.
func TestReadBody(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 10<<10)
	for _, declared := range []int64{-1, 0, 10, int64(len(body)) - 1, int64(len(body)), int64(len(body)) + 100, presizeMax + 1} {
		got, err := readBody(iotest.HalfReader(bytes.NewReader(body)), declared)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("declared %d: %d bytes, %v", declared, len(got), err)
		}
		if declared == int64(len(body)) && cap(got) != len(body)+1 {
			t.Errorf("declared right: buffer grew to %d", cap(got))
		}
	}
	if _, err := readBody(iotest.TimeoutReader(bytes.NewReader(body)), int64(len(body))); err == nil {
		t.Error("a read error was not returned")
	}
}

// TestUpstreamConnectionReused holds the proxy to one upstream connection
// for a client's keep-alive requests, in both modes: a new connection (and
// TLS handshake, against the real API) per request would add a round trip
// to every time to first byte.
func TestUpstreamConnectionReused(t *testing.T) {
	for _, mode := range []string{ModeReverse, ModeMITM} {
		t.Run(mode, func(t *testing.T) {
			up := httptest.NewUnstartedServer(sseHandler(0, nil))
			var mu sync.Mutex
			conns := 0
			up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					mu.Lock()
					conns++
					mu.Unlock()
				}
			}
			up.Start()
			defer up.Close()
			r := newRig(t, Config{Mode: mode, Upstream: up.URL})
			client, target := &http.Client{Transport: &http.Transport{DisableCompression: true}}, r.url+"/v1/messages"
			if mode == ModeMITM {
				client, target = mitmClient(r), "https://api.anthropic.com/v1/messages"
			}
			defer client.CloseIdleConnections()
			const n = 12
			for i := range n {
				resp, err := client.Post(target, "application/json", strings.NewReader(`{"stream":true}`))
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if want := strings.Join(sseEvents, ""); string(got) != want {
					t.Fatalf("request %d: got %q", i, got)
				}
			}
			if rows := r.flush(t); len(rows) != n {
				t.Errorf("recorded %d exchanges, want %d", len(rows), n)
			}
			mu.Lock()
			defer mu.Unlock()
			if conns != 1 {
				t.Errorf("the upstream saw %d connections for %d keep-alive requests, want 1", conns, n)
			}
		})
	}
}
