package team

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/catalog"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// count is SELECT count(*) of what sql names.
func count(t *testing.T, url, sql string, args ...any) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// TestPushTwiceReadsBack pushes real sessions, reads them back as the
// listing and the advice, checks their figures against the same listing
// read from disk, and pushes them again: nothing changes.
func TestPushTwiceReadsBack(t *testing.T) {
	c := startCluster(t)
	url := c.NewDB("twice")
	root := copySessions(t, "alice")
	st := push(t, url, "alice", "laptop", root)
	if st.Sessions == 0 || st.Pushed != st.Sessions || st.Unchanged != 0 {
		t.Fatalf("first push: %+v, want every session pushed", st)
	}
	tab := pricing.Default()
	_, sums, _, err := catalog.OpenRead(os.Stderr, catalog.Options{NoIndex: true}, root)
	if err != nil {
		t.Fatal(err)
	}
	disk := catalog.List(sums, tab, catalog.Query{})
	if disk.Totals.Sessions != st.Sessions {
		t.Fatalf("pushed %d sessions, the listing on disk has %d", st.Sessions, disk.Totals.Sessions)
	}
	s, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Summaries(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	team := catalog.List(got, tab, catalog.Query{})
	if team.Totals.Sessions != disk.Totals.Sessions || team.Totals.Turns != disk.Totals.Turns ||
		math.Abs(team.Totals.CostUSD-disk.Totals.CostUSD) > 1e-9 || math.Abs(team.Totals.BreaksUSD-disk.Totals.BreaksUSD) > 1e-9 {
		t.Fatalf("the store's totals %+v differ from the disk's %+v", team.Totals, disk.Totals)
	}
	for _, r := range team.Rows {
		if r.Path != "" || !strings.HasPrefix(r.Cwd, "alice@laptop · ") || strings.Contains(r.Cwd, "/home/") {
			t.Fatalf("row %s: path %q, project %q: want no path, the person and the project's name", r.ID, r.Path, r.Cwd)
		}
	}
	// The listing read from the store's columns is the listing on disk,
	// row by row.
	cols, err := s.Listing(context.Background(), Filter{}, catalog.Query{Sort: "cost"})
	if err != nil {
		t.Fatal(err)
	}
	want := catalog.List(sums, tab, catalog.Query{Sort: "cost"})
	if len(cols.Rows) != len(want.Rows) || cols.Totals.Mark != want.Totals.Mark || !slices.Equal(cols.Notes, want.Notes) {
		t.Fatalf("the store's listing: %d rows, mark %q, notes %q; on disk %d, %q, %q", len(cols.Rows), cols.Totals.Mark, cols.Notes, len(want.Rows), want.Totals.Mark, want.Notes)
	}
	for i, r := range cols.Rows {
		w := want.Rows[i]
		if r.ID != w.ID || r.Turns != w.Turns || math.Abs(r.CostUSD-w.CostUSD) > 1e-9 || r.CacheBreaks != w.CacheBreaks || r.BlindCalls != w.BlindCalls ||
			r.Searches != w.Searches || r.CostKnown != w.CostKnown || !r.Start.Equal(w.Start) || !r.End.Equal(w.End) || !slices.Equal(r.Models, w.Models) {
			t.Errorf("row %d: the store has %+v, the disk %+v", i, r, w)
		}
	}
	// The store's filters, order and limit are the catalog's.
	full, err := s.Listing(context.Background(), Filter{}, catalog.Query{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []catalog.Query{{Project: "alice@"}, {Project: "nobody"}, {Model: "OPUS"}, {Flagged: true, Sort: "flags"},
		{Sort: "turns", Limit: 3}, {Since: full.Rows[2].End}, {Until: full.Rows[2].Start, Sort: "cost"}} {
		got, err := s.Listing(context.Background(), Filter{}, q)
		if err != nil {
			t.Fatal(err)
		}
		want := catalog.Select(full.Rows, q)
		ids := func(rs []sessionfiles.Row) []string {
			var out []string
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		if q.Sort == "" || q.Sort == "time" || q.Sort == "cost" {
			if !slices.Equal(ids(got.Rows), ids(want)) {
				t.Errorf("%+v: the store lists %v, the catalog %v", q, ids(got.Rows), ids(want))
			}
		} else if len(got.Rows) != len(want) {
			// Ties in flags or turns may fall in another order.
			t.Errorf("%+v: the store lists %d rows, the catalog %d", q, len(got.Rows), len(want))
		}
	}
	// The SQL a dashboard runs agrees with the listing: cost, turns.
	var cost float64
	var turns int
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), `SELECT sum(cost_usd), sum(turns) FROM sessions`).Scan(&cost, &turns); err != nil {
		t.Fatal(err)
	}
	if math.Abs(cost-disk.Totals.CostUSD) > 1e-6 || turns != disk.Totals.Turns {
		t.Fatalf("SQL: $%f over %d turns, the listing $%f over %d", cost, turns, disk.Totals.CostUSD, disk.Totals.Turns)
	}
	var turnCost float64
	if err := conn.QueryRow(context.Background(), `SELECT sum(cost_usd) FROM turns`).Scan(&turnCost); err != nil {
		t.Fatal(err)
	}
	if math.Abs(turnCost-disk.Totals.CostUSD) > 1e-6 {
		t.Fatalf("the turns' cost $%f differs from the sessions' $%f", turnCost, disk.Totals.CostUSD)
	}
	// The advice from the store is the advice from disk.
	facts, err := s.Facts(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	found, err := catalog.Open(catalog.Options{NoIndex: true}, root)
	if err != nil {
		t.Fatal(err)
	}
	diskFacts, _, err := found.Facts(catalog.Query{}, catalog.FactsOptions{Prices: tab, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	a, b := advice.Advise(facts, advice.Options{MinSessions: 2}), advice.Advise(diskFacts, advice.Options{MinSessions: 2})
	if a.Sessions != b.Sessions || len(a.Advice) != len(b.Advice) || math.Abs(a.USD-b.USD) > 1e-9 {
		t.Fatalf("advice from the store: %d sessions, %d pieces, $%f; from disk %d, %d, $%f", a.Sessions, len(a.Advice), a.USD, b.Sessions, len(b.Advice), b.USD)
	}
	if len(a.Advice) == 0 {
		t.Fatal("no advice from the public sessions: the comparison proves nothing")
	}
	// Each request's catalog and working set, and each search with what
	// it loaded, as the timeline has them.
	if n, want := count(t, url, `SELECT count(*) FROM searches`), count(t, url, `SELECT sum(searches) FROM sessions`); n != want || n == 0 {
		t.Fatalf("%d search rows, the listing counts %d searches", n, want)
	}
	if n := count(t, url, `SELECT count(*) FROM requests WHERE working_set_size > 0 AND catalog_size > 0`); n == 0 {
		t.Fatal("no request with a catalog and a working set")
	}
	if n, want := count(t, url, `SELECT count(*) FROM searches WHERE cardinality(loaded) = 0 AND NOT server`), count(t, url, `SELECT sum(empty_searches) FROM sessions`); n < want {
		t.Fatalf("%d searches that loaded nothing, the listing counts %d empty", n, want)
	}
	before := count(t, url, `SELECT count(*) FROM findings`)
	if before == 0 {
		t.Fatal("no findings pushed")
	}
	again := push(t, url, "alice", "laptop", root)
	if again.Pushed != 0 || again.Unchanged != st.Sessions {
		t.Fatalf("second push: %+v, want nothing pushed", again)
	}
	if n := count(t, url, `SELECT count(*) FROM sessions`); n != st.Sessions {
		t.Fatalf("%d sessions after pushing twice, want %d", n, st.Sessions)
	}
	if n := count(t, url, `SELECT count(*) FROM findings`); n != before {
		t.Fatalf("%d findings after pushing twice, want %d", n, before)
	}
}

// TestPushGrowingSession appends to a session: the next push sends it
// again, its new turns only, and the store's row has its new figures.
func TestPushGrowingSession(t *testing.T) {
	c := startCluster(t)
	url := c.NewDB("growing")
	const name = "18-v2.1.119-toolsearch-opus-4-7"
	root := copySessions(t, "bob", name)
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("want one session file, have %v", files)
	}
	full, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(full), "\n")
	half := strings.Join(lines[:len(lines)/2], "")
	if err := os.WriteFile(files[0], []byte(half), 0o644); err != nil {
		t.Fatal(err)
	}
	first := push(t, url, "bob", "desk", root)
	s, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before, err := s.Scope(Filter{Person: "bob"}).Stamp(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files[0], full, 0o644); err != nil {
		t.Fatal(err)
	}
	second := push(t, url, "bob", "desk", root)
	after, err := s.Scope(Filter{Person: "bob"}).Stamp(context.Background())
	if err != nil || after == before {
		t.Fatalf("the store's stamp %q before the session grew, %q after (%v): want a change the team's page sees", before, after, err)
	}
	total := count(t, url, `SELECT turns FROM sessions`)
	if second.Pushed != 1 || second.Turns >= total || second.Turns != total-first.Turns+1 {
		t.Fatalf("first push %+v, second %+v, %d turns in all: want the second to send the new turns and the last held", first, second, total)
	}
	if n := count(t, url, `SELECT count(*) FROM turns`); n != total {
		t.Fatalf("%d turn rows, the session has %d", n, total)
	}
}

// TestPushersAtOnce has several people push at once into a new store:
// the schema is made once and every session of each is there.
func TestPushersAtOnce(t *testing.T) {
	c := startCluster(t)
	url := c.NewDB("atonce")
	people := []string{"ann", "ben", "cat", "dan", "eve", "fay"}
	roots := make([]string, len(people))
	for i, p := range people {
		roots[i] = copySessions(t, p, "17-v2.1.101-toolsearch-deferred-delta", "22-v2.1.205-toolsearch-fable", "27-v2.1.205-toolsearch-keyword-query")
	}
	var wg sync.WaitGroup
	errs := make([]error, len(people))
	stats := make([]PushStats, len(people))
	for i, p := range people {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stats[i], errs[i] = Push(context.Background(), PushOptions{URL: url, Person: p, Machine: "m", Roots: []string{roots[i]}, Prices: pricing.Default()})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", people[i], err)
		}
	}
	if n := count(t, url, `SELECT count(*) FROM schema_version`); n != len(migrations) {
		t.Fatalf("%d schema steps recorded, want each of the %d once", n, len(migrations))
	}
	for i, p := range people {
		if n := count(t, url, `SELECT count(*) FROM sessions WHERE person = $1`, p); n != stats[i].Sessions || n != 3 {
			t.Fatalf("%s: %d sessions stored, %d pushed, want 3", p, n, stats[i].Sessions)
		}
	}
	s, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	one, err := s.Summaries(context.Background(), Filter{Person: "cat"})
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 3 || !slices.ContainsFunc(one, func(x *sessionfiles.Summary) bool { return strings.HasPrefix(x.Cwd, "cat@m · ") }) {
		t.Fatalf("cat's sessions: %d", len(one))
	}
}

// TestMigrateFromOne: a store made by the first schema is brought to the
// current one by the next push, which sends its sessions again.
func TestMigrateFromOne(t *testing.T) {
	c := startCluster(t)
	url := c.NewDB("fromone")
	c.Exec("fromone", `CREATE TABLE schema_version (version integer PRIMARY KEY, about text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
		migrations[0].sql, `INSERT INTO schema_version (version, about) VALUES (1, 'first')`)
	root := copySessions(t, "fo", "17-v2.1.101-toolsearch-deferred-delta")
	push(t, url, "fo", "m", root)
	if v := count(t, url, `SELECT max(version) FROM schema_version`); v != SchemaVersion() || SchemaVersion() < 2 {
		t.Fatalf("schema version %d after a push, want %d", v, SchemaVersion())
	}
	if n := count(t, url, `SELECT count(*) FROM sessions WHERE source_size > 0 AND NOT requests_recorded AND summary->>'id' <> ''`); n != 1 {
		t.Fatalf("%d sessions with the new columns filled, want 1", n)
	}
}
