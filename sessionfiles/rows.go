package sessionfiles

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/pricing"
)

// Row is one session of the listing, its figures worked out.
type Row struct {
	ID       string    `json:"id"`
	Path     string    `json:"path"`
	Project  string    `json:"project"`
	Cwd      string    `json:"cwd,omitempty"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Version  string    `json:"version,omitempty"`
	Requests bool      `json:"requests_recorded"`
	// CatalogRecorded: the files announce the deferred-tool catalog;
	// without it BlindCalls is not known.
	CatalogRecorded bool `json:"catalog_recorded"`
	Turns           int  `json:"turns"`
	Subagents       int  `json:"subagents"`
	// SubagentsOnly: the main file is absent; read from the subagents'
	// files alone.
	SubagentsOnly bool `json:"subagents_only,omitempty"`
	// OutputPlaceholders counts the answers whose output tokens are a
	// placeholder (Summary.OutputPlaceholders): the cost is a lower bound.
	OutputPlaceholders int      `json:"output_placeholders,omitempty"`
	Models             []string `json:"models"`
	// CostUSD is every answer's cost at list prices; CostKnown is false
	// when a model had no price (the figure then counts the others, and
	// Unpriced names them). PricesTaken is the date of the price table.
	CostUSD       float64 `json:"cost_usd"`
	CostKnown     bool    `json:"cost_known"`
	PricesTaken   string  `json:"prices_taken"`
	CacheBreaks   int     `json:"cache_breaks"`
	BreaksUSD     float64 `json:"cache_breaks_usd"`
	BlindCalls    int     `json:"blind_calls"`
	Searches      int     `json:"searches"`
	EmptySearches int     `json:"empty_searches"`
	// PartialSearches counts the searches that loaded part of the tools
	// they named (search_partial), PartialMissing the tools left out.
	PartialSearches int      `json:"partial_searches,omitempty"`
	PartialMissing  []string `json:"partial_missing,omitempty"`
	InputTokens     int64    `json:"input_tokens"`
	OutputTokens    int64    `json:"output_tokens"`
	CacheRead       int64    `json:"cache_read_input_tokens"`
	CacheWrite      int64    `json:"cache_creation_input_tokens"`
	// PricedAs lists the models priced as a neighbour in the table ("model
	// as other"): the cost is then an estimate.
	PricedAs []string `json:"priced_as,omitempty"`
	// Unpriced names the models with no price, and "MODEL (fast mode)"
	// for fast-mode answers of a model with no fast-mode price.
	Unpriced []string `json:"unpriced,omitempty"`
	// Unknown names records of types tsinspect does not know.
	Unknown []string `json:"unknown_records,omitempty"`
	// BadLines counts the lines that are not JSON records (left out),
	// FirstBadLine names the first.
	BadLines     int    `json:"bad_lines,omitempty"`
	FirstBadLine string `json:"first_bad_line,omitempty"`
	// UsageProblems counts the answers whose usage could not be read
	// whole (their unreadable counts are 0: CostKnown is false),
	// FirstUsageProblem says the first.
	UsageProblems     int    `json:"usage_problems,omitempty"`
	FirstUsageProblem string `json:"first_usage_problem,omitempty"`
}

// RowOf works out a listing row's figures with the prices of tab.
func RowOf(s *Summary, tab *pricing.Table) Row {
	p := s.Cost(tab)
	in, out, read, write := s.Tokens()
	r := Row{ID: s.ID, Path: s.Path, Project: s.Project, Cwd: s.Cwd, Start: s.Start, End: s.End, Version: s.Version,
		Requests: s.Requests, CatalogRecorded: s.CatalogRecorded, Turns: s.Turns, Subagents: s.Subagents, SubagentsOnly: s.SubagentsOnly, OutputPlaceholders: s.OutputPlaceholders, Models: s.Models, CostUSD: p.USD, CostKnown: p.Known(),
		PricesTaken: tab.Taken, CacheBreaks: len(s.Breaks), BreaksUSD: p.BreaksUSD, BlindCalls: s.BlindCalls, Searches: s.Searches, EmptySearches: s.EmptySearches,
		PartialSearches: s.PartialSearches, PartialMissing: s.PartialMissing,
		InputTokens: in, OutputTokens: out, CacheRead: read, CacheWrite: write, Unknown: s.Unknown, PricedAs: p.PricedAs, Unpriced: p.Unpriced,
		BadLines: s.BadLines, FirstBadLine: s.FirstBadLine, UsageProblems: s.UsageProblems, FirstUsageProblem: s.FirstUsageProblem}
	if s.UsageProblems > 0 {
		r.CostKnown = false // a count read as 0 is a lower bound
	}
	return r
}

// SortRows orders the listing: by "time" (newest first), or by "cost",
// "flags" or "turns", the highest first.
func SortRows(rows []Row, by string) {
	key := func(r Row) float64 {
		switch by {
		case "cost":
			return r.CostUSD
		case "flags":
			return float64(r.CacheBreaks + r.BlindCalls + r.EmptySearches + r.PartialSearches)
		case "turns":
			return float64(r.Turns)
		}
		return float64(r.End.UnixNano())
	}
	sort.SliceStable(rows, func(i, j int) bool { return key(rows[i]) > key(rows[j]) })
}

// ParseSince reads a --since value: a date (2026-11-01, local time), or
// a span back from now (36h, 7d).
func ParseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		return t, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if d, err := strconv.Atoi(n); err == nil && d >= 0 {
			return now.AddDate(0, 0, -d), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("want a date (2026-11-01) or a span (36h, 7d)")
}

// Rows works out the listing rows (RowOf) of the sessions in sums; files
// that hold no conversation (summaries only, or nothing) are left out.
// Which rows a listing keeps, and in which order, is the catalog's.
func Rows(sums []*Summary, tab *pricing.Table) []Row {
	var rows []Row
	for _, s := range sums {
		if s.Turns == 0 && s.Start.IsZero() && s.BadLines == 0 {
			// No conversation at all: a file of summaries only (Claude
			// Code 1.x and 2.0 write one on --resume), or an empty one.
			continue
		}
		rows = append(rows, RowOf(s, tab))
	}
	return rows
}
