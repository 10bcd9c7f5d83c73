// Package view is the view model of a session's timeline: which turns are
// shown (one thread or all, flagged turns only, a text filter, how far a
// replay has got), which turn is selected, which detail tab is open, and
// what each tab says about the selected turn. It holds no UI types: package
// ui draws it and feeds it keys; tests drive it directly.
//
// A Model is not safe for concurrent use. It reports every change to its
// Listener synchronously, from the goroutine that caused it.
package view

import (
	"sort"
	"strconv"
	"strings"

	"github.com/tsinspect/tsinspect/filter"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
)

// Change says what a model change touched; values combine as bits.
type Change uint

// The parts of a model that change.
const (
	// ChangeRows: the visible rows, or what they show, changed.
	ChangeRows Change = 1 << iota
	// ChangeSelection: another turn is selected.
	ChangeSelection
	// ChangeTab: another detail tab is open, or the detail filter changed.
	ChangeTab
	// ChangeReplay: the replay position or state changed.
	ChangeReplay
	// ChangeStatus: the status message changed.
	ChangeStatus
)

// Listener is told about model changes.
type Listener interface {
	Changed(Change)
}

// ListenerFunc adapts a function to Listener.
type ListenerFunc func(Change)

// Changed calls f(c).
func (f ListenerFunc) Changed(c Change) { f(c) }

// Model is the state of a timeline view.
type Model struct {
	s        *timeline.Session
	listener Listener

	rows    []int // indexes of the visible turns, ascending
	sel     int   // selected turn index; 0 when none
	tail    bool  // select the last turn when the first ones arrive
	thread  string
	flagged bool
	query   string
	detailQ string
	tab     Tab
	status  string

	replay *replay
	hay    []string // lower-cased search text per turn, built lazily
	// req and resp are the lower-cased content of each turn's request
	// and response (Session.Content), built when a query needs them.
	req, resp []*string

	// expr is the query parsed as a filter expression; nil for none, and
	// when the query does not parse (queryErr says why).
	expr     filter.Expr
	queryErr string
	prices   *pricing.Table

	// comparison sets the session beside another (TabCompare); nil for
	// none.
	comparison *Comparison
}

// SetComparison sets the session beside another: the Compare tab opens
// after the others.
func (m *Model) SetComparison(c *Comparison) {
	m.comparison = c
	m.notify(ChangeTab)
}

// Comparison is the comparison set, nil for none.
func (m *Model) Comparison() *Comparison { return m.comparison }

// NumTabs is how many tabs the session shows (TabsShown): the Compare
// tab only when a comparison is set.
func (m *Model) NumTabs() Tab { return Tab(len(TabsShown(m.comparison != nil))) }

// New returns a model over s (which may be nil: no turns yet) with the
// first turn selected.
func New(s *timeline.Session) *Model {
	m := &Model{}
	m.setSession(s)
	if len(m.rows) > 0 {
		m.sel = m.rows[0]
	}
	return m
}

// SetListener sets the listener told about changes (nil for none).
func (m *Model) SetListener(l Listener) { m.listener = l }

func (m *Model) notify(c Change) {
	if c != 0 && m.listener != nil {
		m.listener.Changed(c)
	}
}

// Session returns the session shown.
func (m *Model) Session() *timeline.Session { return m.s }

// SetSession replaces the session, as a live view does when the capture
// grows. The selected turn stays selected; when the last row was selected,
// the new last row is. When there were no rows before, the first row is
// selected, or the last after FollowTail.
func (m *Model) SetSession(s *timeline.Session) {
	hadRows := len(m.rows) > 0
	atEnd := hadRows && m.sel == m.rows[len(m.rows)-1]
	old := m.sel
	m.setSession(s)
	switch {
	case len(m.rows) == 0:
		m.sel = 0
	case !hadRows && !m.tail:
		m.sel = m.rows[0]
	case !hadRows || atEnd:
		m.sel = m.rows[len(m.rows)-1]
	default:
		m.sel = m.nearest(old)
	}
	c := ChangeRows
	if m.sel != old {
		c |= ChangeSelection
	}
	m.notify(c)
}

func (m *Model) setSession(s *timeline.Session) {
	if s == nil {
		s = &timeline.Session{}
	}
	m.s = s
	m.hay = make([]string, len(s.Turns)+1)
	m.req = make([]*string, len(s.Turns)+1)
	m.resp = make([]*string, len(s.Turns)+1)
	if m.replay != nil {
		m.replay.reset(s)
	}
	if m.thread != "" && m.threadByID(m.thread) == nil {
		m.thread = ""
	}
	m.filter()
}

// FollowTail makes the first turns to arrive (SetSession on a model
// without rows) select the last one rather than the first, so that a live
// view starts at the newest turn and stays there while its last row is
// selected.
func (m *Model) FollowTail() { m.tail = true }

// Turn returns the turn with the given 1-based index, or nil.
func (m *Model) Turn(index int) *timeline.Turn { return TurnAt(m.s, index) }

// TurnAt returns the turn of s with the given 1-based index, or nil.
func TurnAt(s *timeline.Session, index int) *timeline.Turn {
	if s == nil || index < 1 {
		return nil
	}
	if index <= len(s.Turns) && s.Turns[index-1].Index == index {
		return s.Turns[index-1]
	}
	for _, t := range s.Turns {
		if t.Index == index {
			return t
		}
	}
	return nil
}

// Len returns the number of visible rows.
func (m *Model) Len() int { return len(m.rows) }

// Row returns the turn shown at row (0-based), or nil.
func (m *Model) Row(row int) *timeline.Turn {
	if row < 0 || row >= len(m.rows) {
		return nil
	}
	return m.Turn(m.rows[row])
}

// Selected returns the selected turn, or nil.
func (m *Model) Selected() *timeline.Turn { return m.Turn(m.sel) }

// SelectedRow returns the row of the selected turn, or -1.
func (m *Model) SelectedRow() int {
	i := sort.SearchInts(m.rows, m.sel)
	if i < len(m.rows) && m.rows[i] == m.sel {
		return i
	}
	return -1
}

// Select selects the turn at row, clamped to the visible rows.
func (m *Model) Select(row int) {
	if len(m.rows) == 0 {
		return
	}
	row = max(0, min(row, len(m.rows)-1))
	m.selectTurn(m.rows[row])
}

// SelectTurn selects the turn with the given index if it is visible, and
// reports whether it is.
func (m *Model) SelectTurn(index int) bool {
	i := sort.SearchInts(m.rows, index)
	if i >= len(m.rows) || m.rows[i] != index {
		return false
	}
	m.selectTurn(index)
	return true
}

func (m *Model) selectTurn(index int) {
	if index == m.sel {
		return
	}
	m.sel = index
	m.notify(ChangeSelection)
}

// Move moves the selection by delta rows.
func (m *Model) Move(delta int) {
	r := m.SelectedRow()
	if r < 0 {
		r = 0
	}
	m.Select(r + delta)
}

// NextFlag selects the next visible flagged turn after the selection,
// wrapping around to the first; PrevFlag goes the other way. When no
// visible turn is flagged the status says so.
func (m *Model) NextFlag() { m.jumpFlag(1) }

// PrevFlag selects the previous visible flagged turn; see NextFlag.
func (m *Model) PrevFlag() { m.jumpFlag(-1) }

func (m *Model) jumpFlag(dir int) {
	n := len(m.rows)
	if n == 0 {
		m.SetStatus("no turns")
		return
	}
	start := m.SelectedRow()
	if start < 0 {
		start = -dir // so that the first step lands on row 0 or n-1
		if dir < 0 {
			start = n
		}
	}
	for k := 1; k <= n; k++ {
		r := start + dir*k
		wrapped := r < 0 || r >= n
		r = ((r % n) + n) % n
		if t := m.Row(r); t != nil && len(t.Flags) > 0 {
			switch {
			case r == start:
				m.SetStatus("only flagged turn")
			case wrapped && dir > 0:
				m.SetStatus("wrapped to the first flagged turn")
			case wrapped:
				m.SetStatus("wrapped to the last flagged turn")
			default:
				m.SetStatus("")
			}
			m.selectTurn(t.Index)
			return
		}
	}
	m.SetStatus("no flagged turns shown")
}

// Thread returns the thread shown, "" for all.
func (m *Model) Thread() string { return m.thread }

// SetThread shows one thread (by ID), or all ("").
func (m *Model) SetThread(id string) {
	if id != "" && m.threadByID(id) == nil {
		return
	}
	m.thread = id
	m.refilter()
}

// CycleThread shows the next thread: all, then each thread in order, then
// all again.
func (m *Model) CycleThread() {
	ths := m.s.Threads
	next := ""
	if m.thread == "" {
		if len(ths) > 0 {
			next = ths[0].ID
		}
	} else {
		for i, th := range ths {
			if th.ID == m.thread && i+1 < len(ths) {
				next = ths[i+1].ID
			}
		}
	}
	m.SetThread(next)
}

func (m *Model) threadByID(id string) *timeline.Thread {
	for _, th := range m.s.Threads {
		if th.ID == id {
			return th
		}
	}
	return nil
}

// ShownThread returns the thread shown alone, or nil when all are.
func (m *Model) ShownThread() *timeline.Thread { return m.threadByID(m.thread) }

// FlaggedOnly reports whether only flagged turns are shown.
func (m *Model) FlaggedOnly() bool { return m.flagged }

// ToggleFlagged shows only flagged turns, or all again.
func (m *Model) ToggleFlagged() {
	m.flagged = !m.flagged
	m.refilter()
}

// Query returns the turn filter.
func (m *Model) Query() string { return m.query }

// SetQuery filters the turns with q, an expression of the filter
// language (package filter; the same as turns --filter): bare words match
// a turn's row text (model, thread, stop reason, flags, tools added or
// removed, searches and their results, tool calls) or its content (what
// its request added, its response), case-insensitively; fields
// (flag:cache_break, model:opus, tool:mcp__github__*, thread:sub1,
// cost>0.05, body:hello, ...) with and, or, not test the rest. "" shows
// all. A query that does not parse shows all the turns of the other
// filters and says why in the status line ([Model.QueryError]), with the
// words the command line uses.
func (m *Model) SetQuery(q string) {
	if q == m.query {
		return
	}
	m.query = q
	m.expr = nil
	was := m.queryErr
	m.queryErr = ""
	if strings.TrimSpace(q) != "" {
		e, err := QueryOptions().Parse(q)
		if err != nil {
			m.queryErr = err.Error()
		} else {
			m.expr = e
		}
	}
	switch {
	case m.queryErr != "":
		m.SetStatus(m.queryErr)
	case was != "" && m.status == was:
		m.SetStatus("")
	}
	m.refilter()
}

// QueryError says why the query does not parse, "" when it does.
func (m *Model) QueryError() string { return m.queryErr }

// QueryOptions are the names a query is checked against: the timeline's
// flag kinds.
func QueryOptions() filter.Options { return filter.Options{FlagKinds: timeline.Kinds()} }

// SetPrices sets the price table a cost> filter reads (nil: no prices).
func (m *Model) SetPrices(tab *pricing.Table) { m.prices = tab }

// fields is what a filter expression sees of t.
func (m *Model) fields(t *timeline.Turn) *filter.Fields {
	f := &filter.Fields{Thread: t.Thread, Text: m.haystack(t),
		Request: func() string { return m.content(t, true) }, Response: func() string { return m.content(t, false) }}
	for _, fl := range t.Flags {
		f.Flags = append(f.Flags, fl.Kind)
	}
	if d := t.Decoded; d != nil {
		f.Model = model(d)
		f.Tokens = d.Response.Usage.TotalInput()
		for _, c := range d.ToolCalls {
			f.Tools = append(f.Tools, c.Name)
		}
	}
	if c, _, ok := timeline.TurnCost(m.prices, t); ok {
		f.Cost, f.Priced = c.Total, true
	}
	return f
}

// DetailQuery returns the filter of the detail tabs.
func (m *Model) DetailQuery() string { return m.detailQ }

// SetDetailQuery filters the entries of the detail tabs.
func (m *Model) SetDetailQuery(q string) {
	if q == m.detailQ {
		return
	}
	m.detailQ = q
	m.notify(ChangeTab)
}

// Tab returns the open detail tab.
func (m *Model) Tab() Tab { return m.tab }

// SetTab opens a detail tab.
func (m *Model) SetTab(t Tab) {
	if t < 0 || t >= m.NumTabs() || t == m.tab {
		return
	}
	m.tab = t
	m.notify(ChangeTab)
}

// NextTab opens the tab delta places after the current one, wrapping.
func (m *Model) NextTab(delta int) {
	n := int(m.NumTabs())
	m.SetTab(Tab(((int(m.tab)+delta)%n + n) % n))
}

// Status returns the status message.
func (m *Model) Status() string { return m.status }

// SetStatus sets the status message ("" clears it).
func (m *Model) SetStatus(s string) {
	if s == m.status {
		return
	}
	m.status = s
	m.notify(ChangeStatus)
}

// Flags returns the number of flags in the session.
func (m *Model) Flags() int {
	n := 0
	for _, t := range m.s.Turns {
		n += len(t.Flags)
	}
	return n
}

// refilter recomputes the rows after a filter change and keeps the
// selection on the nearest visible turn.
func (m *Model) refilter() {
	old := m.sel
	m.filter()
	m.sel = m.nearest(old)
	c := ChangeRows
	if m.sel != old {
		c |= ChangeSelection
	}
	m.notify(c)
}

func (m *Model) filter() {
	m.rows = m.rows[:0]
	limit := len(m.s.Turns)
	if m.replay != nil {
		limit = m.replay.revealed
	}
	for i, t := range m.s.Turns {
		if i >= limit {
			break
		}
		if m.thread != "" && t.Thread != m.thread {
			continue
		}
		if m.flagged && len(t.Flags) == 0 {
			continue
		}
		if m.expr != nil && !m.expr.Match(m.fields(t)) {
			continue
		}
		m.rows = append(m.rows, t.Index)
	}
}

// nearest returns the visible turn index closest to index: itself, else the
// last visible one before it, else the first.
func (m *Model) nearest(index int) int {
	if len(m.rows) == 0 {
		return 0
	}
	i := sort.SearchInts(m.rows, index)
	switch {
	case i < len(m.rows) && m.rows[i] == index:
		return index
	case i > 0:
		return m.rows[i-1]
	default:
		return m.rows[0]
	}
}

// content returns the lower-cased content of t's request (or response),
// read once per turn.
func (m *Model) content(t *timeline.Turn, request bool) string {
	if t.Index >= len(m.req) {
		req, resp := m.s.Content(t)
		if request {
			return req
		}
		return resp
	}
	if m.req[t.Index] == nil {
		req, resp := m.s.Content(t)
		m.req[t.Index], m.resp[t.Index] = &req, &resp
	}
	if request {
		return *m.req[t.Index]
	}
	return *m.resp[t.Index]
}

// haystack is what the turn filter searches in.
func (m *Model) haystack(t *timeline.Turn) string {
	if t.Index < len(m.hay) && m.hay[t.Index] != "" {
		return m.hay[t.Index]
	}
	var b strings.Builder
	w := func(ss ...string) {
		for _, s := range ss {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	w("#"+strconv.Itoa(t.Index), t.Thread)
	if d := t.Decoded; d != nil {
		w(d.Request.Model, d.Response.StopReason)
		for _, s := range t.NewSearches {
			w(s.Query)
			w(s.Results...)
		}
		for _, c := range d.ToolCalls {
			w(c.Name)
		}
	}
	w(t.CatalogAdded...)
	w(t.CatalogRemoved...)
	w(t.WorkingAdded...)
	w(t.WorkingRemoved...)
	for _, f := range t.Flags {
		w(f.Kind, f.Detail, f.Tool, f.Cause)
	}
	s := strings.ToLower(b.String())
	if t.Index < len(m.hay) {
		m.hay[t.Index] = s
	}
	return s
}
