package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// Widths the tabs are drawn for, in columns of the page's monospace font.
const (
	tabWidth    = 110
	chartHeight = 8
)

// sessionView is what the session page's template gets.
type sessionView struct {
	Key  string
	Name string
	Kind string
	Turn int
	// Tabs are the turn's tabs, in the tab table's order, and TabKeys
	// their keys ("1-7"), for the key help.
	Tabs    []tabView
	TabKeys string
	Other   []otherSession // the sessions to compare it with
}

// tabView is a tab of the session page, from its row of the tab table:
// the name in its address, its title and the key that opens it.
type tabView struct{ Name, Title, Key string }

// pageTabs are the tabs of the session page: the tab table's, but
// Compare (the Compare page sets two sessions side by side).
func pageTabs() []view.TabRow { return view.TabsShown(false) }

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
			s.message(w, r, http.StatusNotFound, "No such session", "No session listed here is called "+key+": the sessions page lists them all.")
		}
	}
	if it != nil && s.opts.Team != nil {
		// A team's store holds the session's figures, not its turns.
		s.message(w, r, http.StatusNotFound, "Not in the team's store", "The team's store holds each session's figures, not its turns: its person opens it on their machine with 'tsinspect open "+it.row.ID+"'.")
		return nil
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
			s.message(w, r, http.StatusNotFound, "No such turn", "Turns are numbered from 1: "+ns+" is not one.")
			return
		}
	}
	v := sessionView{Key: it.key, Name: s.list.titleOf(it, s.policyOf(r) != redact.Off), Kind: "Claude Code session", Turn: n}
	if it.sum == nil {
		v.Kind = source.KindOf(it.path).Name
	}
	rows := pageTabs()
	for _, t := range rows {
		v.Tabs = append(v.Tabs, tabView{Name: t.Name, Title: t.Title, Key: string(t.Key)})
	}
	v.TabKeys = view.TabKeys(rows)
	s.render(w, r, http.StatusOK, "session", v.Name, v)
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
	// Light is set for the list of a session still being read: its
	// answers as the listing read them (lightTurns), none to select.
	Light bool `json:"light,omitempty"`
}

// turnRow is one turn of the list: its cells as the terminal timeline
// draws them, its thread, and its worst flag. A cell is its runs of text
// with their roles' classes, each [class, text], which the script sets
// as text: the turn list, the largest thing a page shows, is made with
// no HTML at all.
type turnRow struct {
	Index    int           `json:"i"`
	Thread   string        `json:"th"`
	Severity string        `json:"sev,omitempty"`
	Cells    [][][2]string `json:"c"`
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
	redacted := s.policyOf(r) != redact.Off
	if it.sum != nil && s.firstRead(o, it) {
		// Served from the listing while the session is read.
		red := newRedactor(redact.Off, nil)
		if redacted {
			red = newRedactor(s.opts.redactedPolicy(), nil)
		}
		writeJSON(w, s.lightTurns(it, red))
		return
	}
	v := 0
	if redacted {
		v = 1
	}
	b, err := func() ([]byte, error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.refresh(readContext(s.ctx, r.Context()), s.open.policy)
		if o.turnsJSON[v] == nil || o.turnsGen[v] != o.gen {
			b, err := marshalSafe(s.turns(o, o.redactor(redacted)))
			if err != nil {
				return nil, err
			}
			o.turnsJSON[v], o.turnsGen[v] = b, o.gen
		}
		return o.turnsJSON[v], nil
	}()
	if err != nil {
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	// Written with the session's lock let go: a client that reads slowly
	// keeps no other from the session.
	writeJSONBytes(w, b)
}

// turns works out the turn list, redacted by red (o.mu held).
func (s *Server) turns(o *opened, red *redactor) *turnsView {
	ss := o.session()
	v := &turnsView{Gen: o.gen, Status: o.status, Waiting: !o.f.Opened(), Threads: []threadView{}}
	if o.err != nil {
		v.Error = red.text(o.err.Error())
	}
	for c := view.Column(0); c < view.NumColumns; c++ {
		v.Columns = append(v.Columns, c.Title())
		v.Right = append(v.Right, c.RightAligned())
	}
	flags := 0
	v.Turns = make([]turnRow, 0, len(ss.Turns))
	for _, t := range ss.Turns {
		inFlight := t.Exchange != nil && t.Exchange.State == exchange.StateInFlight
		row := turnRow{Index: t.Index, Thread: red.text(t.Thread), Cells: make([][][2]string, view.NumColumns)}
		for c := view.Column(0); c < view.NumColumns; c++ {
			var l view.Line
			switch c {
			case view.ColCost:
				l = view.CostCell(t, s.opts.Prices, inFlight)
			case view.ColFlags:
				l = view.WideFlags(red.flagged(t))
			default:
				l = view.Cell(t, c, time.Local, inFlight)
			}
			switch c {
			case view.ColModel:
				// The model as a report shows it.
				l = red.modelLine(l)
			case view.ColThread, view.ColFlags:
				// The cells that may hold a name: the rest are numbers,
				// times and the stop reason.
				l = red.line(l)
			}
			row.Cells[c] = runs(l)
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
		v.Threads = append(v.Threads, threadView{ID: red.text(th.ID), Kind: th.Kind, Turns: len(th.Turns)})
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
		parts = append(parts, mark+pricing.Format(usd, true)+" at "+red.text(s.opts.Prices.Describe()))
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
	tab, ok := view.TabNamed(name)
	if !ok || tab.Row().Compared {
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
	out, missing := s.tabHTML(r.Context(), o, tab, n, r.URL.Query(), s.policyOf(r) != redact.Off)
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
func (s *Server) tabHTML(ctx context.Context, o *opened, tab view.Tab, n int, query url.Values, redacted bool) (out, missing string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.refresh(readContext(s.ctx, ctx), s.open.policy)
	ss := o.session()
	t := view.TurnAt(ss, n)
	if t == nil {
		return "", fmt.Sprintf("no turn %d (the session has %d)", n, len(ss.Turns))
	}
	q := query.Get("q")
	red := o.redactor(redacted)
	in := view.TabInput{Session: ss, Turn: red.flagged(t), Query: q, Width: tabWidth, Height: chartHeight,
		Prices: s.opts.Prices, Deferral: &o.deferral, Explain: timeline.Explain, WholeHistory: query.Get("all") == "1"}
	if red.on() {
		in.Withheld = "The text that changed is left out of a redacted view: --redact off shows it."
	}
	// The Cache tab's chart is the page's own: SVG, every turn of the
	// thread.
	in.Charted = tab == view.TabCache
	var frag string
	var data any
	switch row := tab.Row(); {
	case row.Form != view.FormLines && red.on():
		// What was said: a redacted view leaves it out.
		frag, data = "withheld", withheld
	case row.Form == view.FormMessages:
		frag, data = "conversation", conversationOf(ss, t, q, in.WholeHistory)
	case row.Form == view.FormTree:
		frag, data = "raw", rawOf(t, query)
	case tab == view.TabCache:
		ls := red.lines(tab.Lines(in))
		head := min(1, len(ls))
		frag, data = "cache", cacheView{Head: linesOf(ls[:head]), Rest: linkTurns(linesOf(ls[head:]), o.key, len(ss.Turns)),
			Figures: threadFigures(o.key, red.text(t.Thread), ss, t, s.opts.Prices)}
	default:
		frag, data = "lines", linkTurns(linesOf(red.lines(tab.Lines(in))), o.key, len(ss.Turns))
	}
	var b bytes.Buffer
	if err := s.frags.write(&b, frag, data); err != nil {
		return "", "the tab could not be drawn: " + err.Error()
	}
	return b.String(), ""
}

// cacheView is the Cache tab: its title line, the thread's charts, and
// the rest of its lines.
type cacheView struct {
	Head, Rest [][]span
	Figures    []figure
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
		o.refresh(readContext(s.ctx, r.Context()), s.open.policy)
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
