package web_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/timeline/view"
	"github.com/tsinspect/tsinspect/web"
)

// The Cache tab draws the thread's prompt, context and cost as SVG: a
// bar (or a point) for every turn of the thread, each leading to its
// turn, its cache breaks and compactions marked, and the cost it says is
// what 'tsinspect turns' prints for the session.
func TestCacheTabCharts(t *testing.T) {
	dir, capture := fixture(t)
	s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: redact.Off})
	cache := view.TabCache.Row().Name

	// The demo capture: turns 1–5 and 7 are its main thread, 7 a cache
	// break.
	_, body, _ := get(t, s, "GET", "/api/s/demo.db/turn/3/"+cache, "")
	_, rest, _ := strings.Cut(body, `id="chart-cache"`)
	cacheSVG, rest, _ := strings.Cut(rest, `id="chart-context"`)
	_, costSVG, _ := strings.Cut(rest, `id="chart-cost"`)
	for _, n := range []int{1, 2, 3, 4, 5, 7} {
		bar := regexp.MustCompile(fmt.Sprintf(`<a href="/s/demo.db/turn/%d"><title>turn %d: prompt [0-9,]+ = [^<]*</title><rect class="b-(read|write)"`, n, n))
		if !bar.MatchString(cacheSVG) {
			t.Errorf("turn %d has no bar of its prompt leading to it", n)
		}
		if !strings.Contains(costSVG, fmt.Sprintf(`<a href="/s/demo.db/turn/%d"><title>turn %d: $0.0`, n, n)) {
			t.Errorf("turn %d has no bar of its cost", n)
		}
	}
	if strings.Contains(body, `/s/demo.db/turn/6"`) {
		t.Error("turn 6 (the subagent's) is in the main thread's charts")
	}
	if got := strings.Count(body, `<circle class="s-context"`); got != 6 {
		t.Errorf("the context chart has %d points, want the thread's 6", got)
	}
	if !strings.Contains(body, `class="mk m-break"`) || !strings.Contains(body, "1 cache break marked") {
		t.Error("the cache break of turn 7 is not marked")
	}
	// 0.0828 + 0.0077 + 0.0076 + 0.0076 + 0.0079 + 0.0853 as 'turns'
	// prints them (each rounded: their sum is $0.1989), and the thread's
	// cost as the session's header sums it.
	demo, err := source.LoadSession(capture, nil)
	if err != nil {
		t.Fatal(err)
	}
	tab, _ := pricing.LoadFor("")
	usd, _, _ := view.SessionCost(demo, "main", tab)
	if want := pricing.Format(usd, true); want != "$0.1990" || !strings.Contains(body, want+" over its 6 turns") {
		t.Errorf("the cost chart's caption does not say the thread's %s:\n%s", want, body)
	}
	// "Prefix vs #2" leads to turn 2.
	if !strings.Contains(body, `<span class="title">Prefix vs </span><a class="turnref title" href="/s/demo.db/turn/2">#2</a>`) {
		t.Error("the turn the Cache tab names is not a link to it")
	}
	if strings.Contains(body, "┤") {
		t.Error("the text chart is drawn beside the SVG")
	}

	// The compacted session: turn 4 follows a compaction.
	var list sessionsJSON
	getJSON(t, s, "/api/sessions?project=user-compact", &list)
	if len(list.Rows) != 1 {
		t.Fatalf("the compact session: %d rows", len(list.Rows))
	}
	key := list.Rows[0].Key
	_, body, _ = get(t, s, "GET", "/api/s/"+key+"/turn/4/"+cache, "")
	if !strings.Contains(body, `class="mk m-compact"`) || !strings.Contains(body, "1 compaction marked") {
		t.Errorf("the compaction is not marked:\n%s", body)
	}
	if !strings.Contains(body, "$0.1779 over its 5 turns") {
		t.Errorf("the compact session's cost chart does not say its $0.1779")
	}
	if got := len(regexp.MustCompile(`<rect class="b-cost"`).FindAllString(body, -1)); got != 5 {
		t.Errorf("%d cost bars, want 5", got)
	}
}

// In Chromium: every turn of the thread has its bar, and clicking one
// selects its turn with no reload.
func TestBrowserCacheCharts(t *testing.T) {
	dir, capture := fixture(t)
	s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: redact.Off})
	b := newBrowser(t)
	key := string(view.TabCache.Row().Key)
	b.run("open turn 3", chromedp.Navigate(s.url+"/s/demo.db/turn/3"))
	b.waitFor("turn 3", "document.querySelector('#turn-3.sel')")
	b.run("press "+key, chromedp.KeyEvent(key))
	b.waitFor("the charts", "document.querySelector('#tab svg#chart-cache')")
	for _, n := range []int{1, 2, 3, 4, 5, 7} {
		if b.count(fmt.Sprintf(`#chart-cache a[href="/s/demo.db/turn/%d"] rect`, n)) == 0 {
			t.Errorf("turn %d has no bar in the cache chart", n)
		}
	}
	b.run("scroll to the charts", chromedp.ScrollIntoView(chromedp.CSS("#chart-cache")))
	b.shot("cache-charts")
	b.run("click turn 5's bar", chromedp.Click(chromedp.CSS(`#chart-cost a[href="/s/demo.db/turn/5"] rect`)))
	b.waitFor("turn 5 selected", "document.querySelector('#turn-5.sel') && location.pathname === '/s/demo.db/turn/5'")
	b.waitFor("its tab", "document.querySelector('#tab').dataset.shown === '5/cache'")
	b.clean()
}

// The sessions page's chart, per day or per week, counts the same
// dollars, and draws them as the server's SVG.
func TestCostPerWeek(t *testing.T) {
	dir, capture := fixture(t)
	s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: redact.Off})
	var days, weeks struct {
		sessionsJSON
		SVG string `json:"chart_svg"`
	}
	getJSON(t, s, "/api/sessions", &days)
	getJSON(t, s, "/api/sessions?by=week", &weeks)
	sum := func(v []struct {
		Day       string
		USD       float64
		BreaksUSD float64 `json:"breaks_usd"`
	}) (usd, breaks float64) {
		for _, d := range v {
			usd, breaks = usd+d.USD, breaks+d.BreaksUSD
		}
		return usd, breaks
	}
	du, db := sum(days.Chart)
	wu, wb := sum(weeks.Chart)
	if du == 0 || fmt.Sprintf("%.6f %.6f", du, db) != fmt.Sprintf("%.6f %.6f", wu, wb) {
		t.Errorf("per day $%v (breaks $%v), per week $%v (breaks $%v)", du, db, wu, wb)
	}
	if !strings.Contains(days.SVG, `<svg class="chart" id="chart-days"`) || !strings.Contains(weeks.SVG, "Cost per week") {
		t.Errorf("the chart is not the server's SVG: %.200s / %.200s", days.SVG, weeks.SVG)
	}
	if code, _, _ := get(t, s, "GET", "/api/sessions?by=fortnight", ""); code != 400 {
		t.Errorf("by=fortnight: %d", code)
	}
}

// TestRestartMarked: a session file whose main conversation restarted
// (public session 36: its context cleared when plan mode was left) is one
// main thread; the context chart marks the restart, and the turn's
// conversation counts its messages from there, not from an earlier turn.
func TestRestartMarked(t *testing.T) {
	src := filepath.Join("..", "source", "testdata", "public", "36-v2.1.12-plan-clear-restart")
	dir := filepath.Join(t.TempDir(), "projects", "p")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	s := serve(t, web.Options{Roots: []string{filepath.Dir(dir)}, Policy: redact.Off})
	var list sessionsJSON
	getJSON(t, s, "/api/sessions", &list)
	if len(list.Rows) != 1 {
		t.Fatalf("%d sessions listed, want 1", len(list.Rows))
	}
	key := list.Rows[0].Key
	_, body, _ := get(t, s, "GET", "/api/s/"+key+"/turn/14/"+view.TabCache.Row().Name, "")
	if !strings.Contains(body, `class="mk m-restart"`) || !strings.Contains(body, "0 compactions marked, 1 restart marked") {
		t.Errorf("the restart before turn 14 is not marked:\n%.3000s", body)
	}
	if got := strings.Count(body, `<circle class="s-context"`); got != 25 {
		t.Errorf("the context chart has %d points, want the main thread's 25", got)
	}
	_, body, _ = get(t, s, "GET", "/api/s/"+key+"/turn/14/"+view.TabConversation.Row().Name, "")
	if !strings.Contains(body, "as the first turn since main&#39;s conversation started again") && !strings.Contains(body, "as the first turn since main's conversation started again") {
		t.Errorf("turn 14's conversation does not say it starts the restarted conversation:\n%.3000s", body)
	}
}
