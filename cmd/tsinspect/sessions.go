package main

import (
	"context"
	"fmt"
	"time"

	"github.com/tsinspect/tsinspect/catalog"
	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/team"
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
records were off): its figures come from the transcript alone. Costs are
at the built-in prices (their date is on the total line), or those of
--prices FILE or of your price file (see 'tsinspect prices'). A cost
marked ≥ leaves out answers of a model with no price (named under the
table), ≈ has answers priced as a neighbour in the table.

--by day, week or month sums every session's answers per period instead,
each answer in the period of its own timestamp in the local time zone
(--timezone), weeks starting on Sunday (--week-start), as ccusage's
daily, weekly and monthly reports count them; --per model or project
splits each period. --since keeps the answers since WHEN, --limit the
newest N periods.

The listing keeps an index in the user's cache directory (not in
~/.claude, which tsinspect never writes): a second listing reads only the
sessions that changed since. Open one with 'tsinspect open ID' (an ID, a
prefix of one, latest, or the .jsonl path); turns, searches, report,
stats and export take it the same way.

Examples:
  tsinspect sessions
  tsinspect sessions --sort cost --limit 10
  tsinspect sessions --project myrepo --since 7d --json
  tsinspect sessions --by day --since 30d
  tsinspect sessions --by month --per model --json`

func runSessions(env *cli.Env, args []string) error {
	flags := cli.NewFlags(env, "sessions", "[DIR] [--json] [--sort time|cost|flags|turns] [--project TEXT] [--since WHEN] [--limit N] [--by day|week|month [--per model|project]] [--from URL [--person NAME]]", sessionsAbout)
	asJSON := flags.Bool("json", false, "write JSON Lines, one session a line, instead of a table")
	sortBy := flags.String("sort", "time", "order: `time` (newest first), cost, flags (cache breaks, blind calls, empty and partial searches) or turns")
	projectText := flags.String("project", "", "only sessions whose project directory contains `TEXT`")
	since := flags.String("since", "", "only sessions active since `WHEN`: a date (2026-11-01) or a span back from now (36h, 7d)")
	limit := flags.Int("limit", 0, "show at most `N` sessions (0: all)")
	noIndex := flags.Bool("no-index", false, "read every session afresh, neither using nor updating the index")
	prices := pricesFlag(flags)
	by := flags.String("by", "", "sum the answers per `PERIOD`: day, week or month")
	per := flags.String("per", "", "with --by, one row per period and `model` or project")
	tz := flags.String("timezone", "", "with --by, the time `ZONE` days begin in (an IANA name such as UTC or Europe/Paris; default: local)")
	weekStart := flags.String("week-start", "sunday", "with --by week, the first `DAY` of a week")
	from, person := fromFlags(flags)
	pos, err := cli.Args(flags, args, 0, 1, "at most one directory")
	if err != nil {
		return err
	}
	q := catalog.Query{Project: *projectText, Sort: *sortBy, Limit: *limit}
	if err := q.Check(); err != nil {
		return cli.Usage("sessions: %v", err)
	}
	bopts, err := sessionfiles.ParseBuckets(*by, *per, *tz, *weekStart, *sortBy)
	if err != nil {
		return cli.Usage("sessions: %v", err)
	}
	if *since != "" {
		if q.Since, err = sessionfiles.ParseSince(*since, time.Now()); err != nil {
			return cli.Usage("sessions: --since %q: %v", *since, err)
		}
	}
	bopts.Keep, bopts.From = q.KeepsSummary, q.Since
	tab, err := loadPrices(env, *prices)
	if err != nil {
		return err
	}
	started := time.Now()
	var c *catalog.Catalog
	var sums []*sessionfiles.Summary
	var st sessionfiles.ScanStats
	var l catalog.Listing
	switch {
	case *from != "" && bopts.By == "":
		c, l, err = team.List(context.Background(), *from, team.Filter{Person: *person}, q)
	case *from != "":
		c, sums, err = team.Catalog(context.Background(), *from, team.Filter{Person: *person, Since: q.Since})
	default:
		c, sums, st, err = catalog.OpenRead(env.Stderr, catalog.Options{NoIndex: *noIndex}, pos...)
	}
	if err != nil {
		return err
	}
	root, entries := c.Root, c.Entries
	if bopts.By != "" {
		return writeBuckets(env, sums, tab, bopts, *limit, *asJSON, len(entries) == 0, root)
	}
	if *from == "" {
		l = catalog.List(sums, tab, q)
	}
	if note := tab.Staleness(l.Totals.Newest); note != "" {
		fmt.Fprintf(env.Stderr, "tsinspect: note: %s\n", note)
	}
	if *asJSON {
		return textout.JSONLines(env.Stdout, l.Rows)
	}
	if len(entries) == 0 {
		fmt.Fprintf(env.Stderr, "tsinspect: no Claude Code sessions under %s\n", root)
		return nil
	}
	if err := textout.Sessions(env.Stdout, l.Rows, tab.Describe()); err != nil {
		return err
	}
	if st.Read > 0 {
		fmt.Fprintln(env.Stderr, st.Said(time.Since(started)))
	}
	return nil
}

// writeBuckets writes the periods of sessions --by.
func writeBuckets(env *cli.Env, sums []*sessionfiles.Summary, tab *pricing.Table, o sessionfiles.BucketOptions, limit int, asJSON, none bool, root string) error {
	bs, notes, err := sessionfiles.Periods(sums, tab, o, limit)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(env.Stderr, "tsinspect: %s\n", n)
	}
	if asJSON {
		return textout.JSONLines(env.Stdout, bs)
	}
	if none {
		fmt.Fprintf(env.Stderr, "tsinspect: no Claude Code sessions under %s\n", root)
		return nil
	}
	return textout.SessionBuckets(env.Stdout, bs, o.By, o.Per, tab.Describe())
}
