package main

import (
	"context"
	"os"
	"time"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/catalog"
	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/team"
	"github.com/tsinspect/tsinspect/textout"
)

const adviseAbout = `
Read many sessions for what to change in your setup, each piece of advice
with what it saves (or what the pattern cost) in tokens and US dollars at
the prices in force, the sessions and turns it rests on, and its
assumptions in one line:

  load up front       MCP tools searched for before their first call in
                      most sessions that use them, where the searches cost
                      more than carrying the schema in every request
  never used          MCP servers (or tools) announced in many sessions
                      and never called: what their catalog lines cost
  searches that miss  searches that found nothing or left out a tool they
                      named, by the tool the model wanted: the words to
                      put in its description
  blind calls         tools called before their schema was loaded, by
                      tool and Claude Code release
  cache breaks        by cause, costliest first, with what usually causes
                      each in Claude Code
  tool loads          cache rewrites right after a search loaded tools,
                      by server, against loading them up front
  partial searches    searches that loaded part of what they named
  pauses              pauses a 1-hour cache would have survived, those
                      nothing would, lifetimes that changed mid-session
  tool search         where ENABLE_TOOL_SEARCH (true, false or auto:N)
                      would have cost less

Every item comes by its dollars, the largest first, after a line of each
kind's total. --by tool|server gives instead what each tool or MCP
server did and cost.

One session is no pattern: a piece of advice rests on at least
--min-sessions sessions (default 3) and says how many; what rests on
fewer is listed as left out.

The sessions are those under DIR (a projects directory, one project's, or
capture files), else $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects.
They are read in parallel, one per CPU, with a progress line on a
terminal; what each session holds for the advice is kept in the user's
cache directory (never in ~/.claude), so a second run reads only the
sessions that changed (--no-cache reads them all). Evidence names each
session as 'tsinspect open' takes it, with its turns.

Examples:
  tsinspect advise
  tsinspect advise --since 30d --project myrepo
  tsinspect advise ~/work/captures --min-sessions 5 --json
  tsinspect advise --by server`

func runAdvise(env *cli.Env, args []string) error {
	flags := cli.NewFlags(env, "advise", "[DIR] [--since WHEN] [--project TEXT] [--min-sessions N] [--json|--markdown] [--prices FILE] [--from URL [--person NAME]]", adviseAbout)
	asJSON := flags.Bool("json", false, "write the advice as JSON")
	asMarkdown := flags.Bool("markdown", false, "write the advice as a Markdown section, for a report or an issue")
	projectText := flags.String("project", "", "only sessions whose project directory contains `TEXT`")
	sinceText := flags.String("since", "", "only sessions active since `WHEN`: a date (2026-11-01) or a span back from now (36h, 7d)")
	minSessions := flags.Int("min-sessions", advice.DefaultMinSessions, "advise only from patterns seen in at least `N` sessions")
	evidence := flags.Int("evidence", 3, "name at most `N` sessions per piece of advice in the text (--json names all)")
	top := flags.Int("top", 10, "write at most `N` pieces of advice in the text, the largest amounts (0: all)")
	by := flags.String("by", "", "instead of advice, what each tool or MCP server did and cost (calls, result and schema tokens, searches, blind calls, dollars): `tool` or `server`; with --json, a JSON line each")
	noCache := flags.Bool("no-cache", false, "read every session afresh, neither using nor updating the cache")
	prices := pricesFlag(flags)
	from, person := fromFlags(flags)
	pos, err := cli.Args(flags, args, 0, 1, "at most one directory")
	if err != nil {
		return err
	}
	if *asJSON && *asMarkdown {
		return cli.Usage("advise: --json and --markdown: pick one")
	}
	if *by != "" && *by != advice.ByTool && *by != advice.ByServer {
		return cli.Usage("advise: --by %q: want tool or server", *by)
	}
	if err := advice.CheckFlags(*minSessions, *top, *evidence); err != nil {
		return cli.Usage("advise: %v", err)
	}
	var since time.Time
	if *sinceText != "" {
		if since, err = sessionfiles.ParseSince(*sinceText, time.Now()); err != nil {
			return cli.Usage("advise: --since %q: %v", *sinceText, err)
		}
	}
	tab, err := loadPrices(env, *prices)
	if err != nil {
		return err
	}
	var r *advice.Result
	if *from != "" {
		r, err = team.Advise(context.Background(), *from, team.Filter{Person: *person, Project: *projectText, Since: since}, *minSessions, tab, env.Stderr)
	} else {
		q := catalog.AdviceQuery{Query: catalog.Query{Project: *projectText, Since: since}, SinceText: *sinceText, MinSessions: *minSessions}
		q.Prices, q.NoCache = tab, *noCache
		r, err = adviseFrom(env, pos, q)
	}
	if err != nil || r == nil {
		return err
	}
	if *by != "" {
		return textout.AdviseCosts(env.Stdout, r, *by, *asJSON)
	}
	switch {
	case *asJSON:
		return r.WriteJSON(env.Stdout)
	case *asMarkdown:
		return r.WriteMarkdown(env.Stdout)
	}
	return r.WriteText(env.Stdout, advice.TextOptions{Evidence: *evidence, Top: *top})
}

// adviseFrom reads the advice of the sessions under roots that q keeps
// (catalog.Advise), with a progress line when standard error is a
// terminal.
func adviseFrom(env *cli.Env, roots []string, q catalog.AdviceQuery) (*advice.Result, error) {
	if isTerminal(env.Stderr) {
		q.Progress = catalog.ProgressLine(env.Stderr)
	}
	return catalog.Advise(roots, q, env.Stderr)
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
