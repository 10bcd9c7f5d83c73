package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tsinspect/tsinspect/catalog"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/report"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/textout"
	"github.com/tsinspect/tsinspect/timeline"
)

// item is one session of the listing: a Claude Code session (sum set) or a
// capture file.
type item struct {
	key  string // its address: /s/KEY
	path string
	sum  *sessionfiles.Summary // nil for a capture
	row  sessionfiles.Row      // its figures, not redacted
	// shown is the project as a redacted page shows it, plain as a page
	// that shows everything does (see listing.display).
	shown, plain string
	// days are the session's answers summed per day (local time), for the
	// chart; nil for a capture.
	days []sessionfiles.Bucket
}

// flagged reports whether the session had a cache break, a blind call or
// a search that found nothing or part of what it named (catalog.Flagged).
func (it *item) flagged() bool { return catalog.Flagged(it.row) }

// capturedRow is a capture's row, kept while the file is unchanged. A
// capture that changed since it was first read (one 'record' is writing)
// is followed: each change is read from where the last stopped, as 'open
// --follow' reads it, until it has not changed for idle.
type capturedRow struct {
	stamp   string
	row     sessionfiles.Row
	err     error
	follow  source.Following
	changed time.Time
}

// listing is every session the server shows: the Claude Code sessions
// under its directories, through the listing's index (read, never
// written: its updates stay in memory), and the capture files it was
// given. It is read again when asked and something changed on disk.
type listing struct {
	roots, files []string
	tab          *pricing.Table
	version      string // tsinspect's

	mu    sync.Mutex
	index string           // the listing's index file, read, never written
	cat   *catalog.Catalog // the sessions under roots, once found
	// budget bounds the files of a session the listing reads (Options.Budget).
	budget   int64
	items    []*item // newest first
	byKey    map[string]*item
	stamp    string
	gen      uint64 // counts the changes of items
	checked  time.Time
	last     ScanStats
	problems []string // what could not be read, at the last reading
	captures map[string]capturedRow
	// known are the items of the sessions read, by summary: a session the
	// index still holds keeps its item, its figures worked out once.
	known map[*sessionfiles.Summary]*item
	red   *redactor // the redacted view's pseudonyms (projects), for the server's life
	team  Team      // a team's store the sessions are read from (nil: disk)
}

// ScanStats says what a reading of the listing did.
type ScanStats struct {
	// Sessions counts the sessions listed, Read those read afresh (Bytes
	// of files), Cached those taken from the index.
	Sessions, Read, Cached int
	Bytes                  int64
	// Problems names what could not be read.
	Problems []string
	Took     time.Duration
}

func newListing(opts *Options) *listing {
	return &listing{roots: opts.Roots, files: opts.Files, tab: opts.Prices, version: opts.Version, budget: opts.Budget,
		index: opts.Index, captures: map[string]capturedRow{},
		known: map[*sessionfiles.Summary]*item{}, red: newRedactor(opts.redactedPolicy(), nil), team: opts.Team}
}

// refresh reads the listing again when it was last read at least minAge
// ago and a file changed since; it returns the generation of the items.
func (l *listing) refresh(ctx context.Context, minAge time.Duration) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.checked.IsZero() && time.Since(l.checked) < minAge {
		return l.gen, nil
	}
	started := time.Now()
	l.checked = started
	if l.team != nil {
		return l.refreshTeam(ctx, started)
	}
	var problems []string
	var entries []sessionfiles.Entry
	switch {
	case len(l.roots) == 0:
		// Captures only.
	case l.cat == nil:
		// The catalog's road, read-only: the index is read once and its
		// updates stay in memory.
		cat, err := catalog.Open(catalog.Options{Index: l.index, NoIndex: l.index == "", ReadOnly: true}, l.roots...)
		if err != nil {
			return 0, err
		}
		l.cat = cat
	default:
		l.cat.Refresh()
	}
	if l.cat != nil {
		problems = append(problems, l.cat.Warnings...)
		entries = l.cat.Entries
	}
	h := sha256.New()
	for _, e := range entries {
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", e.Path, e.Size, e.ModTime.UnixNano())
	}
	stamps := make([]string, len(l.files))
	for i, f := range l.files {
		stamps[i] = fileStamp(f)
		fmt.Fprintf(h, "%s\x00%s\n", f, stamps[i])
	}
	stamp := hex.EncodeToString(h.Sum(nil))
	if stamp == l.stamp {
		return l.gen, nil
	}
	// A session whose files are over the budget is not read, not even
	// for its row: named, with how to raise the budget.
	kept := entries[:0:0]
	for _, e := range entries {
		if e.Size > l.budget {
			problems = append(problems, fmt.Sprintf("%s: %s, more than the server's budget of %s: not read (start tsinspect serve with --budget %s or more to read it)",
				e.Path, numfmt.Bytes(e.Size), numfmt.Bytes(l.budget), budgetHint(e.Size)))
			continue
		}
		kept = append(kept, e)
	}
	var sums []*sessionfiles.Summary
	var st sessionfiles.ScanStats
	if l.cat != nil {
		sums, st = l.cat.Read(kept, nil)
	}
	for _, err := range st.Failed {
		problems = append(problems, err.Error())
	}
	l.known = l.itemsOf(sums)
	var items []*item
	for _, s := range sums {
		if it := l.known[s]; it != nil {
			it.row.Subagents = s.Subagents // the listing's own, from the files
			items = append(items, it)
		}
	}
	for i, f := range l.files {
		c, ok := l.captures[f]
		switch {
		case !ok:
			row, err := captureRow(ctx, f, l.tab, l.version)
			c = capturedRow{stamp: stamps[i], row: row, err: err, changed: time.Now()}
		case c.stamp != stamps[i]:
			if next, done := l.followCapture(ctx, f, c); done {
				c = next
				c.stamp, c.changed = stamps[i], time.Now()
			} else {
				// Stopped (its request gone): read at the next refresh.
				c, stamp = next, ""
			}
		}
		l.captures[f] = c
		if c.err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f, c.err))
			continue
		}
		it := &item{path: f, row: c.row}
		it.shown, it.plain = l.display(it)
		items = append(items, it)
	}
	l.install(items, stamp, problems)
	l.last = ScanStats{Sessions: len(items), Read: st.Read, Cached: st.Cached, Bytes: st.Bytes, Problems: problems, Took: time.Since(started)}
	return l.gen, nil
}

// install makes items, newest first, the listing's, each with its key.
func (l *listing) install(items []*item, stamp string, problems []string) {
	slices.SortStableFunc(items, func(a, b *item) int { return b.row.End.Compare(a.row.End) })
	l.byKey = map[string]*item{}
	for _, it := range items {
		base := it.row.ID
		if it.sum == nil {
			base = filepath.Base(it.path)
		}
		key := urlSafe(base)
		for n := 2; l.byKey[key] != nil; n++ {
			key = urlSafe(base) + "-" + strconv.Itoa(n)
		}
		it.key = key
		if it.sum == nil {
			it.row.ID = key
		}
		l.byKey[key] = it
	}
	l.items, l.stamp, l.problems = items, stamp, problems
	l.gen++
}

// itemsOf returns the items of sums (nil for a file that holds no
// conversation): those of the last reading for the summaries it had, the
// others' figures worked out anew, on every core (pricing each answer is
// most of a first reading's time here). The project shown is worked out
// in order, so that pseudonyms are numbered as the list runs.
func (l *listing) itemsOf(sums []*sessionfiles.Summary) map[*sessionfiles.Summary]*item {
	out := make(map[*sessionfiles.Summary]*item, len(sums))
	var todo []*sessionfiles.Summary
	for _, s := range sums {
		if it, ok := l.known[s]; ok {
			out[s] = it
		} else {
			todo = append(todo, s)
		}
	}
	made := make([]*item, len(todo))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := todo[i]
				rows := sessionfiles.Rows([]*sessionfiles.Summary{s}, l.tab)
				if len(rows) != 1 {
					continue
				}
				it := &item{path: s.Path, sum: s, row: rows[0]}
				it.days, _, _ = sessionfiles.Buckets([]*sessionfiles.Summary{s}, l.tab, sessionfiles.BucketOptions{By: "day", Loc: time.Local})
				made[i] = it
			}
		}()
	}
	for i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, s := range todo {
		if it := made[i]; it != nil {
			it.shown, it.plain = l.display(it)
		}
		out[s] = made[i]
	}
	return out
}

// urlSafe keeps the characters of s that need no escaping in a path.
func urlSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
	if s == "" || s == "." || s == ".." {
		s = "session"
	}
	return s
}

// fileStamp is what tells that a capture changed: its size and time, and
// its write-ahead log's while it is being recorded.
func fileStamp(path string) string {
	var b strings.Builder
	for _, p := range []string{path, path + "-wal"} {
		if info, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "%d.%d;", info.Size(), info.ModTime().UnixNano())
		} else {
			b.WriteString("-;")
		}
	}
	return b.String()
}

// followCapture reads what changed in the capture at path since c was
// read, following it from now on (its first poll reads it whole once).
// done is false when ctx stopped the reading: c is as it was, not
// followed.
func (l *listing) followCapture(ctx context.Context, path string, c capturedRow) (_ capturedRow, done bool) {
	if c.follow == nil {
		c.follow = source.Follow(path)
	}
	got, err := c.follow.Poll(ctx)
	if err != nil {
		c.follow.Close()
		c.follow = nil
		if ctx.Err() != nil {
			return c, false
		}
		c.err = err
		return c, true
	}
	if got != nil {
		c.row, c.err = rowOf(path, got, l.tab, l.version), nil
	}
	return c, true
}

// sweep lets go of the captures followed that were not written for
// idle (all of them when all is set, as the server stops).
func (l *listing) sweep(all bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for f, c := range l.captures {
		if c.follow != nil && (all || time.Since(c.changed) > idle) {
			c.follow.Close()
			c.follow = nil
			l.captures[f] = c
		}
	}
}

// captureRow reads a capture whole and works out its listing row: the
// report's figures, as 'tsinspect report' prices them.
func captureRow(ctx context.Context, path string, tab *pricing.Table, version string) (sessionfiles.Row, error) {
	b, problems, err := source.ReadFile(ctx, path)
	if err != nil {
		return sessionfiles.Row{}, err
	}
	_ = problems // the session page names them
	return rowOf(path, b.Session(), tab, version), nil
}

// rowOf is the listing row of the capture at path, read as s.
func rowOf(path string, s *timeline.Session, tab *pricing.Table, version string) sessionfiles.Row {
	abs, _ := filepath.Abs(path)
	row := sessionfiles.Row{Path: path, Cwd: abs, Start: s.FirstAt, End: s.LastAt, Turns: len(s.Turns), Requests: true,
		CatalogRecorded: true, CostKnown: true, PricesTaken: tab.Taken}
	if n := len(s.Turns); n > 0 && s.Turns[n-1].Exchange != nil && s.Turns[n-1].Exchange.End.After(row.End) {
		row.End = s.Turns[n-1].Exchange.End
	}
	for _, th := range s.Threads {
		if th.Kind == timeline.KindSubagent {
			row.Subagents++
		}
		if row.Version == "" && th.Client.Version != "" {
			row.Version = th.Client.Version
		}
	}
	r := report.Build(s, version)
	r.Price(tab)
	for _, t := range r.Turns {
		if t.Model != "" && !slices.Contains(row.Models, t.Model) {
			row.Models = append(row.Models, t.Model)
		}
		row.InputTokens += t.Usage.InputTokens
		row.OutputTokens += t.Usage.OutputTokens
		row.CacheRead += t.Usage.CacheReadInputTokens
		row.CacheWrite += t.Usage.CacheCreationInputTokens
		for _, q := range t.ToolSearches {
			row.Searches++
			if q.NoMatch || len(q.Results) == 0 {
				row.EmptySearches++
			}
		}
	}
	if c := r.Costs; c != nil {
		row.CostUSD, row.CacheBreaks, row.BreaksUSD, row.BlindCalls = c.TotalUSD, c.CacheBreaks, c.CacheBreaksUSD, c.BlindCalls
		row.CostKnown = len(c.Unpriced) == 0 && c.UsageProblems == 0
		row.Unpriced = c.Unpriced
		row.PricedAs = append(row.PricedAs, c.Estimated...)
	}
	return row
}

// query is what the sessions page asks of the listing: the filters of
// 'tsinspect sessions' and its order.
type query struct {
	Project string
	From    time.Time // active since; zero for any
	Model   string
	Flagged bool
	Sort    string // time, cost, flags or turns
	By      string // the chart's periods: day or week
}

// display is the project pages show for it: under redaction a pseudonym
// of the whole directory, otherwise its directory's last two parts.
func (l *listing) display(it *item) (shown, plain string) {
	plain = textout.SessionCells(sessionfiles.Row{Cwd: it.row.Cwd, Project: it.row.Project})[1]
	if it.sum == nil {
		return filepath.Base(it.path), plain // a capture: its name is its address
	}
	p := it.row.Cwd
	if p == "" {
		p = "/" + strings.ReplaceAll(strings.TrimPrefix(it.row.Project, "-"), "-", "/")
	}
	return l.red.text(p), plain
}

// project is it's project as a page shows it, redacted or not.
func (it *item) project(redacted bool) string {
	if redacted {
		return it.shown
	}
	return it.plain
}

// redactor is the listing's redactor for a page redacted or not.
func (l *listing) redactor(redacted bool) *redactor {
	if redacted {
		return l.red
	}
	return newRedactor(redact.Off, nil)
}

// matches reports whether it passes q's filters: the project as
// 'sessions --project' matches it (its directory), or under redaction as
// it is shown (a pseudonym: the directory is not to be guessed at).
func (l *listing) matches(it *item, q query, redacted bool) bool {
	cq := catalog.Query{Project: q.Project, Since: q.From, Model: q.Model, Flagged: q.Flagged}
	if redacted {
		if q.Project != "" && !strings.Contains(strings.ToLower(it.shown), strings.ToLower(q.Project)) {
			return false
		}
		cq.Project = ""
	}
	return cq.Keeps(it.row)
}

// sessionsView is the sessions page's data.
type sessionsView struct {
	Gen     uint64    `json:"gen"`
	Columns []string  `json:"columns"`
	Rows    []rowView `json:"rows"`
	Total   string    `json:"total"`
	Notes   []string  `json:"notes"`
	Chart   []dayView `json:"chart"`
	ChartOf string    `json:"chart_of"`
	// ChartSVG is the chart drawn (the server's SVG, set by the handler).
	ChartSVG string     `json:"chart_svg"`
	Issues   []string   `json:"problems,omitempty"`
	Counts   countsView `json:"counts"`
}

// rowView is one session's row: its address, its cells as 'sessions'
// writes them, and whether it is flagged.
type rowView struct {
	Key     string   `json:"key"`
	Cells   []string `json:"cells"`
	Flagged bool     `json:"flagged,omitempty"`
	Capture bool     `json:"capture,omitempty"`
}

// dayView is one day (or week) of the cost chart: its cost, what its
// cache breaks cost (part of it), and what hovering it says.
type dayView struct {
	Day       string  `json:"day"`
	USD       float64 `json:"usd"`
	BreaksUSD float64 `json:"breaks_usd"`
	Text      string  `json:"text"`
}

// countsView are the totals of the sessions shown.
type countsView struct {
	Sessions    int    `json:"sessions"`
	Listed      int    `json:"listed"`
	Turns       int    `json:"turns"`
	Cost        string `json:"cost"`
	CacheBreaks int    `json:"cache_breaks"`
	BreaksCost  string `json:"breaks_cost"`
	BlindCalls  int    `json:"blind_calls"`
	Searches    int    `json:"searches"`
	Empty       int    `json:"empty_searches"`
	Tokens      string `json:"tokens"`
}

// view works out the sessions page's data for q, redacted or not.
func (l *listing) view(q query, redacted bool) (*sessionsView, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rd := l.redactor(redacted)
	var shown []*item
	for _, it := range l.items {
		if l.matches(it, q, redacted) {
			shown = append(shown, it)
		}
	}
	rows := make([]sessionfiles.Row, len(shown))
	byID := map[string]*item{}
	for i, it := range shown {
		rows[i] = it.row
		byID[it.row.ID+"\x00"+it.path] = it
	}
	sessionfiles.SortRows(rows, q.Sort)
	v := &sessionsView{Gen: l.gen, Columns: textout.SessionColumns(), Issues: rd.all(l.problems), Rows: []rowView{}, Notes: []string{}, Chart: []dayView{}}
	var total, breaks float64
	var estimated, unpriced []string
	var in, out, read, write int64
	var marked []sessionfiles.Row // the rows shown, for the notes on their marks
	lower := false                // a cost is a lower bound
	sessions := 0
	for _, r := range rows {
		it := byID[r.ID+"\x00"+r.Path]
		red := r
		red.Cwd, red.Project = it.project(redacted), ""
		red.Models = nil
		for _, m := range r.Models {
			red.Models = append(red.Models, rd.model(m))
		}
		red.Version = rd.text(r.Version)
		cells := textout.SessionCells(red)
		v.Rows = append(v.Rows, rowView{Key: it.key, Cells: cells, Flagged: it.flagged(), Capture: it.sum == nil})
		total += r.CostUSD
		breaks += r.BreaksUSD
		c := &v.Counts
		c.Turns += r.Turns
		c.CacheBreaks += r.CacheBreaks
		c.BlindCalls += r.BlindCalls
		c.Searches += r.Searches
		c.Empty += r.EmptySearches
		in, out, read, write = in+r.InputTokens, out+r.OutputTokens, read+r.CacheRead, write+r.CacheWrite
		for _, p := range r.PricedAs {
			if p = rd.modelPhrase(p); !slices.Contains(estimated, p) {
				estimated = append(estimated, p)
			}
		}
		for _, p := range r.Unpriced {
			if p = rd.modelPhrase(p); !slices.Contains(unpriced, p) {
				unpriced = append(unpriced, p)
			}
		}
		if !r.CostKnown && len(r.Unpriced) == 0 && !slices.Contains(unpriced, "some answers' usage") {
			unpriced = append(unpriced, "some answers' usage")
		}
		marked = append(marked, red)
		lower = lower || r.OutputPlaceholders > 0
		if it.sum != nil {
			sessions++
		}
	}
	mark := ""
	if len(unpriced) > 0 || lower {
		mark = "≥"
	} else if len(estimated) > 0 {
		mark = "≈"
	}
	c := &v.Counts
	c.Sessions, c.Listed = len(rows), len(l.items)
	c.Cost = mark + pricing.Format(total, true)
	c.BreaksCost = pricing.Format(breaks, true)
	c.Tokens = fmt.Sprintf("%s input, %s output, %s cache read, %s cache written", numfmt.Thousands(in), numfmt.Thousands(out), numfmt.Thousands(read), numfmt.Thousands(write))
	v.Total = fmt.Sprintf("%s, %s, %s at %s, of which cache breaks %s", numfmt.Count(len(rows), "session", "sessions"),
		numfmt.Count(c.Turns, "turn", "turns"), c.Cost, rd.text(l.tab.Describe()), c.BreaksCost)
	slices.Sort(estimated)
	slices.Sort(unpriced)
	if len(estimated) > 0 {
		v.Notes = append(v.Notes, "≈: "+strings.Join(estimated, ", "))
	}
	if len(unpriced) > 0 {
		v.Notes = append(v.Notes, "≥ no price for "+strings.Join(unpriced, ", ")+": left out of the cost, or at standard rates for fast mode (see 'tsinspect prices')")
	}
	v.Notes = append(v.Notes, catalog.MarkNotes(marked)...)
	v.Chart = chartOf(shown, q.From, q.By)
	v.ChartOf = "each answer of the session files shown on the day of its own timestamp (local time), as 'tsinspect sessions --by day' counts it; a cache break's cost on its answer's day"
	if q.By == "week" {
		v.ChartOf = "each answer of the session files shown in the week (from Sunday, local time) of its own timestamp, as 'tsinspect sessions --by week' counts it; a cache break's cost on its answer's week"
	}
	if !q.From.IsZero() {
		v.ChartOf += ", from the day of since on"
	}
	if sessions < len(rows) {
		v.ChartOf += "; captures are not in it"
	}
	return v, nil
}

// chartOf sums the sessions' answers per day or per week (by), from
// the day of from on (all for the zero time), oldest first, with a
// period of no answer between two that have some: the chart's axis is
// time. A week begins on Sunday, as 'sessions --by week' has it.
func chartOf(items []*item, from time.Time, by string) []dayView {
	type day struct {
		usd, breaks        float64
		answers            int
		sessions           map[string]bool
		unknown, estimated bool
	}
	first := ""
	if !from.IsZero() {
		first = from.In(time.Local).Format("2006-01-02")
	}
	step := 1
	if by == "week" {
		step = 7
	}
	period := func(d string) string {
		t, err := time.Parse("2006-01-02", d)
		if err != nil || step == 1 {
			return d
		}
		return t.AddDate(0, 0, -int(t.Weekday())).Format("2006-01-02")
	}
	byDay := map[string]*day{}
	for _, it := range items {
		for _, b := range it.days {
			if b.Period < first {
				continue
			}
			k := period(b.Period)
			d := byDay[k]
			if d == nil {
				d = &day{sessions: map[string]bool{}}
				byDay[k] = d
			}
			d.usd += b.CostUSD
			d.breaks += b.BreaksUSD
			d.answers += b.Answers
			d.sessions[it.path] = true
			d.unknown = d.unknown || !b.CostKnown
			d.estimated = d.estimated || len(b.PricedAs) > 0
		}
	}
	days := make([]string, 0, len(byDay))
	for k := range byDay {
		days = append(days, k)
	}
	slices.Sort(days)
	if len(days) > 1 {
		// The periods between, with no answer.
		last, _ := time.Parse("2006-01-02", days[len(days)-1])
		t, _ := time.Parse("2006-01-02", days[0])
		var all []string
		for ; !t.After(last) && len(all) < 3660; t = t.AddDate(0, 0, step) {
			all = append(all, t.Format("2006-01-02"))
		}
		days = all
	}
	out := make([]dayView, 0, len(days))
	for _, k := range days {
		d := byDay[k]
		if d == nil {
			what := "no answer"
			if step == 7 {
				out = append(out, dayView{Day: k, Text: "week of " + k + ": " + what})
			} else {
				out = append(out, dayView{Day: k, Text: k + ": " + what})
			}
			continue
		}
		mark := ""
		if d.unknown {
			mark = "≥"
		} else if d.estimated {
			mark = "≈"
		}
		name := k
		if step == 7 {
			name = "week of " + k
		}
		out = append(out, dayView{Day: k, USD: d.usd, BreaksUSD: d.breaks,
			Text: fmt.Sprintf("%s: %s%s, %s, %s", name, mark, pricing.Format(d.usd, true), numfmt.Count(d.answers, "answer", "answers"), numfmt.Count(len(d.sessions), "session", "sessions"))})
	}
	return out
}

// lookup returns the session with the given key, or nil.
func (l *listing) lookup(key string) *item {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byKey[key]
}

// stats says what the last reading did.
func (l *listing) stats() ScanStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// titleOf is the session's project as a page shows it, redacted or not.
func (l *listing) titleOf(it *item, redacted bool) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return it.project(redacted)
}
