// Package overhead measures what a recording proxy adds to the time to
// first byte and to the arrival of each server-sent event: a local
// upstream answers a small POST /v1/messages with a short SSE stream, and
// one keep-alive client per target sends requests to it directly, through
// the tsinspect binary in reverse mode (recording into a real capture),
// and through mitmdump in reverse mode with streaming on, in turn, so that
// the machine's load falls on every target alike.
package overhead

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Config says what to measure. Zero values are documented defaults.
type Config struct {
	// Tsinspect is the path of a built tsinspect binary; empty leaves that
	// target out.
	Tsinspect string
	// Baseline, when set, is another tsinspect binary (an earlier build)
	// measured in the same rounds as target "baseline".
	Baseline string
	// Mitmdump is the path of mitmdump; empty leaves that target out (see
	// Result.Skipped).
	Mitmdump string
	// Requests is the number of requests sent to each target (default 300).
	Requests int
	// Warmup requests are sent to each target first and not counted
	// (default 20).
	Warmup int
	// MaxTime bounds the measured rounds (default 60 s): the rounds done by
	// then are reported.
	MaxTime time.Duration
	// Gaps are the pauses of the upstream before each event after the
	// first (default 0, 0, 20 ms, 50 ms, 0): the first event is written
	// with the headers.
	Gaps []time.Duration
	// Pause is a sleep after each round (default none): with it, work a
	// proxy does after a response (writing the capture) is done before
	// its next request.
	Pause time.Duration
	// BodySize is the size of the request body in bytes (default 600).
	BodySize int
	// Floor, when set, is a command (and its first arguments) that runs
	// ServeFloor, given the upstream URL as its last argument: a target
	// "go-floor" then shows what one more hop through a bare Go proxy,
	// recording nothing, costs on this machine.
	Floor []string
	// Relay, when set, is a command (and its first arguments) that runs
	// ServeRelay, given the upstream URL as its last argument: a target
	// "tcp-relay" then shows what one more hop costs with no HTTP at all,
	// bytes copied from socket to socket.
	Relay []string
	// Dir holds the capture (default a new temporary directory, removed
	// at the end).
	Dir string
}

// Target is one way to reach the upstream, and what was measured on it.
type Target struct {
	Name string
	// TTFB holds the time from sending each request to the first body
	// byte read, one per counted request.
	TTFB []time.Duration
	// Event holds, per event, the time from the upstream's write to the
	// client's read of that event's last byte, one per counted request.
	Event [][]time.Duration
	// Errors counts requests that failed or whose body differed;
	// FirstError is the first one.
	Errors     int
	FirstError string
	// CPU is the processor time (user and system) the target's process
	// used during the measured rounds, when known (Linux): the direct
	// target has none.
	CPU time.Duration
	pid int
}

// Result is what Measure found.
type Result struct {
	Targets []*Target // direct first
	// Skipped says which targets were left out, and why.
	Skipped []string
	Rounds  int
	Events  int
}

// Measure starts the upstream and the proxies, sends the requests and
// stops everything it started.
func Measure(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Requests <= 0 {
		cfg.Requests = 300
	}
	if cfg.Warmup <= 0 {
		cfg.Warmup = 20
	}
	if cfg.MaxTime <= 0 {
		cfg.MaxTime = 60 * time.Second
	}
	if cfg.Gaps == nil {
		cfg.Gaps = []time.Duration{0, 0, 20 * time.Millisecond, 50 * time.Millisecond, 0}
	}
	if cfg.BodySize <= 0 {
		cfg.BodySize = 600
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "proxyoverhead-")
		if err != nil {
			return Result{}, fmt.Errorf("overhead: temporary directory: %w", err)
		}
		defer os.RemoveAll(d)
		cfg.Dir = d
	}
	up, err := startUpstream(cfg.Gaps)
	if err != nil {
		return Result{}, err
	}
	defer up.close()

	res := Result{Events: len(cfg.Gaps) + 1}
	urls := []string{up.url}
	res.Targets = append(res.Targets, &Target{Name: "direct"})
	var procs []*proc
	defer func() {
		for i := len(procs) - 1; i >= 0; i-- {
			procs[i].stop()
		}
	}()
	// add makes a started proxy the next target.
	add := func(name string, pr *proc, err error) error {
		if err != nil {
			return err
		}
		procs = append(procs, pr)
		urls = append(urls, "http://"+pr.addr)
		res.Targets = append(res.Targets, &Target{Name: name, pid: pr.pid})
		return nil
	}
	if cfg.Tsinspect != "" {
		pr, err := startTsinspect(ctx, cfg.Tsinspect, up.url, filepath.Join(cfg.Dir, "capture.db"))
		if err := add("tsinspect", pr, err); err != nil {
			return Result{}, err
		}
	} else {
		res.Skipped = append(res.Skipped, "tsinspect: no binary given")
	}
	if cfg.Baseline != "" {
		pr, err := startTsinspect(ctx, cfg.Baseline, up.url, filepath.Join(cfg.Dir, "baseline.db"))
		if err := add("baseline", pr, err); err != nil {
			return Result{}, err
		}
	}
	if cfg.Mitmdump != "" {
		pr, err := startMitmdump(ctx, cfg.Mitmdump, up.url)
		if err := add("mitmproxy", pr, err); err != nil {
			return Result{}, err
		}
	} else {
		res.Skipped = append(res.Skipped, "mitmproxy: no mitmdump given (none on PATH, or left out)")
	}
	for _, y := range []struct {
		name string
		cmd  []string
	}{{"go-floor", cfg.Floor}, {"tcp-relay", cfg.Relay}} {
		if len(y.cmd) == 0 {
			continue
		}
		pr, err := startListing(ctx, y.cmd[0], append(slices.Clone(y.cmd[1:]), up.url))
		if err != nil {
			err = fmt.Errorf("overhead: %s: %w", y.name, err)
		}
		if err := add(y.name, pr, err); err != nil {
			return Result{}, err
		}
	}
	clients := make([]*http.Client, len(urls))
	for i := range clients {
		clients[i] = &http.Client{Transport: &http.Transport{
			Proxy:               nil,
			DisableCompression:  true,
			MaxIdleConnsPerHost: 1,
			IdleConnTimeout:     time.Minute,
		}}
		defer clients[i].CloseIdleConnections()
	}
	body := requestBody(cfg.BodySize)
	seq := 0
	round := func(count bool) error {
		for i, t := range res.Targets {
			seq++
			ttfb, events, err := one(ctx, clients[i], urls[i], body, seq, up)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				t.Errors++
				if t.FirstError == "" {
					t.FirstError = err.Error()
				}
				continue
			}
			if count {
				t.TTFB = append(t.TTFB, ttfb)
				if t.Event == nil {
					t.Event = make([][]time.Duration, res.Events)
				}
				for e, d := range events {
					t.Event[e] = append(t.Event[e], d)
				}
			}
		}
		return nil
	}
	for range cfg.Warmup {
		if err := round(false); err != nil {
			return res, err
		}
	}
	for _, t := range res.Targets {
		if t.Errors == cfg.Warmup {
			return res, fmt.Errorf("overhead: every warm-up request to %s failed", t.Name)
		}
		t.Errors = 0
	}
	cpu0 := make([]time.Duration, len(res.Targets))
	for i, t := range res.Targets {
		cpu0[i] = processCPU(t.pid)
	}
	deadline := time.Now().Add(cfg.MaxTime)
	for res.Rounds < cfg.Requests && time.Now().Before(deadline) {
		if err := round(true); err != nil {
			return res, err
		}
		res.Rounds++
		time.Sleep(cfg.Pause)
	}
	for i, t := range res.Targets {
		if c := processCPU(t.pid); c > 0 {
			t.CPU = c - cpu0[i]
		}
	}
	return res, nil
}

// requestBody is a small Messages API request of about n bytes.
func requestBody(n int) []byte {
	head := `{"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"`
	tail := `"}]}`
	pad := max(n-len(head)-len(tail), 1)
	return []byte(head + strings.Repeat("x", pad) + tail)
}

// one sends a request and reads its stream, checking it against what the
// upstream sent.
func one(ctx context.Context, c *http.Client, url string, body []byte, seq int, up *upstream) (time.Duration, []time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("overhead: request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "sk-ant-bench-not-a-key")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	req.Header.Set("X-Bench-Seq", strconv.Itoa(seq))
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("overhead: %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		return 0, nil, fmt.Errorf("overhead: %s: status %d", url, resp.StatusCode)
	}
	var ttfb time.Duration
	var got []byte
	var arrived []time.Time // when got reached each length in ends
	ends := up.ends
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			now := time.Now()
			if got == nil {
				ttfb = now.Sub(start)
			}
			got = append(got, buf[:n]...)
			for len(arrived) < len(ends) && len(got) >= ends[len(arrived)] {
				arrived = append(arrived, now)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, nil, fmt.Errorf("overhead: %s: reading the stream: %w", url, err)
		}
	}
	if !bytes.Equal(got, up.stream) {
		return 0, nil, fmt.Errorf("overhead: %s: the stream differs from what the upstream sent", url)
	}
	sent := up.sentTimes(seq)
	if len(sent) != len(arrived) {
		return 0, nil, fmt.Errorf("overhead: %s: the upstream has no record of request %d", url, seq)
	}
	events := make([]time.Duration, len(sent))
	for i := range sent {
		events[i] = arrived[i].Sub(sent[i])
	}
	return ttfb, events, nil
}

// upstream is the stand-in Messages API.
type upstream struct {
	url    string
	srv    *http.Server
	gaps   []time.Duration
	events [][]byte
	stream []byte // the events, joined
	ends   []int  // the length of stream at the end of each event

	mu   sync.Mutex
	sent map[int][]time.Time // by X-Bench-Seq: when each event was written
}

func startUpstream(gaps []time.Duration) (*upstream, error) {
	u := &upstream{gaps: gaps, sent: map[int][]time.Time{}}
	u.events = append(u.events, []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_bench\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n"))
	for i := range gaps {
		var ev string
		switch {
		case i == 0:
			ev = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
		case i == len(gaps)-1:
			ev = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
		default:
			ev = fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word %d \"}}\n\n", i)
		}
		u.events = append(u.events, []byte(ev))
	}
	for _, e := range u.events {
		u.stream = append(u.stream, e...)
		u.ends = append(u.ends, len(u.stream))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("overhead: upstream: %w", err)
	}
	u.url = "http://" + ln.Addr().String()
	u.srv = &http.Server{Handler: http.HandlerFunc(u.serve), ReadHeaderTimeout: 10 * time.Second}
	go u.srv.Serve(ln)
	return u, nil
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		http.NotFound(w, r)
		return
	}
	io.Copy(io.Discard, r.Body)
	seq, _ := strconv.Atoi(r.Header.Get("X-Bench-Seq"))
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Request-Id", "req_bench")
	fl := w.(http.Flusher)
	times := make([]time.Time, 0, len(u.events))
	for i, ev := range u.events {
		if i > 0 && u.gaps[i-1] > 0 {
			time.Sleep(u.gaps[i-1])
		}
		times = append(times, time.Now())
		w.Write(ev)
		fl.Flush()
	}
	u.mu.Lock()
	u.sent[seq] = times
	u.mu.Unlock()
}

// sentTimes returns (and forgets) when the upstream wrote each event of
// request seq. The handler stores them after its last write; the client
// may read the last event first, so this waits a little for them.
func (u *upstream) sentTimes(seq int) []time.Time {
	for range 200 {
		u.mu.Lock()
		t, ok := u.sent[seq]
		delete(u.sent, seq)
		u.mu.Unlock()
		if ok {
			return t
		}
		time.Sleep(100 * time.Microsecond)
	}
	return nil
}

func (u *upstream) close() {
	u.srv.Close()
}

// ServeFloor runs a bare reverse proxy to upstream on a loopback port: an
// http.Transport and a loop that writes and flushes each read, recording
// nothing, until ctx is done. It
// writes "listening via ADDR" on w first.
func ServeFloor(ctx context.Context, upstream string, w io.Writer) error {
	u, err := url.Parse(upstream)
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	tr := &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConnsPerHost: 16, IdleConnTimeout: time.Minute}
	handler := FloorHandler(u, tr)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(w, "listening via %s\n", ln.Addr())
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("floor: %w", err)
	}
	return nil
}

// FloorHandler is the bare reverse proxy of ServeFloor: it forwards each
// request to upstream through rt and copies the response back, writing and
// flushing each read, and records nothing.
func FloorHandler(upstream *url.URL, rt http.RoundTripper) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		out := r.Clone(r.Context())
		out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = upstream.Scheme, upstream.Host, "", ""
		out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		resp, err := rt.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		fl := w.(http.Flusher)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				w.Write(buf[:n])
				fl.Flush()
			}
			if err != nil {
				return
			}
		}
	})
}

// ServeYardstick runs the yardstick args ask for, when they are
// [program, "-serve-floor" or "-serve-relay", upstream URL], until an
// interrupt or SIGTERM, and reports whether they did. Commands that use
// Yardsticks call it first thing in main.
func ServeYardstick(args []string) (bool, error) {
	if len(args) != 3 {
		return false, nil
	}
	serve := map[string]func(context.Context, string, io.Writer) error{
		"-serve-floor": ServeFloor, "-serve-relay": ServeRelay,
	}[args[1]]
	if serve == nil {
		return false, nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return true, serve(ctx, args[2], os.Stdout)
}

// Yardsticks returns Config.Floor and Config.Relay for a program (self)
// that calls ServeYardstick first thing in main.
func Yardsticks(self string) (floor, relay []string) {
	return []string{self, "-serve-floor"}, []string{self, "-serve-relay"}
}

// ServeRelay runs a TCP relay to upstream's host on a loopback port: each
// accepted connection is joined to a new one to upstream and bytes are
// copied both ways as they arrive, with no HTTP at all, until ctx is done.
// It writes "listening via ADDR" on w first.
func ServeRelay(ctx context.Context, upstream string, w io.Writer) error {
	u, err := url.Parse(upstream)
	if err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	fmt.Fprintf(w, "listening via %s\n", ln.Addr())
	go func() { <-ctx.Done(); ln.Close() }()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("relay: %w", err)
		}
		go func() {
			up, err := net.Dial("tcp", u.Host)
			if err != nil {
				c.Close()
				return
			}
			// Either side ending ends both.
			go func() { io.Copy(up, c); up.Close(); c.Close() }()
			io.Copy(c, up)
			c.Close()
			up.Close()
		}()
	}
}

// startTsinspect runs `tsinspect record --mode reverse` and returns the
// address it listens on.
func startTsinspect(ctx context.Context, bin, upstream, db string) (*proc, error) {
	pr, err := startListing(ctx, bin, []string{"record", "--mode", "reverse", "--listen", "127.0.0.1:0", "--upstream", upstream, "--db", db})
	if err != nil {
		return nil, fmt.Errorf("overhead: tsinspect: %w", err)
	}
	return pr, nil
}

// proc is a proxy started as a process of its own.
type proc struct {
	addr string
	pid  int
	stop func()
}

// startListing runs a command whose first line of output that holds
// " via ADDR" says where it listens, and returns ADDR.
func startListing(ctx context.Context, bin string, args []string) (*proc, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	stop := func() { interrupt(cmd) }
	// The first line says where it listens; the rest (one line an
	// exchange) is read and dropped so the pipe never fills.
	sc := bufio.NewScanner(stdout)
	addr := make(chan string, 1)
	go func() {
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if !sent {
				if _, rest, ok := strings.Cut(line, " via "); ok {
					a, _, _ := strings.Cut(rest, " ")
					addr <- a
					sent = true
				}
			}
		}
		if !sent {
			close(addr)
		}
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			stop()
			return nil, fmt.Errorf("%s did not say where it listens: %s", bin, strings.TrimSpace(stderr.String()))
		}
		return &proc{addr: a, pid: cmd.Process.Pid, stop: stop}, nil
	case <-time.After(15 * time.Second):
		stop()
		return nil, fmt.Errorf("%s did not start within 15 s", bin)
	}
}

// startMitmdump runs mitmdump as a reverse proxy with streaming on, on a
// free loopback port, and waits until it accepts connections.
func startMitmdump(ctx context.Context, bin, upstream string) (*proc, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("overhead: mitmdump port: %w", err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := exec.CommandContext(ctx, bin, "--mode", "reverse:"+upstream, "--listen-host", "127.0.0.1", "--listen-port", port,
		"--set", "stream_large_bodies=1", "--set", "termlog_verbosity=error", "--set", "flow_detail=0", "-q")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("overhead: start mitmdump: %w", err)
	}
	stop := func() { interrupt(cmd) }
	addr := "127.0.0.1:" + port
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return &proc{addr: addr, pid: cmd.Process.Pid, stop: stop}, nil
		}
	}
	stop()
	return nil, fmt.Errorf("overhead: mitmdump did not listen on %s within 30 s: %s", addr, strings.TrimSpace(out.String()))
}

// Quantile returns the q-quantile (0..1) of ds, nearest rank; 0 for none.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// processCPU returns the user and system time process pid has used, from
// /proc; 0 when it cannot be read.
func processCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count from after it.
	_, rest, ok := bytes.Cut(b, []byte(") "))
	if !ok {
		return 0
	}
	f := strings.Fields(string(rest))
	if len(f) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	const ticks = 100 // USER_HZ, 100 on every Linux port
	return time.Duration(ut+st) * time.Second / ticks
}

// interrupt stops a started command: an interrupt, then a kill if it has
// not exited 10 s later.
func interrupt(cmd *exec.Cmd) {
	cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}
