package web

import (
	"net/http"
	"net/url"

	"github.com/tsinspect/tsinspect/redact"
)

// ViewCookie keeps the view a browser chose with the switch on every page:
// "redacted" or "all" (everything shown, where the server allows it).
const ViewCookie = "tsinspect_view"

// Audience is the redaction of the pages for those who can reach them:
// on loopback (the user's own machine) everything is shown unless asked
// (--redact default or strict starts redacted), and a viewer may switch
// either way; on any other address the pages are redacted unless --redact
// off was said, and a redacted view cannot be switched to show
// everything. asked is the --redact given ("" for none); shown is the
// policy pages start with, redacted the one the switch leads to, and
// reveal whether a redacted page may be switched to show everything.
func Audience(loopback bool, asked redact.Policy) (shown, redacted redact.Policy, reveal bool) {
	shown = asked
	if shown == "" {
		shown = map[bool]redact.Policy{true: redact.Off, false: redact.Default}[loopback]
	}
	redacted = redact.Default
	if asked == redact.Strict {
		redacted = redact.Strict
	}
	return shown, redacted, loopback || asked == redact.Off
}

// mayReveal reports whether a page may be switched to show everything.
func (s *Server) mayReveal() bool { return s.opts.Reveal || s.opts.Policy == redact.Off }

// redactedPolicy is the policy of the redacted view: Policy, or when
// that is redact.Off, Redacted (redact.Default unless strict).
func (o *Options) redactedPolicy() redact.Policy {
	if o.Policy != redact.Off && o.Policy != "" {
		return o.Policy
	}
	if o.Redacted == redact.Strict {
		return redact.Strict
	}
	return redact.Default
}

// views are the policies pages may be shown under: the redacted view's,
// and redact.Off where the server allows it.
func (s *Server) views() []redact.Policy {
	if s.mayReveal() {
		return []redact.Policy{s.opts.redactedPolicy(), redact.Off}
	}
	return []redact.Policy{s.opts.redactedPolicy()}
}

// policyOf is the redaction of what r is answered with: the view its
// browser chose with the switch (ViewCookie), where the server allows it,
// or the server's.
func (s *Server) policyOf(r *http.Request) redact.Policy {
	if c, err := r.Cookie(ViewCookie); err == nil {
		switch {
		case c.Value == "redacted":
			return s.opts.redactedPolicy()
		case c.Value == "all" && s.mayReveal():
			return redact.Off
		}
	}
	return s.opts.Policy
}

// viewSwitch is the switch every page shows: where it leads and what it
// says; none when the server does not allow the other view.
type viewSwitch struct {
	Href, Text string
}

// switchOf is the switch of the page r asked for, under policy p.
func (s *Server) switchOf(r *http.Request, p redact.Policy) *viewSwitch {
	to := url.QueryEscape(onSite(r.URL.RequestURI()))
	if p == redact.Off {
		return &viewSwitch{Href: "/view/redacted?to=" + to, Text: "Show the redacted view"}
	}
	if !s.mayReveal() {
		return nil
	}
	return &viewSwitch{Href: "/view/all?to=" + to, Text: "Show everything"}
}

// viewPage sets the view a browser chose (/view/redacted, /view/all) and
// takes it back to the page it came from (?to=, a path on this server).
func (s *Server) viewPage(w http.ResponseWriter, r *http.Request) {
	which := r.PathValue("which")
	if which != "redacted" && which != "all" {
		s.message(w, r, http.StatusNotFound, "No such view", "The views are /view/redacted and /view/all.")
		return
	}
	if which == "all" && !s.mayReveal() {
		s.message(w, r, http.StatusForbidden, "Redacted on this address",
			"This server listens on "+s.opts.Addr+", which other machines may reach: its pages stay redacted. Start tsinspect serve with --redact off to show everything to whoever has the token.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: ViewCookie, Value: which, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	to := "/"
	if u, err := url.Parse(r.URL.Query().Get("to")); err == nil && u.Scheme == "" && u.Host == "" && u.User == nil {
		// A path on this server alone, its control characters escaped.
		to = (&url.URL{Path: onSite(u.Path), RawQuery: u.RawQuery}).String()
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// redaction says on a page under policy p what was removed, or that
// nothing was.
func (s *Server) redaction(p redact.Policy) string {
	if p == redact.Off {
		if s.opts.Policy == redact.Off && !s.opts.Reveal {
			return "Not redacted (--redact off): these pages show what was said, paths, e-mail addresses, identifiers and secrets as recorded."
		}
		return "Not redacted: your own sessions as recorded (what was said, paths, identifiers and secrets), on this machine's loopback address alone."
	}
	more := "The conversation and the raw exchanges are left out."
	if !s.mayReveal() {
		more += " --redact off shows them."
	}
	return redact.Describe(p) + " " + more
}
