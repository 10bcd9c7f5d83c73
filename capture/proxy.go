// Package capture records Messages API traffic as it passes: a MITM
// forward proxy (goproxy) or a plain reverse proxy, both streaming every
// response through as it arrives and recording it byte for byte with the
// arrival time of each chunk. It is the only package that imports goproxy.
package capture

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/tsinspect/tsinspect/exchange"
)

// Modes of the proxy.
const (
	ModeMITM    = "mitm"
	ModeReverse = "reverse"
)

// DefaultHost is the Messages API host, always intercepted in MITM mode.
const DefaultHost = "api.anthropic.com"

// DefaultUpstream is where reverse mode forwards by default.
const DefaultUpstream = "https://" + DefaultHost

// Config says how to build a Proxy. Zero values are documented defaults.
type Config struct {
	// Mode is ModeMITM (default) or ModeReverse.
	Mode string
	// Intercept lists the hosts whose CONNECTs are intercepted in MITM
	// mode; DefaultHost is always included.
	Intercept []string
	// Upstream, in reverse mode, is the base URL requests are forwarded to
	// (default DefaultUpstream). In MITM mode, when set, intercepted
	// requests go there instead of to the host the client asked for.
	Upstream string
	// CA signs leaf certificates in MITM mode. Required there.
	CA *CA
	// UpstreamRoots are trusted for upstream TLS in addition to the system
	// roots (a corporate gateway's CA, or a test server's).
	UpstreamRoots []*x509.Certificate
	// Recorder receives the exchanges. Required.
	Recorder *Recorder
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Source is written on each exchange (default: the mode).
	Source string
	// OnTunnelError, when set, is told when a CONNECT to a host that is
	// not intercepted (tunnelled untouched, not recorded) could not be
	// dialled. It may be called from many goroutines at once.
	OnTunnelError func(hostport string, err error)
}

// Proxy is a running recording proxy; it is an http.Handler to be served
// on a loopback listener.
type Proxy struct {
	cfg       Config
	upstream  *url.URL
	intercept []string
	transport *http.Transport
	handler   http.Handler
	inflight  sync.WaitGroup
}

// New builds a Proxy from cfg.
func New(cfg Config) (*Proxy, error) {
	if cfg.Mode == "" {
		cfg.Mode = ModeMITM
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Source == "" {
		cfg.Source = cfg.Mode
	}
	if cfg.Recorder == nil {
		return nil, errors.New("capture: new proxy: no recorder")
	}
	p := &Proxy{cfg: cfg, intercept: InterceptHosts(cfg.Intercept)}
	if cfg.Upstream == "" && cfg.Mode == ModeReverse {
		cfg.Upstream = DefaultUpstream
		p.cfg.Upstream = DefaultUpstream
	}
	if cfg.Upstream != "" {
		u, err := url.Parse(cfg.Upstream)
		if err != nil {
			// Not quoted: it may hold a password.
			return nil, errors.New("capture: --upstream does not parse as a URL: want an http:// or https:// URL")
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("capture: upstream %q: want an http:// or https:// URL", u.Redacted())
		}
		p.upstream = u
	}
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	for _, c := range cfg.UpstreamRoots {
		roots.AddCert(c)
	}
	p.transport = &http.Transport{
		Proxy:                 nil, // never loop back through HTTPS_PROXY
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     true,
		DisableCompression:    true, // the client's Accept-Encoding goes through as sent
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	switch cfg.Mode {
	case ModeMITM:
		if cfg.CA == nil {
			return nil, errors.New("capture: new proxy: MITM mode needs a CA")
		}
		p.handler = p.mitmHandler()
	case ModeReverse:
		p.handler = http.HandlerFunc(p.serveReverse)
	default:
		return nil, fmt.Errorf("capture: unknown mode %q (want mitm or reverse)", cfg.Mode)
	}
	return p, nil
}

// InterceptHosts returns the normalised list of intercepted hosts,
// DefaultHost first.
func InterceptHosts(extra []string) []string {
	return normaliseHosts(append([]string{DefaultHost}, extra...))
}

// ServeHTTP serves the proxy.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.handler.ServeHTTP(w, r) }

// Wait blocks until every exchange under way has ended, or ctx is done.
func (p *Proxy) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { p.inflight.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// CloseIdle closes idle upstream connections.
func (p *Proxy) CloseIdle() { p.transport.CloseIdleConnections() }

func (p *Proxy) intercepted(hostport string) bool {
	h := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		h = hh
	}
	return slices.Contains(p.intercept, strings.ToLower(h))
}

func (p *Proxy) mitmHandler() http.Handler {
	gp := goproxy.NewProxyHttpServer()
	gp.Tr = p.transport
	gp.KeepAcceptEncoding = true
	gp.KeepDestinationHeaders = true
	gp.Logger = discardLogger{}
	gp.ConnectDialWithReq = func(r *http.Request, network, addr string) (net.Conn, error) {
		var c net.Conn
		var err error
		if p.transport.DialContext != nil {
			c, err = p.transport.DialContext(r.Context(), network, addr)
		} else {
			var d net.Dialer
			c, err = d.DialContext(r.Context(), network, addr)
		}
		if err != nil && p.cfg.OnTunnelError != nil {
			p.cfg.OnTunnelError(addr, err)
		}
		return c, err
	}
	mitm := &goproxy.ConnectAction{
		Action: goproxy.ConnectMitm,
		TLSConfig: func(host string, _ *goproxy.ProxyCtx) (*tls.Config, error) {
			leaf, err := p.cfg.CA.Leaf(host)
			if err != nil {
				return nil, err
			}
			return &tls.Config{Certificates: []tls.Certificate{*leaf}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}, nil
		},
	}
	gp.OnRequest().HandleConnectFunc(func(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
		if p.intercepted(host) {
			// goproxy hands UserData on to the context of every request
			// read from the tunnel: forward watches this connection.
			if c, ok := ctx.Req.Context().Value(connKey{}).(net.Conn); ok {
				ctx.UserData = c
			}
			return mitm, host
		}
		return goproxy.OkConnect, host
	})
	gp.OnRequest().DoFunc(func(r *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
		if !p.intercepted(r.URL.Host) && !p.intercepted(r.Host) {
			return r, nil // plain HTTP to some other host: goproxy forwards it
		}
		client, _ := ctx.UserData.(net.Conn)
		return r, p.forward(r, r.URL, client)
	})
	gp.NonproxyHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "tsinspect is a forward proxy here (mode mitm): set HTTPS_PROXY to it, or run with --mode reverse", http.StatusBadRequest)
	})
	return gp
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// holdInsert is how long the first write of an exchange, its in-flight
// state, is held back (see Recorder.begin): a short exchange is written
// once, when it ends, and the writer never works while the first bytes of
// a response are forwarded unless the upstream answers about holdInsert
// after the request.
const holdInsert = 50 * time.Millisecond

// forward records the request, sends it upstream and returns the response
// whose body records itself as the client reads it. clientURL is the URL
// the client addressed. Upstream failures become a 502 API-style error,
// recorded as such. client, when not nil, is the client's connection,
// watched while the upstream has not answered: if the client hangs up, the
// upstream request is cancelled.
func (p *Proxy) forward(r *http.Request, clientURL *url.URL, client net.Conn) *http.Response {
	p.inflight.Add(1)
	now := p.cfg.Now()
	body, readErr := readBody(r.Body, r.ContentLength)
	r.Body.Close()

	target := *clientURL
	if p.upstream != nil {
		target.Scheme = p.upstream.Scheme
		target.Host = p.upstream.Host
		target.Path = singleJoin(p.upstream.Path, clientURL.Path)
		target.RawPath = ""
	}
	recordedURL := clientURL.String()
	if p.cfg.Mode == ModeReverse {
		recordedURL = target.String()
	}
	ex := &exchange.Exchange{
		Source:     p.cfg.Source,
		Start:      now,
		Method:     r.Method,
		URL:        recordedURL,
		Host:       hostOnly(clientURL.Host),
		ReqHeaders: exchange.SafeHeaders(r.Header),
		ReqBody:    body,
		State:      exchange.StateInFlight,
	}
	if p.cfg.Mode == ModeReverse {
		ex.Host = hostOnly(target.Host)
	}
	ent := p.cfg.Recorder.begin(ex, holdInsert)
	reqCtx, cancel := context.WithCancel(r.Context())
	fail := func(msg string) *http.Response {
		cancel()
		ex.End = p.cfg.Now()
		ex.Error = msg
		ex.State = exchange.StateUpstreamFailed
		resp := badGateway(r, msg)
		ex.Status = resp.StatusCode
		ex.RespHeaders = exchange.SafeHeaders(resp.Header)
		ex.RespBody = resp.bodyBytes
		p.cfg.Recorder.finish(ent, ex)
		p.inflight.Done()
		return resp.Response
	}
	if readErr != nil {
		return fail("reading the request body from the client: " + readErr.Error())
	}

	out, err := http.NewRequestWithContext(reqCtx, r.Method, target.String(), bytes.NewReader(body))
	if err != nil {
		return fail("building the upstream request: " + err.Error())
	}
	out.Header = r.Header.Clone()
	exchange.RemoveHopHeaders(out.Header)
	if p.upstream == nil && r.Host != "" {
		out.Host = r.Host
	}
	out.ContentLength = int64(len(body))
	var stopWatch chan struct{}
	if client != nil {
		stopWatch = make(chan struct{})
		go watchHangUp(client, stopWatch, cancel)
	}
	resp, err := p.transport.RoundTrip(out)
	if stopWatch != nil {
		close(stopWatch)
	}
	if err != nil && reqCtx.Err() != nil {
		// The client hung up before the response began, which cancelled
		// the upstream request: record that, not a 502 nobody received.
		cancel()
		ex.End = p.cfg.Now()
		ex.Error = "client closed the connection before the response began"
		ex.State = exchange.StateClientAborted
		p.cfg.Recorder.finish(ent, ex)
		p.inflight.Done()
		return badGateway(r, "the client went away").Response
	}
	if err != nil {
		return fail("upstream " + target.Host + " failed: " + err.Error())
	}
	ex.FirstByte = p.cfg.Now()
	ex.Status = resp.StatusCode
	ex.RespHeaders = exchange.SafeHeaders(resp.Header)
	resp.Body = &recordingBody{p: p, ent: ent, ex: ex, rc: resp.Body, ctx: reqCtx, cancel: cancel}
	return resp
}

// presizeMax bounds the buffer readBody allocates from a declared length.
const presizeMax = 64 << 20

// readBody reads a request body whole, into a buffer of the declared
// length when there is one: io.ReadAll would start small and copy a
// Claude Code request (about 100 KB) several times as it grows.
func readBody(r io.Reader, declared int64) ([]byte, error) {
	if declared <= 0 || declared > presizeMax {
		return io.ReadAll(r)
	}
	// One byte more than declared, so that the read ends on EOF without
	// growing the buffer.
	buf := make([]byte, 0, declared+1)
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return buf, err
		case len(buf) == cap(buf):
			// Longer than declared: read the rest as it comes.
			rest, err := io.ReadAll(r)
			return append(buf, rest...), err
		}
	}
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

func singleJoin(a, b string) string {
	a = strings.TrimSuffix(a, "/")
	if b == "" {
		return a + "/"
	}
	if !strings.HasPrefix(b, "/") {
		b = "/" + b
	}
	return a + b
}

type gatewayResponse struct {
	*http.Response
	bodyBytes []byte
}

// badGateway makes the 502 the client sees when the upstream cannot be
// reached, shaped like an API error so SDKs report it clearly.
func badGateway(r *http.Request, msg string) gatewayResponse {
	b := []byte(fmt.Sprintf(`{"type":"error","error":{"type":"api_error","message":%q}}`, "tsinspect: "+msg))
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-Tsinspect-Error", "upstream")
	return gatewayResponse{
		Response: &http.Response{
			StatusCode:    http.StatusBadGateway,
			Status:        "502 Bad Gateway",
			Proto:         "HTTP/1.1",
			ProtoMajor:    1,
			ProtoMinor:    1,
			Header:        h,
			Body:          io.NopCloser(bytes.NewReader(b)),
			ContentLength: int64(len(b)),
			Request:       r,
		},
		bodyBytes: b,
	}
}

// recordingBody passes the upstream body through unchanged while keeping a
// copy and the arrival time of every read. It ends the exchange on EOF
// (complete), on a read error (upstream failed) or on Close before EOF
// (client aborted).
type recordingBody struct {
	p   *Proxy
	ent *entry
	ex  *exchange.Exchange
	rc  io.ReadCloser
	ctx context.Context // the client's request: done when it goes away
	// cancel releases ctx once the exchange has ended.
	cancel context.CancelFunc
	buf    bytes.Buffer
	eof    bool // the upstream body has ended; the last read did not say so yet
	once   sync.Once
	// told is when the response so far was last queued for writing.
	told time.Time
}

// A response still arriving is written to the capture progressFirst after
// its first byte and every progressEvery after that, so that a live view
// shows its progress; a shorter one is written once, whole.
const (
	progressFirst = 250 * time.Millisecond
	progressEvery = time.Second
)

func (b *recordingBody) Read(p []byte) (int, error) {
	if b.eof {
		b.end(exchange.StateComplete, "")
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if n > 0 {
		now := b.p.cfg.Now()
		b.ex.Chunks = append(b.ex.Chunks, exchange.Chunk{Offset: int64(b.buf.Len()), Size: n, At: now})
		b.buf.Write(p[:n])
		if err == nil && now.Sub(b.ex.FirstByte) >= progressFirst && now.Sub(b.told) >= progressEvery {
			// The bytes so far, shared: the buffer only ever appends.
			b.told = now
			cur := *b.ex
			cur.RespBody = b.buf.Bytes()[:b.buf.Len():b.buf.Len()]
			b.p.cfg.Recorder.progress(b.ent, &cur)
		}
		if err == io.EOF {
			// The last bytes go to the client before the exchange is
			// ended: the next read says EOF.
			b.eof = true
			return n, nil
		}
	}
	switch {
	case err == io.EOF:
		b.end(exchange.StateComplete, "")
	case err != nil && b.ctx.Err() != nil:
		b.end(exchange.StateClientAborted, "client closed the connection before the response ended")
	case err != nil:
		b.end(exchange.StateUpstreamFailed, "response body broke off: "+err.Error())
	}
	return n, err
}

func (b *recordingBody) Close() error {
	err := b.rc.Close()
	if b.eof {
		// The last bytes were read; only the EOF was not.
		b.end(exchange.StateComplete, "")
	}
	b.end(exchange.StateClientAborted, "client closed the connection before the response ended")
	return err
}

func (b *recordingBody) end(state exchange.State, msg string) {
	b.once.Do(func() {
		ex := b.ex
		ex.End = b.p.cfg.Now()
		ex.State = state
		ex.Error = msg
		ex.RespBody = b.buf.Bytes()
		// A compressed body is decoded by the recorder's writer, beside
		// the stream: the client's last bytes never wait for it.
		b.p.cfg.Recorder.finish(b.ent, ex)
		b.p.inflight.Done()
		b.cancel()
	})
}

func headerValue(hs []exchange.Header, name string) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// serveReverse handles one request in reverse mode: forward to the
// upstream and copy the response back, flushing after every read.
func (p *Proxy) serveReverse(w http.ResponseWriter, r *http.Request) {
	resp := p.forward(r, r.URL, nil)
	defer resp.Body.Close()
	options := exchange.ConnectionOptions(resp.Header.Values("Connection"))
	for k, vs := range resp.Header {
		if exchange.IsHop(k, options) {
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return // client gone: Close marks the exchange aborted
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			if err != io.EOF {
				// Upstream broke off mid-body: cut the client's stream
				// too so it sees an incomplete response, as it would have.
				panic(http.ErrAbortHandler)
			}
			return
		}
	}
}
