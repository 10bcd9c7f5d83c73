package web_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/internal/testwait"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/timeline/view"
	"github.com/tsinspect/tsinspect/web"
)

// skips gathers the tests skipped for want of Chromium, said when the
// package ends (go test shows a passing package's output only with -v).
var skips session.Skips

// shotsDir is where the screenshots are kept: $TSINSPECT_WEB_SHOTS, or a
// directory of the run's own, said at the end when it holds any.
var shotsDir string

func TestMain(m *testing.M) {
	shotsDir = os.Getenv("TSINSPECT_WEB_SHOTS")
	made := ""
	if shotsDir == "" {
		if d, err := os.MkdirTemp("", "tsinspect-web-shots-"); err == nil {
			shotsDir, made = d, d
		}
	}
	code := m.Run()
	if made != "" {
		if des, _ := os.ReadDir(made); len(des) == 0 {
			os.Remove(made)
		} else {
			fmt.Printf("web: %d screenshots of the pages in %s\n", len(des), made)
		}
	}
	skips.Tell("web", code)
	os.Exit(code)
}

// The page is checked in the window of a laptop's screen, 1366 × 768: a
// viewport of 1366 × 680 under the browser's own bars.
const laptopW, laptopH = 1366, 680

// findChromium returns the browser the tests drive, skipping the test when
// there is none, or failing it when TSINSPECT_REQUIRE_CHROMIUM is set (as
// CI does).
func findChromium(t *testing.T) string {
	t.Helper()
	skips.Short(t, "Chromium")
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("TSINSPECT_REQUIRE_CHROMIUM") != "" {
		t.Fatal("chromium not found: install Debian's chromium package (apt-get install -y chromium)")
	}
	skips.Skip(t, "Chromium", "apt-get install chromium fonts-dejavu-core", "chromium not installed (apt-get install -y chromium); set TSINSPECT_REQUIRE_CHROMIUM=1 to make this a failure")
	return ""
}

// browser is a headless Chromium driven through the DevTools protocol,
// with what the pages logged: script errors, refused resources, failed
// loads.
type browser struct {
	t        *testing.T
	ctx      context.Context
	mu       sync.Mutex
	problems []string
}

// newBrowser starts Chromium for the test (at most two minutes of it),
// with flags beside the usual ones.
func newBrowser(t *testing.T, flags ...chromedp.ExecAllocatorOption) *browser {
	t.Helper()
	path := findChromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(laptopW, laptopH), chromedp.UserDataDir(t.TempDir()))
	opts = append(opts, flags...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	b := &browser{t: t, ctx: bctx}
	t.Cleanup(func() {
		bcancel()
		acancel()
		cancel()
	})
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(laptopW, laptopH)); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	messages := chromedp.Console(bctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				b.mu.Lock()
				b.problems = append(b.problems, fmt.Sprintf("%s %s (%s)", m.Type, m.Text, m.URL))
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// run runs actions, failing the test on an error.
func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v (the page logged: %v)", what, err, b.logged())
	}
}

func (b *browser) logged() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// clean fails the test when a page logged a problem, except those the
// test expects (a refused request it made on purpose).
func (b *browser) clean(expected ...string) {
	b.t.Helper()
	for _, p := range b.logged() {
		ok := false
		for _, e := range expected {
			ok = ok || strings.Contains(p, e)
		}
		if !ok {
			b.t.Errorf("the page logged %s", p)
		}
	}
}

// eval evaluates a script into a value of type T (a promise's, once it
// settles).
func eval[T any](b *browser, script string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](script, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v (the page logged: %v)", script, err, b.logged())
	}
	return v
}

// text returns the text of the first node matching sel.
func (b *browser) text(sel string) string {
	b.t.Helper()
	return eval[string](b, fmt.Sprintf("(document.querySelector(%q) || {innerText: ''}).innerText", sel))
}

// count returns how many nodes match sel.
func (b *browser) count(sel string) int {
	b.t.Helper()
	return eval[int](b, fmt.Sprintf("document.querySelectorAll(%q).length", sel))
}

// waitFor waits (at most testwait.Patience) until the script's value is true.
func (b *browser) waitFor(what, script string) {
	b.t.Helper()
	deadline := time.Now().Add(testwait.Patience)
	for !eval[bool](b, "!!("+script+")") {
		if time.Now().After(deadline) {
			body := eval[string](b, "document.body.innerText.slice(0, 800)")
			b.t.Fatalf("waited %v for %s (%s); the page says:\n%s\nand logged %v", testwait.Patience, what, script, body, b.logged())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// shot takes a screenshot of the window, checks it shows something, and
// keeps it in shotsDir, to be looked at (its path logged).
func (b *browser) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if r := img.Bounds(); r.Dx() != laptopW || r.Dy() != laptopH {
		b.t.Errorf("screenshot %s is %dx%d, want the window's %dx%d", name, r.Dx(), r.Dy(), laptopW, laptopH)
	}
	if n := colours(img); n < 8 {
		b.t.Errorf("screenshot %s has %d colours: a blank page", name, n)
	}
	if shotsDir != "" {
		path := filepath.Join(shotsDir, name+".png")
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			b.t.Error(err)
		}
		b.t.Logf("screenshot %s", path)
	}
}

// colours counts the colours of img, up to 64.
func colours(img image.Image) int {
	seen := map[[3]uint32]bool{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 7 {
		for x := r.Min.X; x < r.Max.X; x += 7 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			seen[[3]uint32{cr >> 8, cg >> 8, cb >> 8}] = true
			if len(seen) >= 64 {
				return len(seen)
			}
		}
	}
	return len(seen)
}

// The sessions page lists every session with its totals and chart; a
// session's link opens its turns; the tabs, the keys and a turn's own
// address work; two checked sessions compare.
func TestBrowserPages(t *testing.T) {
	dir, capture := fixture(t)
	s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: redact.Default})
	var want sessionsJSON
	getJSON(t, s, "/api/sessions", &want)
	b := newBrowser(t)

	b.run("open the sessions page", chromedp.Navigate(s.url+"/"))
	b.waitFor("every session's row", fmt.Sprintf("document.querySelectorAll('#list .vrow').length === %d", len(want.Rows)))
	if got := b.text("#redaction"); !strings.Contains(got, "Redacted (default)") {
		t.Errorf("redaction line %q", got)
	}
	if got := b.text("#totals"); !strings.Contains(got, fmt.Sprintf("%d sessions", len(want.Rows))) || !strings.Contains(got, "cache breaks") {
		t.Errorf("totals %q", got)
	}
	// The chart is the server's SVG: a bar for every day that cost
	// something, its cache breaks stacked on it.
	costly, broken := 0, 0
	for _, d := range want.Chart {
		if d.USD > d.BreaksUSD {
			costly++
		}
		if d.BreaksUSD > 0 {
			broken++
		}
	}
	if n, m := b.count("#chart svg.chart rect.b-cost"), b.count("#chart svg.chart rect.b-break"); n != costly || m != broken || costly == 0 {
		t.Errorf("chart: %d bars and %d of breaks, want %d and %d of %d days", n, m, costly, broken, len(want.Chart))
	}
	if got := b.text("#list .vhead"); !strings.Contains(got, "SESSION") || !strings.Contains(got, "EMPTY") {
		t.Errorf("heading %q", got)
	}
	b.shot("sessions")

	// "flagged only" narrows the list, and goes in the address.
	flagged := 0
	for _, r := range want.Rows {
		if r.Flagged {
			flagged++
		}
	}
	b.run("flagged only", chromedp.Click(chromedp.CSS(`input[name="flagged"]`)))
	b.waitFor("the flagged rows", fmt.Sprintf("document.querySelectorAll('#list .vrow').length === %d", flagged))
	if loc := eval[string](b, "location.search"); loc != "?flagged=1" {
		t.Errorf("the filter's address %q", loc)
	}

	// The capture's row opens its turns.
	b.run("open the demo capture", chromedp.Navigate(s.url+"/"), chromedp.WaitVisible(chromedp.CSS(`a[href="/s/demo.db"]`)), chromedp.Click(chromedp.CSS(`a[href="/s/demo.db"]`)))
	var turns turnsJSON
	getJSON(t, s, "/api/s/demo.db/turns", &turns)
	b.waitFor("every turn's row", fmt.Sprintf("document.querySelectorAll('#turns .vrow').length === %d", len(turns.Turns)))
	b.waitFor("the first turn selected, its working set shown", "document.querySelector('#turns .vrow.sel') && document.querySelector('#tab').innerText.includes('Working set of #1')")
	if got := b.text("#header"); !strings.Contains(got, fmt.Sprintf("%d turns", len(turns.Turns))) || !strings.Contains(got, "$") {
		t.Errorf("header %q", got)
	}
	b.waitFor("the live line", "document.querySelector('#live').textContent.includes('live')")
	b.shot("session")

	// n jumps to the first flagged turn, whose address the page takes.
	first := 0
	for _, tr := range turns.Turns {
		if tr.Sev != "" {
			first = tr.I
			break
		}
	}
	b.run("press n", chromedp.KeyEvent("n"))
	b.waitFor("the flagged turn selected", fmt.Sprintf("location.pathname === '/s/demo.db/turn/%d'", first))
	// Each tab's key opens it, as in the terminal (the tab table's);
	// the arrows go round them in its order.
	rows := view.TabsShown(false)
	for _, r := range rows {
		b.run("press "+string(r.Key), chromedp.KeyEvent(string(r.Key)))
		b.waitFor("the "+r.Name+" tab", fmt.Sprintf(`document.querySelector('.tabs button.on').dataset.tab === %q && document.querySelector('#tab').dataset.shown === '%d/%s'`, r.Name, first, r.Name))
	}
	b.run("press →", chromedp.KeyEvent(kb.ArrowRight))
	b.waitFor("round to the first tab", fmt.Sprintf(`document.querySelector('.tabs button.on').dataset.tab === %q`, rows[0].Name))
	b.run("press ←", chromedp.KeyEvent(kb.ArrowLeft))
	b.waitFor("back to the last tab", fmt.Sprintf(`document.querySelector('.tabs button.on').dataset.tab === %q`, rows[len(rows)-1].Name))
	flags := string(view.TabFlags.Row().Key)
	b.run("press "+flags, chromedp.KeyEvent(flags))
	b.waitFor("the flags tab", fmt.Sprintf("document.querySelector('#tab').innerText.includes('Flags of #%d')", first))
	if got := b.text("#tab"); !strings.Contains(got, "Why it matters") {
		t.Errorf("flags tab: %q", got)
	}
	b.shot("session-flags")
	for _, tab := range []string{"catalog", "searches", "cache"} {
		b.run("open "+tab, chromedp.Click(chromedp.CSS(`button[data-tab="`+tab+`"]`)))
		b.waitFor("the "+tab+" tab", `document.querySelector('.tabs button.on').dataset.tab === '`+tab+`' && document.querySelector('#tab pre.lines')`)
	}
	b.shot("session-cache")
	b.run("open the conversation", chromedp.Click(chromedp.CSS(`button[data-tab="conversation"]`)))
	b.waitFor("the conversation withheld", "document.querySelector('#tab').innerText.includes('Left out of a redacted view')")

	// A turn's address selects it; so does #turn-N.
	b.run("open turn 3", chromedp.Navigate(s.url+"/s/demo.db/turn/3"))
	b.waitFor("turn 3 selected", "document.querySelector('#turn-3.sel') && document.querySelector('#permalink').getAttribute('href') === '/s/demo.db/turn/3'")
	b.run("open #turn-4", chromedp.Navigate(s.url+"/s/demo.db#turn-4"))
	b.waitFor("turn 4 selected", "document.querySelector('#turn-4.sel')")

	// Two checked sessions compare.
	b.run("back to the list", chromedp.Navigate(s.url+"/"))
	b.waitFor("the rows", "document.querySelectorAll('#list .vrow input').length >= 2")
	b.run("check two", chromedp.Click(chromedp.CSS(`#list .vrow:nth-child(1) input`)), chromedp.Click(chromedp.CSS(`#list .vrow:nth-child(2) input`)),
		chromedp.Click(chromedp.CSS(`#compare-btn`)))
	b.waitFor("the comparison", "document.querySelector('h2') && document.body.innerText.includes('Turns, aligned per thread')")
	b.shot("compare")
	b.clean()
}

// Unredacted, the conversation folds by message and part, and the raw
// exchange opens and closes part by part.
func TestBrowserRawAndConversation(t *testing.T) {
	dir, capture := fixture(t)
	s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: redact.Off})
	b := newBrowser(t)
	b.run("open turn 2", chromedp.Navigate(s.url+"/s/demo.db/turn/2"))
	b.waitFor("turn 2", "document.querySelector('#turn-2.sel')")
	if got := b.text("#redaction"); !strings.Contains(got, "Not redacted") {
		t.Errorf("redaction line %q", got)
	}
	// Unredacted, the project filter reads the directories' names.
	b.run("the list filtered by project", chromedp.Navigate(s.url+"/?project=subagent"))
	b.waitFor("one row", "document.querySelectorAll('#list .vrow').length === 1")
	if got := b.text("#list .vrow"); !strings.Contains(got, "user/subagent") {
		t.Errorf("the row %q", got)
	}
	b.run("open turn 2", chromedp.Navigate(s.url+"/s/demo.db/turn/2"))
	b.waitFor("turn 2", "document.querySelector('#turn-2.sel')")
	conv, raw := string(view.TabConversation.Row().Key), string(view.TabRaw.Row().Key)
	b.run("press "+conv, chromedp.KeyEvent(conv))
	b.waitFor("the conversation", "document.querySelectorAll('#tab details.msg').length >= 2")
	b.shot("conversation")
	b.run("press "+raw, chromedp.KeyEvent(raw))
	b.waitFor("the raw exchange", `document.querySelector('#tab .rl.fold[data-path="request"]')`)
	before := b.count("#tab .rl")
	b.run("open the tools", chromedp.Click(chromedp.CSS(`#tab .rl.fold[data-path="request/body/tools"]`)))
	b.waitFor("more lines", fmt.Sprintf("document.querySelectorAll('#tab .rl').length > %d", before))
	b.shot("raw")
	b.run("close the request", chromedp.Click(chromedp.CSS(`#tab .rl.fold[data-path="request"]`)))
	b.waitFor("fewer lines", fmt.Sprintf("document.querySelectorAll('#tab .rl').length < %d", before))
	b.clean()
}

// A session Claude Code is writing shows each new turn as it is written,
// and a new session shows in the list, with no reload.
func TestBrowserLive(t *testing.T) {
	dir, _ := fixture(t)
	src := filepath.Join(dir, "-home-user-demo", "76805962-ccee-4e9e-8dd8-bbece00290ac.jsonl")
	lines := readLines(t, src)
	// The session as it stood after its first answer.
	cut := 0
	for i, l := range lines {
		if strings.Contains(l, `"type":"assistant"`) {
			cut = i + 1
			break
		}
	}
	if cut == 0 {
		t.Fatal("no answer in the demo session")
	}
	liveDir := filepath.Join(t.TempDir(), "projects", "-home-user-live")
	if err := os.MkdirAll(liveDir, 0o755); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(liveDir, filepath.Base(src))
	writeLines(t, live, lines[:cut], os.O_CREATE|os.O_WRONLY|os.O_TRUNC)
	s := serve(t, web.Options{Roots: []string{filepath.Dir(liveDir)}, Policy: redact.Default})
	b := newBrowser(t)
	key := strings.TrimSuffix(filepath.Base(src), ".jsonl")
	b.run("open the session", chromedp.Navigate(s.url+"/s/"+key))
	b.waitFor("its first turn", "document.querySelectorAll('#turns .vrow').length === 1")
	b.waitFor("the live line", "document.querySelector('#live').textContent.includes('live')")
	b.run("select the last turn", chromedp.Click(chromedp.CSS(`#turn-1`)))
	writeLines(t, live, lines[cut:], os.O_APPEND|os.O_WRONLY)
	started := time.Now()
	full, err := source.LoadSession(live, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Turns) < 2 {
		t.Fatalf("the whole session has %d turns", len(full.Turns))
	}
	b.waitFor("the new turns", fmt.Sprintf("document.querySelectorAll('#turns .vrow').length === %d", len(full.Turns)))
	t.Logf("%d new turns on the page %s after they were written", len(full.Turns)-1, time.Since(started).Round(time.Millisecond))
	b.waitFor("the newest turn selected (the last was)", fmt.Sprintf("document.querySelector('#turn-%d.sel')", full.Turns[len(full.Turns)-1].Index))

	b.run("open the list", chromedp.Navigate(s.url+"/"))
	b.waitFor("one session", "document.querySelectorAll('#list .vrow').length === 1")
	other := filepath.Join(dir, "-home-user-flaky", "45a0fa3c-3569-4097-809e-6a2c1c79df51.jsonl")
	writeLines(t, filepath.Join(liveDir, filepath.Base(other)), readLines(t, other), os.O_CREATE|os.O_WRONLY|os.O_TRUNC)
	b.waitFor("the new session in the list", "document.querySelectorAll('#list .vrow').length === 2")
	b.clean()
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func writeLines(t *testing.T, path string, lines []string, flag int) {
	t.Helper()
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// A page of another site that reaches the server under its own name (DNS
// rebinding) is refused; a server with a token answers nothing until the
// browser has shown it, then everything, live updates included.
func TestBrowserHostAndToken(t *testing.T) {
	dir, _ := fixture(t)
	s := serve(t, web.Options{Roots: []string{dir}})
	port := s.url[strings.LastIndex(s.url, ":")+1:]
	b := newBrowser(t, chromedp.Flag("host-resolver-rules", "MAP rebind.test 127.0.0.1"))
	b.run("open the server under another name", chromedp.Navigate("http://rebind.test:"+port+"/"))
	if got := b.text("body"); !strings.Contains(got, "does not name this server") {
		t.Errorf("under another name the page says %q", got)
	}

	tok, err := web.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, web.Options{Roots: []string{dir}, Token: tok})
	b.run("open without the token", chromedp.Navigate(ts.url+"/"))
	if got := b.text("body"); !strings.Contains(got, "needs its token") {
		t.Errorf("without the token the page says %q", got)
	}
	b.run("open with the token", chromedp.Navigate(ts.url+"/?token="+tok))
	b.waitFor("the sessions", "document.querySelectorAll('#list .vrow').length === 5")
	if loc := eval[string](b, "location.href"); strings.Contains(loc, tok) {
		t.Errorf("the token stayed in the address: %s", loc)
	}
	b.clean("421", "401", "Misdirected", "Unauthorized")
}
