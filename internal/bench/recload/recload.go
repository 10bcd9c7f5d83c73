// Package recload drives a real 'tsinspect record --mode reverse' process
// with the requests of a generated long session (fixtures/longsession) at
// a fixed rate, against an upstream in this process that answers each
// request with the session's streamed reply, and measures the recorder:
// its resident memory through the run, how far its writer falls behind
// (the time from an exchange ending at the client to its final state being
// in the capture), and the capture's size against the bytes recorded.
//
// Requests are sent one after the other, as a client's conversation does,
// each at its scheduled time (or at once, when the one before ran late), so
// capture row N is request N.
package recload

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures/longsession"
	"github.com/tsinspect/tsinspect/store"
)

// Options shape a run.
type Options struct {
	// Bin is the tsinspect binary to run (see Build).
	Bin string
	// Dir holds the capture and the recorder's output.
	Dir string
	// Turns is the number of requests to send; default 1,000.
	Turns int
	// Rate is the number of requests started per second; default 10.
	Rate float64
	// CompactEvery compacts the generated main thread after that many of
	// its turns, which bounds the size of its requests: with the default
	// 6 KB tool results, 350 keeps the largest near 1 MB.
	CompactEvery int
	// Timeout bounds the whole run; default Turns/Rate + 2 minutes.
	Timeout time.Duration
}

// Result is what a run measured.
type Result struct {
	Turns        int           // requests sent and answered
	Failed       int           // requests that did not get a 200 and the whole reply
	Driving      time.Duration // from the first request to the last reply
	Rate         float64       // requests completed per second while driving
	MaxReqBytes  int           // largest request body
	LateReqBytes int           // mean request body of the last tenth of the run
	ClientP50    time.Duration // request sent to reply read, through the proxy
	ClientP99    time.Duration
	LagP50       time.Duration // reply read to final state in the capture
	LagP99       time.Duration
	LagMax       time.Duration
	FinalLag     time.Duration // last reply read to everything in the capture
	MaxBacklog   int           // most exchanges ended but not yet in the capture
	PeakRSS      int64         // highest VmRSS sampled, bytes
	HWM          int64         // VmHWM just before the recorder was stopped
	RawBytes     int64         // request and response bodies sent
	CaptureBytes int64         // capture file (and WAL) after the recorder exited
	Summary      string        // the recorder's last lines of output
}

// KeptUp reports whether the writer kept up: every exchange reached the
// capture within a second of the last reply, and none failed.
func (r Result) KeptUp() bool { return r.Failed == 0 && r.FinalLag <= time.Second }

// Build compiles tsinspect from the module at root into dir and returns
// the binary's path.
func Build(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "tsinspect")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/tsinspect")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("recload: build: %w\n%s", err, out)
	}
	return bin, nil
}

// Setup readies a bench command run from the module root: dir (a new
// temporary directory, removed by cleanup, when empty), tsinspect built
// into it, and the demo capture's requests to build sessions on.
func Setup(ctx context.Context, dir, prefix string) (bin, outDir string, base longsession.Base, cleanup func(), err error) {
	cleanup = func() {}
	if dir == "" {
		d, err := os.MkdirTemp("", prefix)
		if err != nil {
			return "", "", base, cleanup, err
		}
		cleanup = func() { os.RemoveAll(d) }
		dir = d
	}
	if bin, err = Build(ctx, ".", dir); err == nil {
		base, err = DemoBase(".")
	}
	if err != nil {
		cleanup()
		return "", "", base, func() {}, err
	}
	return bin, dir, base, cleanup, nil
}

// DemoBase reads the real requests a generated session is built on from
// the demo capture of the module at root: its first main-thread request
// with tools and its first subagent request.
func DemoBase(root string) (longsession.Base, error) {
	db, err := store.OpenReadOnly(filepath.Join(root, "fixtures", "democapture", "demo.db"))
	if err != nil {
		return longsession.Base{}, fmt.Errorf("recload: demo capture: %w", err)
	}
	defer db.Close()
	exs, err := db.Exchanges(context.Background())
	if err != nil {
		return longsession.Base{}, fmt.Errorf("recload: demo capture: %w", err)
	}
	b, err := longsession.BaseFrom(exs)
	if err != nil {
		return b, fmt.Errorf("recload: demo capture: %w", err)
	}
	return b, nil
}

// Turn is one generated request and the reply the upstream sends.
type Turn struct {
	Headers []exchange.Header
	Req     []byte
	Resp    []byte
	Status  int
}

// sink hands the generated exchanges over one at a time.
type sink struct {
	ch chan<- Turn
}

func (s sink) Insert(ctx context.Context, ex *exchange.Exchange) error { return nil }

func (s sink) Update(ctx context.Context, ex *exchange.Exchange) error {
	select {
	case s.ch <- Turn{Headers: ex.ReqHeaders, Req: ex.ReqBody, Resp: ex.RespBody, Status: ex.Status}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Generate streams the turns of a generated session on the returned
// channel, closed at the end or when ctx is done; the error, if any, is
// sent on errc after the channel closes.
func Generate(ctx context.Context, base longsession.Base, o longsession.Options) (<-chan Turn, <-chan error) {
	ch := make(chan Turn, 2)
	errc := make(chan error, 1)
	go func() {
		_, err := longsession.Generate(ctx, sink{ch: ch}, base, o)
		close(ch)
		errc <- err
	}()
	return ch, errc
}

// upstream answers POST /v1/messages with the reply registered for the
// request's sequence number.
type upstream struct {
	mu      sync.Mutex
	replies map[string]Turn
}

const seqHeader = "X-Recload-Seq"

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	u.mu.Lock()
	t, ok := u.replies[r.Header.Get(seqHeader)]
	delete(u.replies, r.Header.Get(seqHeader))
	u.mu.Unlock()
	if !ok {
		http.Error(w, "no reply for this request", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Request-Id", "req_recload_"+r.Header.Get(seqHeader))
	w.WriteHeader(t.Status)
	_, _ = w.Write(t.Resp)
}

// Run starts the recorder and drives it; see the package comment.
func Run(ctx context.Context, base longsession.Base, o Options) (Result, error) {
	if o.Turns <= 0 {
		o.Turns = 1000
	}
	if o.Rate <= 0 {
		o.Rate = 10
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Duration(float64(o.Turns)/o.Rate*float64(time.Second)) + 2*time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var res Result

	up := &upstream{replies: map[string]Turn{}}
	upLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return res, fmt.Errorf("recload: upstream: %w", err)
	}
	upSrv := &http.Server{Handler: up, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = upSrv.Serve(upLn) }()
	defer upSrv.Close()

	// A free port for the proxy.
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return res, fmt.Errorf("recload: proxy port: %w", err)
	}
	proxyAddr := pl.Addr().String()
	pl.Close()

	db := filepath.Join(o.Dir, "recload.db")
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return res, fmt.Errorf("recload: %w", err)
		}
	}
	logPath := filepath.Join(o.Dir, "recload.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return res, fmt.Errorf("recload: %w", err)
	}
	defer logf.Close()
	rec := exec.Command(o.Bin, "record", "--mode", "reverse", "--quiet", "--listen", proxyAddr,
		"--upstream", "http://"+upLn.Addr().String(), "--db", db)
	rec.Stdout, rec.Stderr = logf, logf
	if err := rec.Start(); err != nil {
		return res, fmt.Errorf("recload: start record: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- rec.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = rec.Process.Kill()
			<-exited
		}
	}()
	if err := waitListening(ctx, proxyAddr); err != nil {
		return res, err
	}

	// Memory of the recorder, sampled through the run.
	rssDone := make(chan struct{})
	var rssWG sync.WaitGroup
	rssWG.Add(1)
	go func() {
		defer rssWG.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if rss, _, err := memory(rec.Process.Pid); err == nil {
				res.PeakRSS = max(res.PeakRSS, rss)
			}
			select {
			case <-rssDone:
				return
			case <-t.C:
			}
		}
	}()

	probe, err := newLagProbe(db)
	if err != nil {
		return res, err
	}
	defer probe.close()

	turns, errc := Generate(ctx, base, longsession.Options{Turns: o.Turns, Seed: 1, CompactEvery: o.CompactEvery})
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}
	url := "http://" + proxyAddr + "/v1/messages?beta=true"
	interval := time.Duration(float64(time.Second) / o.Rate)
	var (
		done    []time.Time // reply read, per request
		took    []time.Duration
		reqSize []int
	)
	var mu sync.Mutex // guards done against the probe
	probe.mu = &mu
	start := time.Now()
	stopProbe := make(chan struct{})
	probeDone := make(chan struct{})
	go func() {
		defer close(probeDone)
		probe.run(stopProbe, func() int { return len(done) }, &res.MaxBacklog)
	}()
	seq := 0
	for t := range turns {
		if seq >= o.Turns {
			break
		}
		if wait := time.Until(start.Add(time.Duration(seq) * interval)); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		key := strconv.Itoa(seq)
		up.mu.Lock()
		up.replies[key] = t
		up.mu.Unlock()
		req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(t.Req))
		if err != nil {
			return res, fmt.Errorf("recload: %w", err)
		}
		for _, h := range t.Headers {
			switch strings.ToLower(h.Name) {
			case "content-length", "host", "connection", "accept-encoding", "transfer-encoding":
				continue
			}
			req.Header.Add(h.Name, h.Value)
		}
		req.Header.Set(seqHeader, key)
		sent := time.Now()
		ok := false
		resp, err := client.Do(req)
		if err == nil {
			n, cerr := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ok = cerr == nil && resp.StatusCode == http.StatusOK && n == int64(len(t.Resp))
		}
		end := time.Now()
		if !ok {
			res.Failed++
		}
		mu.Lock()
		done = append(done, end)
		mu.Unlock()
		took = append(took, end.Sub(sent))
		reqSize = append(reqSize, len(t.Req))
		res.RawBytes += int64(len(t.Req) + len(t.Resp))
		res.MaxReqBytes = max(res.MaxReqBytes, len(t.Req))
		seq++
	}
	cancelGen := ctx.Err() != nil
	res.Turns = seq
	if len(done) > 0 {
		res.Driving = done[len(done)-1].Sub(start)
		res.Rate = float64(len(done)) / res.Driving.Seconds()
	}
	// Wait (bounded) for the capture to hold every final state.
	wait := time.Now().Add(30 * time.Second)
	for probe.count() < len(done) && time.Now().Before(wait) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	close(stopProbe)
	<-probeDone
	if _, hwm, err := memory(rec.Process.Pid); err == nil {
		res.HWM = hwm
	}
	close(rssDone)
	rssWG.Wait()
	if !cancelGen {
		// Drain the generator so it can finish.
		go func() {
			for range turns {
			}
		}()
	}
	seen := probe.seenTimes()
	var lags []time.Duration
	for i, d := range done {
		if i >= len(seen) {
			lags = append(lags, time.Since(d))
			continue
		}
		lags = append(lags, max(seen[i].Sub(d), 0))
	}
	if n := len(done); n > 0 {
		if len(seen) >= n {
			res.FinalLag = max(seen[n-1].Sub(done[n-1]), 0)
		} else {
			res.FinalLag = time.Since(done[n-1])
		}
		res.LagP50, res.LagP99, res.LagMax = quantile(lags, 0.5), quantile(lags, 0.99), slices.Max(lags)
		res.ClientP50, res.ClientP99 = quantile(took, 0.5), quantile(took, 0.99)
		late := reqSize[n-n/10-1:]
		sum := 0
		for _, s := range late {
			sum += s
		}
		res.LateReqBytes = sum / len(late)
	}

	// Stop the recorder as Ctrl-C does and let it finish the capture.
	stopped = true
	_ = rec.Process.Signal(syscall.SIGINT)
	select {
	case err := <-exited:
		if err != nil {
			return res, fmt.Errorf("recload: record exited: %w (see %s)", err, logPath)
		}
	case <-time.After(60 * time.Second):
		_ = rec.Process.Kill()
		<-exited
		return res, fmt.Errorf("recload: record did not stop within 60 s")
	}
	for _, p := range []string{db, db + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			res.CaptureBytes += fi.Size()
		}
	}
	if out, err := os.ReadFile(logPath); err == nil {
		res.Summary = strings.TrimSpace(string(out))
	}
	cancel()
	if cancelGen {
		return res, fmt.Errorf("recload: stopped after %d of %d requests: %w", seq, o.Turns, context.DeadlineExceeded)
	}
	select {
	case err := <-errc:
		if err != nil && !errors.Is(err, context.Canceled) {
			return res, fmt.Errorf("recload: generate: %w", err)
		}
	default:
	}
	return res, nil
}

func waitListening(ctx context.Context, addr string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("recload: record never listened on %s: %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// memory reads a process's VmRSS and VmHWM, in bytes.
func memory(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("recload: memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("recload: memory: %w", err)
		}
		if k == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	return rss, hwm, sc.Err()
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// lagProbe polls the capture for the exchanges whose final state has been
// written, in ID order, and notes when each was first seen.
type lagProbe struct {
	path string
	db   *store.DB
	mu   *sync.Mutex // guards what the driver appends
	smu  sync.Mutex
	seen []time.Time // by ID-1
}

func newLagProbe(path string) (*lagProbe, error) {
	return &lagProbe{path: path}, nil
}

func (p *lagProbe) open() error {
	if p.db != nil {
		return nil
	}
	if _, err := os.Stat(p.path); err != nil {
		return fmt.Errorf("recload: probe: %w", err)
	}
	db, err := store.OpenReadOnly(p.path)
	if err != nil {
		return fmt.Errorf("recload: probe: %w", err)
	}
	p.db = db
	return nil
}

// run polls every 10 ms until stop, tracking the largest number of
// exchanges ended at the client (ended()) but not in the capture.
func (p *lagProbe) run(stop <-chan struct{}, ended func() int, backlog *int) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if err := p.poll(); err == nil {
			p.mu.Lock()
			n := ended()
			p.mu.Unlock()
			*backlog = max(*backlog, n-p.count())
		}
		select {
		case <-stop:
			_ = p.poll()
			return
		case <-t.C:
		}
	}
}

func (p *lagProbe) poll() error {
	if err := p.open(); err != nil {
		return err
	}
	now := time.Now()
	next := int64(p.count()) + 1
	sums, err := p.db.Summaries(context.Background(), next-1)
	if err != nil {
		return fmt.Errorf("recload: probe: %w", err)
	}
	p.smu.Lock()
	defer p.smu.Unlock()
	for _, s := range sums {
		if s.ID != int64(len(p.seen))+1 || s.State == exchange.StateInFlight {
			break // an earlier one is still in flight
		}
		p.seen = append(p.seen, now)
	}
	return nil
}

func (p *lagProbe) count() int {
	p.smu.Lock()
	defer p.smu.Unlock()
	return len(p.seen)
}

func (p *lagProbe) seenTimes() []time.Time {
	p.smu.Lock()
	defer p.smu.Unlock()
	return slices.Clone(p.seen)
}

func (p *lagProbe) close() {
	if p.db != nil {
		p.db.Close()
	}
}

// Print writes the figures of a run, one a line.
func Print(w io.Writer, r Result) {
	mb := func(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }
	ms := func(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
	fmt.Fprintf(w, "requests            %d (%d failed) in %.1f s: %.2f/s\n", r.Turns, r.Failed, r.Driving.Seconds(), r.Rate)
	fmt.Fprintf(w, "request body        largest %s, last tenth mean %s\n", mb(int64(r.MaxReqBytes)), mb(int64(r.LateReqBytes)))
	fmt.Fprintf(w, "through the proxy   p50 %s, p99 %s\n", ms(r.ClientP50), ms(r.ClientP99))
	fmt.Fprintf(w, "writer lag          p50 %s, p99 %s, max %s; after the last reply %s\n", ms(r.LagP50), ms(r.LagP99), ms(r.LagMax), ms(r.FinalLag))
	fmt.Fprintf(w, "backlog             at most %d exchanges ended but not yet in the capture\n", r.MaxBacklog)
	fmt.Fprintf(w, "record RSS          peak sampled %s, VmHWM %s\n", mb(r.PeakRSS), mb(r.HWM))
	ratio := 0.0
	if r.CaptureBytes > 0 {
		ratio = float64(r.RawBytes) / float64(r.CaptureBytes)
	}
	fmt.Fprintf(w, "capture             %s for %s of bodies (%.0f×)\n", mb(r.CaptureBytes), mb(r.RawBytes), ratio)
	fmt.Fprintf(w, "kept up             %v\n", r.KeptUp())
	if r.Summary != "" {
		fmt.Fprintf(w, "record said:\n%s\n", r.Summary)
	}
}
