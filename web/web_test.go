package web_test

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/catalog"
	"github.com/tsinspect/tsinspect/fixtures/democapture"
	"github.com/tsinspect/tsinspect/internal/testwait"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/textout"
	"github.com/tsinspect/tsinspect/timeline/view"
	"github.com/tsinspect/tsinspect/web"
)

// releases holds what Claude Code 2.1.299 wrote for five scenarios
// (source/testdata): five sessions, 21 turns, a subagent, two searches in
// one of them and one that found nothing.
const releases = "../source/testdata/releases/2.1.299/projects"

// fixture copies the release's sessions into a directory of the test's
// own, beside the bundled demo capture.
func fixture(t *testing.T) (dir, capture string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "projects")
	if err := os.CopyFS(dir, os.DirFS(releases)); err != nil {
		t.Fatal(err)
	}
	capture = filepath.Join(base, "demo.db")
	if err := os.WriteFile(capture, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, capture
}

// served is a server of the test's on 127.0.0.1.
type served struct {
	url   string
	index string // the index file it was given (never written)
	srv   *web.Server
}

// serve starts a server over opts (Roots, Files, Policy, Token) on a free
// port of 127.0.0.1, stopped when the test ends.
func serve(t *testing.T, opts web.Options) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tab, err := pricing.LoadFor("")
	if err != nil {
		t.Fatal(err)
	}
	opts.Prices, opts.Addr, opts.Version = tab, ln.Addr().String(), "test"
	if opts.Index == "" {
		opts.Index = filepath.Join(t.TempDir(), "cache", "sessions-index.gob")
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := web.New(ctx, opts)
	if err != nil {
		cancel()
		ln.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(testwait.Patience):
			t.Errorf("the server did not stop within %v", testwait.Patience)
		}
	})
	return &served{url: "http://" + opts.Addr, index: opts.Index, srv: srv}
}

var client = &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// get asks for path with the given Host header ("" for the server's) and
// returns the status and body.
func get(t *testing.T, s *served, method, path, host string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

func getJSON(t *testing.T, s *served, path string, v any) {
	t.Helper()
	code, body, _ := get(t, s, "GET", path, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
}

type sessionsJSON struct {
	Columns []string `json:"columns"`
	Rows    []struct {
		Key     string   `json:"key"`
		Cells   []string `json:"cells"`
		Flagged bool     `json:"flagged"`
		Capture bool     `json:"capture"`
	} `json:"rows"`
	Total string   `json:"total"`
	Notes []string `json:"notes"`
	Chart []struct {
		Day       string
		USD       float64
		BreaksUSD float64 `json:"breaks_usd"`
	} `json:"chart"`
	Counts struct {
		Sessions, Turns int
	} `json:"counts"`
}

// The sessions page's rows are 'tsinspect sessions” rows: the same
// sessions, turns and figures, with the capture beside them; its filters
// are the command's.
func TestSessionsData(t *testing.T) {
	dir, capture := fixture(t)
	s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: redact.Off})
	var got sessionsJSON
	getJSON(t, s, "/api/sessions", &got)
	entries, err := sessionfiles.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	sums, _ := sessionfiles.Scan(entries, sessionfiles.LoadIndex(""), nil)
	tab, _ := pricing.LoadFor("")
	rows := sessionfiles.Rows(sums, tab)
	demo, err := source.LoadSession(capture, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != len(rows)+1 {
		t.Fatalf("%d rows, want the %d sessions and the capture", len(got.Rows), len(rows))
	}
	turns := len(demo.Turns)
	for _, r := range rows {
		turns += r.Turns
	}
	if got.Counts.Turns != turns || got.Counts.Sessions != len(rows)+1 {
		t.Errorf("counts %+v, want %d sessions and %d turns", got.Counts, len(rows)+1, turns)
	}
	if strings.Join(got.Columns, " ") != "SESSION PROJECT START TIME TURNS AGENTS MODELS VERSION COST BREAKS BLIND SEARCH EMPTY PART" {
		t.Errorf("columns %v", got.Columns)
	}
	byID := map[string][]string{}
	captures := 0
	for _, r := range got.Rows {
		byID[r.Cells[0]] = r.Cells
		if r.Capture {
			captures++
			if r.Key != "demo.db" || r.Cells[4] != itoa(len(demo.Turns)) {
				t.Errorf("capture row %+v, want demo.db with %d turns", r, len(demo.Turns))
			}
		}
	}
	if captures != 1 {
		t.Errorf("%d capture rows", captures)
	}
	for _, r := range rows {
		c := byID[r.ID]
		if c == nil || c[4] != itoa(r.Turns) || c[1] != "user/"+strings.TrimPrefix(r.Project, "-home-user-") {
			t.Errorf("session %s: cells %v, want %d turns", r.ID, c, r.Turns)
		}
	}
	// The same rows as the catalog answers 'tsinspect sessions' with, cell
	// for cell and in its order, and the notes on their marks.
	l := catalog.List(sums, tab, catalog.Query{})
	var sessionsShown [][]string
	for _, r := range got.Rows {
		if !r.Capture {
			sessionsShown = append(sessionsShown, r.Cells)
		}
	}
	var want [][]string
	for _, r := range l.Rows {
		want = append(want, textout.SessionCells(r))
	}
	if !reflect.DeepEqual(sessionsShown, want) {
		t.Errorf("the page's rows\n%v\nthe catalog's\n%v", sessionsShown, want)
	}
	for _, n := range l.Notes {
		if !slices.Contains(got.Notes, n) {
			t.Errorf("note %q of the catalog not on the page: %v", n, got.Notes)
		}
	}
	if len(got.Chart) == 0 {
		t.Error("no day in the chart")
	}
	if !strings.Contains(got.Total, "sessions") || !strings.Contains(got.Total, "at built-in prices") {
		t.Errorf("total %q", got.Total)
	}

	var f sessionsJSON
	getJSON(t, s, "/api/sessions?project=subagent", &f)
	if len(f.Rows) != 1 || !strings.Contains(f.Rows[0].Cells[1], "subagent") {
		t.Errorf("project filter: %+v", f.Rows)
	}
	getJSON(t, s, "/api/sessions?flagged=1", &f)
	for _, r := range f.Rows {
		if !r.Flagged {
			t.Errorf("flagged filter kept %v", r.Cells)
		}
	}
	if len(f.Rows) == 0 {
		t.Error("flagged filter: none (the demo session searched for nothing)")
	}
	getJSON(t, s, "/api/sessions?model=nosuchmodel", &f)
	if len(f.Rows) != 0 {
		t.Errorf("model filter kept %d rows", len(f.Rows))
	}
	getJSON(t, s, "/api/sessions?since=2000-01-01&sort=turns", &f)
	if len(f.Rows) != len(got.Rows) || f.Rows[0].Cells[4] < f.Rows[len(f.Rows)-1].Cells[4] {
		t.Errorf("since and sort: %d rows", len(f.Rows))
	}
	for _, bad := range []string{"since=yesterday", "sort=size"} {
		if code, body, _ := get(t, s, "GET", "/api/sessions?"+bad, ""); code != http.StatusBadRequest || !strings.Contains(body, "error") {
			t.Errorf("%s: %d %s", bad, code, body)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

type turnsJSON struct {
	Columns []string `json:"columns"`
	Turns   []struct {
		I     int           `json:"i"`
		Th    string        `json:"th"`
		Sev   string        `json:"sev"`
		Cells [][][2]string `json:"c"`
	} `json:"turns"`
	Header string `json:"header"`
}

// A session's turns are the timeline's, with its columns; each tab of a
// turn is there; redacted, what was said is not.
func TestSessionTabs(t *testing.T) {
	dir, capture := fixture(t)
	for _, policy := range []redact.Policy{redact.Default, redact.Off} {
		t.Run(string(policy), func(t *testing.T) {
			s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: policy})
			demo, err := source.LoadSession(capture, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got turnsJSON
			getJSON(t, s, "/api/s/demo.db/turns", &got)
			if len(got.Turns) != len(demo.Turns) || strings.Join(got.Columns, " ") != "# TIME THREAD MODEL CAT WORK PROMPT COST STOP FLAGS" {
				t.Fatalf("%d turns (want %d), columns %v", len(got.Turns), len(demo.Turns), got.Columns)
			}
			flagged := 0
			for i, tr := range got.Turns {
				if tr.I != demo.Turns[i].Index || tr.Th != demo.Turns[i].Thread {
					t.Errorf("turn %d: %d %s", i, tr.I, tr.Th)
				}
				if (tr.Sev != "") != (len(demo.Turns[i].Flags) > 0) {
					t.Errorf("turn %d: severity %q, %d flags", tr.I, tr.Sev, len(demo.Turns[i].Flags))
				}
				if tr.Sev != "" {
					flagged++
				}
			}
			if flagged == 0 {
				t.Error("no flagged turn in the demo session")
			}
			for _, tab := range view.Tabs() {
				code, body, _ := get(t, s, "GET", "/api/s/demo.db/turn/2/"+tab.Name, "")
				if tab.Compared {
					// Compare is a page of its own here.
					if code != http.StatusNotFound {
						t.Errorf("tab %s: %d %q", tab.Name, code, body)
					}
					continue
				}
				if code != http.StatusOK || body == "" {
					t.Errorf("tab %s: %d %q", tab.Name, code, body)
				}
				said := tab.Form != view.FormLines
				if got := strings.Contains(body, "Left out of a redacted view"); got != (said && policy != redact.Off) {
					t.Errorf("tab %s under %s: withheld %v:\n%.300s", tab.Name, policy, got, body)
				}
			}
			_, body, _ := get(t, s, "GET", "/api/s/demo.db/turn/1/raw", "")
			if policy == redact.Off && (!strings.Contains(body, `data-path="request"`) || !strings.Contains(body, "POST /v1/messages")) {
				t.Errorf("raw tab: %.500s", body)
			}
			code, body, _ := get(t, s, "GET", "/api/s/demo.db/turn/999/working", "")
			if code != http.StatusNotFound || !strings.Contains(body, "no turn 999") {
				t.Errorf("turn 999: %d %s", code, body)
			}
			code, body, _ = get(t, s, "GET", "/s/demo.db/turn/2", "")
			if code != http.StatusOK || !strings.Contains(body, `data-turn="2"`) || !strings.Contains(body, `class="redaction`) {
				t.Errorf("turn page: %d %.300s", code, body)
			}
			if code, _, _ := get(t, s, "GET", "/s/nosuch", ""); code != http.StatusNotFound {
				t.Errorf("no such session: %d", code)
			}
		})
	}
}

// The session page lists the tab table's tabs in its order with its keys,
// as the terminal's tab bar does (ui's TestTabsFollowTheTable), and says
// the keys in its key help.
func TestSessionPageTabsFollowTheTable(t *testing.T) {
	dir, capture := fixture(t)
	s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: redact.Off})
	_, body, _ := get(t, s, "GET", "/s/demo.db", "")
	var got, want []string
	for _, m := range regexp.MustCompile(`data-tab="([^"]*)" data-key="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		got = append(got, m[2]+" "+m[1])
	}
	rows := view.TabsShown(false)
	for _, r := range rows {
		want = append(want, string(r.Key)+" "+r.Name)
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("the session page lists the tabs\n  %s\nthe tab table\n  %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
	if keys := view.TabKeys(rows) + " or ←/→ tabs"; !strings.Contains(body, keys) {
		t.Errorf("the key help does not say %q", keys)
	}
}

// A redacted page says so; an unredacted one too, and differently.
func TestRedactionSaidOnEveryPage(t *testing.T) {
	dir, capture := fixture(t)
	for policy, want := range map[redact.Policy]string{redact.Default: "Redacted (default)", redact.Off: "Not redacted (--redact off)"} {
		s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: policy})
		for _, p := range []string{"/", "/s/demo.db", "/compare", "/compare?a=demo.db&b=demo.db", "/nosuchpage"} {
			_, body, _ := get(t, s, "GET", p, "")
			if !strings.Contains(body, want) {
				t.Errorf("%s under %s does not say %q", p, policy, want)
			}
		}
	}
}

// The Host header must name the server; only GET and HEAD are answered;
// with a token, nothing is answered without it.
func TestGuard(t *testing.T) {
	dir, _ := fixture(t)
	s := serve(t, web.Options{Roots: []string{dir}})
	port := s.url[strings.LastIndex(s.url, ":")+1:]
	for _, host := range []string{"evil.example:" + port, "127.0.0.1:1", "localhost.evil.example:" + port, "10.1.2.3:" + port} {
		if code, body, _ := get(t, s, "GET", "/", host); code != http.StatusMisdirectedRequest || !strings.Contains(body, "does not name this server") {
			t.Errorf("Host %s: %d %s", host, code, body)
		}
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port} {
		if code, _, _ := get(t, s, "GET", "/", host); code != http.StatusOK {
			t.Errorf("Host %s: %d", host, code)
		}
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		if code, _, hd := get(t, s, m, "/api/sessions", ""); code != http.StatusMethodNotAllowed || hd.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d", m, code)
		}
	}
	_, _, hd := get(t, s, "GET", "/", "")
	if csp := hd.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}

	tok, err := web.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, web.Options{Roots: []string{dir}, Token: tok})
	for _, p := range []string{"/", "/api/sessions", "/assets/app.js", "/events/sessions"} {
		if code, _, _ := get(t, ts, "GET", p, ""); code != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d", p, code)
		}
		if code, _, _ := get(t, ts, "GET", p+"?token=wrong", ""); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong token: %d", p, code)
		}
	}
	code, _, hd := get(t, ts, "GET", "/?token="+tok, "")
	if code != http.StatusSeeOther || hd.Get("Location") != "/" || !strings.Contains(hd.Get("Set-Cookie"), web.TokenCookie+"="+tok) || !strings.Contains(hd.Get("Set-Cookie"), "HttpOnly") {
		t.Errorf("token in the address: %d, Location %q, Set-Cookie %q", code, hd.Get("Location"), hd.Get("Set-Cookie"))
	}
	if code, _, _ := get(t, ts, "GET", "/api/sessions", "", "Cookie", web.TokenCookie+"="+tok); code != http.StatusOK {
		t.Errorf("token in the cookie: %d", code)
	}
	if code, _, _ := get(t, ts, "GET", "/api/sessions", "", "Authorization", "Bearer "+tok); code != http.StatusOK {
		t.Errorf("token as a bearer: %d", code)
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:8644": true, "[::1]:1": true, "localhost:80": true, "127.5.6.7:1": true,
		"0.0.0.0:8644": false, "[::]:1": false, "192.168.1.2:80": false, "nonsense": false} {
		if got := web.Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v", addr, got)
		}
	}
}

// Nothing a request does changes a file: not the sessions, not the
// capture, and the index is read, not written. (SQLite makes a capture's
// -wal and -shm files beside it when it opens one, as every reading
// command does: they are not the capture's content.)
func TestWritesNothing(t *testing.T) {
	dir, capture := fixture(t)
	before := snapshot(t, filepath.Dir(dir))
	s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: redact.Off})
	var ss sessionsJSON
	getJSON(t, s, "/api/sessions", &ss)
	for _, r := range ss.Rows {
		var tj turnsJSON
		getJSON(t, s, "/api/s/"+r.Key+"/turns", &tj)
		for _, tab := range view.TabsShown(false) {
			get(t, s, "GET", "/api/s/"+r.Key+"/turn/1/"+tab.Name+"?expand=1", "")
		}
	}
	get(t, s, "GET", "/compare?a="+ss.Rows[0].Key+"&b="+ss.Rows[1].Key, "")
	if after := snapshot(t, filepath.Dir(dir)); after != before {
		t.Errorf("files changed:\nbefore %s\nafter  %s", before, after)
	}
	if _, err := os.Stat(s.index); !os.IsNotExist(err) {
		t.Errorf("the index was written: %v", err)
	}
}

// snapshot names every file under dir but SQLite's side files with its
// size and time.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, "-wal") || strings.HasSuffix(p, "-shm") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b.WriteString(p + " " + itoa(int(info.Size())) + " " + info.ModTime().Format(time.RFC3339Nano) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The Compare page is diff's comparison: the two sessions side by side,
// and what differs.
func TestCompare(t *testing.T) {
	dir, capture := fixture(t)
	s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: redact.Off})
	var ss sessionsJSON
	getJSON(t, s, "/api/sessions?project=user-demo", &ss)
	if len(ss.Rows) != 1 {
		t.Fatalf("demo: %d rows", len(ss.Rows))
	}
	code, body, _ := get(t, s, "GET", "/compare?a=demo.db&b="+ss.Rows[0].Key, "")
	if code != http.StatusOK {
		t.Fatalf("compare: %d", code)
	}
	for _, want := range []string{"The sessions differ.", "<h2>Summary</h2>", "<h2>Request shape</h2>", "<h2>Turns, aligned per thread</h2>", "<th>B − A</th>"} {
		if !strings.Contains(body, want) {
			t.Errorf("compare lacks %q", want)
		}
	}
	// The aligned turns lead to their turns of each session.
	if !strings.Contains(body, `<a class="turnref" href="/s/demo.db/turn/1">`) || !strings.Contains(body, `<a class="turnref" href="/s/`+ss.Rows[0].Key+`/turn/1">`) {
		t.Errorf("the aligned turns are not links to them:\n%s", body)
	}
	code, body, _ = get(t, s, "GET", "/compare?a=demo.db&b=demo.db", "")
	if code != http.StatusOK || !strings.Contains(body, "The sessions are the same") {
		t.Errorf("a session against itself: %d", code)
	}
	if code, body, _ := get(t, s, "GET", "/compare?a=demo.db&b=nosuch", ""); code != http.StatusNotFound || !strings.Contains(body, "nosuch") {
		t.Errorf("compare with nothing: %d", code)
	}
}

// TestAdvicePage: the advice page reads the sessions served in the
// background, says how far it got meanwhile, then shows the advice
// across them as 'tsinspect advise' gives it, redacted; it writes nothing
// (the facts cache is read, never written).
func TestAdvicePage(t *testing.T) {
	dir, capture := fixture(t)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}})
	var body string
	testwait.Until(t, 100*time.Millisecond, "the advice page still says it is reading", func() bool {
		code, b, _ := get(t, s, "GET", "/advice", "")
		if code != http.StatusOK {
			t.Fatalf("GET /advice: %d %s", code, b)
		}
		body = b
		return !strings.Contains(b, "advice-progress")
	})
	for _, want := range []string{"<h1>Advice</h1>", "6 sessions", "rests on at least 3 sessions", `href="/advice"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the advice page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "error") {
		t.Errorf("the advice page says an error:\n%s", body)
	}
	var files []string
	filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 0 {
		t.Errorf("serve wrote %v", files)
	}
}
