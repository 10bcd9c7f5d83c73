package recording

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/capture"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/store"
)

// Options say what a proxy recording is: where it listens, where it
// forwards, and the capture it writes.
type Options struct {
	// DB is the capture file, created if missing and appended to if not.
	DB string
	// Durable syncs every write to the disk (SQLite synchronous=FULL).
	Durable bool
	// Mode is capture.ModeMITM or capture.ModeReverse.
	Mode string
	// Listen is the address to listen on ("127.0.0.1:0": any free port).
	Listen string
	// Upstream replaces the real host (mitm) or is where to forward
	// (reverse); "" for the default.
	Upstream string
	// Intercept are the hosts to decrypt besides api.anthropic.com (mitm).
	Intercept []string
	// UpstreamRoots are certificates to trust for the upstream besides the
	// system's.
	UpstreamRoots []*x509.Certificate
	// CA is the interception CA (mitm) when one exists already; MakeCA is
	// called for one, once the capture has opened, when CA is nil.
	CA     *capture.CA
	MakeCA func() (*capture.CA, error)
	// Version names the recorder in the capture's metadata.
	Version string
	// Say takes the lines a recording has to tell as it starts (a capture
	// made private, exchanges an earlier recorder left in flight, metadata
	// it could not write), without the "tsinspect: " the caller puts
	// before them.
	Say func(line string)
}

// Hooks are what the caller hears while the proxy runs, as
// httputil.ReverseProxy exposes its own: all may be nil.
type Hooks struct {
	// OnWrite is called after each write of an exchange to the capture
	// (in flight, its progress, then ended), on the writer's goroutine.
	OnWrite func(ex *exchange.Exchange)
	// OnTunnelError is called when a tunnel to a host that is not
	// intercepted cannot be opened.
	OnTunnelError func(hostport string, err error)
	// Errors takes the line about the first write to the capture that
	// failed (later ones are counted in Stats).
	Errors io.Writer
}

// CaptureError is what Open returns when the capture file cannot be
// opened for writing (another recorder holds it, it is not a capture...).
type CaptureError struct{ Err error }

func (e *CaptureError) Error() string { return e.Err.Error() }

// Unwrap returns the store's error.
func (e *CaptureError) Unwrap() error { return e.Err }

// ListenError is what Open returns when the address cannot be bound.
type ListenError struct {
	Addr string
	Err  error
}

func (e *ListenError) Error() string { return "listen on " + e.Addr + ": " + e.Err.Error() }

// Unwrap returns the network's error.
func (e *ListenError) Unwrap() error { return e.Err }

// Session is a proxy recording: opened (the address bound, the capture
// open, the CA ready), then serving, then stopped.
type Session struct {
	opts     Options
	ln       net.Listener
	db       *store.DB
	cfg      capture.Config
	rec      *capture.Recorder
	proxy    *capture.Proxy
	srv      *http.Server
	serveErr chan error
}

// Open binds the address (first: a port in use leaves no capture behind),
// opens the capture, marks what an earlier recorder left in flight as
// interrupted and makes the CA if one is needed.
func Open(opts Options) (*Session, error) {
	say := opts.Say
	if say == nil {
		say = func(string) {}
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return nil, &ListenError{Addr: opts.Listen, Err: UnwrapOp(err)}
	}
	if mode, ok := tightenCapture(opts.DB); ok {
		say(fmt.Sprintf("warning: %s was open to other users (mode %04o); made it %04o, as tsinspect creates captures: it holds whole conversations", opts.DB, mode, mode&0o700))
	}
	db, err := store.OpenWriter(opts.DB, opts.Durable)
	if err != nil {
		ln.Close()
		return nil, &CaptureError{Err: err}
	}
	if n, err := db.SettleInFlight(context.Background(), "the recorder stopped before the response ended (killed, crashed or power lost)"); err != nil {
		say(fmt.Sprintf("warning: %v", err))
	} else if n > 0 {
		say(fmt.Sprintf("%s left in flight by an earlier recorder that did not finish now marked interrupted", numfmt.Count(int(n), "exchange", "exchanges")))
	}
	s := &Session{opts: opts, ln: ln, db: db, serveErr: make(chan error, 1),
		cfg: capture.Config{Mode: opts.Mode, Upstream: opts.Upstream, Intercept: opts.Intercept, UpstreamRoots: opts.UpstreamRoots, CA: opts.CA}}
	if opts.Mode == capture.ModeMITM && s.cfg.CA == nil && opts.MakeCA != nil {
		ca, err := opts.MakeCA()
		if err != nil {
			s.close()
			return nil, err
		}
		s.cfg.CA = ca
	}
	return s, nil
}

// Addr is the address the proxy listens on.
func (s *Session) Addr() string { return s.ln.Addr().String() }

// CA is the interception CA (nil in reverse mode).
func (s *Session) CA() *capture.CA { return s.cfg.CA }

// InterceptHosts are the hosts the proxy decrypts (mitm).
func (s *Session) InterceptHosts() []string { return capture.InterceptHosts(s.cfg.Intercept) }

// Serve starts the recorder and the proxy, writes the capture's metadata
// (started at startedAt) and serves until Stop.
func (s *Session) Serve(h Hooks, startedAt string) error {
	s.rec = capture.NewRecorder(s.db, h.Errors, h.OnWrite)
	s.cfg.Recorder = s.rec
	s.cfg.OnTunnelError = h.OnTunnelError
	proxy, err := capture.New(s.cfg)
	if err != nil {
		s.rec.Close()
		s.rec = nil
		return err
	}
	s.proxy = proxy
	for k, v := range map[string]string{
		"recorder": "tsinspect " + s.opts.Version, "mode": s.opts.Mode, "started_at": startedAt,
		"upstream": RedactURL(s.opts.Upstream), "listen": s.Addr(),
	} {
		if err := s.db.SetMeta(context.Background(), k, v); err != nil {
			if s.opts.Say != nil {
				s.opts.Say(fmt.Sprintf("cannot write capture metadata (recording goes on): %v", err))
			}
			break
		}
	}
	s.srv = &http.Server{Handler: proxy, ReadHeaderTimeout: 30 * time.Second, ConnContext: proxy.ConnContext}
	go func() { s.serveErr <- s.srv.Serve(s.ln) }()
	return nil
}

// Served is sent the server's error if it stops on its own (never
// http.ErrServerClosed, which Stop causes).
func (s *Session) Served() <-chan error { return s.serveErr }

// Stop stops taking connections, waits up to wait for the exchanges under
// way (those still going are kept in flight: unfinished reports so),
// writes what is queued, records the end and closes the capture.
func (s *Session) Stop(wait time.Duration) (st capture.Stats, unfinished bool) {
	if s.srv != nil {
		s.srv.Close()
	}
	if s.proxy != nil {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		unfinished = s.proxy.Wait(ctx) != nil
		cancel()
		s.proxy.CloseIdle()
	}
	if s.rec != nil {
		st = s.rec.Close()
	}
	_ = s.db.SetMeta(context.Background(), "ended_at", time.Now().UTC().Format(time.RFC3339Nano))
	s.close()
	return st, unfinished
}

// Abandon closes what Open and Serve opened, for a recording that could
// not go on (the client's environment could not be written).
func (s *Session) Abandon() {
	if s.srv != nil {
		s.srv.Close()
	}
	if s.rec != nil {
		s.rec.Close()
	}
	s.close()
}

func (s *Session) close() {
	s.ln.Close()
	s.db.Close()
}

// tightenCapture makes an existing capture file (and its -wal and -shm)
// private to its owner when others could read it, and returns the mode it
// had; false when it needed nothing or could not be changed.
func tightenCapture(path string) (os.FileMode, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 == 0 {
		return 0, false
	}
	if err := os.Chmod(path, fi.Mode().Perm()&0o700); err != nil {
		return 0, false
	}
	for _, side := range []string{path + "-wal", path + "-shm"} {
		if st, err := os.Lstat(side); err == nil && st.Mode().IsRegular() {
			_ = os.Chmod(side, st.Mode().Perm()&0o700)
		}
	}
	return fi.Mode().Perm(), true
}

// RedactURL returns u with the password of its user information replaced
// by "xxxxx", so that a credential given in --upstream is never written to
// the capture or printed. Of a string that does not parse, only what
// follows its last '@' is kept.
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		if i := strings.LastIndex(u, "@"); i >= 0 {
			return u[i+1:]
		}
		return u
	}
	return p.Redacted()
}
