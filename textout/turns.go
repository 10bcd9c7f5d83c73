package textout

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/internal/termsafe"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/report"
)

// turnsColumns are the columns of the turns table.
var turnsColumns = []column{
	{"TURN", true}, {"THREAD", false}, {"MODEL", false}, {"CAT", false}, {"WS", false},
	{"SRCH", true}, {"CALLS", true}, {"INPUT", true}, {"CACHE-RD", true},
	{"CACHE-NEW", true}, {"OUTPUT", true}, {"COST", true}, {"STOP", false}, {"FLAGS", false},
}

// threadsColumns are the columns of the threads table under the turns.
var threadsColumns = []column{{"THREAD", false}, {"KIND", false}, {"TURNS", true}, {"CLIENT", false}}

// Turns writes the listing of the turns command for the turns of r (those
// shown; r priced): a line per turn and a totals line; then, when a turn
// is shown, a line naming the prices (prices, as pricing.Table.Describe
// says them), with what the cache breaks and blind calls cost and what
// deferral saved when whole (every turn of the capture is shown); then,
// after a blank line, a line per thread with a turn shown.
func Turns(w io.Writer, r *report.Report, prices string, whole bool) error {
	w = termsafe.Writer(w)
	if err := writeTurnsTable(w, r); err != nil {
		return err
	}
	if len(r.Turns) > 0 {
		notes := ""
		if whole {
			notes = costNotes(r) // the figures are the whole capture's
		}
		if r.Costs != nil && len(r.Costs.Estimated) > 0 {
			// What the ≈ marks mean: "≈: claude-opus-5-5 priced as claude-opus-4-5".
			notes = "; ≈: " + strings.ReplaceAll(strings.Join(r.Costs.Estimated, ", "), " as ", " priced as ") + notes
		}
		if _, err := fmt.Fprintf(w, "US dollars at %s%s\n", prices, notes); err != nil {
			return err
		}
		if r.Costs != nil && r.Costs.UsageProblems > 0 {
			if _, err := fmt.Fprintf(w, "≥: %s whose usage could not be read whole (see 'report'): what could not be read counts 0\n", numfmt.Count(r.Costs.UsageProblems, "turn", "turns")); err != nil {
				return err
			}
		}
		if r.Costs != nil && r.Costs.OutputPlaceholders > 0 {
			if _, err := fmt.Fprintf(w, "OUTPUT ≥: %s whose output tokens are the placeholder Claude Code wrote when the answer began (Claude Code up to 2.1.52 writes no final count in its files): output and cost are lower bounds\n", numfmt.Count(r.Costs.OutputPlaceholders, "turn", "turns")); err != nil {
				return err
			}
		}
		if note := transcriptNote(r); note != "" {
			if _, err := fmt.Fprintln(w, note); err != nil {
				return err
			}
		}
	}
	return writeThreadsTable(w, r)
}

// writeTurnsTable writes one line per turn and a totals line.
func writeTurnsTable(w io.Writer, r *report.Report) error {
	rows := [][]string{header(turnsColumns)}
	var in, read, created, out int64
	var usd float64
	priced, estimated := false, false
	for _, t := range r.Turns {
		cost := "-"
		if c := t.Cost; c != nil {
			usd += c.USD
			priced = true
			cost = pricing.Format(c.USD, true)
			switch {
			case t.OutputPlaceholder:
				cost = "≥" + cost
			case c.Estimated:
				cost = "≈" + cost
			}
			estimated = estimated || c.Estimated
		}
		u := t.Usage
		in += u.InputTokens
		read += u.CacheReadInputTokens
		created += u.CacheCreationInputTokens
		out += u.OutputTokens
		rows = append(rows, []string{
			strconv.Itoa(t.Index),
			t.Thread,
			orDash(decode.ShortModel(t.Model)),
			catalogCell(t),
			workingCell(t),
			strconv.Itoa(len(t.ToolSearches)),
			strconv.Itoa(len(t.ToolCalls)),
			numfmt.Thousands(u.InputTokens),
			numfmt.Thousands(u.CacheReadInputTokens),
			numfmt.Thousands(u.CacheCreationInputTokens),
			outputCell(t),
			cost,
			t.StopText(),
			flagKinds(t.Flags),
		})
	}
	if len(r.Turns) > 0 {
		total := make([]string, len(turnsColumns))
		total[0] = ""
		total[1] = "total"
		total[7], total[8], total[9], total[10] = numfmt.Thousands(in), numfmt.Thousands(read), numfmt.Thousands(created), numfmt.Thousands(out)
		placeholders := r.Costs != nil && r.Costs.OutputPlaceholders > 0
		if placeholders {
			total[10] = "≥" + total[10]
		}
		total[11] = "-"
		if priced {
			total[11] = pricing.Format(usd, true)
			switch {
			case r.Costs != nil && r.Costs.UsageProblems > 0, placeholders:
				total[11] = "≥" + total[11]
			case estimated:
				total[11] = "≈" + total[11]
			}
		}
		rows = append(rows, total)
	}
	return writeTable(w, turnsColumns, rows)
}

// outputCell is a turn's output tokens, marked ≥ when they are a
// placeholder (a lower bound).
func outputCell(t report.Turn) string {
	if t.OutputPlaceholder {
		return "≥" + numfmt.Thousands(t.Usage.OutputTokens)
	}
	return numfmt.Thousands(t.Usage.OutputTokens)
}

// catalogCell is a turn's catalog size and change, "-" when its release
// wrote none.
func catalogCell(t report.Turn) string {
	if t.Catalog.NotRecorded {
		return "-"
	}
	return sizeDelta(t.Catalog.Count, len(t.Catalog.Added), len(t.Catalog.Removed))
}

// workingCell is a turn's working-set size and change, marked * when only
// its deferred tools are known (a turn made from a transcript).
func workingCell(t report.Turn) string {
	c := sizeDelta(t.WorkingSet.Count, len(t.WorkingSet.Added), len(t.WorkingSet.Removed))
	if t.WorkingSet.DeferredOnly {
		if i := strings.IndexByte(c, ' '); i >= 0 {
			return c[:i] + "*" + c[i:]
		}
		return c + "*"
	}
	return c
}

// transcriptNote says what the marks of turns made from a transcript
// mean, "" when no turn shown is one.
func transcriptNote(r *report.Report) string {
	ws, cat := false, false
	for _, t := range r.Turns {
		ws = ws || t.WorkingSet.DeferredOnly
		cat = cat || t.Catalog.NotRecorded
	}
	var parts []string
	if ws {
		parts = append(parts, "WS*: the deferred tools loaded only (made from Claude Code's transcript, which does not hold the tools sent)")
	}
	if cat {
		parts = append(parts, "CAT -: this release wrote no deferred-tool catalog, so no call can be told to be blind")
	}
	return strings.Join(parts, "; ")
}

// writeThreadsTable writes, after a blank line, one line per thread with a
// turn shown: its kind, the number of its turns shown, and its client.
func writeThreadsTable(w io.Writer, r *report.Report) error {
	shown := map[string]int{}
	for _, t := range r.Turns {
		shown[t.Thread]++
	}
	rows := [][]string{header(threadsColumns)}
	for _, th := range r.Threads {
		if shown[th.ID] == 0 {
			continue
		}
		rows = append(rows, []string{th.ID, th.Kind, strconv.Itoa(shown[th.ID]), th.Client.String()})
	}
	if len(rows) == 1 {
		return nil
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return writeTable(w, threadsColumns, rows)
}

// costNotes is what the session's cache breaks and blind calls cost (as
// parts of the total) and what deferral saved, for the prices line ("" when
// not priced).
func costNotes(r *report.Report) string {
	c := r.Costs
	if c == nil {
		return ""
	}
	var parts []string
	if c.CacheBreaks > 0 {
		parts = append(parts, fmt.Sprintf("cache breaks %s", pricing.Format(c.CacheBreaksUSD, true)))
	}
	if c.BlindCalls > 0 {
		parts = append(parts, fmt.Sprintf("blind calls %s", pricing.Format(c.BlindCallsUSD, true)))
	}
	s := ""
	if len(parts) > 0 {
		s = "; of the total, " + strings.Join(parts, " and ")
	}
	return s + "; " + c.DeferralText()
}
