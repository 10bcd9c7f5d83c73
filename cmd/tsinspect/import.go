package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/importer"
	"github.com/tsinspect/tsinspect/importer/har"
	"github.com/tsinspect/tsinspect/numfmt"
	"github.com/tsinspect/tsinspect/outfile"
	"github.com/tsinspect/tsinspect/replay"
	"github.com/tsinspect/tsinspect/store"
)

const importAbout = `
Import the Messages API traffic of a packet capture or a HAR file into a
capture FILE, so that it can be listed, decoded and reported like a
recorded session. The format is told from the content:

  pcap, pcapng  HTTP/1.1 over TCP, and over TLS 1.2 or 1.3 (AES-GCM and
                ChaCha20-Poly1305 suites) decrypted with an NSS key log:
                --keylog, or the secrets a pcapng embeds (editcap
                --inject-secrets). Make the key log with SSLKEYLOGFILE (curl,
                Node: NODE_OPTIONS=--tls-keylog=FILE, browsers).
  HAR 1.2       from a browser, mitmproxy, or 'tsinspect export'.

Credentials (x-api-key, authorization, cookies) are never written: the
capture keeps a short fingerprint. A damaged file is read up to the damage;
what could not be read is counted, and the exit status is then 1.

Examples:
  tsinspect import traffic.pcapng --db s.db
  tsinspect import traffic.pcap --keylog keys.txt --db s.db
  tsinspect import session.har --db s.db`

func runImport(env *cliEnv, args []string) error {
	fs := newFlags(env, "import", "FILE --db OUT [--keylog KEYLOG]", importAbout)
	db := fs.String("db", "", "capture `FILE` to write (created if missing, appended to if it exists)")
	keylog := fs.String("keylog", "", "NSS key log `FILE` to decrypt TLS with")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("import: want one FILE to import (see 'tsinspect import -h')")
	}
	if *db == "" {
		return usageError("import: --db FILE is required")
	}
	in := pos[0]
	if _, err := os.Stat(in); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	ctx := context.Background()
	var out *store.DB
	open := func() (importer.Sink, error) {
		var err error
		if out, err = store.Open(*db); err != nil {
			return nil, err
		}
		return out, nil
	}
	rep, err := importer.Import(ctx, in, open, importer.Options{KeyLog: *keylog, Progress: env.stderr})
	if out != nil {
		_ = out.SetMeta(ctx, "imported_from", filepath.Base(in))
		_ = out.SetMeta(ctx, "imported_at", time.Now().UTC().Format(time.RFC3339Nano))
		if cerr := out.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("import: %w", cerr)
		}
	}
	if err != nil {
		return err
	}
	name := filepath.Base(in)
	if p := rep.Problem(); p != "" {
		kept := fmt.Sprintf("kept %d %s", rep.Imported, countNoun(rep.Imported, "exchange", "exchanges"))
		if rep.Incomplete > 0 {
			kept += fmt.Sprintf(" (%d incomplete)", rep.Incomplete)
		}
		return fmt.Errorf("import %s: %s; %s", name, p, kept)
	}
	if rep.Imported == 0 {
		msg := fmt.Sprintf("import %s: no HTTP exchanges found", name)
		if n := rep.Notes(); n != "" {
			msg += " (skipped " + n + ")"
		}
		return errors.New(msg)
	}
	line := fmt.Sprintf("tsinspect: imported %d %s from %s (%s", rep.Imported, countNoun(rep.Imported, "exchange", "exchanges"), name, rep.Format)
	if n := decryptedCount(rep.Decrypted); n > 0 {
		line += fmt.Sprintf(", %d TLS %s decrypted", n, countNoun(n, "connection", "connections"))
	}
	line += ") into " + *db
	if n := rep.Notes(); n != "" {
		line += "; skipped " + n
	}
	fmt.Fprintln(env.stderr, line)
	return nil
}

func decryptedCount(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// countNoun picks the singular or plural noun for n.
func countNoun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

const exportAbout = `
Write the exchanges of a capture FILE in another format. HAR 1.2 (the only
format for now) opens in browsers' developer tools and HAR viewers; each
entry also carries the exact bytes, times and chunks in a "_tsinspect"
field, so that 'tsinspect import' gives the same exchanges back.
--out follows the same rules as 'report --out': a regular file is replaced
whole, a device or pipe is written through, a directory or read-only file
is refused.
Credentials are never included: the capture holds only fingerprints of
them.

Examples:
  tsinspect export s.db --format har --out s.har
  tsinspect export s.db --format har > s.har`

func runExport(env *cliEnv, args []string) error {
	fs := newFlags(env, "export", "FILE --format har [--out F]", exportAbout)
	format := fs.String("format", "har", "output `format`: har")
	outPath := fs.String("out", "", "write to `F` (default standard output)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("export: want one capture FILE (see 'tsinspect export -h')")
	}
	if *format != "har" {
		return usageError("export: --format %q: want har", *format)
	}
	db, err := store.OpenReadOnly(pos[0])
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer db.Close()
	// The capture is read and written one exchange at a time: exporting
	// holds the largest exchange in memory, not the whole capture.
	n := 0
	write := func(w io.Writer) error {
		hw, err := har.NewWriter(w, version)
		if err != nil {
			return err
		}
		damage, err := db.EachExchange(context.Background(), func(ex *exchange.Exchange) error {
			n++
			return hw.Add(ex)
		})
		if err != nil {
			return err
		}
		if len(damage) > 0 {
			fmt.Fprintf(env.stderr, "tsinspect: warning: %s: %s\n", db.Path(), store.DamageSummary(damage))
		}
		return hw.Close()
	}
	if *outPath == "" || *outPath == "-" {
		if err := write(env.stdout); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return nil
	}
	if err := outfile.WriteWith(*outPath, write); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(env.stderr, "tsinspect: exported %d %s to %s\n", n, countNoun(n, "exchange", "exchanges"), *outPath)
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

func runReplayServer(env *cliEnv, args []string) error {
	fs := newFlags(env, "replay-server", "FILE [--listen 127.0.0.1:PORT] [--fast]", replayAbout)
	listen := fs.String("listen", "127.0.0.1:0", "`address` to listen on (port 0: any free port)")
	fast := fs.Bool("fast", false, "send each response at once instead of with the recorded timing")
	allowRemote := fs.Bool("allow-remote", false, "allow a --listen address other than loopback")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("replay-server: want one capture FILE (see 'tsinspect replay-server -h')")
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil {
		return usageError("replay-server: --listen %q: want HOST:PORT, e.g. 127.0.0.1:8080", *listen)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) && !*allowRemote {
		return usageError("replay-server: --listen %q is not a loopback address; add --allow-remote if you mean it", *listen)
	}
	db, err := store.OpenReadOnly(pos[0])
	if err != nil {
		return fmt.Errorf("replay-server: %w", err)
	}
	exs, err := salvage(db, env.stderr)
	db.Close()
	if err != nil {
		return fmt.Errorf("replay-server: %w", err)
	}
	srv := replay.New(exs, replay.Options{Fast: *fast, Log: env.stderr})
	if srv.Len() == 0 {
		return fmt.Errorf("replay-server: %s holds no recorded responses", pos[0])
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("replay-server: listen on %s: %w", *listen, unwrapOp(err))
	}
	addr := ln.Addr().String()
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 30 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(env.stdout, "tsinspect: replaying %s of %s at http://%s; Ctrl-C to stop.\nIn the shell that runs the client:\n  export ANTHROPIC_BASE_URL=http://%s\n  export ENABLE_TOOL_SEARCH=true\n",
		numfmt.Count(srv.Len(), "exchange", "exchanges"), pos[0], addr, addr)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	select {
	case <-sig:
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("replay-server: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = hs.Shutdown(ctx)
	ms := srv.Matches()
	unmatched := 0
	for _, m := range ms {
		if m.Recorded == 0 {
			unmatched++
		}
	}
	fmt.Fprintf(env.stderr, "tsinspect: replay served %d %s, %d without a recorded response\n", len(ms), countNoun(len(ms), "request", "requests"), unmatched)
	return nil
}
