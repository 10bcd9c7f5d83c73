package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tsinspect/tsinspect/capture"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/internal/shell"
	"github.com/tsinspect/tsinspect/otlp"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/recording"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/ui"
)

const recordAbout = `
Record every Messages API exchange into a capture FILE (SQLite), byte for
byte, while the client notices nothing: responses stream through as they
arrive.

With '-- COMMAND ARGS...' tsinspect starts the proxy, runs COMMAND with the
environment set to go through it (the terminal is passed through, so an
interactive 'claude' works), then finishes the capture and exits with
COMMAND's status. Without a command it runs until Ctrl-C and prints the
environment to export in another shell.

Modes:
  mitm     (default) a forward proxy for HTTPS_PROXY. CONNECTs to
           api.anthropic.com and the --intercept hosts are decrypted with
           the local CA ('tsinspect ca'); any other host is tunnelled
           untouched and not recorded. The child gets HTTPS_PROXY and
           NODE_EXTRA_CA_CERTS.
  reverse  plain HTTP on --listen, forwarded to --upstream. The child gets
           ANTHROPIC_BASE_URL, and ENABLE_TOOL_SEARCH=true only when it
           is unset (a value you set is kept).
  bodies   no proxy (for when one cannot be used: TLS policy, Bedrock,
           Vertex, managed machines): the child gets
           OTEL_LOG_RAW_API_BODIES=file:DIR, a private temporary directory
           Claude Code writes each request and final response into; they
           are read into the capture as they appear and DIR is removed at
           the end; --upstream URL sets the child's ANTHROPIC_BASE_URL
           (to reach 'tsinspect standin', say). The capture then has no HTTP headers, no stream timing
           and re-serialised bodies (see 'tsinspect exchanges').

Variables the proxy does not need are never changed: a NODE_EXTRA_CA_CERTS
of yours is bundled with the CA, an ENABLE_TOOL_SEARCH of yours is kept,
and record says what it set.

Credentials (x-api-key, authorization, cookies) are forwarded but never
written: the capture keeps a short SHA-256 fingerprint instead.

With --otlp, each turn is also sent as a span, as soon as it completes, to
an OpenTelemetry collector (the same trace 'tsinspect export --format
otlp' sends; see 'tsinspect export -h'); thread and session spans follow
when recording ends. A collector that is down or slow never slows the
recording: spans wait in a bounded queue, are retried with backoff, and
are dropped (and counted in the summary) when the queue is full.

Examples:
  tsinspect record --db s.db -- claude
  tsinspect record --db s.db --mode reverse -- claude -p "hello"
  tsinspect record --db s.db --listen 127.0.0.1:8080
  tsinspect record --db s.db --ui -- claude -p "use the demo tools"
  tsinspect record --db s.db --otlp http://127.0.0.1:4318 -- claude
  tsinspect record --db s.db --mode bodies -- claude`

type recordFlags struct {
	db, mode, listen, upstream, intercept, caDir, upstreamCA string
	otlp, otlpRedact                                         string
	allowRemote, quiet, ui, durable                          bool
	command                                                  []string
	prices                                                   *pricing.Table
}

func runRecord(env *cliEnv, args []string) error {
	fs := newFlags(env, "record", "--db FILE [flags] [-- COMMAND ARGS...]", recordAbout)
	var f recordFlags
	fs.StringVar(&f.db, "db", "", "capture `FILE` to write (created if missing, appended to if it exists)")
	fs.StringVar(&f.mode, "mode", capture.ModeMITM, "recording `mode`: mitm, reverse or bodies")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:0", "`address` to listen on (port 0: any free port)")
	fs.StringVar(&f.upstream, "upstream", "", "forward to this `URL` (reverse default "+capture.DefaultUpstream+"; mitm: instead of the real host; bodies: the child's ANTHROPIC_BASE_URL, e.g. a stand-in's)")
	fs.StringVar(&f.intercept, "intercept", "", "mitm: extra `hosts` to intercept besides "+capture.DefaultHost+", comma-separated")
	fs.StringVar(&f.caDir, "ca-dir", "", "`directory` of the interception CA (default: tsinspect in your config dir)")
	fs.StringVar(&f.upstreamCA, "upstream-ca", "", "PEM `file` of extra CA certificates to trust for the upstream")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow a --listen address other than loopback (anyone who can reach it can use your API key's traffic path)")
	fs.BoolVar(&f.quiet, "quiet", false, "print only errors, warnings, failures and the final summary (no per-exchange lines)")
	fs.StringVar(&f.otlp, "otlp", "", "also send each turn, as it completes, to the OpenTelemetry collector at this OTLP `URL` (env: the one the OTEL_EXPORTER_OTLP_* variables name); see 'tsinspect export -h'")
	fs.StringVar(&f.otlpRedact, "otlp-redact", string(redact.Default), "redaction `policy` of the --otlp spans: default, strict or off")
	fs.BoolVar(&f.durable, "durable", false, "sync every write to the disk (SQLite synchronous=FULL): nothing committed is lost even to a power loss, at the cost of an fsync per write")
	fs.BoolVar(&f.ui, "ui", false, "show the live timeline while recording (q stops); a COMMAND's output then goes to FILE.out")
	pricesPath := pricesFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	prices, err := loadPrices(*pricesPath)
	if err != nil {
		return err
	}
	f.prices = prices
	f.command = fs.Args()
	if len(f.command) > 0 && !dashDashGiven(args) {
		return usageError("record: unexpected argument %q: put the command after '--', e.g. tsinspect record --db s.db -- claude", f.command[0])
	}
	if f.db == "" {
		return usageError("record: --db FILE is required")
	}
	if f.mode != capture.ModeMITM && f.mode != capture.ModeReverse && f.mode != modeBodies {
		return usageError("record: --mode %q: want mitm, reverse or bodies", f.mode)
	}
	if f.mode == modeBodies {
		for _, name := range []string{"intercept", "upstream-ca", "allow-remote", "listen", "ca-dir"} {
			if flagSet(fs, name) {
				return usageError("record: --%s %v", name, errBodiesFlag)
			}
		}
		if f.otlp != "" {
			return usageError("record: --otlp does not work with --mode bodies yet; send the capture afterwards with 'tsinspect export %s --format otlp'", shell.Quote(f.db))
		}
	}
	if err := checkListen(f.listen, f.allowRemote); err != nil {
		return err
	}
	if err := checkUpstream(f.upstream); err != nil {
		return err
	}
	if err := checkHosts("record", f.intercept); err != nil {
		return err
	}
	if _, err := redact.ParsePolicy(f.otlpRedact); err != nil {
		return usageError("record: --otlp-redact %q: want default, strict or off", f.otlpRedact)
	}
	if flagSet(fs, "otlp-redact") && f.otlp == "" {
		return usageError("record: --otlp-redact goes with --otlp")
	}
	if len(f.command) > 0 {
		if _, err := exec.LookPath(f.command[0]); err != nil {
			return fmt.Errorf("record: command %q not found", f.command[0])
		}
	}
	if f.mode == modeBodies {
		return recordBodies(env, f)
	}
	return record(env, f)
}

// dashDashGiven reports whether args hold a "--" separator.
func dashDashGiven(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return true
		}
	}
	return false
}

func checkListen(addr string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !validPort(port) {
		return usageError("record: --listen %q: want HOST:PORT, e.g. 127.0.0.1:8080", addr)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip != nil && ip.IsLoopback() {
		return nil
	}
	if allowRemote {
		return nil
	}
	return usageError("record: --listen %q is not a loopback address; add --allow-remote if you mean it", addr)
}

// validPort reports whether port is a TCP port number (0: any free one).
func validPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n >= 0 && n <= 65535
}

// checkUpstream refuses an --upstream that is not an http:// or https://
// URL with a host. A password in it is never printed.
func checkUpstream(upstream string) error {
	if upstream == "" {
		return nil
	}
	u, err := url.Parse(upstream)
	if err != nil {
		return usageError("record: --upstream does not parse as a URL: want an http:// or https:// URL")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError("record: --upstream %q: want an http:// or https:// URL", u.Redacted())
	}
	return nil
}

// hostName is a DNS name, or an IP address written as one.
var hostName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$`)

// checkHosts refuses an --intercept list holding something that is not a
// host name (a URL, a port, a space).
func checkHosts(cmd, list string) error {
	for _, h := range splitList(list) {
		if !hostName.MatchString(h) {
			return usageError("%s: --intercept %q: want host names separated by commas (no scheme, port or path), e.g. api.example.com", cmd, h)
		}
	}
	return nil
}

func record(env *cliEnv, f recordFlags) error {
	// Hold SIGINT and SIGTERM for the whole run: the places that wait for
	// them stop listening once they have one, and a second signal sent
	// right after the first must not kill the process before the capture
	// is finished and the summary printed.
	hold := make(chan os.Signal, 8)
	signal.Notify(hold, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(hold)
	var otlpCfg otlp.Config
	if f.otlp != "" {
		c, err := otlpConfig("record", f.otlp)
		if err != nil {
			return err
		}
		otlpCfg = c
	}
	opts := recording.Options{DB: f.db, Durable: f.durable, Mode: f.mode, Listen: f.listen, Upstream: f.upstream,
		Intercept: splitList(f.intercept), Version: version,
		Say: func(line string) { fmt.Fprintf(env.stderr, "tsinspect: %s\n", line) }}
	if f.upstreamCA != "" {
		roots, err := recording.ReadCerts(f.upstreamCA)
		if err != nil {
			return err
		}
		opts.UpstreamRoots = roots
	}
	// An existing CA is checked before the capture file is touched: one
	// that does not permit the hosts is refused, not replaced. A CA is
	// made on first use only once the capture has opened.
	if f.mode == capture.ModeMITM {
		ca, err := loadCAWith(f.caDir, f.intercept, capture.LoadCA)
		if err != nil && !errors.Is(err, capture.ErrNoCA) {
			return err
		}
		opts.CA = ca
		opts.MakeCA = func() (*capture.CA, error) {
			ca, err := loadCA(f.caDir, f.intercept)
			if err != nil {
				return nil, err
			}
			if ca.Created && !f.quiet {
				fmt.Fprintf(env.stderr, "tsinspect: made a new interception CA %s (SHA-256 %s)\n", ca.CertPath, ca.Fingerprint())
			}
			return ca, nil
		}
	}
	rs, err := recording.Open(opts)
	var ce *recording.CaptureError
	var le *recording.ListenError
	switch {
	case errors.As(err, &ce):
		return captureError("record", f.db, ce.Err)
	case errors.As(err, &le):
		return fmt.Errorf("record: %w", err)
	case err != nil:
		return err
	}
	addr := rs.Addr()

	var flows func(*exchange.Exchange)
	var wake chan struct{} // --ui: the live view looks at each write at once
	var onTunnel func(string, error)
	turns := recording.NewTurnLog(f.prices)
	// Where tsinspect's lines go while a command runs: standard error, or,
	// when the command has the terminal (a full-screen program such as an
	// interactive claude), FILE.log, so that no line lands in its screen.
	lines := env.stderr
	var logPath string
	if len(f.command) > 0 && !f.ui && interactive(env, f.command) {
		logPath = f.db + ".log"
		lf, err := recording.OpenCommandOutput(logPath)
		if err != nil {
			rs.Abandon()
			return fmt.Errorf("record: %w", err)
		}
		defer lf.Close()
		lines = lf
		fmt.Fprintf(env.stderr, "tsinspect: %s has the terminal: tsinspect's lines while it runs (each turn's tokens and cost, failures) go to %s (tail -f %s in another terminal)\n",
			filepath.Base(f.command[0]), logPath, shell.Quote(logPath))
	}
	switch {
	case f.ui:
		wake = make(chan struct{}, 1)
		flows = func(*exchange.Exchange) {
			select {
			case wake <- struct{}{}:
			default: // one already pending
			}
		}
	case len(f.command) == 0 && !f.quiet:
		// Only the proxy runs here: log each exchange as it completes, as
		// a forward proxy's console does, with what a Messages turn cost.
		// (With a command, the terminal is the command's; with --ui, the
		// timeline's.)
		flows = func(ex *exchange.Exchange) {
			if ex.State != exchange.StateInFlight {
				line := recording.FlowLine(ex)
				if d := turns.Describe(ex); d != "" {
					line += " · " + d
				}
				fmt.Fprintln(env.stdout, line)
			}
		}
	default:
		// Failures are told as they happen, even with --quiet, at most a
		// few lines every ten seconds; the summary counts them all. Each
		// turn's tokens and cost too, but with --quiet.
		fails := recording.NewFailureLog(lines)
		flows = func(ex *exchange.Exchange) {
			fails.Exchange(ex)
			if !f.quiet {
				if d := turns.Describe(ex); d != "" {
					fmt.Fprintf(lines, "tsinspect: %s\n", d)
				}
			}
		}
		onTunnel = fails.Tunnel
	}
	if len(f.command) == 0 && !f.ui && !f.quiet {
		onTunnel = recording.NewFailureLog(env.stderr).Tunnel
	}
	started := time.Now()
	startedAt := started.UTC().Format(time.RFC3339Nano)
	var live *liveOTLP
	if f.otlp != "" {
		policy, _ := redact.ParsePolicy(f.otlpRedact)
		live = startLiveOTLP(otlpCfg, otlp.Seed(startedAt, time.Time{}), policy)
		logFlow := flows
		flows = func(ex *exchange.Exchange) {
			live.live.Observe(ex)
			if logFlow != nil {
				logFlow(ex)
			}
		}
		if !f.quiet {
			fmt.Fprintf(env.stderr, "tsinspect: sending each turn to %s as it completes\n", live.url)
		}
	}
	if err := rs.Serve(recording.Hooks{OnWrite: flows, OnTunnelError: onTunnel, Errors: lines}, startedAt); err != nil {
		rs.Abandon()
		if live != nil {
			live.finish(env)
		}
		return err
	}

	caPath := ""
	if rs.CA() != nil {
		caPath = rs.CA().CertPath
	}
	plan := recording.PlanChild(f.mode, addr, caPath, os.Environ())
	if plan.MergeCA != "" {
		bundle, err := recording.WriteCABundle(plan.MergeCA, caPath)
		if err != nil {
			rs.Abandon()
			return err
		}
		defer os.Remove(bundle)
		plan.Set = append(plan.Set, "NODE_EXTRA_CA_CERTS="+bundle)
	}
	childEnv := plan.Set
	warnings := append(recording.Warnings(f.mode, f.upstream, rs.InterceptHosts(), os.Environ()), plan.Warnings...)
	for _, w := range warnings {
		fmt.Fprintf(env.stderr, "tsinspect: warning: %s\n", w)
	}
	if !f.quiet {
		for _, n := range plan.Notes {
			fmt.Fprintf(env.stderr, "tsinspect: %s\n", n)
		}
	}
	status := 0
	if f.ui {
		status = recordWithUI(env, f, addr, childEnv, wake)
	} else if len(f.command) > 0 {
		if !f.quiet {
			fmt.Fprintf(env.stderr, "tsinspect: recording %s traffic via %s into %s\n", f.mode, addr, f.db)
		}
		status, err = recording.RunChild(f.command, childEnv, env.stdin, env.stdout, env.stderr)
		if err != nil {
			fmt.Fprintf(env.stderr, "tsinspect: %v\n", err)
			status = 1
		}
	} else {
		// Catch the signals before telling anyone where the proxy is, so
		// that an interrupt sent at once still flushes the capture.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		fmt.Fprintf(env.stdout, "tsinspect: recording %s traffic via %s into %s; Ctrl-C to stop.\nIn the shell that runs the client:\n", f.mode, addr, f.db)
		for _, kv := range recording.ExportsFor(f.mode, childEnv) {
			fmt.Fprintf(env.stdout, "  export %s\n", recording.ExportLine(kv))
		}
		select {
		case <-sig:
		case err := <-rs.Served():
			if !errors.Is(err, http.ErrServerClosed) {
				fmt.Fprintf(env.stderr, "tsinspect: proxy stopped: %v\n", err)
				status = 1
			}
		}
		signal.Stop(sig)
	}

	st, unfinished := rs.Stop(5 * time.Second)
	if unfinished {
		fmt.Fprintln(env.stderr, "tsinspect: some exchanges were still under way; they are kept as in_flight")
	}
	printSummary(env, f.db, st, time.Since(started), turns.Summary())
	if logPath != "" {
		fmt.Fprintf(env.stderr, "  what tsinspect said while %s ran is in %s\n", filepath.Base(f.command[0]), logPath)
	}
	if live != nil {
		live.finish(env)
	}
	if st.Exchanges == 0 && len(f.command) > 0 {
		fmt.Fprintf(env.stderr, "tsinspect: nothing was recorded: %s sent no request through the proxy to an intercepted host\n", filepath.Base(f.command[0]))
	}
	if status != 0 {
		return &exitError{code: status}
	}
	return nil
}

// interactive reports whether a command run under record takes the
// terminal for itself: its standard input is a terminal, and it is not
// Claude Code's print mode (claude -p / --print answers once and exits).
func interactive(env *cliEnv, command []string) bool {
	in, ok := env.stdin.(*os.File)
	if !ok || !capture.IsTerminal(in) {
		return false
	}
	for _, a := range command[1:] {
		if a == "-p" || a == "--print" {
			return false
		}
		if a == "--" {
			break
		}
	}
	return true
}

// printSummary says what a recording left in db; cost, when not "", is
// what its turns cost.
func printSummary(env *cliEnv, db string, st capture.Stats, elapsed time.Duration, cost string) {
	fmt.Fprintf(env.stderr, "tsinspect: recorded %s in %s to %s\n", numfmt.Count(st.Exchanges, "exchange", "exchanges"), elapsed.Round(time.Second), db)
	fmt.Fprintf(env.stderr, "  complete %d, failed or aborted %d, still in flight %d\n", st.Complete, st.Failed, st.Exchanges-st.Complete-st.Failed)
	fmt.Fprintf(env.stderr, "  request bodies %s, response bodies %s\n", numfmt.Bytes(st.ReqBytes), numfmt.Bytes(st.RespBytes))
	if st.RecordErrors > 0 {
		fmt.Fprintf(env.stderr, "  %s to the capture FAILED (first: %s); the traffic was not affected\n", numfmt.Count(st.RecordErrors, "write", "writes"), st.FirstRecordEr)
		if st.Lost > 0 {
			fmt.Fprintf(env.stderr, "  %s lost: not in the capture, or left there in flight\n", numfmt.Count(st.Lost, "exchange", "exchanges"))
		}
	}
	if st.Exchanges == 0 {
		return
	}
	if cost != "" {
		fmt.Fprintf(env.stderr, "  cost %s\n", cost)
	}
	// Reading a capture takes a few seconds per thousand long turns; past
	// summaryLimit bytes of capture, the summary does not keep the user
	// waiting for it.
	if fi, err := os.Stat(db); err != nil || fi.Size() > summaryLimit {
		fmt.Fprintf(env.stderr, "  next: tsinspect open %s\n", shell.Quote(db))
		return
	}
	if s, err := loadSession(db, nil); err == nil && len(s.Turns) > 0 {
		fmt.Fprintf(env.stderr, "  the capture holds %s in %s; %s\n", numfmt.Count(len(s.Turns), "Messages turn", "Messages turns"),
			numfmt.Count(len(s.Threads), "thread", "threads"), flagCounts(s))
		fmt.Fprintf(env.stderr, "  next: tsinspect open %s   (or turns, searches, report)\n", shell.Quote(db))
		return
	}
	fmt.Fprintf(env.stderr, "  next: tsinspect exchanges %s\n", shell.Quote(db))
}

// summaryLimit is the largest capture file whose turns the end-of-recording
// summary counts: bodies are compressed, and 16 MB holds about a thousand
// turns of a long session.
const summaryLimit = 16 << 20

// flagCounts says how many flags of each kind a session raised, in the
// order of timeline.Kinds: "flags: empty_search ×1, cache_break ×2", or
// "no flags".
func flagCounts(s *timeline.Session) string {
	n := map[string]int{}
	for _, t := range s.Turns {
		for _, f := range t.Flags {
			n[f.Kind]++
		}
	}
	var parts []string
	for _, k := range timeline.Kinds() {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, n[k]))
		}
	}
	if len(parts) == 0 {
		return "no flags"
	}
	return "flags: " + strings.Join(parts, ", ")
}

// recordWithUI shows the live timeline over the capture being written
// while the proxy records, until the user quits. A command runs beside it
// with its output sent to FILE.out (it cannot share the screen); its exit
// status is returned. Without a command, quitting the UI stops recording.
func recordWithUI(env *cliEnv, f recordFlags, addr string, childEnv []string, wake <-chan struct{}) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The terminal's Ctrl-C is a key to the UI; SIGTERM and SIGHUP from
	// outside end the UI so that the capture is flushed as on q.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	go func() {
		select {
		case <-sig:
			cancel()
		case <-ctx.Done():
		}
	}()
	if len(f.command) == 0 {
		// The client runs elsewhere: it needs these. (A command gets them
		// itself; printed then, they would only reappear under the UI
		// once it quits.)
		for _, kv := range childEnv {
			fmt.Fprintf(env.stderr, "  export %s\n", recording.ExportLine(kv))
		}
	}
	childDone := make(chan int, 1)
	notes := make(chan string, 1)
	if len(f.command) > 0 {
		outPath := f.db + ".out"
		out, err := recording.OpenCommandOutput(outPath)
		if err != nil {
			fmt.Fprintf(env.stderr, "tsinspect: record: %v\n", err)
			return 1
		}
		defer out.Close()
		childEnvIO := &cliEnv{stdin: strings.NewReader(""), stdout: out, stderr: out}
		go func() {
			st, err := recording.RunChild(f.command, childEnv, childEnvIO.stdin, childEnvIO.stdout, childEnvIO.stderr)
			if err != nil {
				fmt.Fprintf(out, "tsinspect: %v\n", err)
			}
			childDone <- st
			notes <- fmt.Sprintf("%s exited with status %d; q quits", filepath.Base(f.command[0]), st)
		}()
		defer fmt.Fprintf(env.stderr, "tsinspect: the command's output is in %s\n", outPath)
	}
	title := fmt.Sprintf("recording %s via %s", filepath.Base(f.db), addr)
	if err := ui.RunLive(ctx, f.db, ui.Options{Title: title, Notes: notes, Wake: wake}); err != nil {
		fmt.Fprintf(env.stderr, "tsinspect: %v\n", err)
		return 1
	}
	if len(f.command) == 0 {
		return 0
	}
	select {
	case st := <-childDone:
		return st
	default:
		fmt.Fprintln(env.stderr, "tsinspect: waiting for the command to finish (Ctrl-C stops it)")
		return <-childDone
	}
}
