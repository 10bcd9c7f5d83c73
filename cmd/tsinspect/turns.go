package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/numfmt"
	"github.com/tsinspect/tsinspect/report"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline"
)

const turnsAbout = `
List the Messages API turns of a capture, one per line:

  TURN     the turn number (capture order; what 'report' calls index)
  THREAD   main, subN (a subagent) or sideN (a side query)
  MODEL    the requested model, without "claude-" and a date suffix
  CAT      deferred tools announced to the model (the catalog), with
           +added -removed since the thread's previous turn
  WS       tools the model can call (the working set), +added -removed
  SRCH     tool searches whose result this turn carries
  CALLS    tool calls in the response
  INPUT, CACHE-RD, CACHE-NEW, OUTPUT
           usage: uncached input, cache read, cache written, output tokens
  STOP     stop reason; else "HTTP 529" and the like, "error: TYPE" for
           an error event, "incomplete" for a cut stream
  FLAGS    kinds of the flags raised on the turn, with a count when >1

A last line sums the tokens of the turns shown. --thread keeps one thread,
--flagged the turns with a flag. Works on a capture that is still being
written. For everything per turn, use 'tsinspect report'.

Examples:
  tsinspect turns session.db
  tsinspect turns session.db --thread sub1
  tsinspect turns session.db --flagged`

func runTurns(env *cliEnv, args []string) error {
	fs := newFlags(env, "turns", "FILE [--thread ID] [--flagged]", turnsAbout)
	thread := fs.String("thread", "", "only this `thread` (main, sub1, side1, ...)")
	flagged := fs.Bool("flagged", false, "only the turns with a flag")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("turns: want one capture FILE (see 'tsinspect turns -h')")
	}
	s, err := loadSession(pos[0])
	if err != nil {
		return err
	}
	if err := checkThread("turns", s, *thread); err != nil {
		return err
	}
	r := report.Build(s, version)
	all := len(r.Turns)
	if *thread != "" || *flagged {
		kept := r.Turns[:0]
		for _, t := range r.Turns {
			if (*thread == "" || t.Thread == *thread) && (!*flagged || len(t.Flags) > 0) {
				kept = append(kept, t)
			}
		}
		r.Turns = kept
	}
	if err := writeTurnsTable(env.stdout, r); err != nil {
		return fmt.Errorf("turns: write: %w", err)
	}
	switch {
	case all == 0:
		fmt.Fprintf(env.stderr, "tsinspect: no Messages API turns in %s (%s)\n", pos[0], numfmt.Count(s.Exchanges, "exchange", "exchanges"))
	case len(r.Turns) == 0:
		fmt.Fprintf(env.stderr, "tsinspect: none of the %s of %s is shown\n", numfmt.Count(all, "turn", "turns"), pos[0])
	}
	return nil
}

// checkThread refuses a --thread the session does not have, listing the
// ones it has; "" is fine.
func checkThread(cmd string, s *timeline.Session, id string) error {
	if id == "" {
		return nil
	}
	var ids []string
	for _, th := range s.Threads {
		if th.ID == id {
			return nil
		}
		ids = append(ids, th.ID)
	}
	return usageError("%s: --thread %q: the capture's threads are %s", cmd, id, strings.Join(ids, ", "))
}

// loadSession reads a capture file and builds its timeline, without the
// bodies of its Messages exchanges.
func loadSession(path string) (*timeline.Session, error) {
	b, err := streamSession(path)
	if err != nil {
		return nil, err
	}
	return b.Session(), nil
}

// streamSession reads a capture file an exchange at a time into a
// timeline.Builder that drops the bodies of Messages exchanges once
// decoded: memory follows what the session holds, not the sum of its
// requests, each of which repeats the history.
func streamSession(path string) (*timeline.Builder, error) {
	db, err := store.OpenReadOnly(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	b := timeline.NewBuilder(false)
	err = db.Stream(context.Background(), 0, func(ex *exchange.Exchange) error {
		b.Add(ex)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// parseInterspersed parses flags that may come before or after the
// positional arguments ("turns FILE" and "report FILE --out x" both work)
// and returns the positional ones. Everything after "--" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		left := fs.Args()
		if len(left) == 0 {
			break
		}
		pos = append(pos, left[0])
		args = left[1:]
	}
	return append(pos, rest...), nil
}

// turnsColumn is one column of the turns table.
type turnsColumn struct {
	head  string
	right bool // right-aligned (numbers)
}

var turnsColumns = []turnsColumn{
	{"TURN", true}, {"THREAD", false}, {"MODEL", false}, {"CAT", false}, {"WS", false},
	{"SRCH", true}, {"CALLS", true}, {"INPUT", true}, {"CACHE-RD", true},
	{"CACHE-NEW", true}, {"OUTPUT", true}, {"STOP", false}, {"FLAGS", false},
}

// writeTurnsTable writes one line per turn and a totals line.
func writeTurnsTable(w io.Writer, r *report.Report) error {
	rows := [][]string{}
	head := make([]string, len(turnsColumns))
	for i, c := range turnsColumns {
		head[i] = c.head
	}
	rows = append(rows, head)
	var in, read, created, out int64
	for _, t := range r.Turns {
		u := t.Usage
		in += u.InputTokens
		read += u.CacheReadInputTokens
		created += u.CacheCreationInputTokens
		out += u.OutputTokens
		rows = append(rows, []string{
			strconv.Itoa(t.Index),
			t.Thread,
			orDash(decode.ShortModel(t.Model)),
			sizeDelta(t.Catalog.Count, len(t.Catalog.Added), len(t.Catalog.Removed)),
			sizeDelta(t.WorkingSet.Count, len(t.WorkingSet.Added), len(t.WorkingSet.Removed)),
			strconv.Itoa(len(t.ToolSearches)),
			strconv.Itoa(len(t.ToolCalls)),
			numfmt.Thousands(u.InputTokens),
			numfmt.Thousands(u.CacheReadInputTokens),
			numfmt.Thousands(u.CacheCreationInputTokens),
			numfmt.Thousands(u.OutputTokens),
			stopText(t),
			flagKinds(t.Flags),
		})
	}
	if len(r.Turns) > 0 {
		total := make([]string, len(turnsColumns))
		total[0] = ""
		total[1] = "total"
		total[7], total[8], total[9], total[10] = numfmt.Thousands(in), numfmt.Thousands(read), numfmt.Thousands(created), numfmt.Thousands(out)
		rows = append(rows, total)
	}
	widths := make([]int, len(turnsColumns))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		b.Reset()
		for i, cell := range row {
			pad := widths[i] - utf8.RuneCountInString(cell)
			switch {
			case i == 0:
			case turnsColumns[i].right && turnsColumns[i-1].right:
				b.WriteString(" ") // numbers stay apart by their alignment
			default:
				b.WriteString("  ")
			}
			switch {
			case turnsColumns[i].right:
				b.WriteString(strings.Repeat(" ", pad))
				b.WriteString(cell)
			case i == len(row)-1:
				b.WriteString(cell)
			default:
				b.WriteString(cell)
				b.WriteString(strings.Repeat(" ", pad))
			}
		}
		line := strings.TrimRight(b.String(), " ") + "\n"
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	return nil
}

// sizeDelta formats a size with its change: "41", "13 +1", "12 -2",
// "13 +2 -1".
func sizeDelta(n, added, removed int) string {
	s := strconv.Itoa(n)
	if added > 0 {
		s += " +" + strconv.Itoa(added)
	}
	if removed > 0 {
		s += " -" + strconv.Itoa(removed)
	}
	return s
}

// stopText is the stop reason, or what went wrong instead.
func stopText(t report.Turn) string {
	switch {
	case t.Status == 0:
		return "no response"
	case t.Status != 200:
		return fmt.Sprintf("HTTP %d", t.Status)
	case t.Error != nil:
		return "error: " + t.Error.Type
	case t.Incomplete:
		return "incomplete"
	case t.StopReason == "":
		return "-"
	}
	return t.StopReason
}

// flagKinds lists the kinds of fs in order, "kind(N)" when repeated.
func flagKinds(fs []report.Flag) string {
	var kinds []string
	count := map[string]int{}
	for _, f := range fs {
		if count[f.Kind] == 0 {
			kinds = append(kinds, f.Kind)
		}
		count[f.Kind]++
	}
	for i, k := range kinds {
		if count[k] > 1 {
			kinds[i] = fmt.Sprintf("%s(%d)", k, count[k])
		}
	}
	return strings.Join(kinds, ",")
}

// orDash is s, or "-" for an empty s.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
