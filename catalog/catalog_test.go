package catalog

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/source"
)

// TestProjectIsTheDirectory holds the one project filter to what a user
// means: the directory the session ran in, or Claude Code's name for it,
// never the path of the session file (every session's path holds
// .claude/projects, so "claude" used to keep them all in advise).
func TestProjectIsTheDirectory(t *testing.T) {
	cwd, dir := "/home/u/work/my-repo", "-home-u-work-my-repo"
	for _, c := range []struct {
		text string
		want bool
	}{
		{"", true},
		{"my-repo", true},
		{"/home/u/work/my-repo", true},
		{"work/my", true},      // in the directory, and as Claude Code names it
		{"-home-u-work", true}, // Claude Code's name itself
		{"claude", false},      // only in the path of the session file
		{".claude/projects", false},
		{"other", false},
	} {
		if got := ProjectMatches(c.text, cwd, dir); got != c.want {
			t.Errorf("ProjectMatches(%q) = %v, want %v", c.text, got, c.want)
		}
		// Without the directory (a session whose records name none): by
		// Claude Code's name for it alone, the same answer.
		if got := ProjectMatches(c.text, "", dir); got != c.want {
			t.Errorf("ProjectMatches(%q) without the cwd = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestQueryAndTotals lists made-up rows through a query: filters, order,
// limit, the totals and their mark, and the notes on the rows' marks.
func TestQueryAndTotals(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 11, d, 12, 0, 0, 0, time.UTC) }
	rows := []sessionfiles.Row{
		{ID: "a", Cwd: "/w/alpha", Project: "-w-alpha", Start: day(1), End: day(1), Turns: 10, CostUSD: 1, CostKnown: true, Requests: true, CatalogRecorded: true, Models: []string{"claude-opus-4-6"}},
		{ID: "b", Cwd: "/w/beta", Project: "-w-beta", Start: day(3), End: day(3), Turns: 5, CostUSD: 3, CostKnown: true, CacheBreaks: 1, BreaksUSD: 0.5, CatalogRecorded: true, Models: []string{"claude-sonnet-4-5"}},
		{ID: "c", Cwd: "/w/alpha", Project: "-w-alpha", Start: day(5), End: day(5), Turns: 20, CostUSD: 2, CostKnown: true, OutputPlaceholders: 4, SubagentsOnly: true, Models: []string{"claude-haiku-4-5"}},
	}
	ids := func(rs []sessionfiles.Row) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.ID)
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		q    Query
		want string
	}{
		{Query{}, "c,b,a"},
		{Query{Project: "alpha"}, "c,a"},
		{Query{Since: day(2)}, "c,b"},
		{Query{Until: day(4)}, "b,a"},
		{Query{Model: "SONNET"}, "b"},
		{Query{Flagged: true}, "b"},
		{Query{Sort: "cost"}, "b,c,a"},
		{Query{Sort: "turns", Limit: 2}, "c,a"},
	} {
		if got := ids(Select(rows, c.q)); got != c.want {
			t.Errorf("%+v: %s, want %s", c.q, got, c.want)
		}
	}
	tot := Total(rows)
	if tot.Sessions != 3 || tot.Turns != 35 || tot.CostUSD != 6 || tot.BreaksUSD != 0.5 || tot.Mark != "≥" || !tot.Newest.Equal(day(5)) {
		t.Errorf("totals %+v", tot)
	}
	if m := Total(rows[:2]).Mark; m != "" {
		t.Errorf("totals of whole costs marked %q", m)
	}
	notes := strings.Join(MarkNotes(rows), "\n")
	for _, want := range []string{"*: no request records", "COST ≥: 4 answers", "AGENTS †", "BLIND -"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if n := MarkNotes(rows[:1]); len(n) != 0 {
		t.Errorf("notes on a row with no mark: %v", n)
	}
	if err := (Query{Sort: "size"}).Check(); err == nil {
		t.Error("--sort size accepted")
	}
	if err := (Query{Limit: -1}).Check(); err == nil {
		t.Error("--limit -1 accepted")
	}
}

// TestOpenListsAndKeepsItsIndex opens a directory of public sessions of
// real work through the catalog twice: the same rows, the second read
// from the index, which lives where Options say (not in Claude Code's
// directory).
func TestOpenListsAndKeepsItsIndex(t *testing.T) {
	src := filepath.Join("..", "source", "testdata", "public", "17-v2.1.101-toolsearch-deferred-delta")
	files, _ := filepath.Glob(filepath.Join(src, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("test data: %v", files)
	}
	root := filepath.Join(t.TempDir(), "projects")
	dst := filepath.Join(root, "-home-user-project", filepath.Base(files[0]))
	os.MkdirAll(filepath.Dir(dst), 0o700)
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dst, b, 0o600)
	tab, err := pricing.LoadFor("")
	if err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(t.TempDir(), "index.gob")
	getenv := func(string) string { return "" }
	var lists []Listing
	for run := 0; run < 2; run++ {
		c, err := Open(Options{Index: index, Getenv: getenv}, root)
		if err != nil {
			t.Fatal(err)
		}
		sums, st := c.Summaries(nil)
		if len(c.Warnings) > 0 {
			t.Errorf("warnings: %v", c.Warnings)
		}
		if run == 1 && st.Cached != 1 {
			t.Errorf("second reading: %+v, want the session from the index", st)
		}
		lists = append(lists, List(sums, tab, Query{Project: "project"}))
	}
	if len(lists[0].Rows) != 1 || lists[0].Rows[0].Searches != 2 || !reflect.DeepEqual(lists[0], lists[1]) {
		t.Errorf("listings %+v", lists)
	}
	if _, err := os.Stat(index); err != nil {
		t.Errorf("no index kept: %v", err)
	}
}

// TestFoundKeeps: advice's sessions are filtered as the listing's are (a
// .jsonl file that is no Claude Code session left out): a
// project by the directory's name or the path Claude Code named it after
// (never the path of the file, which holds .claude/projects for every
// session; a capture has none), and those written since a time.
func TestFoundKeeps(t *testing.T) {
	now := time.Now()
	dir := t.TempDir()
	session := func(id string) string {
		p := filepath.Join(dir, id+".jsonl")
		rec := `{"type":"user","sessionId":"` + id + `","uuid":"u-` + id + `","parentUuid":null,"message":{"role":"user","content":"hi"}}` + "\n"
		if err := os.WriteFile(p, []byte(rec), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	foreign := filepath.Join(dir, "index.jsonl")
	if err := os.WriteFile(foreign, []byte(`{"request":"r1.json"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &Catalog{
		Entries: []sessionfiles.Entry{
			{Path: session("a"), ID: "a", Project: "-home-user-src-app", ModTime: now},
			{Path: session("b"), ID: "b", Project: "-home-user-notes", ModTime: now.Add(-48 * time.Hour)},
			{Path: foreign, ID: "index", Project: "-home-user-src-app", ModTime: now},
		},
		Captures: []source.Found{{Kind: source.KindCapture, Path: "/h/c.db", ID: "/h/c.db", ModTime: now}},
	}
	ids := func(fs []source.Found) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.ID)
		}
		return out
	}
	for _, tc := range []struct {
		q    Query
		want []string
	}{
		{Query{}, []string{"a", "b", "/h/c.db"}},
		{Query{Project: "src-app"}, []string{"a"}},
		{Query{Project: "/home/user/src/app"}, []string{"a"}},
		{Query{Project: "claude"}, nil},
		{Query{Project: "notes"}, []string{"b"}},
		{Query{Since: now.Add(-time.Hour)}, []string{"a", "/h/c.db"}},
		{Query{Project: "notes", Since: now.Add(-time.Hour)}, nil},
	} {
		if got := ids(c.Found(tc.q)); !slices.Equal(got, tc.want) {
			t.Errorf("Found(%+v) = %v, want %v", tc.q, got, tc.want)
		}
	}
}
