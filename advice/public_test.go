package advice_test

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
)

// publicFacts reads the public real sessions (source/testdata/public),
// each checked against its timeline.
func publicFacts(t *testing.T, tab *pricing.Table) []*advice.Facts {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("..", "source", "testdata", "public", "[0-9]*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no public sessions: %v", err)
	}
	var fs []*advice.Facts
	for _, d := range dirs {
		if strings.Contains(d, "subagent-files-only") {
			continue // its main file was not taken: subagents' files alone
		}
		fs = append(fs, readDir(t, d, tab)...)
	}
	return fs
}

// TestPublicSessionsByMoney: on the public real sessions, the advice
// comes largest amount first whatever its kind, --top hides nothing
// larger than what it shows, and the totals, the pauses and the cache
// rewrites after tool loads are what the breaks add up to by hand.
func TestPublicSessionsByMoney(t *testing.T) {
	tab := pricing.Default()
	fs := publicFacts(t, tab)
	r := advice.Advise(fs, advice.Options{MinSessions: 1})
	if len(r.Advice) < 4 {
		t.Fatalf("%d pieces of advice from %d sessions", len(r.Advice), len(fs))
	}
	for i := 1; i < len(r.Advice); i++ {
		if r.Advice[i].Amount() > r.Advice[i-1].Amount() {
			t.Errorf("item %d (%s, %s) above item %d (%s, %s)", i+1, r.Advice[i].Subject, usdOf(r.Advice[i].Amount()), i, r.Advice[i-1].Subject, usdOf(r.Advice[i-1].Amount()))
		}
	}
	// The first three are the three largest amounts.
	var amounts []float64
	for _, a := range r.Advice {
		amounts = append(amounts, a.Amount())
	}
	for i := 0; i < 3; i++ {
		for _, v := range amounts[3:] {
			if v > amounts[i] {
				t.Errorf("item %d ($%f) is not among the three largest: $%f is below it", i+1, amounts[i], v)
			}
		}
	}
	var text strings.Builder
	if err := r.WriteText(&text, advice.TextOptions{Top: 3}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "\n1. [") || !strings.Contains(text.String(), "more, each "+usdOf(r.Advice[3].Amount())+" or less") {
		t.Errorf("--top 3 text:\n%s", text.String())
	}

	// By hand, from the breaks: every break in the totals; the pauses
	// within an hour on a 5-minute cache; the breaks after tool loads.
	var all, hour, long, loads float64
	var hourN, loadN int
	for _, f := range fs {
		for _, b := range f.Breaks {
			all += b.USD
			switch {
			case len(b.Loaded) > 0:
				loads += b.USD
				loadN++
			case b.Cause != timeline.CauseTTL:
			case b.GapSeconds > 0 && b.GapSeconds <= 3600 && b.Lifetime != advice.Life1h:
				hour += b.USD
				hourN++
			default:
				long += b.USD
			}
		}
	}
	total := func(name string) float64 {
		for _, x := range r.Totals {
			if x.Name == name {
				return x.CostUSD
			}
		}
		return 0
	}
	nearRel(t, "cache breaks total", total(advice.TotalBreaks), all)
	nearRel(t, "pauses within an hour total", total(advice.TotalPausesHour), hour)
	nearRel(t, "pauses over an hour total", total(advice.TotalPausesLong), long)
	nearRel(t, "after tool loads total", total(advice.TotalAfterLoads), loads)
	if hourN == 0 || loadN == 0 {
		t.Fatalf("the public sessions hold %d pauses within an hour and %d breaks after tool loads; want both", hourN, loadN)
	}
	if !strings.Contains(r.TotalsText(), "cache breaks "+usdOf(all)) {
		t.Errorf("totals line %q: want cache breaks %s", r.TotalsText(), usdOf(all))
	}
	a := find(r, advice.KindPauses, "pauses within an hour")
	if a == nil {
		t.Fatalf("no pauses item: %+v", r.Advice)
	}
	nearRel(t, "pauses within an hour", a.CostUSD, hour)
	var extra float64
	for _, f := range fs {
		extra += f.Cache.Extra1hUSD
	}
	nearRel(t, "1-hour cache saves", a.SavesUSD, math.Max(hour-extra, 0))
	// Where the 1-hour cache costs more, the advice is to keep the
	// 5-minute one, not to upgrade to switch.
	if hour < extra && (!strings.HasPrefix(a.Do, "Keep the 5-minute cache") || strings.Contains(a.Do, "upgrade first")) {
		t.Errorf("pauses cost $%.4f, the 1-hour cache $%.4f more, but the advice says: %q", hour, extra, a.Do)
	}
	// No pause over an hour is recoverable: whatever long pauses cost,
	// no item saves on them.
	if b := find(r, advice.KindPauses, "pauses over an hour"); b != nil && b.SavesUSD != 0 {
		t.Errorf("pauses over an hour saved %f", b.SavesUSD)
	}
	// Connectors never signed in are told apart from servers whose tools
	// were announced and never called.
	if g := find(r, advice.KindNeverUsed, "mcp__claude_ai_Gmail"); g == nil || !strings.Contains(g.Title, "never signed in") {
		t.Errorf("Gmail's sign-in stand-ins: %+v", g)
	}
	if sl := find(r, advice.KindNeverUsed, "mcp__claude_ai_Slack"); sl == nil || strings.Contains(sl.Title, "signed in") {
		t.Errorf("Slack's 13 tools: %+v", sl)
	}
	var loadItems float64
	for _, x := range r.Advice {
		if x.Kind == advice.KindToolLoads {
			loadItems += x.CostUSD
		}
	}
	nearRel(t, "cache rewrites after tool loads", loadItems, loads)
}

// TestReleasesPartialSearches: the releases' "WebSearch WebFetch"
// searches, which loaded WebFetch alone, are an item with what followed.
func TestReleasesPartialSearches(t *testing.T) {
	tab := pricing.Default()
	var fs []*advice.Facts
	for _, d := range releaseDirs(t) {
		fs = append(fs, readDir(t, d, tab)...)
	}
	n, turns := 0, 0
	var after float64
	for _, f := range fs {
		for _, q := range f.Searches {
			if q.Kind == timeline.FlagSearchPartial && q.Wanted == "WebSearch" {
				n++
				turns += q.TurnsAfter
				after += q.USDAfter
			}
		}
	}
	r := advice.Advise(fs, advice.Options{})
	a := find(r, advice.KindPartial, "WebSearch")
	if n < 3 || a == nil {
		t.Fatalf("%d partial searches for WebSearch; item %+v", n, a)
	}
	if !strings.Contains(strings.Join(a.Figures, "\n"), numTurns(turns)+" ("+usdOf(after)+")") || !strings.Contains(a.Do, "select:WebSearch") {
		t.Errorf("partial searches: figures %q, do %q; by hand %d turns, %s", a.Figures, a.Do, turns, usdOf(after))
	}
}

func numTurns(n int) string {
	if n == 1 {
		return "1 turn"
	}
	return fmt.Sprintf("%d turns", n)
}

func usdOf(v float64) string { return pricing.Format(v, true) }

func nearRel(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.10f, by hand %.10f", what, got, want)
	}
}
