package textout

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/catalog"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/internal/termsafe"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// Sessions writes the listing for a terminal, a total line naming the
// price table (prices, as pricing.Table.Describe gives it), and the
// models priced as a neighbour (≈) or not at all (≥).
func Sessions(w io.Writer, rows []sessionfiles.Row, prices string) error {
	w = termsafe.Writer(w)
	cols := []column{{head: "SESSION"}, {head: "PROJECT"}, {head: "START"}, {head: "TIME", right: true}, {head: "TURNS", right: true},
		{head: "AGENTS", right: true}, {head: "MODELS"}, {head: "VERSION"}, {head: "COST", right: true}, {head: "BREAKS", right: true},
		{head: "BLIND", right: true}, {head: "SEARCH", right: true}, {head: "EMPTY", right: true}, {head: "PART", right: true}}
	table := [][]string{header(cols)}
	var total, breaks float64
	var estimated, unpriced []string
	turns, lower := 0, false
	for _, r := range rows {
		for _, p := range r.PricedAs {
			if !slices.Contains(estimated, p) {
				estimated = append(estimated, p)
			}
		}
		for _, p := range r.Unpriced {
			if !slices.Contains(unpriced, p) {
				unpriced = append(unpriced, p)
			}
		}
		cells := SessionCells(r)
		cells[0] = r.ID[:min(8, len(r.ID))]
		cells[1] = cell(cells[1], 28)
		cells[6] = cell(cells[6], 24)
		table = append(table, cells)
		total += r.CostUSD
		breaks += r.BreaksUSD
		turns += r.Turns
		lower = lower || r.OutputPlaceholders > 0
	}
	if err := writeTable(w, cols, table); err != nil {
		return err
	}
	noun := "sessions"
	if len(rows) == 1 {
		noun = "session"
	}
	mark := ""
	if len(unpriced) > 0 || lower {
		mark = "≥"
	} else if len(estimated) > 0 {
		mark = "≈"
	}
	if _, err := fmt.Fprintf(w, "%d %s, %d turns, %s%s at %s, of which cache breaks %s\n", len(rows), noun, turns, mark, pricing.Format(total, true), prices, pricing.Format(breaks, true)); err != nil {
		return err
	}
	if err := pricedNotes(w, estimated, unpriced); err != nil {
		return err
	}
	return rowNotes(w, rows)
}

// SessionColumns are the headings of the session listing's columns, the
// order SessionCells gives them in.
func SessionColumns() []string {
	return []string{"SESSION", "PROJECT", "START", "TIME", "TURNS", "AGENTS", "MODELS", "VERSION", "COST", "BREAKS", "BLIND", "SEARCH", "EMPTY", "PART"}
}

// SessionCells are the cells of one session in the listing, as the table
// writes them but whole (the ID, the project and the models uncut): its
// start in local time, the cost marked ≥ (a model without a price) or ≈
// (priced as a neighbour), the cache breaks with what they cost, the blind
// calls ("-" when the release wrote no catalog), a version marked * when
// the files hold no request records.
func SessionCells(r sessionfiles.Row) []string {
	cost := pricing.Format(r.CostUSD, true)
	switch {
	case !r.CostKnown, r.OutputPlaceholders > 0:
		cost = "≥" + cost
	case len(r.PricedAs) > 0:
		cost = "≈" + cost
	}
	br := "0"
	if r.CacheBreaks > 0 {
		br = fmt.Sprintf("%d %s", r.CacheBreaks, pricing.Format(r.BreaksUSD, true))
	}
	version := orDash(r.Version)
	if !r.Requests {
		version += "*"
	}
	return []string{r.ID, orDash(project(r)), r.Start.Local().Format("2006-01-02 15:04"), duration(r.End.Sub(r.Start)),
		strconv.Itoa(r.Turns), agents(r), orDash(shortModels(r.Models)), version, cost, br,
		blind(r), strconv.Itoa(r.Searches), strconv.Itoa(r.EmptySearches), strconv.Itoa(r.PartialSearches)}
}

// agents is the AGENTS cell: the subagents, marked † when the main file
// is absent.
func agents(r sessionfiles.Row) string {
	if r.SubagentsOnly {
		return strconv.Itoa(r.Subagents) + "†"
	}
	return strconv.Itoa(r.Subagents)
}

// pricedNotes writes the lines that say which models were priced as a
// neighbour (≈) and which had no price (≥: left out, or at standard
// rates for fast mode).
func pricedNotes(w io.Writer, estimated, unpriced []string) error {
	slices.Sort(estimated)
	slices.Sort(unpriced)
	if len(estimated) > 0 {
		if _, err := fmt.Fprintf(w, "≈: %s\n", strings.Join(estimated, ", ")); err != nil {
			return err
		}
	}
	if len(unpriced) > 0 {
		if _, err := fmt.Fprintf(w, "≥ no price for %s: left out of the cost, or at standard rates for fast mode (see 'tsinspect prices')\n", strings.Join(unpriced, ", ")); err != nil {
			return err
		}
	}
	return nil
}

// rowNotes writes the lines that explain the marks of the rows
// (catalog.MarkNotes), and the lines and usage left out.
func rowNotes(w io.Writer, rows []sessionfiles.Row) error {
	for _, n := range catalog.MarkNotes(rows) {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	bad := 0
	for _, r := range rows {
		bad += r.BadLines
	}
	if bad > 0 {
		first := ""
		for _, r := range rows {
			if r.FirstBadLine != "" {
				first = r.FirstBadLine
				break
			}
		}
		if _, err := fmt.Fprintf(w, "%s left out (not JSON records; first: %s): the figures count the rest\n", numfmt.Count(bad, "line", "lines"), first); err != nil {
			return err
		}
	}
	usage, firstUsage := 0, ""
	for _, r := range rows {
		usage += r.UsageProblems
		if firstUsage == "" && r.FirstUsageProblem != "" {
			firstUsage = r.ID[:min(8, len(r.ID))] + " " + r.FirstUsageProblem
		}
	}
	if usage > 0 {
		if _, err := fmt.Fprintf(w, "≥: %s whose usage could not be read whole (first: %s): what could not be read counts 0\n", numfmt.Count(usage, "answer", "answers"), firstUsage); err != nil {
			return err
		}
	}
	return nil
}

// blind is the blind calls, "-" when the files hold no catalog to check
// the calls against (releases that wrote none).
func blind(r sessionfiles.Row) string {
	if !r.CatalogRecorded {
		// Only calls the client refused as unknown tools are known.
		if r.BlindCalls > 0 {
			return "≥" + strconv.Itoa(r.BlindCalls)
		}
		return "-"
	}
	return strconv.Itoa(r.BlindCalls)
}

// project is the session's directory, shortened to its last parts.
func project(r sessionfiles.Row) string {
	p := r.Cwd
	if p == "" {
		return r.Project
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return strings.Join(parts, "/")
}

func shortModels(ms []string) string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = strings.TrimPrefix(m, "claude-")
	}
	return strings.Join(out, ",")
}

func duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}
