// Package web is tsinspect's web view, 'tsinspect serve': every session of
// a listing (as 'tsinspect sessions' lists them, with their cost per day),
// one session's turns with the terminal timeline's columns, flags and tabs
// (package timeline/view draws them; this package only turns its text into
// HTML), updated as the session is written, and two sessions compared as
// 'tsinspect diff' compares them. Its pages and scripts are embedded: it
// needs no network. It only reads, and shows what a report may show unless
// started unredacted.
//
// A page is a handler and a template: a row in Server.routes, and a file
// in templates/ that defines "content", which the handler renders with
// Server.render (its title and data); the layout around it (layout.html)
// says the redaction on every page. The fragments (fragments.html) are
// in every page: a template writes the view's styled text with the
// "lines" fragment; the tabs the script asks for are fragments too.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/internal/svgchart"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Options say what a Server shows and to whom.
type Options struct {
	// Roots are directories of Claude Code sessions (a projects directory,
	// one project's) or single session files, listed as 'tsinspect
	// sessions' lists them.
	Roots []string
	// Files are capture files (or anything else package source opens),
	// listed beside the sessions.
	Files []string
	// Index is the listing's index file, read at the start and never
	// written ("" for none): its updates stay in memory.
	Index string
	// Prices prices every figure.
	Prices *pricing.Table
	// Policy is the redaction pages show unless a viewer switches it
	// (see Audience): redact.Off shows everything; the zero value is
	// redact.Default.
	Policy redact.Policy
	// Redacted is the policy of the redacted view the switch on every
	// page leads to when Policy is redact.Off (redact.Default when unset).
	Redacted redact.Policy
	// Reveal lets a viewer switch a redacted page to show everything (a
	// server on loopback: the user's own machine). A server whose Policy
	// is redact.Off lets them switch back whatever it says.
	Reveal bool
	// Addr is the address served, host:port as bound: a request's Host
	// header must name it (or a name of AllowHosts).
	Addr       string
	AllowHosts []string
	// Token, when set, is required of every request (?token=, a cookie,
	// or Authorization: Bearer).
	Token string
	// Version is tsinspect's.
	Version string
	// Budget bounds the bytes of session files the server holds read at
	// once, whether pages watch them or not (memory is some six times
	// that); zero means DefaultBudget. A session larger than it, or one
	// that does not fit beside those open pages watch, is refused with
	// one line saying how to raise it.
	Budget int64
	// Team, when set, is a team's store (tsinspect serve --from): the
	// listing and the advice are read from it instead of Roots and Files.
	Team Team
	// WriteTimeout bounds each write to a client (a page, an answer, one
	// live update): a client that stops reading is cut off after it and
	// stalls no one else. Zero means DefaultWriteTimeout.
	WriteTimeout time.Duration
}

// DefaultWriteTimeout is Options.WriteTimeout's default.
const DefaultWriteTimeout = 30 * time.Second

// Server serves the web view.
type Server struct {
	opts   Options
	ctx    context.Context
	hosts  *hosts
	list   *listing
	open   *openSessions
	pages  map[string]*template.Template
	frags  fragments
	assets http.Handler
	advice advising
}

// New reads the listing once and returns the server; ctx bounds its life
// (the sessions it follows are read with it).
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Prices == nil {
		return nil, errors.New("web: no price table")
	}
	if opts.Policy == "" {
		opts.Policy = redact.Default
	}
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	h, err := newHosts(opts.Addr, opts.AllowHosts)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, ctx: ctx, hosts: h, list: newListing(&opts),
		open: &openSessions{ctx: ctx, policy: opts.redactedPolicy(), budget: opts.Budget, m: map[string]*opened{}}}
	if s.pages, s.frags, err = parsePages(); err != nil {
		return nil, err
	}
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	s.assets = http.StripPrefix("/assets/", http.FileServer(http.FS(sub)))
	if _, err := s.list.refresh(ctx, 0); err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	return s, nil
}

// Listing says what reading the listing did, the last time.
func (s *Server) Listing() ScanStats { return s.list.stats() }

// route is one page or endpoint: a pattern of net/http's ServeMux and its
// handler.
type route struct {
	pattern string
	handler http.HandlerFunc
}

// routes is every address the server answers.
func (s *Server) routes() []route {
	return []route{
		{"GET /{$}", s.sessionsPage},
		{"GET /api/sessions", s.sessionsData},
		{"GET /events/sessions", s.sessionsEvents},
		{"GET /s/{key}", s.sessionPage},
		{"GET /s/{key}/turn/{n}", s.sessionPage},
		{"GET /api/s/{key}/turns", s.turnsData},
		{"GET /api/s/{key}/turn/{n}/{tab}", s.tabData},
		{"GET /events/s/{key}", s.sessionEvents},
		{"GET /compare", s.comparePage},
		{"GET /advice", s.advicePage},
		{"GET /view/{which}", s.viewPage},
		{"GET /assets/", s.assets.ServeHTTP},
		// The pages name no icon, but a browser asks for one on a page
		// of plain text (a refusal): nothing, rather than a 404 it logs.
		{"GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }},
	}
}

// Handler is the server's handler, every request guarded (see guard).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, r := range s.routes() {
		mux.HandleFunc(r.pattern, r.handler)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.message(w, r, http.StatusNotFound, "Not found", "There is no page at "+r.URL.Path+".")
	})
	return s.guard(mux)
}

// Serve serves on ln until ctx is done, then stops: the pages that are
// open lose their live updates and the sessions read are let go.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	sweep := time.NewTicker(time.Minute)
	defer sweep.Stop()
	defer s.open.closeAll()
	defer s.list.sweep(true)
	for {
		select {
		case err := <-done:
			return fmt.Errorf("web: serve: %w", err)
		case <-sweep.C:
			s.open.sweep()
			s.list.sweep(false)
		case <-ctx.Done():
			stop, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := srv.Shutdown(stop); err != nil {
				srv.Close()
			}
			<-done
			return nil
		}
	}
}

// page is what every template gets: the page's own data and what the
// layout says on every page.
type page struct {
	Title     string
	Redaction string
	Redacted  bool
	// Switch leads to the other view (nil when the server allows none).
	Switch  *viewSwitch
	Version string
	Data    any
}

// parsePages parses each page's template with the layout and the
// fragments, and the fragments alone.
func parsePages() (map[string]*template.Template, fragments, error) {
	funcs := template.FuncMap{"diffclass": diffClass}
	frags, err := template.New("fragments.html").Funcs(funcs).ParseFS(templateFS, "templates/fragments.html")
	if err == nil {
		_, err = frags.Parse(svgchart.Template)
	}
	if err != nil {
		return nil, fragments{}, fmt.Errorf("web: template fragments: %w", err)
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, fragments{}, fmt.Errorf("web: templates: %w", err)
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" || base == "fragments" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/fragments.html", n)
		if err == nil {
			_, err = t.Parse(svgchart.Template)
		}
		if err != nil {
			return nil, fragments{}, fmt.Errorf("web: template %s: %w", n, err)
		}
		pages[base] = t
	}
	return pages, fragments{frags}, nil
}

// render writes a page, answering r.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any) {
	policy := s.policyOf(r)
	p := page{Title: title, Redaction: s.redaction(policy), Redacted: policy != redact.Off, Switch: s.switchOf(r, policy),
		Version: s.opts.Version, Data: data}
	var b strings.Builder
	if err := s.pages[name].Execute(&b, p); err != nil {
		http.Error(w, "tsinspect serve: page "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprint(w, safeHTML(b.String()))
}

// message writes a page that says one thing (an error, a page not found).
func (s *Server) message(w http.ResponseWriter, r *http.Request, status int, title, text string) {
	s.render(w, r, status, "message", title, text)
}
