package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/web"
)

// Issue 42, item 11: //evil.example/?token=… redirected off the site
// once the token was taken. Every address the token is taken from is
// sent back to this server.
func TestTokenRedirectStaysOnSite(t *testing.T) {
	dir, _ := fixture(t)
	s := serve(t, web.Options{Roots: []string{dir}, Token: "t0ken"})
	base, _ := url.Parse(s.url)
	for _, path := range []string{"//evil.example/", "//evil.example/x?a=1&", "/\\evil.example/", "///evil.example", "/%2F%2Fevil.example/", "/s/x"} {
		req, err := http.NewRequest("GET", s.url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		q := req.URL.Query()
		q.Set("token", "t0ken")
		req.URL.RawQuery = q.Encode()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		to, err := base.Parse(loc)
		if resp.StatusCode != http.StatusSeeOther || err != nil || to.Host != base.Host || strings.Contains(loc, "token") {
			t.Errorf("%s: %d, Location %q (%v): want a redirect to this server, without the token", path, resp.StatusCode, loc, err)
		}
	}
}
