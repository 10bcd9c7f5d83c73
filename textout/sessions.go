package textout

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/internal/termsafe"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// Sessions writes the listing for a terminal, and a total line.
func Sessions(w io.Writer, rows []sessionfiles.Row) error {
	w = termsafe.Writer(w)
	cols := []column{{head: "SESSION"}, {head: "PROJECT"}, {head: "START"}, {head: "TIME", right: true}, {head: "TURNS", right: true},
		{head: "AGENTS", right: true}, {head: "MODELS"}, {head: "VERSION"}, {head: "COST", right: true}, {head: "BREAKS", right: true},
		{head: "BLIND", right: true}, {head: "SEARCH", right: true}, {head: "EMPTY", right: true}}
	table := [][]string{header(cols)}
	var total, breaks float64
	var estimated []string
	turns := 0
	for _, r := range rows {
		cost := pricing.Format(r.CostUSD, true)
		switch {
		case !r.CostKnown:
			cost = "≥" + cost
		case len(r.PricedAs) > 0:
			cost = "≈" + cost
		}
		for _, p := range r.PricedAs {
			if !slices.Contains(estimated, p) {
				estimated = append(estimated, p)
			}
		}
		br := "0"
		if r.CacheBreaks > 0 {
			br = fmt.Sprintf("%d %s", r.CacheBreaks, pricing.Format(r.BreaksUSD, true))
		}
		version := orDash(r.Version)
		if !r.Requests {
			version += "*"
		}
		table = append(table, []string{r.ID[:min(8, len(r.ID))], cell(project(r), 28), r.Start.Local().Format("2006-01-02 15:04"), duration(r.End.Sub(r.Start)),
			strconv.Itoa(r.Turns), strconv.Itoa(r.Subagents), cell(shortModels(r.Models), 24), version, cost, br,
			blind(r), strconv.Itoa(r.Searches), strconv.Itoa(r.EmptySearches)})
		total += r.CostUSD
		breaks += r.BreaksUSD
		turns += r.Turns
	}
	if err := writeTable(w, cols, table); err != nil {
		return err
	}
	noun := "sessions"
	if len(rows) == 1 {
		noun = "session"
	}
	if _, err := fmt.Fprintf(w, "%d %s, %d turns, %s at list prices (built-in table or --prices), of which cache breaks %s\n", len(rows), noun, turns, pricing.Format(total, true), pricing.Format(breaks, true)); err != nil {
		return err
	}
	if len(estimated) > 0 {
		if _, err := fmt.Fprintf(w, "≈: %s\n", strings.Join(estimated, ", ")); err != nil {
			return err
		}
	}
	return nil
}

// blind is the blind calls, "-" when the files hold no requests (no
// working set to check the calls against).
func blind(r sessionfiles.Row) string {
	if !r.Requests {
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
