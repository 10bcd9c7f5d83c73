package advice_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/timeline"
)

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %.10f, want %.10f", what, got, want)
	}
}

// find returns the advice of kind about subject, or nil.
func find(r *advice.Result, kind, subject string) *advice.Advice {
	for i := range r.Advice {
		if r.Advice[i].Kind == kind && r.Advice[i].Subject == subject {
			return &r.Advice[i]
		}
	}
	return nil
}

func leftOut(r *advice.Result, kind, subject string) *advice.LeftOut {
	for i := range r.LeftOut {
		if r.LeftOut[i].Kind == kind && r.LeftOut[i].Subject == subject {
			return &r.LeftOut[i]
		}
	}
	return nil
}

// handFacts are four sessions made by hand, each figure chosen so that
// the advice can be worked out on paper:
//
//   - s1..s3 search for mcp__srv__t before calling it once (a round trip
//     of $0.01, 20,000 tokens each), announce it without its schema in 4
//     requests whose prefix rates sum to $1.20 per million tokens; s4
//     announces it in 10 requests (rates summing to $3.00) and never calls
//     it. Its schema is 100 tokens.
//   - the idle MCP server's two tools (mcp__idle__a, mcp__idle__b: 13
//     bytes a line, 5 tokens) are announced in 5 requests of s1..s3 (rates
//     $1.50) and never called.
//   - s1..s3 each make a search for "weather t" that finds nothing ($0.005
//     each), after which the thread loads mcp__srv__t; "weather" scores
//     nothing for it.
//   - s1..s3 each call mcp__srv__t blind once on 2.1.328 ($0.002 each).
//   - s1..s3 have a ttl_expired break of $0.10, $0.20, $0.30; s1 and s2 a
//     tools_changed break of $1 (two sessions: too few).
func handFacts() []*advice.Facts {
	day := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	var fs []*advice.Facts
	for i := 1; i <= 3; i++ {
		f := &advice.Facts{Ref: advice.Ref{ID: []string{"", "s1", "s2", "s3"}[i], Project: "p"},
			Start: day.Add(time.Duration(i) * time.Hour), End: day.Add(time.Duration(i)*time.Hour + 10*time.Minute), Turns: 10}
		f.Tools = []advice.Tool{
			{Name: "mcp__idle__a", Server: "idle", Deferred: true, Requests: 5, Waiting: 5, WaitingRate: 1.5},
			{Name: "mcp__idle__b", Server: "idle", Deferred: true, Requests: 5, Waiting: 5, WaitingRate: 1.5},
			{Name: "mcp__srv__t", Server: "srv", Deferred: true, Requests: 10, Waiting: 4, WaitingRate: 1.2, Calls: 1,
				UsedThreads: 1, SearchedThreads: 1, SearchTurns: []int{3}, RoundTrips: 1, RoundTripUSD: 0.01, RoundTripTokens: 20000,
				SchemaTokens: 100, SchemaFrom: advice.SizeRequest},
		}
		f.Searches = []advice.Search{{Turn: 2, Thread: "main", Kind: timeline.FlagEmptySearch, Query: "weather t", Mode: "keyword", MaxResults: 5,
			Wanted: "mcp__srv__t", WantedAt: 3, Terms: []advice.Term{{Term: "weather"}, {Term: "t", Scores: true}}, DescriptionKnown: true, WouldFind: true,
			RoundTripUSD: 0.005, RoundTripTokens: 10000}}
		f.Blind = []advice.Blind{{Turn: 5, Tool: "mcp__srv__t", Release: "2.1.328", Refused: true, USD: 0.002, Priced: true}}
		f.Breaks = []advice.Break{
			{Turn: 7, Cause: timeline.CauseTTL, Model: "claude-sonnet-4-5", TokensLost: 1000 * int64(i), USD: 0.1 * float64(i), Priced: true, GapSeconds: 600, Lifetime: advice.Life5m},
			{Turn: 9, Cause: timeline.CauseTTL, Model: "claude-sonnet-4-5", TokensLost: 500, USD: 0.05, Priced: true, GapSeconds: 7200, Lifetime: advice.Life5m},
		}
		// 50,000 tokens written for 5 minutes: at the 1-hour rate
		// (sonnet: $6 instead of $3.75 a million) $0.1125 more.
		f.Cache = advice.CacheLife{Write5m: 50_000, Extra1hUSD: 50_000 * (6 - 3.75) / 1e6}
		if i < 3 {
			f.Breaks = append(f.Breaks, advice.Break{Turn: 8, Cause: timeline.CauseTools, TokensLost: 5000, USD: 1, Priced: true})
		}
		fs = append(fs, f)
	}
	fs = append(fs, &advice.Facts{Ref: advice.Ref{ID: "s4"}, Start: day, End: day.Add(time.Minute), Turns: 10,
		Tools: []advice.Tool{{Name: "mcp__srv__t", Server: "srv", Deferred: true, Requests: 10, Waiting: 10, WaitingRate: 3}}})
	return fs
}

func TestAdviseByHand(t *testing.T) {
	r := advice.Advise(handFacts(), advice.Options{})
	if r.Sessions != 4 || r.MinSessions != 3 || r.Turns != 40 {
		t.Errorf("sessions %d, min %d, turns %d", r.Sessions, r.MinSessions, r.Turns)
	}

	// Load up front: searches 3 × $0.01; carrying 100 tokens in the
	// requests of all four sessions that announced it without it:
	// 100 × (3 × 1.20 + 3.00) / 1e6 = $0.00066.
	a := find(r, advice.KindLoadUpFront, "mcp__srv__t")
	if a == nil {
		t.Fatalf("no load-up-front advice for mcp__srv__t: %+v", r.Advice)
	}
	near(t, "load up front saves", a.SavesUSD, 0.03-0.00066)
	if a.Tokens != 60000-100*(3*4+10) || a.Sessions != 3 || a.Of != 3 || len(a.Evidence) != 3 {
		t.Errorf("load up front: %d tokens, %d of %d sessions, %d evidence", a.Tokens, a.Sessions, a.Of, len(a.Evidence))
	}
	near(t, "load up front per session", a.PerSessionUSD, (0.03-0.00066)/4)
	if e := a.Evidence[0]; len(e.Turns) != 1 || e.Turns[0] != 3 || e.OpenCommand() != "tsinspect open s1 (turn 3)" {
		t.Errorf("evidence %+v: %s", e, e.OpenCommand())
	}

	// Never used: the idle server, 2 tools × 3 sessions × 5 tokens ×
	// $1.50/M.
	a = find(r, advice.KindNeverUsed, "mcp__idle")
	if a == nil {
		t.Fatalf("no never-used advice for the idle server: %+v", r.Advice)
	}
	near(t, "never used saves", a.SavesUSD, 2*3*5*1.5/1e6)
	if a.Tokens != 2*3*5*5 || a.Sessions != 3 || !strings.Contains(a.Title, "Drop the idle MCP server") {
		t.Errorf("never used: %d tokens, %d sessions, %q", a.Tokens, a.Sessions, a.Title)
	}
	if a.PerMonthUSD == nil {
		t.Error("never used: no per-month figure")
	} else {
		near(t, "never used per month", *a.PerMonthUSD, a.SavesUSD)
	}
	if find(r, advice.KindNeverUsed, "mcp__srv (0 of 1 tools)") != nil {
		t.Error("a called tool is advised as never used")
	}

	// Searches that miss: three empty searches wanting mcp__srv__t.
	a = find(r, advice.KindSearchMisses, "mcp__srv__t")
	if a == nil {
		t.Fatalf("no search advice: %+v", r.Advice)
	}
	near(t, "searches cost", a.CostUSD, 0.015)
	if !strings.Contains(a.Title, `"weather"`) || strings.Contains(a.Title, `"t"`) {
		t.Errorf("search advice title %q: want the word that did not score, only", a.Title)
	}
	if !strings.Contains(strings.Join(a.Figures, "\n"), "3 of the 3 keyword queries would have returned it") {
		t.Errorf("figures %q", a.Figures)
	}

	// Blind calls.
	a = find(r, advice.KindBlindCalls, "mcp__srv__t")
	if a == nil {
		t.Fatalf("no blind-call advice: %+v", r.Advice)
	}
	near(t, "blind calls cost", a.CostUSD, 0.006)
	if !strings.Contains(a.Why, "2.1.328: 3") || !strings.Contains(a.Do, "All of them were made by Claude Code 2.1.328") {
		t.Errorf("blind calls: %q / %q", a.Why, a.Do)
	}

	// Pauses: of 10 minutes in three sessions on a 5-minute cache
	// ($0.10 + $0.20 + $0.30), which a 1-hour cache would have survived
	// for 3 × $0.1125 more on the writes: saves $0.2625. Pauses of 2
	// hours (3 × $0.05) are a cost nothing recovers.
	a = find(r, advice.KindPauses, "pauses within an hour")
	if a == nil {
		t.Fatalf("no pause advice: %+v", r.Advice)
	}
	near(t, "pauses within an hour cost", a.CostUSD, 0.6)
	near(t, "1-hour cache saves", a.SavesUSD, 0.6-3*0.1125)
	if a.Tokens != 6000 || !strings.Contains(a.Do, "promptCacheTtl") || !strings.Contains(a.Do, "2.1.299") {
		t.Errorf("pauses: %d tokens, do %q", a.Tokens, a.Do)
	}
	a = find(r, advice.KindPauses, "pauses over an hour")
	if a == nil {
		t.Fatalf("no long-pause item: %+v", r.Advice)
	}
	near(t, "pauses over an hour cost", a.CostUSD, 0.15)
	if a.SavesUSD != 0 {
		t.Errorf("a pause over an hour counted as recoverable: saves %f", a.SavesUSD)
	}
	if find(r, advice.KindCacheBreaks, timeline.CauseTTL) != nil {
		t.Error("ttl_expired breaks counted twice, under cache breaks too")
	}
	if find(r, advice.KindCacheBreaks, timeline.CauseTools) != nil {
		t.Error("tools_changed in 2 sessions advised")
	}
	if l := leftOut(r, advice.KindCacheBreaks, timeline.CauseTools); l == nil || l.Sessions != 2 {
		t.Errorf("tools_changed not left out with 2 sessions: %+v", r.LeftOut)
	}

	// No tool-search advice: no session's deferral is known.
	for _, a := range r.Advice {
		if a.Kind == advice.KindToolSearch {
			t.Errorf("tool search advised without figures: %+v", a)
		}
	}

	// The same with --min-sessions 2 advises tools_changed.
	r = advice.Advise(handFacts(), advice.Options{MinSessions: 2})
	if a := find(r, advice.KindCacheBreaks, timeline.CauseTools); a == nil || a.CostUSD != 2 {
		t.Errorf("tools_changed with min 2: %+v", a)
	}
}

// TestLoadUpFrontOnlyWherePays: the same searches, but the schema rides
// in so many requests that carrying it costs more than the searches.
func TestLoadUpFrontOnlyWherePays(t *testing.T) {
	fs := handFacts()
	for _, f := range fs {
		for i := range f.Tools {
			if f.Tools[i].Name == "mcp__srv__t" {
				f.Tools[i].SchemaTokens = 100_000
			}
		}
	}
	r := advice.Advise(fs, advice.Options{})
	if a := find(r, advice.KindLoadUpFront, "mcp__srv__t"); a != nil {
		t.Errorf("advised where it does not pay: %+v", a)
	}
	l := leftOut(r, advice.KindLoadUpFront, "mcp__srv__t")
	if l == nil || !strings.Contains(l.Reason, "does not pay") {
		t.Errorf("left out %+v", r.LeftOut)
	}
}

// TestToolSearchThreshold: five sessions, worth −$1 each where the
// deferred tools are small (1 % and 2 % of the window) and +$5 where they
// are large (20 %): auto:2 would have deferred only the large ones.
func TestToolSearchThreshold(t *testing.T) {
	shares := []int64{1, 2, 2, 1, 20}
	values := []float64{-1, -1, -1, -1, 5}
	var fs []*advice.Facts
	for i := range shares {
		fs = append(fs, &advice.Facts{Ref: advice.Ref{ID: string(rune('a' + i))}, Turns: 1,
			Deferral: advice.Deferral{Mode: advice.ModeOn, Known: true, SavedUSD: values[i] + 0.5, SearchUSD: 0.5,
				PoolTokens: shares[i] * 2000, Window: 200_000}})
	}
	r := advice.Advise(fs, advice.Options{})
	a := find(r, advice.KindToolSearch, "ENABLE_TOOL_SEARCH=auto:2")
	if a == nil {
		t.Fatalf("no auto:2 advice: %+v %+v", r.Advice, r.LeftOut)
	}
	// As it ran: 5 − 4 = 1; with auto:2: 5.
	near(t, "threshold gain", a.SavesUSD, 4)
	if a.Sessions != 4 || a.Of != 5 {
		t.Errorf("sessions %d of %d", a.Sessions, a.Of)
	}
	// Every session small: off.
	fs = fs[:4]
	r = advice.Advise(fs, advice.Options{})
	if a := find(r, advice.KindToolSearch, "ENABLE_TOOL_SEARCH=false"); a == nil || a.SavesUSD != 4 {
		t.Errorf("want ENABLE_TOOL_SEARCH=false saving $4: %+v", r.Advice)
	}
}

// TestOneSessionIsNoPattern: everything the by-hand sessions show, in
// one session, gives no advice, and says what it left out.
func TestOneSessionIsNoPattern(t *testing.T) {
	r := advice.Advise(handFacts()[:1], advice.Options{})
	if len(r.Advice) != 0 {
		t.Errorf("advice from one session: %+v", r.Advice)
	}
	if len(r.LeftOut) < 4 {
		t.Errorf("left out %+v: want the load-up-front, never-used, search, blind and break advice", r.LeftOut)
	}
	var text strings.Builder
	if err := r.WriteText(&text, advice.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "No advice: no pattern shows in 3 sessions or more.") {
		t.Errorf("text:\n%s", text.String())
	}
}

// TestNeverUsedByOrigin: a server never called is dropped where it comes
// from: a claude.ai connector in claude.ai, a plugin's with the plugin,
// the desktop app's not at all, the user's from the MCP configuration.
func TestNeverUsedByOrigin(t *testing.T) {
	var fs []*advice.Facts
	for i := range 3 {
		f := &advice.Facts{Ref: advice.Ref{ID: fmt.Sprint("s", i)}, Turns: 1}
		for _, srv := range []string{"claude_ai_Slack", "plugin_figma_figma", "ccd_session_mgmt", "scheduled-tasks", "mine"} {
			f.Tools = append(f.Tools, advice.Tool{Name: "mcp__" + srv + "__x", Server: srv, Deferred: true, Requests: 2, Waiting: 2, WaitingRate: 0.6})
		}
		fs = append(fs, f)
	}
	r := advice.Advise(fs, advice.Options{})
	want := map[string]string{
		"mcp__claude_ai_Slack":    "Disconnect the claude.ai connector Slack where you do not use it",
		"mcp__plugin_figma_figma": "Disable the figma plugin where you do not use its MCP server",
		"mcp__ccd_session_mgmt":   "The Claude desktop app's ccd_session_mgmt server is never used",
		"mcp__scheduled-tasks":    "The Claude desktop app's scheduled-tasks server is never used",
		"mcp__mine":               "Drop the mine MCP server where you do not use it",
	}
	for subject, title := range want {
		if a := find(r, advice.KindNeverUsed, subject); a == nil || a.Title != title {
			t.Errorf("%s: %+v, want %q", subject, a, title)
		}
	}
}

// TestOwnToolNotLoadedUpFront: Claude Code's own deferred tools cannot be
// marked to load up front: a pattern of searches for WebFetch is left
// out, and says why.
func TestOwnToolNotLoadedUpFront(t *testing.T) {
	var fs []*advice.Facts
	for i := range 3 {
		fs = append(fs, &advice.Facts{Ref: advice.Ref{ID: fmt.Sprint("s", i)}, Turns: 3, Tools: []advice.Tool{{Name: "WebFetch", Deferred: true,
			Requests: 3, Waiting: 1, WaitingRate: 3.75, Calls: 1, UsedThreads: 1, SearchedThreads: 1, SearchTurns: []int{2},
			RoundTrips: 1, RoundTripUSD: 0.01, SchemaTokens: 500, SchemaFrom: advice.SizeEstimate}}})
	}
	r := advice.Advise(fs, advice.Options{})
	if a := find(r, advice.KindLoadUpFront, "WebFetch"); a != nil {
		t.Errorf("advised: %+v", a)
	}
	if l := leftOut(r, advice.KindLoadUpFront, "WebFetch"); l == nil || !strings.Contains(l.Reason, "Claude Code's own") || l.Sessions != 3 {
		t.Errorf("left out: %+v", r.LeftOut)
	}
}

// TestToolLoadsByHand: s1..s3 each break the cache right after a search
// that loaded mcp__srv__t ($0.50 each). Loaded up front, its 100-token
// schema would ride in the 4 requests of each that announced it without
// it (rates summing to $1.20 a million: $0.00012 a session) and spare
// the $0.01 search of each: 1.50 + 0.03 - 0.00036 saved.
func TestToolLoadsByHand(t *testing.T) {
	fs := handFacts()
	for _, f := range fs[:3] {
		f.Breaks = append(f.Breaks, advice.Break{Turn: 4, Cause: timeline.CauseTools, TokensLost: 9000, USD: 0.5, Priced: true, Loaded: []string{"mcp__srv__t"}})
	}
	r := advice.Advise(fs, advice.Options{})
	a := find(r, advice.KindToolLoads, "mcp__srv")
	if a == nil {
		t.Fatalf("no tool-load item: %+v", r.Advice)
	}
	near(t, "rewrites cost", a.CostUSD, 1.5)
	near(t, "loading up front saves", a.SavesUSD, 1.5+0.03-3*100*1.2/1e6)
	if a.Tokens != 27000 || !strings.Contains(a.Do, `"alwaysLoad": true`) || !strings.Contains(a.Do, "2.1.299") {
		t.Errorf("tool loads: %d tokens, do %q", a.Tokens, a.Do)
	}
	if r.Advice[0].Subject != "mcp__srv" {
		t.Errorf("the largest amount is not first: %s", r.Advice[0].Subject)
	}
	// The other tools_changed breaks (two sessions) stay under cache
	// breaks, and the totals part them.
	var after float64
	for _, x := range r.Totals {
		if x.Name == advice.TotalAfterLoads {
			after = x.CostUSD
		}
	}
	near(t, "after tool loads total", after, 1.5)
}
