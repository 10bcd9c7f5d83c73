package sessionfiles

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
)

// Bucket sums the answers of one period, across sessions: a day, a week
// or a month of the answers' timestamps in a time zone, and with
// BucketOptions.Per one model or one project of it.
type Bucket struct {
	// Period is "2026-11-26" (a day), the first day of a week, or "2026-11"
	// (a month).
	Period string `json:"period"`
	// Model or Project is the row's model or project with Per set.
	Model   string `json:"model,omitempty"`
	Project string `json:"project,omitempty"`
	// Sessions counts the sessions with an answer in the bucket, Answers
	// the answers.
	Sessions     int      `json:"sessions"`
	Answers      int      `json:"answers"`
	Models       []string `json:"models"`
	InputTokens  int64    `json:"input_tokens"`
	OutputTokens int64    `json:"output_tokens"`
	CacheRead    int64    `json:"cache_read_input_tokens"`
	CacheWrite   int64    `json:"cache_creation_input_tokens"`
	// CostUSD is the answers' cost at list prices; CostKnown is false when
	// some had no price (Unpriced names their models); PricedAs names the
	// models priced as a neighbour in the table. PricesTaken is the date
	// of the price table.
	CostUSD     float64  `json:"cost_usd"`
	CostKnown   bool     `json:"cost_known"`
	PricesTaken string   `json:"prices_taken"`
	PricedAs    []string `json:"priced_as,omitempty"`
	Unpriced    []string `json:"unpriced,omitempty"`
	// BreaksUSD is what the cache breaks of its answers cost (part of
	// CostUSD), each on its answer's period, as Summary.Cost prices them.
	BreaksUSD float64 `json:"cache_breaks_usd,omitempty"`

	sessions map[string]bool
	priced   Priced
}

// BucketOptions says how [Buckets] groups the answers.
type BucketOptions struct {
	// By is "day", "week" or "month".
	By string
	// Per is "" (one row a period), "model" or "project" (one row a
	// period and model, or period and project).
	Per string
	// Loc is the time zone the days begin in (ccusage's default too: the
	// system's); nil for time.Local.
	Loc *time.Location
	// WeekStart is the first day of a week (ccusage's default: Sunday).
	WeekStart time.Weekday
	// Keep keeps the sessions it is true of (nil: all; the catalog's
	// project filter);
	// From the answers at or after it (zero: all).
	Keep func(*Summary) bool
	From time.Time
}

// BucketStats counts what [Buckets] left out.
type BucketStats struct {
	// NoTime counts the answers with no timestamp: they are in no period.
	NoTime int
	// Newest is the newest answer's time.
	Newest time.Time
}

// CheckBy checks a --by value and a --per value.
func CheckBy(by, per string) error {
	switch by {
	case "day", "week", "month":
	default:
		return fmt.Errorf("--by %q: want day, week or month", by)
	}
	switch per {
	case "", "model", "project":
	default:
		return fmt.Errorf("--per %q: want model or project", per)
	}
	return nil
}

// ParseBuckets reads the flags of 'sessions --by': by and per (CheckBy),
// the time zone tz (an IANA name, "" for local time) and the first day
// of a week; sortBy must be left at "time". With by "", the others must
// be left at their defaults.
func ParseBuckets(by, per, tz, weekStart, sortBy string) (BucketOptions, error) {
	o := BucketOptions{By: by, Per: per, Loc: time.Local}
	if by == "" {
		if per != "" || tz != "" || weekStart != "sunday" {
			return o, fmt.Errorf("--per, --timezone and --week-start go with --by day|week|month")
		}
		return o, nil
	}
	if err := CheckBy(by, per); err != nil {
		return o, err
	}
	if sortBy != "time" {
		return o, fmt.Errorf("--sort goes with the list of sessions, not with --by (periods come oldest first)")
	}
	if tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			return o, fmt.Errorf("--timezone %q: not a time zone (want an IANA name such as UTC or America/New_York)", tz)
		}
		o.Loc = loc
	}
	days := map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
		"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}
	d, ok := days[strings.ToLower(weekStart)]
	if !ok {
		return o, fmt.Errorf("--week-start %q: want a day of the week (sunday, monday, ...)", weekStart)
	}
	o.WeekStart = d
	return o, nil
}

// period is the bucket of an answer made at at.
func (o BucketOptions) period(at time.Time) string {
	t := at.In(o.Loc)
	switch o.By {
	case "month":
		return t.Format("2006-01")
	case "week":
		back := (int(t.Weekday()) - int(o.WeekStart) + 7) % 7
		return time.Date(t.Year(), t.Month(), t.Day()-back, 0, 0, 0, 0, o.Loc).Format(time.DateOnly)
	}
	return t.Format(time.DateOnly)
}

// Buckets sums the answers of sums per period (and per model or project),
// oldest period first, each answer in the period of its own timestamp, as
// ccusage's daily, weekly and monthly reports count them: the same tokens
// in the same days. Costs are at tab's prices.
func Buckets(sums []*Summary, tab *pricing.Table, o BucketOptions) ([]Bucket, BucketStats, error) {
	if err := CheckBy(o.By, o.Per); err != nil {
		return nil, BucketStats{}, err
	}
	if o.Loc == nil {
		o.Loc = time.Local
	}
	var st BucketStats
	byKey := map[string]*Bucket{}
	for _, s := range sums {
		if o.Keep != nil && !o.Keep(s) {
			continue
		}
		project := s.Cwd
		if project == "" {
			project = s.Project
		}
		lost := map[int]int64{}
		for _, b := range s.Breaks {
			lost[b.Turn] += b.Lost
		}
		for ui, u := range s.Usage {
			if pricing.NotAModel(u.Model) {
				continue // Claude Code's own messages, no answer of the API
			}
			if u.At.IsZero() {
				st.NoTime++
				continue
			}
			if !o.From.IsZero() && u.At.Before(o.From) {
				continue
			}
			if u.At.After(st.Newest) {
				st.Newest = u.At
			}
			b := Bucket{Period: o.period(u.At)}
			switch o.Per {
			case "model":
				b.Model = u.Model
			case "project":
				b.Project = project
			}
			key := b.Period + "\x00" + b.Model + "\x00" + b.Project
			g := byKey[key]
			if g == nil {
				g = &b
				g.sessions = map[string]bool{}
				g.Models = []string{}
				byKey[key] = g
			}
			g.sessions[s.ID] = true
			g.Answers++
			g.Models = appendNew(g.Models, u.Model)
			g.InputTokens += u.Input
			g.OutputTokens += u.Output
			g.CacheRead += u.CacheRead
			g.CacheWrite += u.CacheWrite5m + u.CacheWrite1h
			g.priced.add(tab, u)
			if n := lost[ui]; n > 0 {
				if c, ok := tab.BreakCost(u.Model, u.pricing(), n); ok {
					g.BreaksUSD += c
				}
			}
		}
	}
	out := make([]Bucket, 0, len(byKey))
	for _, g := range byKey {
		g.Sessions = len(g.sessions)
		g.CostUSD, g.CostKnown, g.PricesTaken = g.priced.USD, g.priced.Known(), tab.Taken
		g.PricedAs, g.Unpriced = g.priced.PricedAs, g.priced.Unpriced
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Period != b.Period {
			return a.Period < b.Period
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		return a.Project < b.Project
	})
	return out, st, nil
}

// Periods is 'sessions --by': the buckets of sums (Buckets) of the newest
// limit periods (LastPeriods), and the notes to give about them, each
// "warning: ..." or "note: ...": answers in no period, a price table
// older than the answers.
func Periods(sums []*Summary, tab *pricing.Table, o BucketOptions, limit int) ([]Bucket, []string, error) {
	bs, st, err := Buckets(sums, tab, o)
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	if st.NoTime > 0 {
		notes = append(notes, fmt.Sprintf("warning: %d %s without a timestamp %s in no period", st.NoTime, numfmt.Plural(st.NoTime, "answer", "answers"), numfmt.Plural(st.NoTime, "is", "are")))
	}
	if note := tab.Staleness(st.Newest); note != "" {
		notes = append(notes, "note: "+note)
	}
	return LastPeriods(bs, limit), notes, nil
}

// LastPeriods keeps the buckets of the newest n periods (all for n <= 0).
func LastPeriods(bs []Bucket, n int) []Bucket {
	if n <= 0 {
		return bs
	}
	seen := 0
	for i := len(bs) - 1; i >= 0; i-- {
		if i == len(bs)-1 || bs[i].Period != bs[i+1].Period {
			seen++
			if seen > n {
				return bs[i+1:]
			}
		}
	}
	return bs
}

// ModelUse is how often a model answered in the sessions, and how the
// price table prices it.
type ModelUse struct {
	Model   string `json:"model"`
	Answers int    `json:"answers"`
	// PricedAs is the table entry that prices it ("" when none); Estimated
	// is set when that entry is a neighbour, not the model itself.
	PricedAs  string `json:"priced_as,omitempty"`
	Estimated bool   `json:"estimated"`
	Priced    bool   `json:"priced"`
	// FastAnswers counts its fast-mode answers; FastUnpriced is set when
	// the table has no fast-mode price for it.
	FastAnswers  int  `json:"fast_answers,omitempty"`
	FastUnpriced bool `json:"fast_unpriced,omitempty"`
	// Last is its newest answer.
	Last time.Time `json:"last"`
}

// ModelsUsed lists every model that answered in sums, most answers first,
// with how tab prices it (as of its newest answer).
func ModelsUsed(sums []*Summary, tab *pricing.Table) []ModelUse {
	by := map[string]*ModelUse{}
	for _, s := range sums {
		for _, u := range s.Usage {
			if pricing.NotAModel(u.Model) {
				continue
			}
			m := by[u.Model]
			if m == nil {
				m = &ModelUse{Model: u.Model}
				by[u.Model] = m
			}
			m.Answers++
			if u.Speed == "fast" {
				m.FastAnswers++
			}
			if u.At.After(m.Last) {
				m.Last = u.At
			}
		}
	}
	out := make([]ModelUse, 0, len(by))
	for _, m := range by {
		if p, ok := tab.LookupAt(m.Model, m.Last); ok {
			m.Priced, m.PricedAs, m.Estimated = true, p.Model.Model, p.Estimated
			m.FastUnpriced = m.FastAnswers > 0 && p.Fast == 0
		}
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Answers != out[j].Answers {
			return out[i].Answers > out[j].Answers
		}
		return out[i].Model < out[j].Model
	})
	return out
}
