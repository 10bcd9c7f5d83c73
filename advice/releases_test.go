package advice_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/golden"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/timeline"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// releaseDirs are the projects directories of what real Claude Code
// releases wrote against the stand-in (source/testdata/releases).
func releaseDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("..", "source", "testdata", "releases", "*", "projects"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no release files: %v", err)
	}
	sort.Strings(dirs)
	return dirs
}

// readDir reads every session under dir into facts, as the command does
// (without its cache), checking each against its timeline.
func readDir(t *testing.T, dir string, tab *pricing.Table) []*advice.Facts {
	t.Helper()
	entries, err := sessionfiles.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var fs []*advice.Facts
	for _, e := range entries {
		b, _, err := source.ReadFile(context.Background(), e.Path)
		if err != nil {
			t.Fatalf("%s: %v", e.Path, err)
		}
		s := b.Session()
		schemas, err := sessionfiles.DeferredSchemas(e)
		if err != nil {
			t.Fatal(err)
		}
		f := advice.Of(s, advice.Ref{ID: e.ID, Project: e.Project}, advice.FactsOptions{Prices: tab, Schemas: schemas})
		checkAgainstTimeline(t, e.Path, s, f)
		fs = append(fs, f)
	}
	return fs
}

// checkAgainstTimeline checks what Of kept against the timeline's own
// flags and figures.
func checkAgainstTimeline(t *testing.T, name string, s *timeline.Session, f *advice.Facts) {
	t.Helper()
	flags := map[string]int{}
	var usd float64
	tab := pricing.Default()
	turns := 0
	for _, tu := range s.Turns {
		if tu.Decoded == nil {
			continue
		}
		turns++
		for _, fl := range tu.Flags {
			flags[fl.Kind]++
		}
		if tu.Decoded.Response.Usage.TotalInput() > 0 {
			if c, _, ok := timeline.TurnCost(tab, tu); ok {
				usd += c.Total
			}
		}
	}
	kinds := map[string]int{}
	for _, q := range f.Searches {
		kinds[q.Kind]++
	}
	if len(f.Blind) != flags[timeline.FlagCallBeforeLoad] || len(f.Breaks) != flags[timeline.FlagCacheBreak] ||
		kinds[timeline.FlagEmptySearch] != flags[timeline.FlagEmptySearch] || kinds[timeline.FlagSearchPartial] != flags[timeline.FlagSearchPartial] {
		t.Errorf("%s: facts %d blind, %d breaks, %v searches; timeline flags %v", name, len(f.Blind), len(f.Breaks), kinds, flags)
	}
	if f.Turns != turns || fmt.Sprintf("%.9f", f.USD) != fmt.Sprintf("%.9f", usd) {
		t.Errorf("%s: facts %d turns $%f, timeline %d turns $%f", name, f.Turns, f.USD, turns, usd)
	}
	for _, tl := range f.Tools {
		if tl.SearchedThreads > tl.UsedThreads || tl.Waiting > tl.Requests || len(tl.SearchTurns) < tl.SearchedThreads {
			t.Errorf("%s: %s: searched in %d threads of %d used, waiting %d of %d requests, %d search turns", name, tl.Name, tl.SearchedThreads, tl.UsedThreads, tl.Waiting, tl.Requests, len(tl.SearchTurns))
		}
	}
}

// TestEveryRelease reads what each Claude Code release from 1.0.128 to
// 2.1.299 wrote (transcripts alone: none writes request records) and
// writes the advice each gives with --min-sessions 1, as a golden: the
// searches that found nothing, the blind calls, the breaks of a resumed
// session, the tools never called, and where the files keep the loaded
// schemas (2.1.299's deferred_tools_record) what loading echo up front
// would save.
func TestEveryRelease(t *testing.T) {
	tab := pricing.Default()
	var out strings.Builder
	for _, dir := range releaseDirs(t) {
		fs := readDir(t, dir, tab)
		rel := filepath.Base(filepath.Dir(dir))
		r := advice.Advise(fs, advice.Options{MinSessions: 1, Prices: tab.Describe()})
		fmt.Fprintf(&out, "== %s\n", rel)
		if err := r.WriteText(&out, advice.TextOptions{Evidence: 10}); err != nil {
			t.Fatal(err)
		}
		// The default threshold: no advice rests on fewer than 3
		// sessions.
		for _, a := range advice.Advise(fs, advice.Options{}).Advice {
			if a.Sessions < 3 || len(a.Evidence) < 3 {
				t.Errorf("%s: advice on %d sessions (%d evidence) under the default threshold: %s", rel, a.Sessions, len(a.Evidence), a.Title)
			}
		}
	}
	golden.Check(t, filepath.Join("testdata", "releases.txt"), out.String(), *update)
}

// TestDeferredSchemasFromFiles: 2.1.299 wrote no request records, but
// kept the definitions a search loaded; the load-up-front figures use
// their size instead of leaving the advice out.
func TestDeferredSchemasFromFiles(t *testing.T) {
	dir := filepath.Join("..", "source", "testdata", "releases", "2.1.299", "projects")
	fs := readDir(t, dir, pricing.Default())
	found := false
	for _, f := range fs {
		for _, tl := range f.Tools {
			if tl.Name == "mcp__demo__echo" && tl.SchemaFrom == advice.SizeFiles {
				found = true
				// {"defer_loading":true,"description":"Echo the given text back unchanged.","input_schema":{...}}: 226 bytes.
				if tl.SchemaTokens != 90 {
					t.Errorf("%s: echo's schema %d tokens, want 90 (226 bytes at 2.5 a token)", f.ID, tl.SchemaTokens)
				}
			}
		}
	}
	if !found {
		t.Error("no session took echo's size from its files")
	}
	r := advice.Advise(fs, advice.Options{})
	if a := find(r, advice.KindLoadUpFront, "mcp__demo__echo"); a == nil || !a.Estimated {
		t.Errorf("want echo loaded up front, its size marked as estimated: %+v / %+v", r.Advice, r.LeftOut)
	}
}

// storedExchange is an exchange of timeline/testdata's captures.
type storedExchange struct {
	ID          int64             `json:"id"`
	Source      string            `json:"source"`
	Start       time.Time         `json:"start"`
	FirstByte   time.Time         `json:"first_byte"`
	End         time.Time         `json:"end"`
	Method      string            `json:"method"`
	URL         string            `json:"url"`
	Host        string            `json:"host"`
	ReqHeaders  []exchange.Header `json:"request_headers"`
	ReqBody     string            `json:"request_body"`
	Status      int               `json:"status"`
	RespHeaders []exchange.Header `json:"response_headers"`
	RespBody    string            `json:"response_body"`
	State       exchange.State    `json:"state"`
	Error       string            `json:"error,omitempty"`
}

// loadCapture reads timeline/testdata/NAME.json.gz: Claude Code recorded
// through the proxy against the stand-in, request bodies whole.
func loadCapture(t *testing.T, name string) *timeline.Session {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "timeline", "testdata", name+".json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var stored []storedExchange
	if err := json.NewDecoder(zr).Decode(&stored); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var exs []exchange.Exchange
	for _, x := range stored {
		ex := exchange.Exchange{ID: x.ID, Source: x.Source, Start: x.Start, FirstByte: x.FirstByte, End: x.End,
			Method: x.Method, URL: x.URL, Host: x.Host, ReqHeaders: x.ReqHeaders, ReqBody: []byte(x.ReqBody),
			Status: x.Status, RespHeaders: x.RespHeaders, RespBody: []byte(x.RespBody), State: x.State, Error: x.Error}
		if len(ex.RespBody) > 0 {
			ex.Chunks = []exchange.Chunk{{Offset: 0, Size: len(ex.RespBody), At: ex.End}}
		}
		exs = append(exs, ex)
	}
	return timeline.Build(exs)
}

// TestToolSearchOffCapture: Claude Code with ENABLE_TOOL_SEARCH=false
// sends the demo server's tools (echo and three actions) whole: Of estimates what deferring
// them would have saved, and with three such sessions and a search
// tool's size from a session with tool search on, the advice is to turn
// it on.
func TestToolSearchOffCapture(t *testing.T) {
	tab := pricing.Default()
	off := loadCapture(t, "claude-code-tool-search-off")
	f := advice.Of(off, advice.Ref{ID: "off"}, advice.FactsOptions{Prices: tab})
	checkAgainstTimeline(t, "tool-search-off", off, f)
	d := f.Deferral
	if d.Mode != advice.ModeOff || !d.Known || d.PoolTokens <= 0 || d.GrossTokens <= 0 || d.GrossUSD <= 0 || d.Requests == 0 {
		t.Fatalf("deferral %+v: want tool search off, the MCP schemas measured", d)
	}
	inline := 0
	for _, tl := range f.Tools {
		if tl.Server == "demo" && tl.Inline > 0 && tl.InlineTokens > 0 {
			inline++
		}
	}
	if inline != 4 {
		t.Errorf("%d demo tools sent whole, want 4", inline)
	}
	on := loadCapture(t, "claude-code-search-repeated")
	fon := advice.Of(on, advice.Ref{ID: "on"}, advice.FactsOptions{Prices: tab})
	checkAgainstTimeline(t, "search-repeated", on, fon)
	if fon.Deferral.Mode != advice.ModeOn || fon.Deferral.SearchToolTokens <= 0 || fon.Deferral.Searches == 0 {
		t.Fatalf("deferral %+v: want tool search on, with the search tool's size", fon.Deferral)
	}
	// Three sessions like the first (the same facts under three IDs), and
	// the one with tool search on for the search tool's size.
	var fs []*advice.Facts
	for _, id := range []string{"off1", "off2", "off3"} {
		c := *f
		c.ID = id
		fs = append(fs, &c)
	}
	fs = append(fs, fon)
	r := advice.Advise(fs, advice.Options{})
	var got *advice.Advice
	for i := range r.Advice {
		if r.Advice[i].Kind == advice.KindToolSearch {
			got = &r.Advice[i]
		}
	}
	want := d.GrossUSD - float64(fon.Deferral.SearchToolTokens)*d.RateSum/1e6 - d.RoundTripUSD
	if want <= 0 {
		if got != nil && got.Sessions >= 3 {
			t.Errorf("deferring would not have paid ($%f), yet advised: %+v", want, got)
		}
		return
	}
	if got == nil || !strings.HasPrefix(got.Subject, "ENABLE_TOOL_SEARCH=") || got.Sessions != 3 {
		t.Fatalf("want tool search turned on in the three sessions: %+v", r.Advice)
	}
	near(t, "tool search on saves", got.SavesUSD, 3*want)
}
