package web_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/web"
)

const (
	sessionA = "76805962-ccee-4e9e-8dd8-bbece00290ac"
	sessionB = "45a0fa3c-3569-4097-809e-6a2c1c79df51" // smaller than A
)

func sizeOf(t *testing.T, dir, project, id string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, project, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// Issue 42, item 4: one large session had no bound (a 2 GB session took
// 12.8 GB). A session larger than the server's budget is not read, not
// even for the listing's row: the listing names it in one line saying why
// and how to raise the budget, and its page is not served.
func TestSessionOverBudgetRefused(t *testing.T) {
	dir, _ := fixture(t)
	size := sizeOf(t, dir, "-home-user-demo", sessionA)
	s := serve(t, web.Options{Roots: []string{dir}, Policy: redact.Off, Budget: size - 1})
	_, body, _ := get(t, s, "GET", "/api/sessions", "")
	if !strings.Contains(body, sessionA+".jsonl: 172.5 kB, more than the server's budget of 172.5 kB: not read (start tsinspect serve with --budget 1 or more to read it)") {
		t.Errorf("the listing does not name the session over the budget:\n%s", body)
	}
	for _, path := range []string{"/api/s/" + sessionA + "/turns", "/api/s/" + sessionA + "/turn/1/flags", "/events/s/" + sessionA} {
		if code, body, _ := get(t, s, "GET", path, ""); code == http.StatusOK {
			t.Errorf("%s: %d %.200s; want it refused", path, code, body)
		}
	}
	// A session within it is served.
	if code, body, _ := get(t, s, "GET", "/api/s/"+sessionB+"/turns", ""); code != http.StatusOK {
		t.Errorf("a session within the budget: %d %.200s", code, body)
	}
}

// Issue 42, item 3: sessions watched by open pages were held without
// limit (the cap skipped them). They count against the budget too: with
// a budget that holds one of two sessions, a page watching the first
// keeps the second from being opened, said in one line; once that page
// is closed, the second is served.
func TestWatchedSessionsCountAgainstTheBudget(t *testing.T) {
	dir, _ := fixture(t)
	a, b := sizeOf(t, dir, "-home-user-demo", sessionA), sizeOf(t, dir, "-home-user-flaky", sessionB)
	s := serve(t, web.Options{Roots: []string{dir}, Policy: redact.Off, Budget: max(a, b) + min(a, b)/2})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/events/s/"+sessionA, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The first event says the page watches it.
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	code, body, _ := get(t, s, "GET", "/api/s/"+sessionB+"/turns", "")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "close a page") || !strings.Contains(body, "--budget") {
		t.Errorf("a second session beside a watched one: %d %s; want it refused, saying why", code, body)
	}
	cancel()
	resp.Body.Close()
	// The server sees the page gone at its next poll: ask until then.
	for i := 0; ; i++ {
		code, body, _ = get(t, s, "GET", "/api/s/"+sessionB+"/turns", "")
		if code == http.StatusOK {
			break
		}
		if i == 200 {
			t.Fatalf("the second session is still refused after the page closed: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Issue 42, item 9: a damaged index is said once, when the server reads
// the listing first, and the sessions are read afresh.
func TestDamagedIndexSaidOnce(t *testing.T) {
	dir, _ := fixture(t)
	index := filepath.Join(t.TempDir(), "sessions-index.gob")
	// An index as a listing saves it, then a byte of it flipped.
	entries, err := sessionfiles.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix := sessionfiles.LoadIndex(index)
	sessionfiles.Scan(entries, ix, nil)
	if err := ix.Save(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(index)
	if err != nil || len(b) < 100 {
		t.Fatalf("index: %d bytes, %v", len(b), err)
	}
	b[len(b)-10] ^= 0x01
	if err := os.WriteFile(index, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s := serve(t, web.Options{Roots: []string{dir}, Index: index})
	if got := s.srv.Listing().Problems; len(got) != 1 || !strings.Contains(got[0], "damaged") {
		t.Errorf("the first listing's problems: %q; want the damaged index said", got)
	}
	if got := s.srv.Listing(); got.Read != 5 || got.Cached != 0 {
		t.Errorf("%+v; want every session read afresh", got)
	}
}
