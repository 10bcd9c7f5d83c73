package main

import (
	"fmt"
	"os"
	"time"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/textout"
)

const sessionsAbout = `
List the sessions Claude Code keeps on disk, newest first: DIR, or
$CLAUDE_CONFIG_DIR/projects, or ~/.claude/projects. Nothing to set up: no
proxy, no capture. For each session: its project, start, duration, turns
(Messages requests), subagents, models, Claude Code release, cost at list
prices, cache breaks and what they cost, blind calls (tools called before
their schema was loaded), searches and searches that found nothing.

A release marked * wrote no request records (before 2.1.300, or the
records were off): its figures come from the transcript alone. A cost
marked ≥ leaves out answers of a model with no price.

The listing keeps an index in the user's cache directory (not in
~/.claude, which tsinspect never writes): a second listing reads only the
sessions that changed since. Open one with 'tsinspect open ID' (an ID, a
prefix of one, latest, or the .jsonl path); turns, searches, report,
stats and export take it the same way.

Examples:
  tsinspect sessions
  tsinspect sessions --sort cost --limit 10
  tsinspect sessions --project myrepo --since 7d --json`

func runSessions(env *cliEnv, args []string) error {
	flags := newFlags(env, "sessions", "[DIR] [--json] [--sort time|cost|flags|turns] [--project TEXT] [--since WHEN] [--limit N]", sessionsAbout)
	asJSON := flags.Bool("json", false, "write JSON Lines, one session a line, instead of a table")
	sortBy := flags.String("sort", "time", "order: `time` (newest first), cost, flags (cache breaks, blind calls and empty searches) or turns")
	projectText := flags.String("project", "", "only sessions whose project directory contains `TEXT`")
	since := flags.String("since", "", "only sessions active since `WHEN`: a date (2026-11-01) or a span back from now (36h, 7d)")
	limit := flags.Int("limit", 0, "show at most `N` sessions (0: all)")
	noIndex := flags.Bool("no-index", false, "read every session afresh, neither using nor updating the index")
	prices := pricesFlag(flags)
	pos, err := parseInterspersed(flags, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageError("sessions: want at most one directory (see 'tsinspect sessions -h')")
	}
	switch *sortBy {
	case "time", "cost", "flags", "turns":
	default:
		return usageError("sessions: --sort %q: want time, cost, flags or turns", *sortBy)
	}
	if *limit < 0 {
		return usageError("sessions: --limit %d: want 0 or more", *limit)
	}
	var from time.Time
	if *since != "" {
		if from, err = sessionfiles.ParseSince(*since, time.Now()); err != nil {
			return usageError("sessions: --since %q: %v", *since, err)
		}
	}
	tab, err := loadPrices(*prices)
	if err != nil {
		return err
	}
	root := ""
	if len(pos) == 1 {
		root = pos[0]
	} else if root, err = sessionfiles.Root(os.Getenv); err != nil {
		return err
	}
	listing, err := sessionfiles.Find(root)
	if err != nil {
		return err
	}
	entries := listing.Entries
	if sk := listing.SkippedSummary(); sk != "" {
		fmt.Fprintf(env.stderr, "tsinspect: warning: %s\n", sk)
	}
	ixPath := ""
	if !*noIndex {
		if ixPath, err = sessionfiles.IndexPath(); err != nil {
			fmt.Fprintf(env.stderr, "tsinspect: warning: %v: reading every session\n", err)
		}
	}
	if dir, in := sessionfiles.Inside(ixPath, os.Getenv); ixPath != "" && in {
		fmt.Fprintf(env.stderr, "tsinspect: warning: the session index %s would be in Claude Code's directory %s, which tsinspect never writes into: reading every session\n", ixPath, dir)
		ixPath = ""
	}
	ix := sessionfiles.LoadIndex(ixPath)
	ix.Prune(root, entries)
	started := time.Now()
	sums, st := sessionfiles.Scan(entries, ix, nil)
	if err := ix.Save(); err != nil {
		fmt.Fprintf(env.stderr, "tsinspect: warning: %v\n", err)
	}
	for _, e := range st.Failed {
		fmt.Fprintf(env.stderr, "tsinspect: warning: %v\n", e)
	}
	rows := sessionfiles.Rows(sums, tab, *projectText, from)
	sessionfiles.SortRows(rows, *sortBy)
	if *limit > 0 && len(rows) > *limit {
		rows = rows[:*limit]
	}
	if *asJSON {
		return textout.JSONLines(env.stdout, rows)
	}
	if len(entries) == 0 {
		fmt.Fprintf(env.stderr, "tsinspect: no Claude Code sessions under %s\n", root)
		return nil
	}
	if err := textout.Sessions(env.stdout, rows); err != nil {
		return err
	}
	if st.Read > 0 {
		fmt.Fprintf(env.stderr, "read %d %s (%s) in %s; %d from the index\n", st.Read, numfmt.Plural(st.Read, "session", "sessions"), numfmt.Bytes(st.Bytes), time.Since(started).Round(time.Millisecond), st.Cached)
	}
	return nil
}
