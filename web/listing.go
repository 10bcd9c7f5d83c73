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
	// shown is the project as pages show it (see listing.display).
	shown string
	// days are the session's answers summed per day (local time), for the
	// chart; nil for a capture.
	days []sessionfiles.Bucket
}

// flagged reports whether the session had a cache break, a blind call or
// a search that found nothing or part of what it named (catalog.Flagged).
func (it *item) flagged() bool { return catalog.Flagged(it.row) }

// capturedRow is a capture's row, kept while the file is unchanged.
type capturedRow struct {
	stamp string
	row   sessionfiles.Row
	err   error
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
	red   *redactor // the listing's pseudonyms (projects), for the server's life
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
		known: map[*sessionfiles.Summary]*item{}, red: newRedactor(opts.Policy, nil), team: opts.Team}
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
		if !ok || c.stamp != stamps[i] {
			row, err := captureRow(ctx, f, l.tab, l.version)
			c = capturedRow{stamp: stamps[i], row: row, err: err}
			l.captures[f] = c
		}
		if c.err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f, c.err))
			continue
		}
		it := &item{path: f, row: c.row}
		it.shown = l.display(it)
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
			it.shown = l.display(it)
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

// captureRow reads a capture whole and works out its listing row: the
// report's figures, as 'tsinspect report' prices them.
func captureRow(ctx context.Context, path string, tab *pricing.Table, version string) (sessionfiles.Row, error) {
	b, problems, err := source.ReadFile(ctx, path)
	if err != nil {
		return sessionfiles.Row{}, err
	}
	_ = problems // the session page names them
	s := b.Session()
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
	return row, nil
}

// query is what the sessions page asks of the listing: the filters of
// 'tsinspect sessions' and its order.
type query struct {
	Project string
	From    time.Time // active since; zero for any
	Model   string
	Flagged bool
	Sort    string // time, cost, flags or turns
}

// display is the project a page shows for it: its directory's last two
// parts, or under redaction a pseudonym of the whole.
func (l *listing) display(it *item) string {
	if l.red.on() {
		if it.sum == nil {
			return filepath.Base(it.path) // a capture: its name is its address
		}
		p := it.row.Cwd
		if p == "" {
			p = "/" + strings.ReplaceAll(strings.TrimPrefix(it.row.Project, "-"), "-", "/")
		}
		return l.red.text(p)
	}
	return textout.SessionCells(sessionfiles.Row{Cwd: it.row.Cwd, Project: it.row.Project})[1]
}

// matches reports whether it passes q's filters (the project as shown
// under redaction, as 'sessions --project' matches it otherwise).
func (l *listing) matches(it *item, q query) bool {
	cq := catalog.Query{Project: q.Project, Since: q.From, Model: q.Model, Flagged: q.Flagged}
	if l.red.on() {
		// The project shown is a pseudonym: matched as it is shown.
		if q.Project != "" && !strings.Contains(strings.ToLower(it.shown), strings.ToLower(q.Project)) {
			return false
		}
		cq.Project = ""
	}
	return cq.Keeps(it.row)
}

// sessionsView is the sessions page's data.
type sessionsView struct {
	Gen     uint64     `json:"gen"`
	Columns []string   `json:"columns"`
	Rows    []rowView  `json:"rows"`
	Total   string     `json:"total"`
	Notes   []string   `json:"notes"`
	Chart   []dayView  `json:"chart"`
	ChartOf string     `json:"chart_of"`
	Issues  []string   `json:"problems,omitempty"`
	Counts  countsView `json:"counts"`
}

// rowView is one session's row: its address, its cells as 'sessions'
// writes them, and whether it is flagged.
type rowView struct {
	Key     string   `json:"key"`
	Cells   []string `json:"cells"`
	Flagged bool     `json:"flagged,omitempty"`
	Capture bool     `json:"capture,omitempty"`
}

// dayView is one day of the cost chart.
type dayView struct {
	Day  string  `json:"day"`
	USD  float64 `json:"usd"`
	Text string  `json:"text"`
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

// view works out the sessions page's data for q.
func (l *listing) view(q query) (*sessionsView, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var shown []*item
	for _, it := range l.items {
		if l.matches(it, q) {
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
	v := &sessionsView{Gen: l.gen, Columns: textout.SessionColumns(), Issues: l.red.all(l.problems), Rows: []rowView{}, Notes: []string{}, Chart: []dayView{}}
	var total, breaks float64
	var estimated, unpriced []string
	var in, out, read, write int64
	var marked []sessionfiles.Row // the rows shown, for the notes on their marks
	lower := false                // a cost is a lower bound
	sessions := 0
	for _, r := range rows {
		it := byID[r.ID+"\x00"+r.Path]
		red := r
		red.Cwd, red.Project = it.shown, ""
		red.Models = nil
		for _, m := range r.Models {
			red.Models = append(red.Models, l.red.model(m))
		}
		red.Version = l.red.text(r.Version)
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
			if p = l.red.modelPhrase(p); !slices.Contains(estimated, p) {
				estimated = append(estimated, p)
			}
		}
		for _, p := range r.Unpriced {
			if p = l.red.modelPhrase(p); !slices.Contains(unpriced, p) {
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
		numfmt.Count(c.Turns, "turn", "turns"), c.Cost, l.red.text(l.tab.Describe()), c.BreaksCost)
	slices.Sort(estimated)
	slices.Sort(unpriced)
	if len(estimated) > 0 {
		v.Notes = append(v.Notes, "≈: "+strings.Join(estimated, ", "))
	}
	if len(unpriced) > 0 {
		v.Notes = append(v.Notes, "≥ no price for "+strings.Join(unpriced, ", ")+": left out of the cost, or at standard rates for fast mode (see 'tsinspect prices')")
	}
	v.Notes = append(v.Notes, catalog.MarkNotes(marked)...)
	v.Chart = chartOf(shown, q.From)
	v.ChartOf = "each answer of the session files shown on the day of its own timestamp (local time), as 'tsinspect sessions --by day' counts it"
	if !q.From.IsZero() {
		v.ChartOf += ", from the day of since on"
	}
	if sessions < len(rows) {
		v.ChartOf += "; captures are not in it"
	}
	return v, nil
}

// chartOf sums the sessions' answers per day, from the day of from on
// (all for the zero time), oldest first.
func chartOf(items []*item, from time.Time) []dayView {
	type day struct {
		usd                float64
		answers, sessions  int
		unknown, estimated bool
	}
	first := ""
	if !from.IsZero() {
		first = from.In(time.Local).Format("2006-01-02")
	}
	byDay := map[string]*day{}
	for _, it := range items {
		for _, b := range it.days {
			if b.Period < first {
				continue
			}
			d := byDay[b.Period]
			if d == nil {
				d = &day{}
				byDay[b.Period] = d
			}
			d.usd += b.CostUSD
			d.answers += b.Answers
			d.sessions++
			d.unknown = d.unknown || !b.CostKnown
			d.estimated = d.estimated || len(b.PricedAs) > 0
		}
	}
	days := make([]string, 0, len(byDay))
	for k := range byDay {
		days = append(days, k)
	}
	slices.Sort(days)
	out := make([]dayView, 0, len(days))
	for _, k := range days {
		d := byDay[k]
		mark := ""
		if d.unknown {
			mark = "≥"
		} else if d.estimated {
			mark = "≈"
		}
		out = append(out, dayView{Day: k, USD: d.usd,
			Text: fmt.Sprintf("%s: %s%s, %s, %s", k, mark, pricing.Format(d.usd, true), numfmt.Count(d.answers, "answer", "answers"), numfmt.Count(d.sessions, "session", "sessions"))})
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

// titleOf is the session's project as pages show it.
func (l *listing) titleOf(it *item) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return it.shown
}
