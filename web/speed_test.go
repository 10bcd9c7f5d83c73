package web_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/timeline/view"
	"github.com/tsinspect/tsinspect/web"
)

// TestSpeed measures how soon the pages are usable on the directory
// 'go run ./bench/sessionsdir -dir DIR' writes (1,000 sessions, 1.83 GB,
// and a recorded 1,000-turn session), in Chromium at a laptop's size:
//
//	TSINSPECT_WEB_BENCH=DIR go test ./web -run TestSpeed -v
//
// It is skipped without TSINSPECT_WEB_BENCH. BENCHMARKS.md has its
// figures. For the session's page alone, 'go run ./bench/sessionsdir -dir
// DIR -sizes 1000 -copies 1 -projects 1' makes the recorded 1,000-turn
// session without the 1,000 copies.
func TestSpeed(t *testing.T) {
	dir := os.Getenv("TSINSPECT_WEB_BENCH")
	if dir == "" {
		t.Skip("TSINSPECT_WEB_BENCH names the directory of 'go run ./bench/sessionsdir' to measure the pages on")
	}
	long, err := filepath.Glob(filepath.Join(dir, "recorded", "1000", "home", ".claude", "projects", "*", "*.jsonl"))
	if err != nil || len(long) != 1 {
		t.Fatalf("the recorded 1,000-turn session: %v %v", long, err)
	}
	tab, err := pricing.LoadFor("")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := time.Now()
	srv, err := web.New(ctx, web.Options{Roots: []string{filepath.Join(dir, "config", "projects"), filepath.Dir(long[0])},
		Prices: tab, Policy: redact.Default, Addr: ln.Addr().String(), Version: "bench"})
	if err != nil {
		t.Fatal(err)
	}
	st := srv.Listing()
	t.Logf("start: the listing of %d sessions read without an index in %s (%d read, %.2f GB)", st.Sessions, time.Since(started).Round(time.Millisecond), st.Read, float64(st.Bytes)/1e9)
	go srv.Serve(ctx, ln)
	url := "http://" + ln.Addr().String()
	b := newBrowser(t)

	ms := func(v float64) string { return fmt.Sprintf("%.0f ms", v) }
	summary := func(what string, vs []float64) {
		s := slices.Clone(vs)
		slices.Sort(s)
		t.Logf("%-58s median %s (%s–%s, %d runs)", what, ms(s[len(s)/2]), ms(s[0]), ms(s[len(s)-1]), len(s))
	}
	ready := func(page string) float64 {
		b.run("open "+page, chromedp.Navigate(url+page))
		b.waitFor(page+" ready", "document.querySelector('[data-page]').dataset.ready")
		return eval[float64](b, "+document.querySelector('[data-page]').dataset.ready")
	}

	var list, api []float64
	for range 5 {
		list = append(list, ready("/"))
		api = append(api, eval[float64](b, "performance.getEntriesByType('resource').find(e => e.name.includes('/api/sessions')).duration"))
	}
	// (A directory of the recorded sessions alone, -copies 1, lists too
	// few to tell.)
	if n := b.count("#list .vrow"); st.Sessions >= 100 && (n < 20 || n > 100) {
		t.Errorf("%d rows in the page: the list is not virtualised", n)
	}
	b.shot("bench-sessions")
	summary("sessions page: 1,001 rows listed (from the address)", list)
	summary("  of which /api/sessions", api)
	summary("  sorted by cost (from the click)", repeat(5, func() float64 {
		return eval[float64](b, `new Promise(r => {
			const sel = document.querySelector('select[name="sort"]');
			const page = document.querySelector('[data-page]');
			const loads = page.dataset.loads;
			sel.value = sel.value === "cost" ? "turns" : "cost";
			const t0 = performance.now();
			sel.dispatchEvent(new Event("input", {bubbles: true}));
			const check = () => page.dataset.loads !== loads ? requestAnimationFrame(() => r(performance.now() - t0)) : setTimeout(check, 2);
			check();
		})`)
	}))
	summary("  scrolled to the end", repeat(5, func() float64 { return scrollEnd(b, "#list .vbody") }))

	key := filepath.Base(long[0])
	key = key[:len(key)-len(".jsonl")]
	cold := ready("/s/" + key)
	b.waitFor("the rows", "document.querySelectorAll('#turns .vrow').length > 0")
	turns := eval[int](b, "document.querySelectorAll('#turns .vrow').length")
	light := eval[bool](b, "document.querySelector('#turns').classList.contains('light')")
	t.Logf("%-58s %s (%d rows in the page, from the listing: %v)", "1,048-turn session, first opened: its rows", ms(cold), turns, light)
	b.waitFor("the turns read", "document.querySelector('[data-page]').dataset.full")
	t.Logf("%-58s %s", "  its turns, read whole", ms(eval[float64](b, "+document.querySelector('[data-page]').dataset.full")))
	var warm []float64
	for range 5 {
		warm = append(warm, ready("/s/"+key))
	}
	summary("1,048-turn session, opened again (read already)", warm)
	b.waitFor("turn 1's tab", "document.querySelector('#tab').dataset.shown === '1/"+view.TabsShown(false)[0].Name+"'")
	summary("  next turn with its working set (j)", repeat(20, func() float64 { return press(b, "j", "") }))
	// The tabs in the tab table's order, with its keys (the first last).
	tabs := view.TabsShown(false)
	first := tabs[0]
	for _, tb := range append(tabs[1:], first) {
		summary("  tab "+tb.Name, repeat(5, func() float64 {
			press(b, string(first.Key), first.Name)
			return press(b, string(tb.Key), tb.Name)
		}))
	}
	summary("  scrolled to the end", repeat(5, func() float64 { return scrollEnd(b, "#turns .vbody") }))
	summary("  previous turn (k)", repeat(5, func() float64 { return press(b, "k", "") }))
	b.run("turn 500", chromedp.Navigate(url+"/s/"+key+"/turn/500"))
	b.waitFor("turn 500", "document.querySelector('#tab').dataset.shown === '500/"+view.TabsShown(false)[0].Name+"'")
	press(b, string(view.TabCache.Row().Key), view.TabCache.Row().Name)
	b.shot("bench-session")
	b.clean()
}

func repeat(n int, f func() float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f()
	}
	return out
}

// press sends a key to the page and returns the ms until the tab shows
// what it asks for (tab "" for the tab open, of the turn the key selects).
func press(b *browser, key, tab string) float64 {
	b.t.Helper()
	return eval[float64](b, fmt.Sprintf(`new Promise(r => {
		const box = document.querySelector('#tab');
		const want = %q || (box.dataset.shown || "/").split("/")[1];
		box.dataset.shown = "";
		const t0 = performance.now();
		document.body.dispatchEvent(new KeyboardEvent("keydown", {key: %q, bubbles: true}));
		const check = () => (box.dataset.shown || "").endsWith("/" + want) ? r(performance.now() - t0) : setTimeout(check, 2);
		check();
	})`, tab, key))
}

// scrollEnd scrolls a list to its end and back, and returns the ms until
// the rows at the end are drawn.
func scrollEnd(b *browser, sel string) float64 {
	b.t.Helper()
	return eval[float64](b, fmt.Sprintf(`new Promise(r => {
		const body = document.querySelector(%q);
		body.scrollTop = 0;
		const t0 = performance.now();
		body.scrollTop = body.scrollHeight;
		requestAnimationFrame(() => requestAnimationFrame(() => { const d = performance.now() - t0; body.scrollTop = 0; r(d); }));
	})`, sel))
}
