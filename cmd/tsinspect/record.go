package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/tsinspect/tsinspect/capture"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/importer/rawbodies"
	"github.com/tsinspect/tsinspect/internal/shell"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/recording"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/store"
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
	prices, err := loadPrices(env, *pricesPath)
	if err != nil {
		return err
	}
	f.prices = prices
	f.command = fs.Args()
	if len(f.command) > 0 && !dashDashGiven(args) {
		return usageError("record: unexpected argument %q: put the command after '--', e.g. tsinspect record --db s.db -- claude", f.command[0])
	}
	if err := outsideClaudeDir("record", "--db", f.db); err != nil {
		return err
	}
	if err := outsideClaudeDir("record", "--ca-dir", f.caDir); err != nil {
		return err
	}
	if f.db == "" {
		return usageError("record: --db FILE is required")
	}
	if f.mode != capture.ModeMITM && f.mode != capture.ModeReverse && f.mode != recording.ModeBodies {
		return usageError("record: --mode %q: want mitm, reverse or bodies", f.mode)
	}
	if f.mode == recording.ModeBodies {
		for _, name := range []string{"intercept", "upstream-ca", "allow-remote", "listen", "ca-dir"} {
			if flagSet(fs, name) {
				return usageError("record: --%s %v", name, errBodiesFlag)
			}
		}
		if f.otlp != "" {
			return usageError("record: --otlp does not work with --mode bodies yet; send the capture afterwards with 'tsinspect export %s --format otlp'", shell.Quote(f.db))
		}
	}
	if err := recording.CheckListen(f.listen, f.allowRemote); err != nil {
		return usageError("record: %v", err)
	}
	if err := recording.CheckUpstream(f.upstream); err != nil {
		return usageError("record: %v", err)
	}
	if err := recording.CheckHosts(splitList(f.intercept)); err != nil {
		return usageError("record: %v", err)
	}
	otlpPolicy, err := parsePolicy("record", "--otlp-redact", f.otlpRedact)
	if err != nil {
		return err
	}
	if flagSet(fs, "otlp-redact") && f.otlp == "" {
		return usageError("record: --otlp-redact goes with --otlp")
	}
	if len(f.command) > 0 {
		if _, err := exec.LookPath(f.command[0]); err != nil {
			return fmt.Errorf("record: command %q not found (install it, or give its path after '--')", f.command[0])
		}
	}
	// The recorded command's output is its own: it passes as it is (a
	// full-screen program draws with escape sequences).
	rawOut, rawErr := env.raw()
	cfg := recording.Config{DB: f.db, Durable: f.durable, Mode: f.mode, Listen: f.listen, Upstream: f.upstream,
		CADir: f.caDir, UpstreamCA: f.upstreamCA, Intercept: splitList(f.intercept), Quiet: f.quiet, UI: f.ui,
		Command: f.command, Prices: f.prices, Version: version, Stdin: env.stdin, Stdout: rawOut, Stderr: rawErr,
		RunUI: func(ctx context.Context, title string, notes <-chan string, wake <-chan struct{}) error {
			return ui.RunLive(ctx, f.db, ui.Options{Title: title, Notes: notes, Wake: wake, SaveDir: saveDir()})
		},
		FollowBodies: followBodies}
	if f.otlp != "" {
		c, err := otlpConfig("record", f.otlp)
		if err != nil {
			return err
		}
		cfg.OTLP = &c
		cfg.OTLPPolicy = otlpPolicy
	}
	status, err := recording.Record(cfg)
	if err != nil {
		return err
	}
	if status != 0 {
		return &exitError{code: status}
	}
	return nil
}

// followBodies reads, for record --mode bodies, the raw-bodies directory
// dir into the capture with importer/rawbodies.
func followBodies(dir string, sink *store.DB, secrets []string, ended func(*exchange.Exchange), failed func(error)) recording.BodiesFollower {
	d := rawbodies.Open(dir, rawbodies.Options{Source: exchange.SourceRecordBody, Secrets: secrets})
	return bodiesFollower{rawbodies.NewFollower(d, sink, ended, failed)}
}

// bodiesFollower is a rawbodies.Follower as recording sees one.
type bodiesFollower struct{ *rawbodies.Follower }

func (f bodiesFollower) Stats() recording.BodiesStats {
	return recording.BodiesStats(f.Follower.Stats())
}

// errBodiesFlag is returned for proxy flags given with --mode bodies.
var errBodiesFlag = errors.New("applies to the proxy modes, not to --mode bodies")

// dashDashGiven reports whether args hold a "--" separator.
func dashDashGiven(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return true
		}
	}
	return false
}
