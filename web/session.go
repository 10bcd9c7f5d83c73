package web

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// tabs are the session page's detail tabs, by the name in their address,
// in the terminal timeline's order.
var tabs = []struct {
	name string
	tab  view.Tab
}{
	{"working", view.TabWorkingSet}, {"catalog", view.TabCatalog}, {"searches", view.TabSearches}, {"cache", view.TabCache},
	{"flags", view.TabFlags}, {"conversation", view.TabConversation}, {"raw", view.TabRaw},
}

// Widths the tabs are drawn for, in columns of the page's monospace font.
const (
	tabWidth    = 110
	chartHeight = 8
)

// sessionView is what the session page's template gets.
type sessionView struct {
	Key   string
	Name  string
	Kind  string
	Turn  int
	Tabs  []tabView
	Other []otherSession // the sessions to compare it with
}

type tabView struct{ Name, Title, Key string }

type otherSession struct{ Key, Name string }

// find returns the session the request names, reading the listing again
// for one that is new; nil (and a page said) when there is none.
func (s *Server) find(w http.ResponseWriter, r *http.Request, asJSON bool) *item {
	key := r.PathValue("key")
	it := s.list.lookup(key)
	if it == nil {
		if _, err := s.list.refresh(r.Context(), 0); err == nil {
			it = s.list.lookup(key)
		}
	}
	if it == nil {
		if asJSON {
			jsonError(w, http.StatusNotFound, "no session "+key)
		} else {
			s.message(w, http.StatusNotFound, "No such session", "No session listed here is called "+key+": the sessions page lists them all.")
		}
	}
	return it
}

// sessionPage is a session's turns and, for the selected turn, its tabs;
// /s/KEY/turn/N selects turn N (as /s/KEY#turn-N does).
func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) {
	it := s.find(w, r, false)
	if it == nil {
		return
	}
	n := 0
	if ns := r.PathValue("n"); ns != "" {
		var err error
		if n, err = strconv.Atoi(ns); err != nil || n < 1 {
			s.message(w, http.StatusNotFound, "No such turn", "Turns are numbered from 1: "+ns+" is not one.")
			return
		}
	}
	v := sessionView{Key: it.key, Name: s.list.titleOf(it), Kind: "Claude Code session", Turn: n}
	if it.sum == nil {
		v.Kind = source.KindOf(it.path).Name
	}
	for i, t := range tabs {
		v.Tabs = append(v.Tabs, tabView{Name: t.name, Title: t.tab.String(), Key: strconv.Itoa(i + 1)})
	}
	s.render(w, http.StatusOK, "session", v.Name, v)
}

// turnsView is the turn list of a session.
type turnsView struct {
	Gen     uint64       `json:"gen"`
	Columns []string     `json:"columns"`
	Right   []bool       `json:"right"`
	Turns   []turnRow    `json:"turns"`
	Threads []threadView `json:"threads"`
	Header  string       `json:"header"`
	Status  string       `json:"status,omitempty"`
	Error   string       `json:"error,omitempty"`
	Waiting bool         `json:"waiting,omitempty"`
}

// turnRow is one turn of the list: its cells as the terminal timeline
// draws them (HTML), its thread, and its worst flag.
type turnRow struct {
	Index    int      `json:"i"`
	Thread   string   `json:"th"`
	Severity string   `json:"sev,omitempty"`
	Cells    []string `json:"c"`
}

type threadView struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Turns int    `json:"turns"`
}

// turnsData is the session's turn list, read (or polled) now.
func (s *Server) turnsData(w http.ResponseWriter, r *http.Request) {
	it := s.find(w, r, true)
	if it == nil {
		return
	}
	o, release, err := s.open.get(it.key, it.path)
	if err != nil {
		jsonError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	defer release()
	b, err := func() ([]byte, error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.refresh(readContext(s.ctx, r.Context()), s.opts.Policy)
		if o.turnsJSON == nil || o.turnsGen != o.gen {
			b, err := marshalSafe(s.turns(o))
			if err != nil {
				return nil, err
			}
			o.turnsJSON, o.turnsGen = b, o.gen
		}
		return o.turnsJSON, nil
	}()
	if err != nil {
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	// Written with the session's lock let go: a client that reads slowly
	// keeps no other from the session.
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b)
}

// turns works out the turn list (o.mu held).
func (s *Server) turns(o *opened) *turnsView {
	ss := o.session()
	v := &turnsView{Gen: o.gen, Status: o.status, Waiting: !o.f.Opened(), Threads: []threadView{}}
	if o.err != nil {
		v.Error = o.red.text(o.err.Error())
	}
	for c := view.Column(0); c < view.NumColumns; c++ {
		v.Columns = append(v.Columns, c.Title())
		v.Right = append(v.Right, c.RightAligned())
	}
	flags := 0
	v.Turns = make([]turnRow, 0, len(ss.Turns))
	for _, t := range ss.Turns {
		inFlight := t.Exchange != nil && t.Exchange.State == exchange.StateInFlight
		row := turnRow{Index: t.Index, Thread: o.red.text(t.Thread), Cells: make([]string, view.NumColumns)}
		for c := view.Column(0); c < view.NumColumns; c++ {
			var l view.Line
			switch c {
			case view.ColCost:
				l = view.CostCell(t, s.opts.Prices, inFlight)
			case view.ColFlags:
				l = view.WideFlags(o.red.flagged(t))
			default:
				l = view.Cell(t, c, time.Local, inFlight)
			}
			switch c {
			case view.ColModel:
				// The model as a report shows it.
				l = o.red.modelLine(l)
			case view.ColThread, view.ColFlags:
				// The cells that may hold a name: the rest are numbers,
				// times and the stop reason.
				l = o.red.line(l)
			}
			row.Cells[c] = lineHTML(l)
		}
		for _, f := range t.Flags {
			if row.Severity == "" || timeline.SeverityRank(f.Severity) < timeline.SeverityRank(row.Severity) {
				row.Severity = f.Severity
			}
		}
		flags += len(t.Flags)
		v.Turns = append(v.Turns, row)
	}
	for _, th := range ss.Threads {
		v.Threads = append(v.Threads, threadView{ID: o.red.text(th.ID), Kind: th.Kind, Turns: len(th.Turns)})
	}
	var parts []string
	parts = append(parts, numfmt.Count(len(ss.Turns), "turn", "turns"))
	if len(ss.Threads) > 1 {
		parts = append(parts, numfmt.Count(len(ss.Threads), "thread", "threads"))
	}
	parts = append(parts, numfmt.Count(flags, "flag", "flags"))
	if !ss.FirstAt.IsZero() {
		parts = append(parts, ss.FirstAt.Local().Format("2006-01-02 15:04")+" – "+ss.LastAt.Local().Format("15:04"))
	}
	if usd, est, ok := view.SessionCost(ss, "", s.opts.Prices); ok {
		mark := ""
		if est {
			mark = "≈"
		}
		parts = append(parts, mark+pricing.Format(usd, true)+" at "+o.red.text(s.opts.Prices.Describe()))
	}
	v.Header = strings.Join(parts, " · ")
	return v
}

// tabData is one tab of one turn as HTML: the view's text for the tab
// (timeline/view draws it as the terminal does), redacted; q filters its
// entries, all=1 shows the conversation's whole history, and the raw tab
// opens (open=PATH) and closes (close=PATH) its parts.
func (s *Server) tabData(w http.ResponseWriter, r *http.Request) {
	it := s.find(w, r, true)
	if it == nil {
		return
	}
	name := r.PathValue("tab")
	tab := view.Tab(-1)
	for _, t := range tabs {
		if t.name == name {
			tab = t.tab
		}
	}
	if tab < 0 {
		jsonError(w, http.StatusNotFound, "no tab "+name)
		return
	}
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil {
		jsonError(w, http.StatusNotFound, "no turn "+r.PathValue("n"))
		return
	}
	o, release, err := s.open.get(it.key, it.path)
	if err != nil {
		jsonError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	defer release()
	out, missing := s.tabHTML(r.Context(), o, tab, n, r.URL.Query())
	if missing != "" {
		jsonError(w, http.StatusNotFound, missing)
		return
	}
	// Written with the session's lock let go: a client that reads slowly
	// keeps no other from the session.
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprint(w, safeHTML(out))
}

// tabHTML is tab of turn n of the session as HTML, worked out with the
// session's lock held; missing says why there is none.
func (s *Server) tabHTML(ctx context.Context, o *opened, tab view.Tab, n int, query url.Values) (out, missing string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.refresh(readContext(s.ctx, ctx), s.opts.Policy)
	ss := o.session()
	t := view.TurnAt(ss, n)
	if t == nil {
		return "", fmt.Sprintf("no turn %d (the session has %d)", n, len(ss.Turns))
	}
	q := query.Get("q")
	red := o.red
	switch tab {
	case view.TabWorkingSet:
		out = string(linesHTML(red.lines(view.WorkingSet(t, q))))
	case view.TabCatalog:
		out = string(linesHTML(red.lines(append(view.Catalog(t, q, tabWidth), o.deferral.Lines(ss, t, s.opts.Prices)...))))
	case view.TabSearches:
		out = string(linesHTML(red.lines(view.Searches(ss, t, q))))
	case view.TabCache:
		if red.on() {
			out = string(linesHTML(red.lines(view.CacheWithoutText(ss, t, tabWidth, chartHeight, "The text that changed is left out of a redacted view: --redact off shows it."))))
		} else {
			out = string(linesHTML(view.Cache(ss, t, tabWidth, chartHeight)))
		}
	case view.TabFlags:
		out = string(linesHTML(red.lines(view.Flags(ss, red.flagged(t), q, timeline.Explain, s.opts.Prices))))
	case view.TabConversation:
		if red.on() {
			out = `<p class="withheld">` + html.EscapeString(withheld) + `</p>`
		} else {
			out = conversationHTML(ss, t, q, query.Get("all") == "1")
		}
	case view.TabRaw:
		if red.on() {
			out = `<p class="withheld">` + html.EscapeString(withheld) + `</p>`
		} else {
			out = rawHTML(t, query)
		}
	}
	return out, ""
}

// sessionEvents tells a session page when the session changed (a new
// turn, a turn answered), polling it as 'open --follow' does while the
// page is open.
func (s *Server) sessionEvents(w http.ResponseWriter, r *http.Request) {
	it := s.find(w, r, true)
	if it == nil {
		return
	}
	o, release, err := s.open.get(it.key, it.path)
	if err != nil {
		jsonError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	defer release()
	send, ok := s.eventStream(w)
	if !ok {
		return
	}
	poll := o.poll
	var sent uint64
	beat := time.Now()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		o.mu.Lock()
		o.refresh(readContext(s.ctx, r.Context()), s.opts.Policy)
		gen, turns := o.gen, len(o.session().Turns)
		o.mu.Unlock()
		if gen != sent {
			if send("session", fmt.Sprintf(`{"gen":%d,"turns":%d}`, gen, turns)) != nil {
				return
			}
			sent, beat = gen, time.Now()
		} else if time.Since(beat) > 15*time.Second {
			if send("", "") != nil {
				return
			}
			beat = time.Now()
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
