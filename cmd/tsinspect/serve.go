package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/team"
	"github.com/tsinspect/tsinspect/web"
)

const serveAbout = `
Serve a web view of every session, live, in the browser: the sessions
Claude Code keeps under DIR (or $CLAUDE_CONFIG_DIR/projects, or
~/.claude/projects) and any capture FILE given, listed as 'tsinspect
sessions' lists them (sortable, filtered by project, since, model and
flags, their cost per day or week as a chart, and totals); each session's
turns with the terminal timeline's columns, flags and tabs (working set,
catalog, searches, cache, flags, raw, conversation: the terminal's order
and keys), charts of the prompt cache, context and cost over the turns, a
link to each turn, and new turns as Claude Code writes them; two
sessions compared as 'tsinspect diff' compares them. New sessions appear
without a restart. Everything is in the binary: no network is needed.

It only reads: it answers GET alone and writes nothing to disk (the
listing's index in your cache directory is read, not written: 'tsinspect
sessions' keeps it; SQLite makes its -wal and -shm files beside a capture
it opens, as every command that reads one does). It listens on 127.0.0.1 by default and refuses a
request whose Host header does not name the address it serves (a page of
another site reaching it through DNS rebinding). Any other --listen
address needs a token, made afresh and printed once with the address to
open: a browser keeps it in a cookie, a script sends it as
'Authorization: Bearer TOKEN'.

On loopback the pages show everything (your own sessions, on your own
machine), with a switch on every page to the redacted view; --redact
default or strict starts them redacted. On any other address they are
redacted as 'tsinspect report' redacts (no conversation, raw exchange or
prompt text; paths, e-mail addresses, identifiers and secrets replaced by
pseudonyms) unless --redact off is said. Every page says which it shows.

Examples:
  tsinspect serve
  tsinspect serve ~/.claude/projects session.db
  tsinspect serve --redact default
  tsinspect serve --listen 0.0.0.0:8644 --allow-host mybox.local`

func runServe(env *cli.Env, args []string) error {
	flags := cli.NewFlags(env, "serve", "[DIR|FILE]... [--listen ADDR] [--redact default|strict|off] [--allow-host NAMES] [--prices FILE] [--no-index] [--budget MB] [--from URL [--person NAME]]", serveAbout)
	listen := flags.String("listen", web.DefaultAddr, "listen on `ADDR` (host:port; port 0 picks a free one); an address other than loopback needs the token printed at the start")
	policyName := flags.String("redact", "", "redaction `policy` pages start with: default, strict or off (everything shown); unset: off on loopback, default elsewhere")
	allow := flags.String("allow-host", "", "more `NAMES` (comma-separated) the Host header may give for this server, e.g. a name other machines reach it by")
	noIndex := flags.Bool("no-index", false, "read every session afresh, not from the listing's index")
	budget := flags.Int64("budget", web.DefaultBudget/web.MB, "`MB` of session files held read at once, pages watching them or not (memory is some six times that); a session larger is refused, saying so")
	prices := pricesFlag(flags)
	from, person := fromFlags(flags)
	pos, err := cli.Interspersed(flags, args)
	if err != nil {
		return err
	}
	if *budget < 1 || *budget > 1<<40 {
		return cli.Usage("serve: --budget %d: want megabytes, at least 1", *budget)
	}
	policy := redact.Policy("")
	if *policyName != "" {
		if policy, err = parsePolicy("serve", "--redact", *policyName); err != nil {
			return err
		}
	}
	if err := web.CheckListen(*listen); err != nil {
		return cli.Usage("serve: %v", err)
	}
	hosts, err := web.ParseAllowHosts(*allow)
	if err != nil {
		return cli.Usage("serve: %v", err)
	}
	tab, err := loadPrices(env, *prices)
	if err != nil {
		return err
	}
	opts := web.Options{Prices: tab, AllowHosts: hosts, Version: version, Budget: *budget * web.MB}
	opts.Policy, opts.Redacted, opts.Reveal = web.Audience(web.Loopback(*listen) && *from == "", policy)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if *from != "" {
		// The team's page: its token asked for on every address.
		st, err := team.Open(ctx, *from)
		if err != nil {
			return err
		}
		defer st.Close()
		opts.Team, pos = st.Scope(team.Filter{Person: *person}), []string{"the team's store " + st.Shown()}
	} else if pos, err = opts.AddPaths(pos, func(p string, err error) error { return readError("serve", p, err) }); err != nil {
		return err
	}
	if !*noIndex {
		if opts.Index, err = sessionfiles.IndexPath(); err != nil {
			fmt.Fprintf(env.Stderr, "tsinspect: warning: %v: reading every session\n", err)
		}
	}
	if !web.Loopback(*listen) || *from != "" {
		if opts.Token, err = web.NewToken(); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("serve: %w (is another tsinspect serve running? --listen 127.0.0.1:0 picks a free port)", err)
	}
	defer ln.Close()
	opts.Addr = ln.Addr().String()
	srv, err := web.New(ctx, opts)
	if err != nil {
		return err
	}
	srv.Announce(env.Stdout, env.Stderr, pos)
	return srv.Serve(ctx, ln)
}
