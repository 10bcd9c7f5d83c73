package recording

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tsinspect/tsinspect/capture"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/listenaddr"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/internal/shell"
	"github.com/tsinspect/tsinspect/otlp"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline"
)

// ModeBodies is the record mode that reads what Claude Code writes with
// OTEL_LOG_RAW_API_BODIES instead of standing in the traffic's way.
const ModeBodies = "bodies"

// Config is one run of 'tsinspect record', its flags checked.
type Config struct {
	// DB is the capture file; Durable syncs every write to the disk.
	DB      string
	Durable bool
	// Mode is capture.ModeMITM, capture.ModeReverse or ModeBodies.
	Mode string
	// Listen, Upstream and Intercept are as in Options; CADir is the
	// directory of the interception CA ("" for the default), UpstreamCA a
	// PEM file of extra certificates to trust for the upstream.
	Listen, Upstream, CADir, UpstreamCA string
	Intercept                           []string
	// Quiet keeps only errors, warnings, failures and the summary; UI
	// shows the live timeline (RunUI) while recording.
	Quiet, UI bool
	// Command is the client to run through the recorder, nil for none.
	Command []string
	// Prices prices the turns' lines and the summary.
	Prices *pricing.Table
	// OTLP, when not nil, is the collector each turn is also sent to as it
	// completes, redacted under OTLPPolicy.
	OTLP       *otlp.Config
	OTLPPolicy redact.Policy
	// Version is tsinspect's.
	Version string
	// The streams of the command: the child's, and where tsinspect's own
	// lines go.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// RunUI shows the live timeline of the capture being written until the
	// user quits or ctx ends; wake (nil in bodies mode) is signalled after
	// each write, notes carries lines to show.
	RunUI func(ctx context.Context, title string, notes <-chan string, wake <-chan struct{}) error
	// FollowBodies makes what reads, in bodies mode, the directory dir
	// Claude Code writes its bodies into (secrets are values to keep out
	// of the capture) into sink; ended is called for each exchange that
	// ends, failed for the first failure.
	FollowBodies func(dir string, sink *store.DB, secrets []string, ended func(*exchange.Exchange), failed func(error)) BodiesFollower
}

// BodiesFollower copies the exchanges of a raw-bodies directory into the
// capture as they appear (importer/rawbodies.Follower is one).
type BodiesFollower interface {
	// Poll reads what is new; final counts what is still missing as
	// missing.
	Poll(ctx context.Context, final bool)
	// Settled reports whether every request read has its answer.
	Settled() bool
	// Stats counts what was copied.
	Stats() BodiesStats
}

// BodiesStats counts what a BodiesFollower copied (the fields of
// rawbodies.FollowStats, in its order).
type BodiesStats struct {
	Exchanges, Complete, Failed int
	ReqBytes, RespBytes         int64
	WriteErrors                 int
	FirstError                  string
	BadLines                    int
	FirstBad                    string
	Redacted                    int
}

// Record records until the command ends, or, without one, until SIGINT
// or SIGTERM (or the UI quits), then prints a summary on Stderr. It
// returns the exit status: the command's, or 1 when the proxy stopped.
func Record(cfg Config) (int, error) {
	if cfg.Mode == ModeBodies {
		return recordBodies(cfg)
	}
	return record(cfg)
}

func record(f Config) (int, error) {
	// Hold SIGINT and SIGTERM for the whole run: the places that wait for
	// them stop listening once they have one, and a second signal sent
	// right after the first must not kill the process before the capture
	// is finished and the summary printed.
	hold := make(chan os.Signal, 8)
	signal.Notify(hold, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(hold)
	opts := Options{DB: f.DB, Durable: f.Durable, Mode: f.Mode, Listen: f.Listen, Upstream: f.Upstream,
		Intercept: f.Intercept, Version: f.Version,
		Say: func(line string) { fmt.Fprintf(f.Stderr, "tsinspect: %s\n", line) }}
	if f.UpstreamCA != "" {
		roots, err := ReadCerts(f.UpstreamCA)
		if err != nil {
			return 0, err
		}
		opts.UpstreamRoots = roots
	}
	// An existing CA is checked before the capture file is touched: one
	// that does not permit the hosts is refused, not replaced. A CA is
	// made on first use only once the capture has opened.
	if f.Mode == capture.ModeMITM {
		ca, err := capture.OpenCA(f.CADir, f.Intercept, capture.LoadCA)
		if err != nil && !errors.Is(err, capture.ErrNoCA) {
			return 0, err
		}
		opts.CA = ca
		opts.MakeCA = func() (*capture.CA, error) {
			ca, err := capture.OpenCA(f.CADir, f.Intercept, capture.LoadOrCreateCA)
			if err != nil {
				return nil, err
			}
			if ca.Created && !f.Quiet {
				fmt.Fprintf(f.Stderr, "tsinspect: made a new interception CA %s (SHA-256 %s)\n", ca.CertPath, ca.Fingerprint())
			}
			return ca, nil
		}
	}
	rs, err := Open(opts)
	var ce *CaptureError
	var le *ListenError
	switch {
	case errors.As(err, &ce):
		return 0, store.TargetError("record", f.DB, ce.Err)
	case errors.As(err, &le):
		return 0, fmt.Errorf("record: %w%s", err, listenaddr.InUseHint("record", err))
	case err != nil:
		return 0, err
	}
	addr := rs.Addr()

	var flows func(*exchange.Exchange)
	var wake chan struct{} // --ui: the live view looks at each write at once
	var onTunnel func(string, error)
	turns := NewTurnLog(f.Prices)
	// Where tsinspect's lines go while a command runs: standard error, or,
	// when the command has the terminal (a full-screen program such as an
	// interactive claude), FILE.log, so that no line lands in its screen.
	lines := f.Stderr
	var logPath string
	if len(f.Command) > 0 && !f.UI && interactive(f.Stdin, f.Command) {
		logPath = f.DB + ".log"
		lf, err := OpenCommandOutput(logPath)
		if err != nil {
			rs.Abandon()
			return 0, fmt.Errorf("record: %w", err)
		}
		defer lf.Close()
		lines = lf
		fmt.Fprintf(f.Stderr, "tsinspect: %s has the terminal: tsinspect's lines while it runs (each turn's tokens and cost, failures) go to %s (tail -f %s in another terminal)\n",
			filepath.Base(f.Command[0]), logPath, shell.Quote(logPath))
	}
	switch {
	case f.UI:
		wake = make(chan struct{}, 1)
		flows = func(*exchange.Exchange) {
			select {
			case wake <- struct{}{}:
			default: // one already pending
			}
		}
	case len(f.Command) == 0 && !f.Quiet:
		// Only the proxy runs here: log each exchange as it completes, as
		// a forward proxy's console does, with what a Messages turn cost.
		// (With a command, the terminal is the command's; with --ui, the
		// timeline's.)
		flows = func(ex *exchange.Exchange) {
			if ex.State != exchange.StateInFlight {
				line := FlowLine(ex)
				if d := turns.Describe(ex); d != "" {
					line += " · " + d
				}
				fmt.Fprintln(f.Stdout, line)
			}
		}
	default:
		// Failures are told as they happen, even with --quiet, at most a
		// few lines every ten seconds; the summary counts them all. Each
		// turn's tokens and cost too, but with --quiet.
		fails := NewFailureLog(lines)
		flows = func(ex *exchange.Exchange) {
			fails.Exchange(ex)
			if !f.Quiet {
				if d := turns.Describe(ex); d != "" {
					fmt.Fprintf(lines, "tsinspect: %s\n", d)
				}
			}
		}
		onTunnel = fails.Tunnel
	}
	if len(f.Command) == 0 && !f.UI && !f.Quiet {
		onTunnel = NewFailureLog(f.Stderr).Tunnel
	}
	started := time.Now()
	startedAt := started.UTC().Format(time.RFC3339Nano)
	var live *otlp.LiveExport
	if f.OTLP != nil {
		live = otlp.StartLiveExport(*f.OTLP, otlp.Seed(startedAt, time.Time{}), f.OTLPPolicy, f.Version)
		logFlow := flows
		flows = func(ex *exchange.Exchange) {
			live.Observe(ex)
			if logFlow != nil {
				logFlow(ex)
			}
		}
		if !f.Quiet {
			fmt.Fprintf(f.Stderr, "tsinspect: sending each turn to %s as it completes\n", live.URL())
		}
	}
	if err := rs.Serve(Hooks{OnWrite: flows, OnTunnelError: onTunnel, Errors: lines}, startedAt); err != nil {
		rs.Abandon()
		if live != nil {
			live.Finish(f.Stderr)
		}
		return 0, err
	}

	caPath := ""
	if rs.CA() != nil {
		caPath = rs.CA().CertPath
	}
	plan := PlanChild(f.Mode, addr, caPath, os.Environ())
	if plan.MergeCA != "" {
		bundle, err := WriteCABundle(plan.MergeCA, caPath)
		if err != nil {
			rs.Abandon()
			return 0, err
		}
		defer os.Remove(bundle)
		plan.Set = append(plan.Set, "NODE_EXTRA_CA_CERTS="+bundle)
	}
	childEnv := plan.Set
	warnings := append(Warnings(f.Mode, f.Upstream, rs.InterceptHosts(), os.Environ()), plan.Warnings...)
	for _, w := range warnings {
		fmt.Fprintf(f.Stderr, "tsinspect: warning: %s\n", w)
	}
	if !f.Quiet {
		for _, n := range plan.Notes {
			fmt.Fprintf(f.Stderr, "tsinspect: %s\n", n)
		}
	}
	status := 0
	if f.UI {
		status = recordWithUI(f, addr, childEnv, wake)
	} else if len(f.Command) > 0 {
		if !f.Quiet {
			fmt.Fprintf(f.Stderr, "tsinspect: recording %s traffic via %s into %s\n", f.Mode, addr, f.DB)
		}
		status, err = RunChild(f.Command, childEnv, f.Stdin, f.Stdout, f.Stderr)
		if err != nil {
			fmt.Fprintf(f.Stderr, "tsinspect: %v\n", err)
			status = 1
		}
	} else {
		// Catch the signals before telling anyone where the proxy is, so
		// that an interrupt sent at once still flushes the capture.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		fmt.Fprintf(f.Stdout, "tsinspect: recording %s traffic via %s into %s; Ctrl-C to stop.\nIn the shell that runs the client:\n", f.Mode, addr, f.DB)
		for _, kv := range ExportsFor(f.Mode, childEnv) {
			fmt.Fprintf(f.Stdout, "  export %s\n", ExportLine(kv))
		}
		select {
		case <-sig:
		case err := <-rs.Served():
			if !errors.Is(err, http.ErrServerClosed) {
				fmt.Fprintf(f.Stderr, "tsinspect: proxy stopped: %v\n", err)
				status = 1
			}
		}
		signal.Stop(sig)
	}

	st, unfinished := rs.Stop(5 * time.Second)
	if unfinished {
		fmt.Fprintln(f.Stderr, "tsinspect: some exchanges were still under way; they are kept as in_flight")
	}
	PrintSummary(f.Stderr, f.DB, st, time.Since(started), turns.Summary())
	if logPath != "" {
		fmt.Fprintf(f.Stderr, "  what tsinspect said while %s ran is in %s\n", filepath.Base(f.Command[0]), logPath)
	}
	if live != nil {
		live.Finish(f.Stderr)
	}
	if st.Exchanges == 0 && len(f.Command) > 0 {
		fmt.Fprintf(f.Stderr, "tsinspect: nothing was recorded: %s sent no request through the proxy to an intercepted host\n", filepath.Base(f.Command[0]))
	}
	return status, nil
}

// interactive reports whether a command run under record takes the
// terminal for itself: its standard input (stdin) is a terminal, and it is
// not Claude Code's print mode (claude -p / --print answers once and
// exits).
func interactive(stdin io.Reader, command []string) bool {
	in, ok := stdin.(*os.File)
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

// PrintSummary says on w what a recording left in db; cost, when not "",
// is what its turns cost.
func PrintSummary(w io.Writer, db string, st capture.Stats, elapsed time.Duration, cost string) {
	fmt.Fprintf(w, "tsinspect: recorded %s in %s to %s\n", numfmt.Count(st.Exchanges, "exchange", "exchanges"), elapsed.Round(time.Second), db)
	fmt.Fprintf(w, "  complete %d, failed or aborted %d, still in flight %d\n", st.Complete, st.Failed, st.Exchanges-st.Complete-st.Failed)
	fmt.Fprintf(w, "  request bodies %s, response bodies %s\n", numfmt.Bytes(st.ReqBytes), numfmt.Bytes(st.RespBytes))
	if st.RecordErrors > 0 {
		fmt.Fprintf(w, "  %s to the capture FAILED (first: %s); the traffic was not affected\n", numfmt.Count(st.RecordErrors, "write", "writes"), st.FirstRecordEr)
		if st.Lost > 0 {
			fmt.Fprintf(w, "  %s lost: not in the capture, or left there in flight\n", numfmt.Count(st.Lost, "exchange", "exchanges"))
		}
	}
	if st.Exchanges == 0 {
		return
	}
	if cost != "" {
		fmt.Fprintf(w, "  cost %s\n", cost)
	}
	// Reading a capture takes a few seconds per thousand long turns; past
	// summaryLimit bytes of capture, the summary does not keep the user
	// waiting for it.
	if fi, err := os.Stat(db); err != nil || fi.Size() > summaryLimit {
		fmt.Fprintf(w, "  next: tsinspect open %s\n", shell.Quote(db))
		return
	}
	if s, err := source.LoadSession(db, nil); err == nil && len(s.Turns) > 0 {
		fmt.Fprintf(w, "  the capture holds %s in %s; %s\n", numfmt.Count(len(s.Turns), "Messages turn", "Messages turns"),
			numfmt.Count(len(s.Threads), "thread", "threads"), FlagCounts(s))
		fmt.Fprintf(w, "  next: tsinspect open %s   (or turns, searches, report)\n", shell.Quote(db))
		return
	}
	fmt.Fprintf(w, "  next: tsinspect exchanges %s\n", shell.Quote(db))
}

// summaryLimit is the largest capture file whose turns the end-of-recording
// summary counts: bodies are compressed, and 16 MB holds about a thousand
// turns of a long session.
const summaryLimit = 16 << 20

// FlagCounts says how many flags of each kind a session raised, in the
// order of timeline.Kinds: "flags: empty_search ×1, cache_break ×2", or
// "no flags".
func FlagCounts(s *timeline.Session) string {
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
func recordWithUI(f Config, addr string, childEnv []string, wake <-chan struct{}) int {
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
	if len(f.Command) == 0 {
		// The client runs elsewhere: it needs these. (A command gets them
		// itself; printed then, they would only reappear under the UI
		// once it quits.)
		for _, kv := range childEnv {
			fmt.Fprintf(f.Stderr, "  export %s\n", ExportLine(kv))
		}
	}
	childDone := make(chan int, 1)
	notes := make(chan string, 1)
	if len(f.Command) > 0 {
		outPath := f.DB + ".out"
		out, err := OpenCommandOutput(outPath)
		if err != nil {
			fmt.Fprintf(f.Stderr, "tsinspect: record: %v\n", err)
			return 1
		}
		defer out.Close()
		go func() {
			st, err := RunChild(f.Command, childEnv, strings.NewReader(""), out, out)
			if err != nil {
				fmt.Fprintf(out, "tsinspect: %v\n", err)
			}
			childDone <- st
			notes <- fmt.Sprintf("%s exited with status %d; q quits", filepath.Base(f.Command[0]), st)
		}()
		defer fmt.Fprintf(f.Stderr, "tsinspect: the command's output is in %s\n", outPath)
	}
	title := fmt.Sprintf("recording %s via %s", filepath.Base(f.DB), addr)
	if err := f.RunUI(ctx, title, notes, wake); err != nil {
		fmt.Fprintf(f.Stderr, "tsinspect: %v\n", err)
		return 1
	}
	if len(f.Command) == 0 {
		return 0
	}
	select {
	case st := <-childDone:
		return st
	default:
		fmt.Fprintln(f.Stderr, "tsinspect: waiting for the command to finish (Ctrl-C stops it)")
		return <-childDone
	}
}
