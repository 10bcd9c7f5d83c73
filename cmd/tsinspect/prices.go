package main

import (
	"errors"
	"fmt"

	"github.com/tsinspect/tsinspect/catalog"
	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/textout"
)

const pricesAbout = `
Show the price table every dollar figure of tsinspect comes from: its
date and source, each model's rates (US dollars per million tokens) with
the date they were read and where, long-context tiers, fast-mode
multipliers, web search and the batch discount; then which models of
your Claude Code sessions (DIR, or as 'tsinspect sessions' finds them)
it prices as a neighbour (≈) or not at all (≥).

The table is the built-in one, or --prices FILE, or without --prices the
price file in your configuration directory when there is one
(~/.config/tsinspect/prices.json on Linux; the path is shown). A file
is either a whole table in the built-in form (the "table" of tsinspect
prices --json is one), LiteLLM's model_prices_and_context_window.json (what ccusage
reads; its models are laid over the built-in table), or a few models
over the built-in table:

  {"extends": "built-in", "taken": "2026-12-01",
   "models": [{"model": "claude-opus-5-5", "input": 3, "output": 15}]}

Cache rates left out are 1.25× (5-minute writes), 2× (1-hour writes)
and 0.1× (reads) the input rate.

Examples:
  tsinspect prices
  tsinspect prices --prices model_prices_and_context_window.json
  tsinspect prices --no-sessions --json`

func runPrices(env *cli.Env, args []string) error {
	flags := cli.NewFlags(env, "prices", "[DIR] [--json] [--no-sessions] [--no-index] [--prices FILE]", pricesAbout)
	asJSON := flags.Bool("json", false, "write the table (in the built-in form) and the models of your sessions as one JSON object")
	noSessions := flags.Bool("no-sessions", false, "show the table only, without reading your sessions")
	noIndex := flags.Bool("no-index", false, "read every session afresh, neither using nor updating the index")
	prices := pricesFlag(flags)
	pos, err := cli.Args(flags, args, 0, 1, "at most one directory")
	if err != nil {
		return err
	}
	if *noSessions && len(pos) == 1 {
		return cli.Usage("prices: a DIR of sessions and --no-sessions do not go together")
	}
	tab, err := loadPrices(env, *prices)
	if err != nil {
		return err
	}
	v := textout.PricesView{Table: tab}
	v.ConfigFile, _ = pricing.ConfigPath()
	if !*noSessions {
		c, sums, _, err := catalog.OpenRead(env.Stderr, catalog.Options{NoIndex: *noIndex}, pos...)
		switch {
		case errors.Is(err, sessionfiles.ErrNoSession) && len(pos) == 0:
			fmt.Fprintf(env.Stderr, "tsinspect: prices: no sessions to check: %v\n", err)
		case err != nil:
			return err
		default:
			v.SetUsed(c.Root, len(c.Entries), sessionfiles.ModelsUsed(sums, tab))
		}
	}
	if *asJSON {
		return textout.PricesJSON(env.Stdout, v)
	}
	return textout.Prices(env.Stdout, v)
}
