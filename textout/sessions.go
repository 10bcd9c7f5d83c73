package textout

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// SessionRow is one session of the listing, figures worked out.
type SessionRow struct {
	ID        string    `json:"id"`
	Path      string    `json:"path"`
	Project   string    `json:"project"`
	Cwd       string    `json:"cwd,omitempty"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Version   string    `json:"version,omitempty"`
	Requests  bool      `json:"requests_recorded"`
	Turns     int       `json:"turns"`
	Subagents int       `json:"subagents"`
	Models    []string  `json:"models"`
	// CostUSD is every answer's cost at list prices; CostKnown is false
	// when a model had no price (the figure then counts the others).
	CostUSD       float64 `json:"cost_usd"`
	CostKnown     bool    `json:"cost_known"`
	CacheBreaks   int     `json:"cache_breaks"`
	BreaksUSD     float64 `json:"cache_breaks_usd"`
	BlindCalls    int     `json:"blind_calls"`
	Searches      int     `json:"searches"`
	EmptySearches int     `json:"empty_searches"`
	InputTokens   int64   `json:"input_tokens"`
	OutputTokens  int64   `json:"output_tokens"`
	CacheRead     int64   `json:"cache_read_input_tokens"`
	CacheWrite    int64   `json:"cache_creation_input_tokens"`
	// Unknown names records of types tsinspect does not know.
	Unknown []string `json:"unknown_records,omitempty"`
}

// Sessions writes the listing for a terminal, and a total line.
func Sessions(w io.Writer, rows []SessionRow) error {
	cols := []column{{head: "SESSION"}, {head: "PROJECT"}, {head: "START"}, {head: "TIME", right: true}, {head: "TURNS", right: true},
		{head: "AGENTS", right: true}, {head: "MODELS"}, {head: "VERSION"}, {head: "COST", right: true}, {head: "BREAKS", right: true},
		{head: "BLIND", right: true}, {head: "SEARCH", right: true}, {head: "EMPTY", right: true}}
	table := [][]string{header(cols)}
	var total, breaks float64
	turns := 0
	for _, r := range rows {
		cost := pricing.Format(r.CostUSD, true)
		if !r.CostKnown {
			cost = "≥" + cost
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
			strconv.Itoa(r.BlindCalls), strconv.Itoa(r.Searches), strconv.Itoa(r.EmptySearches)})
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
	_, err := fmt.Fprintf(w, "%d %s, %d turns, %s at list prices (built-in table or --prices), of which cache breaks %s\n", len(rows), noun, turns, pricing.Format(total, true), pricing.Format(breaks, true))
	return err
}

// project is the session's directory, shortened to its last parts.
func project(r SessionRow) string {
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

// SessionRowOf works out the figures of a session's listing row at the
// prices of tab.
func SessionRowOf(s *sessionfiles.Summary, tab *pricing.Table) SessionRow {
	usd, breaks, known := s.Cost(tab)
	in, out, read, write := s.Tokens()
	return SessionRow{ID: s.ID, Path: s.Path, Project: s.Project, Cwd: s.Cwd, Start: s.Start, End: s.End, Version: s.Version,
		Requests: s.Requests, Turns: s.Turns, Subagents: s.Subagents, Models: s.Models, CostUSD: usd, CostKnown: known,
		CacheBreaks: len(s.Breaks), BreaksUSD: breaks, BlindCalls: s.BlindCalls, Searches: s.Searches, EmptySearches: s.EmptySearches,
		InputTokens: in, OutputTokens: out, CacheRead: read, CacheWrite: write, Unknown: s.Unknown}
}

// SortSessions orders the listing by "time" (newest first), or by "cost", flags or
// "turns", the highest first.
func SortSessions(rows []SessionRow, by string) {
	key := func(r SessionRow) float64 {
		switch by {
		case "cost":
			return r.CostUSD
		case "flags":
			return float64(r.CacheBreaks + r.BlindCalls + r.EmptySearches)
		case "turns":
			return float64(r.Turns)
		}
		return float64(r.End.UnixNano())
	}
	sort.SliceStable(rows, func(i, j int) bool { return key(rows[i]) > key(rows[j]) })
}
