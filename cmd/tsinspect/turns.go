package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/tsinspect/tsinspect/filter"
	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/report"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/textout"
	"github.com/tsinspect/tsinspect/timeline"
)

const turnsAbout = `
List the Messages API turns of a capture, one per line:

  TURN     the turn number (capture order; what 'report' calls index)
  THREAD   main, subN (a subagent), sideN (a Claude Code side query)
           or convN (another conversation of a client that is not
           Claude Code)
  MODEL    the requested model, without "claude-" and a date suffix
  CAT      deferred tools announced to the model (the catalog), with
           +added -removed since the thread's previous turn
  WS       tools the model can call (the working set), +added -removed
  SRCH     tool searches whose result this turn carries
  CALLS    tool calls in the response
  INPUT, CACHE-RD, CACHE-NEW, OUTPUT
           usage: uncached input, cache read, cache written, output tokens
  COST     the turn's price in US dollars from the built-in price table
           (or --prices FILE, or the prices.json of 'tsinspect prices');
           "≈" when the model is not in the table and is priced as a
           neighbour in it, "-" when it has no price
  STOP     stop reason; else "HTTP 529" and the like, "error: TYPE" for
           an error event, "incomplete" for a cut stream
  FLAGS    kinds of the flags raised on the turn, with a count when >1

A last line sums the tokens and dollars of the turns shown; the line after
it says which prices were used and, when every turn is shown, what the
cache breaks and blind calls cost and what deferral saved. Below, after a
blank line, one line per thread shown: THREAD, KIND (main, subagent, side,
conversation), TURNS shown, and CLIENT, the program that sent it with its
version ("Claude Code 2.1.328", "Anthropic TypeScript SDK 0.71.0", or the
User-Agent of another client). With --json, one JSON object per turn
(JSON Lines) instead: the turn objects of 'tsinspect report' (schema
version 1: fields never renamed or removed), not redacted. --thread keeps one thread,
--flagged the turns with a flag, --filter the turns matching an expression:
flag:KIND, model:TEXT, tool:GLOB (a tool the response calls), thread:ID,
cost>DOLLARS, tokens>N (also >=, <, <=, =), combined with and, or, not and
parentheses; terms side by side mean and. Works on a capture that is still
being written. For everything per turn, use 'tsinspect report'.

Examples:
  tsinspect turns session.db
  tsinspect turns session.db --thread sub1
  tsinspect turns session.db --flagged`

func runTurns(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "turns", "FILE [--thread ID] [--flagged] [--filter EXPR] [--prices FILE] [--json]", turnsAbout)
	thread := fs.String("thread", "", "only this `thread` (main, sub1, side1, ...)")
	flagged := fs.Bool("flagged", false, "only the turns with a flag")
	prices := pricesFlag(fs)
	asJSON := fs.Bool("json", false, "write JSON Lines, one report turn object per turn")
	where := fs.String("filter", "", "only the turns matching this `expression` (flag:cache_break, model:opus, tool:mcp__github__*, thread:sub1, cost>0.05, tokens>100000; and, or, not, parentheses)")
	pos, err := cli.Args(fs, args, 1, 1, "one capture FILE")
	if err != nil {
		return err
	}
	tab, err := loadPrices(env, *prices)
	if err != nil {
		return err
	}
	var expr filter.Expr
	if *where != "" {
		if expr, err = (filter.Options{FlagKinds: timeline.Kinds()}).Parse(*where); err != nil {
			return cli.Usage("turns: --filter: %v", strings.TrimPrefix(err.Error(), "filter: "))
		}
	}
	s, err := source.LoadSession(pos[0], env.Stderr)
	if err != nil {
		return readError("turns", pos[0], err)
	}
	if err := s.CheckThread(*thread); err != nil {
		return cli.Usage("turns: --thread %v", err)
	}
	r := report.Build(s, version)
	r.Price(tab)
	all := r.Keep(s, *thread, *flagged, expr)
	if *asJSON {
		r.Normalize()
		if err := textout.JSONLines(env.Stdout, r.Turns); err != nil {
			return fmt.Errorf("turns: %w", err)
		}
	} else if err := textout.Turns(env.Stdout, r, tab.Describe(), len(r.Turns) == all); err != nil {
		return fmt.Errorf("turns: write: %w", err)
	}
	switch {
	case all == 0:
		fmt.Fprintf(env.Stderr, "tsinspect: no Messages API turns in %s (%s)\n", pos[0], numfmt.Count(s.Exchanges, "exchange", "exchanges"))
	case len(r.Turns) == 0:
		fmt.Fprintf(env.Stderr, "tsinspect: none of the %s of %s is shown\n", numfmt.Count(all, "turn", "turns"), pos[0])
	}
	return nil
}

// pricesFlag declares --prices on fs.
func pricesFlag(fs *flag.FlagSet) *string {
	return fs.String("prices", "", "price `FILE`: the built-in table's JSON form, or LiteLLM's model_prices_and_context_window.json; default: your price file if you have one, else the built-in prices (see 'tsinspect prices')")
}

// loadPrices returns the table in path, or for "" the user's price file
// or the built-in table, and says once what the file's entries left out
// or priced twice (each with its line).
func loadPrices(env *cli.Env, path string) (*pricing.Table, error) {
	t, err := pricing.LoadFor(path)
	if err != nil {
		return nil, err
	}
	for _, w := range t.Warnings {
		fmt.Fprintf(env.Stderr, "tsinspect: warning: prices %s: %s\n", t.File, w)
	}
	return t, nil
}
