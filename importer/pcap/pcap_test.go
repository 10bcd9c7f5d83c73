package pcap

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/capture"
	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/importer/pcap/pcaptest"
	"github.com/tsinspect/tsinspect/importer/tlsrec"
	"github.com/tsinspect/tsinspect/internal/testwait"
	"github.com/tsinspect/tsinspect/timeline"
)

// memSink keeps what a capture.Recorder writes.
type memSink struct {
	mu  sync.Mutex
	exs []exchange.Exchange
}

func (m *memSink) Insert(_ context.Context, ex *exchange.Exchange) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ex.ID = int64(len(m.exs) + 1)
	m.exs = append(m.exs, *ex)
	return nil
}

func (m *memSink) Update(_ context.Context, ex *exchange.Exchange) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.exs[ex.ID-1] = *ex
	return nil
}

// selfSigned makes an ECDSA certificate for 127.0.0.1.
func selfSigned(t testing.TB) (tls.Certificate, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"api.test"},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, leaf
}

// upstream is the scripted API served over TLS (or plain HTTP when cfg is
// nil), every connection captured.
type upstream struct {
	URL    string
	Cap    *pcaptest.Capture
	KeyLog *bytes.Buffer
	Cert   *x509.Certificate
	Server *fixtures.Server
	Served *serveLog
	srv    *http.Server
}

// serveLog keeps, for every request the upstream answered, when its
// handler began and when each write of the response body was made and
// flushed. These bound the times of the captured packets whatever the
// scheduling: pcaptest stamps a packet as the server reads or writes it,
// so a request's first packet was stamped before its handler began, and
// a body byte's after the handler wrote it and before the Flush that sent
// it returned.
type serveLog struct {
	mu   sync.Mutex
	reqs map[string]*served
}

// served is the log of one request.
type served struct {
	began  time.Time
	writes []bodyWrite
}

// bodyWrite is one Write of a response body: the bytes before end, from
// the previous write's end on.
type bodyWrite struct {
	end     int64
	called  time.Time // when the handler wrote them: none was sent before
	flushed time.Time // when the Flush that sent them returned, zero if none did
}

func requestKey(method, requestURI string, body []byte) string {
	return method + " " + requestURI + "\x00" + string(body)
}

// wrap returns h, logging what it serves.
func (l *serveLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := &served{began: time.Now()}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, fmt.Sprintf("read request body: %v", err), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		l.mu.Lock()
		if l.reqs == nil {
			l.reqs = map[string]*served{}
		}
		l.reqs[requestKey(r.Method, r.URL.RequestURI(), body)] = s
		l.mu.Unlock()
		h.ServeHTTP(&loggingWriter{ResponseWriter: w, l: l, s: s}, r)
	})
}

// get returns the log of the request ex imported, nil if there is none.
func (l *serveLog) get(ex *exchange.Exchange) *served {
	u, err := url.Parse(ex.URL)
	if err != nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reqs[requestKey(ex.Method, u.RequestURI(), ex.ReqBody)]
}

// write returns the write that held body byte off.
func (l *serveLog) write(s *served, off int64) (bodyWrite, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range s.writes {
		if off < w.end {
			return w, true
		}
	}
	return bodyWrite{}, false
}

// loggingWriter logs a handler's body writes and flushes in its served.
type loggingWriter struct {
	http.ResponseWriter
	l *serveLog
	s *served
	n int64
}

func (w *loggingWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		w.l.mu.Lock()
		w.n += int64(len(p))
		w.s.writes = append(w.s.writes, bodyWrite{end: w.n, called: time.Now()})
		w.l.mu.Unlock()
	}
	return w.ResponseWriter.Write(p)
}

func (w *loggingWriter) FlushError() error {
	if err := http.NewResponseController(w.ResponseWriter).Flush(); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	now := time.Now()
	w.l.mu.Lock()
	for i := len(w.s.writes) - 1; i >= 0 && w.s.writes[i].flushed.IsZero(); i-- {
		w.s.writes[i].flushed = now
	}
	w.l.mu.Unlock()
	return nil
}

func (w *loggingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// syncBuffer is a bytes.Buffer safe for the TLS stack's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func startUpstream(t testing.TB, sc fixtures.Script, cfg *tls.Config, opts pcaptest.Options) *upstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{Cap: pcaptest.New(opts), KeyLog: &bytes.Buffer{}, Served: &serveLog{}}
	u.Server = fixtures.NewServer(sc, fixtures.Options{Gzip: true})
	l := u.Cap.Listener(ln)
	scheme := "http"
	if cfg != nil {
		cert, leaf := selfSigned(t)
		cfg = cfg.Clone()
		cfg.Certificates = []tls.Certificate{cert}
		cfg.NextProtos = []string{"http/1.1"}
		cfg.KeyLogWriter = &syncBuffer{b: u.KeyLog}
		u.Cert = leaf
		l = tls.NewListener(l, cfg)
		scheme = "https"
	}
	u.srv = &http.Server{Handler: u.Served.wrap(u.Server), ErrorLog: quietLog()}
	go u.srv.Serve(l)
	u.URL = scheme + "://" + ln.Addr().String()
	t.Cleanup(func() { u.srv.Close() })
	return u
}

// stop closes the server and its connections, and waits until the
// capture holds all their packets, FINs included.
func (u *upstream) stop(t testing.TB) {
	t.Helper()
	u.srv.Close()
	waitCapture(t, u.Cap)
}

// waitCapture waits until every connection c wrapped is closed and read
// to its end.
func waitCapture(t testing.TB, c *pcaptest.Capture) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// traffic sends a set of requests through client: a streamed reply with
// pauses between events, a gzip-compressed JSON reply, count_tokens, a
// GET, and two streams at once (a second connection).
func traffic(t testing.TB, client *http.Client, base string) {
	t.Helper()
	post := func(path, body string) {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", "sk-ant-test-key")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		req.Header.Set("User-Agent", "tsinspect-test/1")
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	msg := func(stream bool, text string) string {
		return fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":%v,"tools":[{"name":"Bash","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":%q}]}`, stream, text)
	}
	post("/v1/messages?beta=true", msg(true, "first"))
	post("/v1/messages", msg(false, "second, compressed"))
	post("/v1/messages/count_tokens", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"count"}]}`)
	req, _ := http.NewRequest("GET", base+"/api/hello", nil)
	req.Header.Set("User-Agent", "tsinspect-test/1")
	if resp, err := client.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	} else {
		t.Error(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			post("/v1/messages?beta=true", msg(true, fmt.Sprintf("parallel %d", i)))
		}()
	}
	wg.Wait()
}

// script answers every main request with a text streamed in pieces, 30 ms
// apart.
func script() fixtures.Script {
	return fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{
		fixtures.RouteMain: fixtures.Steps(fixtures.Text("one two three four five six seven eight nine").WithDelay(30 * time.Millisecond)),
	}}
}

// recordThroughProxy runs traffic through the capture package's reverse
// proxy to u and returns what the proxy recorded.
func recordThroughProxy(t testing.TB, u *upstream) []exchange.Exchange {
	t.Helper()
	sink := &memSink{}
	rec := capture.NewRecorder(sink, io.Discard, nil)
	cfg := capture.Config{Mode: capture.ModeReverse, Upstream: u.URL, Recorder: rec}
	if u.Cert != nil {
		cfg.UpstreamRoots = []*x509.Certificate{u.Cert}
	}
	p, err := capture.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: p}
	go srv.Serve(ln)
	traffic(t, &http.Client{Transport: &http.Transport{}}, "http://"+ln.Addr().String())
	srv.Close()
	ctx := testwait.Context(t)
	p.Wait(ctx)
	p.CloseIdle()
	rec.Close()
	u.stop(t)
	return sink.exs
}

// sameExchanges checks that the imported exchanges are the recorded ones,
// byte for byte, with times that fit what the upstream logged and the
// recorder saw (see sameTimes).
func sameExchanges(t *testing.T, recorded, imported []exchange.Exchange, log *serveLog) {
	t.Helper()
	if len(imported) != len(recorded) {
		t.Fatalf("imported %d exchanges, the proxy recorded %d", len(imported), len(recorded))
	}
	key := func(ex *exchange.Exchange) string { return ex.Method + " " + ex.URL + "\x00" + string(ex.ReqBody) }
	byKey := map[string]*exchange.Exchange{}
	for i := range imported {
		byKey[key(&imported[i])] = &imported[i]
	}
	for i := range recorded {
		r := &recorded[i]
		g := byKey[key(r)]
		if g == nil {
			t.Errorf("recorded %s %s (%d bytes) was not imported", r.Method, r.URL, len(r.ReqBody))
			continue
		}
		if g.Source != Source {
			t.Errorf("source %q", g.Source)
		}
		check := func(what string, a, b any) {
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("%s %s: %s differs:\nimported %v\nrecorded %v", r.Method, r.URL, what, a, b)
			}
		}
		check("host", g.Host, r.Host)
		check("request headers", g.ReqHeaders, r.ReqHeaders)
		check("status", g.Status, r.Status)
		check("response headers", g.RespHeaders, r.RespHeaders)
		check("state", g.State, r.State)
		check("error", g.Error, r.Error)
		if !bytes.Equal(g.RespBody, r.RespBody) {
			t.Errorf("%s %s: response body differs (%d bytes imported, %d recorded)", r.Method, r.URL, len(g.RespBody), len(r.RespBody))
		}
		if g.State != r.State {
			t.Logf("imported tail %q", g.RespBody[max(0, len(g.RespBody)-80):])
		}
		if !bytes.Equal(g.RespBodyDecoded, r.RespBodyDecoded) || (g.RespBodyDecoded == nil) != (r.RespBodyDecoded == nil) {
			t.Errorf("%s %s: decoded body differs", r.Method, r.URL)
		}
		sameTimes(t, r, g, log)
		if strings.Contains(r.RespHeader("Content-Type"), "event-stream") && len(g.Chunks) < 5 {
			t.Errorf("%s %s: %d chunks for a stream whose events came 30 ms apart", r.Method, r.URL, len(g.Chunks))
		}
	}
}

// sameTimes checks the imported times of g, the recorded exchange r,
// against the order of events. The packets were stamped where the upstream
// read and wrote them, the recorder's times where the proxy did: the two
// are apart by however long the bytes took from one to the other, which
// has no bound on a loaded machine. What holds whatever the scheduling:
// the upstream read the request after the proxy began forwarding it and
// before the handler began; it sent the response head after the handler
// began and before the proxy had it; and it sent each body byte after the
// handler wrote it and before the Flush that sent it returned and the
// proxy read it. Stream events are written 30 ms apart, so a chunk stamped
// with another event's packet falls outside its bounds.
func sameTimes(t *testing.T, r, g *exchange.Exchange, log *serveLog) {
	t.Helper()
	s := log.get(g)
	if s == nil {
		t.Errorf("%s %s: the upstream did not log it", r.Method, r.URL)
		return
	}
	rel := func(at time.Time) time.Duration { return at.Sub(r.Start) }
	if !atOrAfter(g.Start, r.Start) || g.Start.After(s.began) {
		t.Errorf("%s %s: start at %v, not between the proxy's start (0) and the upstream handler's (%v)", r.Method, r.URL, rel(g.Start), rel(s.began))
	}
	if !atOrAfter(g.FirstByte, s.began) || g.FirstByte.After(r.FirstByte) {
		t.Errorf("%s %s: first byte at %v, not between the upstream handler's start (%v) and the proxy's first byte (%v)", r.Method, r.URL, rel(g.FirstByte), rel(s.began), rel(r.FirstByte))
	}
	for _, c := range g.Chunks {
		last := c.Offset + int64(c.Size) - 1
		w, ok := log.write(s, last)
		if !ok {
			t.Errorf("%s %s: chunk at %d: the upstream wrote no byte %d", r.Method, r.URL, c.Offset, last)
			continue
		}
		latest := chunkTime(r.Chunks, last)
		if !w.flushed.IsZero() && w.flushed.Before(latest) {
			latest = w.flushed
		}
		if !atOrAfter(c.At, w.called) || c.At.After(latest) {
			t.Errorf("%s %s: chunk at %d: at %v, not between the upstream's write (%v) and its flush or the proxy's read (%v)", r.Method, r.URL, c.Offset, rel(c.At), rel(w.called), rel(latest))
		}
	}
}

// atOrAfter reports whether the packet time at, read back from a capture
// (in microseconds from a pcap file), can be of a moment at or after t.
func atOrAfter(at, t time.Time) bool { return !at.Before(t.Truncate(time.Microsecond)) }

func chunkTime(cs []exchange.Chunk, off int64) time.Time {
	for _, c := range cs {
		if off < c.Offset+int64(c.Size) {
			return c.At
		}
	}
	return time.Time{}
}

func readFile(t *testing.T, path string, keys *tlsrec.KeyLog) *Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	res, err := Read(f, st.Size(), Options{KeyLog: keys})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func writeCapture(t *testing.T, c *pcaptest.Capture, ng bool, keyLog []byte) string {
	t.Helper()
	var buf bytes.Buffer
	name := "c.pcap"
	var err error
	if ng {
		name = "c.pcapng"
		err = c.WritePcapNG(&buf, keyLog)
	} else {
		err = c.WritePcap(&buf)
	}
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func noErrors(t *testing.T, res *Result) {
	t.Helper()
	if res.Damage != "" {
		t.Errorf("damage: %s", res.Damage)
	}
	for _, s := range res.Skipped {
		t.Errorf("skipped %d %s", s.Count, s.What)
	}
}

// TestTLSImportMatchesProxyRecording records the same traffic twice at
// once: through the capture package's reverse proxy, and as packets of the
// proxy's TLS connections to the upstream. Importing the packets with the
// key log gives the proxy's exchanges byte for byte, with chunk times that
// agree, for each TLS version and AEAD family.
func TestTLSImportMatchesProxyRecording(t *testing.T) {
	cases := []struct {
		name  string
		cfg   *tls.Config
		suite string
		ng    bool // pcapng with the keys embedded, else pcap + key log
	}{
		{"tls12-aes128gcm", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", false},
		{"tls12-aes256gcm-sha384", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", true},
		{"tls12-chacha20", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}}, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", false},
		{"tls13", &tls.Config{MinVersion: tls.VersionTLS13}, wantTLS13Suite(), true},
		{"tls13-reordered", &tls.Config{MinVersion: tls.VersionTLS13}, wantTLS13Suite(), false},
		{"plain-http", nil, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := pcaptest.Options{}
			if strings.Contains(c.name, "reordered") {
				opts = pcaptest.Options{MSS: 536, Reorder: true}
			}
			u := startUpstream(t, script(), c.cfg, opts)
			recorded := recordThroughProxy(t, u)
			if len(recorded) != 6 {
				t.Fatalf("the proxy recorded %d exchanges, want 6", len(recorded))
			}
			var keys *tlsrec.KeyLog
			var embedded []byte
			if c.ng {
				embedded = u.KeyLog.Bytes()
			} else {
				keys, _ = tlsrec.ParseKeyLogBytes(u.KeyLog.Bytes())
			}
			res := readFile(t, writeCapture(t, u.Cap, c.ng, embedded), keys)
			noErrors(t, res)
			if res.Connections < 2 {
				t.Errorf("%d connections, want at least 2 (keep-alive and a parallel one)", res.Connections)
			}
			switch {
			case c.suite != "":
				if res.Suites[c.suite] == 0 {
					t.Errorf("suites %v, want %s", res.Suites, c.suite)
				}
			case c.cfg != nil:
				if res.Suites["TLS_AES_128_GCM_SHA256"]+res.Suites["TLS_CHACHA20_POLY1305_SHA256"] == 0 {
					t.Errorf("suites %v, want a TLS 1.3 one", res.Suites)
				}
			}
			sameExchanges(t, recorded, res.Exchanges, u.Served)
			sameDecoding(t, recorded, res.Exchanges)
			chunks := 0
			for _, ex := range res.Exchanges {
				chunks += len(ex.Chunks)
			}
			t.Logf("%d packets, %d connections, suites %v: %d exchanges, %d chunks", res.Packets, res.Connections, res.Suites, len(res.Exchanges), chunks)
		})
	}
}

// wantTLS13Suite is the suite Go negotiates between two Go peers: AES-128-
// GCM with AES hardware, ChaCha20-Poly1305 without it (or when AES is
// turned off with GODEBUG=cpu.aes=off, as TestTLS13ChaCha20 does).
func wantTLS13Suite() string {
	if os.Getenv("TSINSPECT_TEST_NOAES") == "1" {
		return "TLS_CHACHA20_POLY1305_SHA256"
	}
	return ""
}

// TestTLS13ChaCha20 runs the TLS 1.3 cases again in a child process with
// AES hardware support turned off (GODEBUG=cpu.aes=off), the one legitimate
// way to make Go's TLS 1.3 client and server pick ChaCha20-Poly1305:
// tls.Config.CipherSuites does not apply to TLS 1.3.
func TestTLS13ChaCha20(t *testing.T) {
	if os.Getenv("TSINSPECT_TEST_NOAES") == "1" {
		t.Skip("already in the child")
	}
	if testing.Short() {
		t.Skip("short")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTLSImportMatchesProxyRecording$/^tls13", "-test.v")
	cmd.Env = append(os.Environ(), "GODEBUG=cpu.aes=off", "TSINSPECT_TEST_NOAES=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestTLSImportMatchesProxyRecording/tls13") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }

// atField matches the arrival times of decoded events, which come from
// packet times on one side and read times on the other.
var atField = regexp.MustCompile(`"at":"[^"]*",?`)

// sameDecoding checks that imported and recorded exchanges decode alike
// and raise the same flags.
func sameDecoding(t *testing.T, recorded, imported []exchange.Exchange) {
	t.Helper()
	turn := func(ex exchange.Exchange) string {
		d := decode.Decode(&ex)
		d.ExchangeID = 0
		b, _ := json.Marshal(d)
		return atField.ReplaceAllString(string(b), "")
	}
	rec := map[string]string{}
	for _, ex := range recorded {
		rec[ex.Method+ex.URL+string(ex.ReqBody)] = turn(ex)
	}
	for _, ex := range imported {
		if want, got := rec[ex.Method+ex.URL+string(ex.ReqBody)], turn(ex); want != got {
			t.Errorf("%s %s decodes differently:\nimported %s\nrecorded %s", ex.Method, ex.URL, got, want)
		}
	}
	flags := func(exs []exchange.Exchange) string {
		var out []string
		for _, tr := range timeline.Build(exs).Turns {
			var kinds []string
			for _, f := range tr.Flags {
				kinds = append(kinds, f.Kind+":"+f.Detail)
			}
			out = append(out, fmt.Sprintf("%s %s %v", tr.Thread, tr.Exchange.ReqBody, kinds))
		}
		sort.Strings(out)
		return strings.Join(out, "\n")
	}
	// Two requests sent in parallel reach the proxy's recorder and the
	// packet capture in either order; compare the timelines of the same
	// exchanges in the recorder's order, so thread names do not depend on
	// that race.
	byKey := map[string]exchange.Exchange{}
	for _, ex := range imported {
		byKey[ex.Method+ex.URL+string(ex.ReqBody)] = ex
	}
	inRecordedOrder := make([]exchange.Exchange, 0, len(imported))
	for _, ex := range recorded {
		if g, ok := byKey[ex.Method+ex.URL+string(ex.ReqBody)]; ok {
			inRecordedOrder = append(inRecordedOrder, g)
		}
	}
	if len(inRecordedOrder) != len(imported) {
		t.Fatalf("%d of %d imported exchanges match a recorded one", len(inRecordedOrder), len(imported))
	}
	if a, b := flags(inRecordedOrder), flags(recorded); a != b {
		t.Errorf("timeline differs:\nimported:\n%s\nrecorded:\n%s", a, b)
	}
}
