package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/stats"
)

const statsAbout = `
Sum many captures into one table: a team's sessions, a CI run's. Give
capture files, Claude Code sessions (a .jsonl file, a session ID or a
prefix of one, latest), or directories: their *.db files (searched
recursively) and the Claude Code sessions in them (a projects directory,
or one project's) are read; a file there that cannot be read is skipped
with a warning.

  MCP tools    per MCP server and tool: in how many captures it was
               offered (in the catalog or the working set), how many
               tool searches found it, in how many captures its schema
               was loaded, how many times it was called, and how many of
               those calls were blind (its schema not loaded)
  flags        per flag kind: how many, per 100 turns, and in which
               captures
  cache breaks how many, the prompt tokens written to the cache again
               because of them, by cause, and what that cost in US dollars
               (list prices: the built-in table, or --prices FILE)
  clients and models
               per Claude Code version (from the User-Agent) and per
               request model: captures, turns, flags, cache breaks,
               tokens and their cost

Captures are read in parallel, one per CPU. With --json the same table is
written as JSON (field names do not change; new ones may appear). Capture
names in the output are file names relative to the directory given, or as
given.

Examples:
  tsinspect stats sessions/
  tsinspect stats a.db b.db --json > stats.json`

func runStats(env *cli.Env, args []string) error {
	flags := cli.NewFlags(env, "stats", "CAPTURE|SESSION|DIR... [--json] [--prices FILE]", statsAbout)
	asJSON := flags.Bool("json", false, "write JSON instead of a table")
	pricesPath := pricesFlag(flags)
	pos, err := cli.Args(flags, args, 1, -1, "capture files or directories")
	if err != nil {
		return err
	}
	files, err := stats.Files(pos)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return readError("stats", pos[0], fmt.Errorf("stats: no capture (*.db) in %s", strings.Join(pos, ", ")))
	}
	prices, err := loadPrices(env, *pricesPath)
	if err != nil {
		return fmt.Errorf("stats: prices: %w", err)
	}
	t, warnings, err := stats.Of(files, prices)
	for _, w := range warnings {
		fmt.Fprintf(env.Stderr, "tsinspect: stats: skipped %s\n", w)
	}
	var re *stats.ReadError
	if errors.As(err, &re) {
		return readError("stats", re.Path, err)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return t.WriteJSON(env.Stdout)
	}
	return t.WriteText(env.Stdout)
}
