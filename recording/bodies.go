package recording

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tsinspect/tsinspect/capture"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/internal/shell"
	"github.com/tsinspect/tsinspect/store"
)

// bodiesPoll is how often the bodies directory is read while recording.
const bodiesPoll = 200 * time.Millisecond

// credentialVars returns the environment variables whose values must not
// reach a capture, looked for in the bodies Claude Code writes.
func credentialVars() []string {
	return []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK"}
}

// recordBodies runs record --mode bodies: the command (or, without one,
// whatever the user starts with the printed environment) writes its API
// bodies into a private temporary directory, which is read into the
// capture as it fills and removed at the end.
func recordBodies(f Config) (int, error) {
	tmp, err := os.MkdirTemp("", "tsinspect-bodies-")
	if err != nil {
		return 0, fmt.Errorf("record: %w", err)
	}
	defer os.RemoveAll(tmp)
	db, err := store.OpenWriter(f.DB, f.Durable)
	if err != nil {
		return 0, store.TargetError("record", f.DB, err)
	}
	defer db.Close()
	var secrets []string
	for _, k := range credentialVars() {
		if v := os.Getenv(k); v != "" {
			secrets = append(secrets, v)
		}
	}
	turns := NewTurnLog(f.Prices)
	lines := f.Stderr
	var logPath string
	if len(f.Command) > 0 && !f.UI && interactive(f.Stdin, f.Command) {
		logPath = f.DB + ".log"
		lf, err := OpenCommandOutput(logPath)
		if err != nil {
			return 0, fmt.Errorf("record: %w", err)
		}
		defer lf.Close()
		lines = lf
		fmt.Fprintf(f.Stderr, "tsinspect: %s has the terminal: tsinspect's lines while it runs (each turn's tokens and cost, failures) go to %s (tail -f %s in another terminal)\n",
			filepath.Base(f.Command[0]), logPath, shell.Quote(logPath))
	}
	var ended func(*exchange.Exchange)
	switch {
	case f.UI || f.Quiet:
	case len(f.Command) == 0:
		ended = func(ex *exchange.Exchange) {
			line := FlowLine(ex)
			if d := turns.Describe(ex); d != "" {
				line += " · " + d
			}
			fmt.Fprintln(f.Stdout, line)
		}
	default:
		ended = func(ex *exchange.Exchange) {
			if d := turns.Describe(ex); d != "" {
				fmt.Fprintf(lines, "tsinspect: %s\n", d)
			}
		}
	}
	rec := f.FollowBodies(tmp, db, secrets, ended, func(err error) {
		fmt.Fprintf(lines, "tsinspect: recording from the bodies directory failed (Claude Code is not affected): %v\n", err)
	})
	ctx := context.Background()
	started := time.Now()
	for k, v := range map[string]string{"recorder": "tsinspect " + f.Version, "mode": ModeBodies, "started_at": started.UTC().Format(time.RFC3339Nano)} {
		if err := db.SetMeta(ctx, k, v); err != nil {
			fmt.Fprintf(f.Stderr, "tsinspect: cannot write capture metadata (recording goes on): %v\n", err)
			break
		}
	}
	pollCtx, stopPoll := context.WithCancel(ctx)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		t := time.NewTicker(bodiesPoll)
		defer t.Stop()
		for {
			select {
			case <-pollCtx.Done():
				return
			case <-t.C:
				rec.Poll(ctx, false)
			}
		}
	}()

	childEnv := []string{"OTEL_LOG_RAW_API_BODIES=file:" + tmp}
	if f.Upstream != "" {
		childEnv = append(childEnv, "ANTHROPIC_BASE_URL="+f.Upstream)
	}
	if !f.Quiet {
		if f.Upstream != "" {
			fmt.Fprintf(lines, "tsinspect: the child gets ANTHROPIC_BASE_URL=%s (--upstream)\n", RedactURL(f.Upstream))
		}
		if f.Upstream != "" || os.Getenv("ANTHROPIC_BASE_URL") != "" {
			fmt.Fprintf(lines, "tsinspect: %s\n", BaseURLNote)
		}
	}
	status := 0
	switch {
	case f.UI:
		status = recordWithUI(f, "raw bodies", childEnv, nil)
	case len(f.Command) > 0:
		if !f.Quiet {
			fmt.Fprintf(f.Stderr, "tsinspect: recording the API bodies %s writes into %s (no proxy: bodies and times only)\n", filepath.Base(f.Command[0]), f.DB)
		}
		status, err = RunChild(f.Command, childEnv, f.Stdin, f.Stdout, f.Stderr)
		if err != nil {
			fmt.Fprintf(f.Stderr, "tsinspect: %v\n", err)
			status = 1
		}
	default:
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		fmt.Fprintf(f.Stdout, "tsinspect: recording the API bodies Claude Code writes into %s; Ctrl-C to stop.\nIn the shell that runs claude:\n", f.DB)
		for _, kv := range childEnv {
			k, v, _ := strings.Cut(kv, "=")
			fmt.Fprintf(f.Stdout, "  export %s=%s\n", k, shell.Quote(v))
		}
		<-sig
		signal.Stop(sig)
	}
	stopPoll()
	<-polled
	// Claude Code may still be finishing the last files as it exits: give
	// them a moment before what is missing counts as missing.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(bodiesPoll / 2) {
		rec.Poll(ctx, false)
		if rec.Settled() {
			break
		}
	}
	rec.Poll(ctx, true)
	_ = db.SetMeta(ctx, "ended_at", time.Now().UTC().Format(time.RFC3339Nano))
	fs := rec.Stats()
	st := capture.Stats{Exchanges: fs.Exchanges, Complete: fs.Complete, Failed: fs.Failed, ReqBytes: fs.ReqBytes, RespBytes: fs.RespBytes,
		RecordErrors: fs.WriteErrors, FirstRecordEr: fs.FirstError}
	redacted, bad, firstBad := fs.Redacted, fs.BadLines, fs.FirstBad
	PrintSummary(f.Stderr, f.DB, st, time.Since(started), turns.Summary())
	if logPath != "" {
		fmt.Fprintf(f.Stderr, "  what tsinspect said while %s ran is in %s\n", filepath.Base(f.Command[0]), logPath)
	}
	if bad > 0 {
		fmt.Fprintf(f.Stderr, "  %d index %s or body %s could not be read (first: %s)\n", bad, numfmt.Plural(bad, "entry", "entries"), numfmt.Plural(bad, "file", "files"), firstBad)
	}
	if redacted > 0 {
		fmt.Fprintf(f.Stderr, "tsinspect: warning: %d %s found in the bodies, replaced by fingerprints in the capture\n", redacted, numfmt.Plural(redacted, "credential", "credentials"))
	}
	if st.Exchanges == 0 && len(f.Command) > 0 {
		fmt.Fprintf(f.Stderr, "tsinspect: nothing was recorded: %s wrote no API bodies (is it Claude Code, recent enough for OTEL_LOG_RAW_API_BODIES?)\n", filepath.Base(f.Command[0]))
	}
	return status, nil
}
