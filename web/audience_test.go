package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/timeline/view"
	"github.com/tsinspect/tsinspect/web"
)

// Loopback shows everything unless told; any other address redacts
// unless --redact off is said, and only a server that shows everything,
// or one on loopback, lets a page switch to showing everything.
func TestAudience(t *testing.T) {
	for _, c := range []struct {
		loopback        bool
		asked           redact.Policy
		shown, redacted redact.Policy
		reveal          bool
	}{
		{true, "", redact.Off, redact.Default, true},
		{true, redact.Default, redact.Default, redact.Default, true},
		{true, redact.Strict, redact.Strict, redact.Strict, true},
		{true, redact.Off, redact.Off, redact.Default, true},
		{false, "", redact.Default, redact.Default, false},
		{false, redact.Strict, redact.Strict, redact.Strict, false},
		{false, redact.Off, redact.Off, redact.Default, true},
	} {
		shown, redacted, reveal := web.Audience(c.loopback, c.asked)
		if shown != c.shown || redacted != c.redacted || reveal != c.reveal {
			t.Errorf("Audience(%v, %q) = %q, %q, %v; want %q, %q, %v", c.loopback, c.asked, shown, redacted, reveal, c.shown, c.redacted, c.reveal)
		}
	}
}

// viewCookie is the cookie /view/WHICH sets, after checking where it
// sends the browser back to.
func viewCookie(t *testing.T, s *served, which, to, wantTo string) string {
	t.Helper()
	code, body, hdr := get(t, s, "GET", "/view/"+which+"?to="+url.QueryEscape(to), "")
	if code != http.StatusSeeOther || hdr.Get("Location") != wantTo {
		t.Fatalf("/view/%s?to=%s: %d to %q, want 303 to %q: %s", which, to, code, hdr.Get("Location"), wantTo, body)
	}
	c := (&http.Response{Header: hdr}).Cookies()
	if len(c) != 1 || c[0].Name != web.ViewCookie || c[0].Value != which || !c[0].HttpOnly {
		t.Fatalf("/view/%s set %v", which, c)
	}
	return c[0].Name + "=" + c[0].Value
}

// On loopback (as serve starts with no --redact), every page shows the
// user's own data and says so, with a switch to the redacted view that
// holds for every page, the listing's JSON and the tabs alike.
func TestViewSwitchOnLoopback(t *testing.T) {
	dir, capture := fixture(t)
	shown, redacted, reveal := web.Audience(true, "")
	s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: shown, Redacted: redacted, Reveal: reveal})

	_, body, _ := get(t, s, "GET", "/", "")
	if !strings.Contains(body, "Not redacted: your own sessions") || !strings.Contains(body, `href="/view/redacted?to=%2F"`) {
		t.Errorf("the sessions page does not say it shows everything, with a switch:\n%s", body)
	}
	// The project filter matches the real directory, and the rows show it.
	var all sessionsJSON
	getJSON(t, s, "/api/sessions?project=user-demo", &all)
	if len(all.Rows) == 0 || !strings.Contains(all.Rows[0].Cells[1], "user/demo") {
		t.Fatalf("project=user-demo: %+v", all.Rows)
	}
	conv := view.TabConversation.Row().Name
	_, tab, _ := get(t, s, "GET", "/api/s/demo.db/turn/2/"+conv, "")
	if strings.Contains(tab, "Left out of a redacted view") {
		t.Errorf("the conversation is withheld on loopback: %s", tab)
	}

	// The switch: everything redacted, said, and the way back offered.
	cookie := viewCookie(t, s, "redacted", "/s/demo.db/turn/2", "/s/demo.db/turn/2")
	_, body, _ = get(t, s, "GET", "/s/demo.db/turn/2", "", "Cookie", cookie)
	if !strings.Contains(body, "Redacted (default)") || !strings.Contains(body, "/view/all?to=") {
		t.Errorf("the switched page does not say it is redacted, with the way back:\n%s", body)
	}
	code, raw, _ := get(t, s, "GET", "/api/sessions", "", "Cookie", cookie)
	if code != http.StatusOK || strings.Contains(raw, "user/demo") || !strings.Contains(raw, "[path-") {
		t.Errorf("the redacted listing (%d) shows a directory or no pseudonym: %s", code, raw)
	}
	_, tab, _ = get(t, s, "GET", "/api/s/demo.db/turn/2/"+conv, "", "Cookie", cookie)
	if !strings.Contains(tab, "Left out of a redacted view") {
		t.Errorf("the redacted conversation is shown: %s", tab)
	}
	// Back to everything.
	cookie = viewCookie(t, s, "all", "/", "/")
	_, raw, _ = get(t, s, "GET", "/api/sessions?project=user-demo", "", "Cookie", cookie)
	if !strings.Contains(raw, "user/demo") {
		t.Errorf("switched back, the listing is still redacted: %s", raw)
	}
	// The switch goes back to a page of this server alone.
	for to, want := range map[string]string{"//evil.example/x": "/", "http://evil.example/": "/", "/\\evil.example": "/evil.example"} {
		viewCookie(t, s, "redacted", to, want)
	}
}

// On another address (redacted, as serve starts there without --redact
// off), no page offers to show everything, /view/all is refused, and a
// cookie asking for everything is not obeyed.
func TestViewSwitchElsewhere(t *testing.T) {
	dir, capture := fixture(t)
	shown, redacted, reveal := web.Audience(false, "")
	s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: shown, Redacted: redacted, Reveal: reveal})
	_, body, _ := get(t, s, "GET", "/", "")
	if !strings.Contains(body, "Redacted (default)") || strings.Contains(body, "/view/all") {
		t.Errorf("the page offers to show everything:\n%s", body)
	}
	if code, body, _ := get(t, s, "GET", "/view/all?to=/", ""); code != http.StatusForbidden || !strings.Contains(body, "--redact off") {
		t.Errorf("/view/all: %d %s", code, body)
	}
	code, raw, _ := get(t, s, "GET", "/api/sessions?project=user-demo", "", "Cookie", web.ViewCookie+"=all")
	if code != http.StatusOK || strings.Contains(raw, "user/demo") {
		t.Errorf("a cookie asking for everything was obeyed (%d): %s", code, raw)
	}
}

// In Chromium: a loopback page shows the user's own projects and says so;
// its switch redacts every page until switched back.
func TestBrowserViewSwitch(t *testing.T) {
	dir, capture := fixture(t)
	shown, redacted, reveal := web.Audience(true, "")
	s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: shown, Redacted: redacted, Reveal: reveal})
	b := newBrowser(t)
	b.run("open the sessions page", chromedp.Navigate(s.url+"/?project=user-demo"))
	b.waitFor("the demo project's rows", "document.querySelector('#list .vrow') && document.querySelector('#list .vrow').innerText.includes('user/demo')")
	if got := b.text("#redaction"); !strings.Contains(got, "Not redacted") || !strings.Contains(got, "Show the redacted view") {
		t.Errorf("redaction line %q", got)
	}
	b.shot("sessions-everything")
	b.run("switch to the redacted view", chromedp.Click(chromedp.CSS("#view-switch")), chromedp.WaitVisible(chromedp.CSS("#redaction:not(.off)")))
	if got := b.text("#redaction"); !strings.Contains(got, "Redacted (default)") {
		t.Errorf("redaction line %q", got)
	}
	if loc := eval[string](b, "location.pathname + location.search"); loc != "/?project=user-demo" {
		t.Errorf("the switch went to %q", loc)
	}
	// From a session's page, it comes back to the turn selected since.
	b.run("open turn 2", chromedp.Navigate(s.url+"/s/demo.db/turn/2"))
	b.waitFor("turn 2", "document.querySelector('#turn-2.sel')")
	b.run("select turn 3", chromedp.KeyEvent("j"))
	b.waitFor("turn 3", "location.pathname === '/s/demo.db/turn/3'")
	b.run("switch to everything", chromedp.Click(chromedp.CSS("#view-switch")), chromedp.WaitVisible(chromedp.CSS("#redaction.off")))
	if loc := eval[string](b, "location.pathname"); loc != "/s/demo.db/turn/3" {
		t.Errorf("the switch came back to %q, not the turn selected", loc)
	}
	b.run("switch to the redacted view again", chromedp.Click(chromedp.CSS("#view-switch")), chromedp.WaitVisible(chromedp.CSS("#redaction:not(.off)")))
	// Redacted, the project filter matches the pseudonyms, not the directory.
	b.run("the list, redacted", chromedp.Navigate(s.url+"/"))
	b.waitFor("the pseudonyms", "document.querySelector('#list .vrow') && document.querySelector('#list .vrow').innerText.includes('[path-')")
	if got := b.text("#list .vbody"); strings.Contains(got, "user/demo") {
		t.Errorf("the redacted list names a directory: %q", got)
	}
	b.shot("sessions-redacted")
	b.run("switch back", chromedp.Click(chromedp.CSS("#view-switch")), chromedp.WaitVisible(chromedp.CSS("#redaction.off")))
	if got := b.text("#redaction"); !strings.Contains(got, "Not redacted") {
		t.Errorf("redaction line %q", got)
	}
	b.clean()
}
