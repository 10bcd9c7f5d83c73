package main

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/importer"
	"github.com/tsinspect/tsinspect/importer/har"
	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/internal/listenaddr"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/otlp"
	"github.com/tsinspect/tsinspect/recording"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/replayserver"
	"github.com/tsinspect/tsinspect/source"
)

const importAbout = `
Import the Messages API traffic another tool recorded into a capture FILE,
so that it can be listed, decoded and reported like a recorded session. The
format is told from the content:

  pcap, pcapng  HTTP/1.1 over TCP, and over TLS 1.2 or 1.3 (AES-GCM and
                ChaCha20-Poly1305 suites) decrypted with an NSS key log:
                --keylog, or the secrets a pcapng embeds (editcap
                --inject-secrets). Make the key log with SSLKEYLOGFILE (curl,
                Node: NODE_OPTIONS=--tls-keylog=FILE, browsers).
  HAR 1.2       from a browser, mitmproxy, or 'tsinspect export'.
  claude-trace  the .claude-trace/*.jsonl logs of claude-trace.
  DIR           a directory Claude Code wrote with
                OTEL_LOG_RAW_API_BODIES=file:DIR (index.jsonl and the
                *.request.json and *.response.json files it names).

Formats that keep parsed exchanges rather than the bytes on the wire lack
some of what a recording has (the time of each streamed event, exact
bodies); the import says what, and so do 'exchanges' and the report.

Credentials (x-api-key, authorization, cookies) are never written: the
capture keeps a short fingerprint. A damaged file is read up to the damage;
what could not be read is counted, and the exit status is then 4 when
something was imported and 1 when nothing was.

Examples:
  tsinspect import traffic.pcapng --db s.db
  tsinspect import traffic.pcap --keylog keys.txt --db s.db
  tsinspect import session.har --db s.db
  tsinspect import .claude-trace/log-2026-01-01-10-00-00.jsonl --db s.db
  tsinspect import bodies/ --db s.db`

// exitPartial is the exit status of an import that kept only part of its
// input.
const exitPartial = 4

func runImport(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "import", "FILE|DIR --db OUT [--keylog KEYLOG]", importAbout)
	db := fs.String("db", "", "capture `FILE` to write (created if missing, appended to if it exists)")
	keylog := fs.String("keylog", "", "NSS key log `FILE` to decrypt TLS with")
	pos, err := cli.Args(fs, args, 1, 1, "one FILE to import")
	if err != nil {
		return err
	}
	if *db == "" {
		return cli.Usage("import: --db FILE is required")
	}
	if err := outsideClaudeDir("import", "--db", *db); err != nil {
		return err
	}
	// The progress bar redraws itself with a carriage return: standard
	// error as it is.
	_, rawErr := env.Raw()
	line, partial, err := importer.ImportFile(context.Background(), pos[0], *db, importer.Options{KeyLog: *keylog, Progress: rawErr})
	if partial {
		return &cli.ExitError{Code: exitPartial, Err: err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stderr, "tsinspect: "+line)
	return nil
}

const exportAbout = `
Write the exchanges of a capture FILE in another format, or send them to
an OpenTelemetry collector.

har   HAR 1.2 opens in browsers' developer tools and HAR viewers: each
      exchange's method, URL, headers, status, times and bodies, and the
      exact times, chunks and states in a "_tsinspect" field.
      Redacted by default (--redact default or strict): the bodies keep
      what tool search did (block and message types, models, tool names,
      IDs, usage, stop reasons, ToolSearch queries scrubbed as in a
      report) and every other text is replaced by "[N bytes removed]":
      prompts, files read, tool inputs and results, thinking, the system
      prompt, tool descriptions. Secrets, paths, e-mail addresses and
      hosts in header values, queries and errors become pseudonyms such
      as [secret-1]. 'tsinspect import' of it gives the same turns,
      searches and usage, not the text.
      --redact off writes the bodies as recorded, with a warning: whatever
      went into the conversation (API keys in a tool's output, an
      environment dump, a file's contents) is in the file. Only then,
      'import' gives the same exchanges back (but for a response
      compressed on the wire, which HAR keeps decoded), and --exact also
      copies every body as it crossed the wire into "_tsinspect" (base64;
      about 2.4 times the bodies), for a byte-exact round trip.
      Credential headers (x-api-key, authorization, cookies) are never
      included under any policy: the capture holds only fingerprints of
      them, and a session's files hold none. --out follows the same rules
      as 'report --out': a regular file is replaced whole, a device or
      pipe is written through, a directory or read-only file is refused.
otlp  the session as one trace, sent over OTLP/HTTP (protobuf), or
      OTLP/gRPC with OTEL_EXPORTER_OTLP_PROTOCOL=grpc, to --endpoint or
      to what the OTEL_EXPORTER_OTLP_* variables say: a root span for
      the session, a span per thread, a child span per turn with the
      OpenTelemetry GenAI attributes (model, tokens, cache tokens, finish
      reasons), tsinspect's own (catalog and working-set sizes and
      changes, searches with their queries and results, tokens lost to
      cache breaks, cost in dollars) and each flag as a span event.
      Redacted like a report (--redact, default: no message text). The
      exit status is 1 if any span was not delivered.

Standard variables read for otlp: OTEL_EXPORTER_OTLP_ENDPOINT (a base
URL, /v1/traces is appended), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as
is), OTEL_EXPORTER_OTLP_HEADERS (key=value,... e.g. an API key; never
printed), OTEL_EXPORTER_OTLP_TIMEOUT (ms), OTEL_EXPORTER_OTLP_INSECURE
(http:// for an endpoint without a scheme), OTEL_EXPORTER_OTLP_COMPRESSION
(gzip), OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf or grpc; for grpc the
endpoint is the collector's gRPC address, e.g. http://127.0.0.1:4317),
OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES; the _TRACES_ forms win.

Examples:
  tsinspect export s.db --format har --out s.har
  tsinspect export s.db --format har > s.har
  tsinspect export s.db --format otlp --endpoint http://127.0.0.1:4318`

func runExport(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "export", "FILE --format har [--out F] [--redact POLICY] [--exact] | --format otlp [--endpoint URL] [--redact POLICY]", exportAbout)
	format := fs.String("format", "har", "output `format`: har or otlp")
	outPath := fs.String("out", "", "har: write to `F` (default standard output)")
	endpoint := fs.String("endpoint", "", "otlp: the collector's `URL` (default: OTEL_EXPORTER_OTLP_ENDPOINT, else "+otlp.DefaultEndpoint+", or "+otlp.DefaultGRPCEndpoint+" for grpc)")
	policyName := fs.String("redact", string(redact.Default), "redaction `policy`: default, strict or off (off: the bodies as recorded, secrets included)")
	exact := fs.Bool("exact", false, "har, with --redact off: also keep every body byte for byte as it crossed the wire (base64 in the _tsinspect field; the HAR grows to about 2.3 times the default), so that a compressed response comes back exactly on import")
	pos, err := cli.Args(fs, args, 1, 1, "one capture FILE")
	if err != nil {
		return err
	}
	switch *format {
	case "har":
	case "otlp":
		if *outPath != "" {
			return cli.Usage("export: --out is for --format har; otlp goes to --endpoint")
		}
		if *exact {
			return cli.Usage("export: --exact is for --format har")
		}
		return exportOTLP(env, pos[0], *endpoint, *policyName)
	default:
		return cli.Usage("export: --format %q: want har or otlp", *format)
	}
	if *endpoint != "" {
		return cli.Usage("export: --endpoint is for --format otlp")
	}
	policy, err := parsePolicy("export", "--redact", *policyName)
	if err != nil {
		return err
	}
	if *exact && policy != redact.Off {
		return cli.Usage("export: --exact copies every body as recorded: give --redact off with it")
	}
	if err := checkOut("export", *outPath); err != nil {
		return err
	}
	path, err := source.Resolve(pos[0], env.Stderr)
	if err != nil {
		return readError("export", pos[0], fmt.Errorf("export: %w", err))
	}
	// The capture is read and written one exchange at a time: exporting
	// holds the largest exchange in memory, not the whole capture.
	scan, closeScan, err := source.OpenScan(path)
	if err != nil {
		return readError("export", pos[0], fmt.Errorf("export: %w", err))
	}
	defer closeScan()
	var edit func(*exchange.Exchange) *exchange.Exchange
	if policy != redact.Off {
		edit = redact.NewExchanges(policy).Exchange
	} else {
		fmt.Fprintf(env.Stderr, "tsinspect: warning: --redact off: the HAR holds every body as recorded: prompts, files read, tool inputs and outputs, and any secret in them\n")
	}
	n := 0
	write := func(w io.Writer) (err error) {
		var problems string
		n, problems, err = har.WriteScan(w, version, har.Options{Exact: *exact}, scan, edit)
		if problems != "" {
			fmt.Fprintf(env.Stderr, "tsinspect: warning: %s: %s\n", path, problems)
		}
		return err
	}
	if err := writeOut(env, "export", *outPath, write); err != nil || *outPath == "" || *outPath == "-" {
		return err
	}
	fmt.Fprintf(env.Stderr, "tsinspect: exported %d %s to %s (%s)\n", n, numfmt.Plural(n, "exchange", "exchanges"), *outPath, harPolicy(policy))
	return nil
}

const replayAbout = `
Serve a capture FILE back as the API: each request is answered with the
recorded response of the request it matches, streamed with the recorded
timing between chunks (or at once with --fast), so that a session can be
reproduced against the same client without the API.

A Messages request matches the recorded request at the same position of
the same thread: the same number of messages and the same first user
message, else the same number of messages, else the next one in recorded
order. Other recorded endpoints (count_tokens, GET /api/...) are answered
from the capture too; anything else gets a 404 API error. One line per
request on standard error says which recorded exchange answered and what
differs from the recorded request (top-level fields, messages[i]).

Point Claude Code at it with ANTHROPIC_BASE_URL (and ENABLE_TOOL_SEARCH=true).

Examples:
  tsinspect replay-server s.db --listen 127.0.0.1:8080
  ANTHROPIC_BASE_URL=http://127.0.0.1:8080 ENABLE_TOOL_SEARCH=true claude -p "..."`

func runReplayServer(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "replay-server", "FILE [--listen 127.0.0.1:PORT] [--fast]", replayAbout)
	listen := fs.String("listen", "127.0.0.1:0", "`address` to listen on (port 0: any free port)")
	fast := fs.Bool("fast", false, "send each response at once instead of with the recorded timing")
	allowRemote := fs.Bool("allow-remote", false, "allow a --listen address other than loopback")
	pos, err := cli.Args(fs, args, 1, 1, "one capture FILE")
	if err != nil {
		return err
	}
	if err := recording.CheckListen(*listen, *allowRemote); err != nil {
		return cli.Usage("replay-server: %v", err)
	}
	db, err := source.OpenCaptureDB(pos[0])
	if err != nil {
		return readError("replay-server", pos[0], fmt.Errorf("replay-server: %w", err))
	}
	exs, err := source.Salvage(db, env.Stderr)
	db.Close()
	if err != nil {
		return fmt.Errorf("replay-server: %w", err)
	}
	srv := replayserver.New(exs, replayserver.Options{Fast: *fast, Log: env.Stderr})
	if srv.Len() == 0 {
		return fmt.Errorf("replay-server: %s holds no recorded responses (it answers with what a capture recorded: record one with 'tsinspect record --db FILE -- COMMAND')", pos[0])
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("replay-server: listen on %s: %w%s", *listen, recording.UnwrapOp(err), listenaddr.InUseHint("replay-server", err))
	}
	return srv.Run(ln, pos[0], env.Stdout, env.Stderr)
}

// harPolicy says in a few words what a HAR exported under p holds.
func harPolicy(p redact.Policy) string {
	if p == redact.Off {
		return "bodies as recorded"
	}
	return "redacted " + string(p) + ": texts removed, secrets and paths pseudonymised"
}
