package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/tsinspect/tsinspect/capture"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/importer/rawbodies"
	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/recording"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/sessionfiles"
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

func runRecord(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "record", "--db FILE [flags] [-- COMMAND ARGS...]", recordAbout)
	// The recorded command's output is its own: it passes as it is (a
	// full-screen program draws with escape sequences).
	rawOut, rawErr := env.Raw()
	cfg := recording.Config{Version: version, Stdin: env.Stdin, Stdout: rawOut, Stderr: rawErr, FollowBodies: followBodies}
	var intercept, otlpURL, otlpRedact string
	var allowRemote bool
	fs.StringVar(&cfg.DB, "db", "", "capture `FILE` to write (created if missing, appended to if it exists)")
	fs.StringVar(&cfg.Mode, "mode", capture.ModeMITM, "recording `mode`: mitm, reverse or bodies")
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:0", "`address` to listen on (port 0: any free port)")
	fs.StringVar(&cfg.Upstream, "upstream", "", "forward to this `URL` (reverse default "+capture.DefaultUpstream+"; mitm: instead of the real host; bodies: the child's ANTHROPIC_BASE_URL, e.g. a stand-in's)")
	fs.StringVar(&intercept, "intercept", "", "mitm: extra `hosts` to intercept besides "+capture.DefaultHost+", comma-separated")
	fs.StringVar(&cfg.CADir, "ca-dir", "", "`directory` of the interception CA (default: tsinspect in your config dir)")
	fs.StringVar(&cfg.UpstreamCA, "upstream-ca", "", "PEM `file` of extra CA certificates to trust for the upstream")
	fs.BoolVar(&allowRemote, "allow-remote", false, "allow a --listen address other than loopback (anyone who can reach it can use your API key's traffic path)")
	fs.BoolVar(&cfg.Quiet, "quiet", false, "print only errors, warnings, failures and the final summary (no per-exchange lines)")
	fs.StringVar(&otlpURL, "otlp", "", "also send each turn, as it completes, to the OpenTelemetry collector at this OTLP `URL` (env: the one the OTEL_EXPORTER_OTLP_* variables name); see 'tsinspect export -h'")
	fs.StringVar(&otlpRedact, "otlp-redact", string(redact.Default), "redaction `policy` of the --otlp spans: default, strict or off")
	fs.BoolVar(&cfg.Durable, "durable", false, "sync every write to the disk (SQLite synchronous=FULL): nothing committed is lost even to a power loss, at the cost of an fsync per write")
	fs.BoolVar(&cfg.UI, "ui", false, "show the live timeline while recording (q stops); a COMMAND's output then goes to FILE.out")
	pricesPath := pricesFlag(fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	var err error
	if cfg.Prices, err = loadPrices(env, *pricesPath); err != nil {
		return err
	}
	cfg.Command, cfg.Intercept = fs.Args(), splitList(intercept)
	if len(cfg.Command) > 0 && !dashDashGiven(args) {
		return cli.Usage("record: unexpected argument %q: put the command after '--', e.g. tsinspect record --db s.db -- claude", cfg.Command[0])
	}
	if err := outsideClaudeDir("record", "--db", cfg.DB); err != nil {
		return err
	}
	if err := outsideClaudeDir("record", "--ca-dir", cfg.CADir); err != nil {
		return err
	}
	if cfg.DB == "" {
		return cli.Usage("record: --db FILE is required")
	}
	if err := cfg.Check(allowRemote, otlpURL != "", func(name string) bool { return cli.Given(fs, name) }); err != nil {
		return cli.Usage("record: %v", err)
	}
	if cfg.OTLPPolicy, err = parsePolicy("record", "--otlp-redact", otlpRedact); err != nil {
		return err
	}
	if cli.Given(fs, "otlp-redact") && otlpURL == "" {
		return cli.Usage("record: --otlp-redact goes with --otlp")
	}
	if len(cfg.Command) > 0 {
		if _, err := exec.LookPath(cfg.Command[0]); err != nil {
			return fmt.Errorf("record: command %q not found (install it, or give its path after '--')", cfg.Command[0])
		}
	}
	cfg.RunUI = func(ctx context.Context, title string, notes <-chan string, wake <-chan struct{}) error {
		return ui.RunLive(ctx, cfg.DB, ui.Options{Title: title, Notes: notes, Wake: wake, SaveDir: sessionfiles.SaveDir(os.Getenv)})
	}
	if otlpURL != "" {
		c, err := otlpConfig("record", otlpURL)
		if err != nil {
			return err
		}
		cfg.OTLP = &c
	}
	status, err := recording.Record(cfg)
	if err != nil {
		return err
	}
	if status != 0 {
		return &cli.ExitError{Code: status}
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

// dashDashGiven reports whether args hold a "--" separator.
func dashDashGiven(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return true
		}
	}
	return false
}
