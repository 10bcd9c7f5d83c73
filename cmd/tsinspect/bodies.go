package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tsinspect/tsinspect/capture"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/importer/rawbodies"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/internal/shell"
	"github.com/tsinspect/tsinspect/recording"
	"github.com/tsinspect/tsinspect/store"
)

// modeBodies is the record mode that reads what Claude Code writes with
// OTEL_LOG_RAW_API_BODIES instead of standing in the traffic's way.
const modeBodies = "bodies"

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
func recordBodies(env *cliEnv, f recordFlags) error {
	tmp, err := os.MkdirTemp("", "tsinspect-bodies-")
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	defer os.RemoveAll(tmp)
	db, err := store.OpenWriter(f.db, f.durable)
	if err != nil {
		return captureError("record", f.db, err)
	}
	defer db.Close()
	var secrets []string
	for _, k := range credentialVars() {
		if v := os.Getenv(k); v != "" {
			secrets = append(secrets, v)
		}
	}
	turns := recording.NewTurnLog(f.prices)
	lines := env.stderr
	var logPath string
	if len(f.command) > 0 && !f.ui && interactive(env, f.command) {
		logPath = f.db + ".log"
		lf, err := recording.OpenCommandOutput(logPath)
		if err != nil {
			return fmt.Errorf("record: %w", err)
		}
		defer lf.Close()
		lines = lf
		fmt.Fprintf(env.stderr, "tsinspect: %s has the terminal: tsinspect's lines while it runs (each turn's tokens and cost, failures) go to %s (tail -f %s in another terminal)\n",
			filepath.Base(f.command[0]), logPath, shell.Quote(logPath))
	}
	var ended func(*exchange.Exchange)
	switch {
	case f.ui || f.quiet:
	case len(f.command) == 0:
		ended = func(ex *exchange.Exchange) {
			line := recording.FlowLine(ex)
			if d := turns.Describe(ex); d != "" {
				line += " · " + d
			}
			fmt.Fprintln(env.stdout, line)
		}
	default:
		ended = func(ex *exchange.Exchange) {
			if d := turns.Describe(ex); d != "" {
				fmt.Fprintf(lines, "tsinspect: %s\n", d)
			}
		}
	}
	rec := rawbodies.NewFollower(rawbodies.Open(tmp, rawbodies.Options{Source: exchange.SourceRecordBody, Secrets: secrets}), db, ended,
		func(err error) {
			fmt.Fprintf(lines, "tsinspect: recording from the bodies directory failed (Claude Code is not affected): %v\n", err)
		})
	ctx := context.Background()
	started := time.Now()
	for k, v := range map[string]string{"recorder": "tsinspect " + version, "mode": modeBodies, "started_at": started.UTC().Format(time.RFC3339Nano)} {
		if err := db.SetMeta(ctx, k, v); err != nil {
			fmt.Fprintf(env.stderr, "tsinspect: cannot write capture metadata (recording goes on): %v\n", err)
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
	if f.upstream != "" {
		childEnv = append(childEnv, "ANTHROPIC_BASE_URL="+f.upstream)
	}
	if !f.quiet {
		if f.upstream != "" {
			fmt.Fprintf(lines, "tsinspect: the child gets ANTHROPIC_BASE_URL=%s (--upstream)\n", recording.RedactURL(f.upstream))
		}
		if f.upstream != "" || os.Getenv("ANTHROPIC_BASE_URL") != "" {
			fmt.Fprintf(lines, "tsinspect: %s\n", recording.BaseURLNote)
		}
	}
	status := 0
	switch {
	case f.ui:
		status = recordWithUI(env, f, "raw bodies", childEnv, nil)
	case len(f.command) > 0:
		if !f.quiet {
			fmt.Fprintf(env.stderr, "tsinspect: recording the API bodies %s writes into %s (no proxy: bodies and times only)\n", filepath.Base(f.command[0]), f.db)
		}
		status, err = recording.RunChild(f.command, childEnv, env.stdin, env.stdout, env.stderr)
		if err != nil {
			fmt.Fprintf(env.stderr, "tsinspect: %v\n", err)
			status = 1
		}
	default:
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		fmt.Fprintf(env.stdout, "tsinspect: recording the API bodies Claude Code writes into %s; Ctrl-C to stop.\nIn the shell that runs claude:\n", f.db)
		for _, kv := range childEnv {
			k, v, _ := strings.Cut(kv, "=")
			fmt.Fprintf(env.stdout, "  export %s=%s\n", k, shell.Quote(v))
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
	printSummary(env, f.db, st, time.Since(started), turns.Summary())
	if logPath != "" {
		fmt.Fprintf(env.stderr, "  what tsinspect said while %s ran is in %s\n", filepath.Base(f.command[0]), logPath)
	}
	if bad > 0 {
		fmt.Fprintf(env.stderr, "  %d index %s or body %s could not be read (first: %s)\n", bad, numfmt.Plural(bad, "entry", "entries"), numfmt.Plural(bad, "file", "files"), firstBad)
	}
	if redacted > 0 {
		fmt.Fprintf(env.stderr, "tsinspect: warning: %d %s found in the bodies, replaced by fingerprints in the capture\n", redacted, numfmt.Plural(redacted, "credential", "credentials"))
	}
	if st.Exchanges == 0 && len(f.command) > 0 {
		fmt.Fprintf(env.stderr, "tsinspect: nothing was recorded: %s wrote no API bodies (is it Claude Code, recent enough for OTEL_LOG_RAW_API_BODIES?)\n", filepath.Base(f.command[0]))
	}
	if status != 0 {
		return &exitError{code: status}
	}
	return nil
}

// errBodiesFlag is returned for proxy flags given with --mode bodies.
var errBodiesFlag = errors.New("applies to the proxy modes, not to --mode bodies")
