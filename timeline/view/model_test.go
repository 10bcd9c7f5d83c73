package view

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// spec describes one turn of a hand-made session.
type spec struct {
	thread string
	at     time.Duration // start, from t0
	dur    time.Duration // until the response ended
	flags  []string      // flag kinds (warnings)
	model  string
	calls  []string
}

// session builds a session from specs; turn i+1 is specs[i].
func session(specs ...spec) *timeline.Session {
	s := &timeline.Session{FirstAt: t0}
	threads := map[string]*timeline.Thread{}
	for i, sp := range specs {
		ex := &exchange.Exchange{ID: int64(i + 1), Start: t0.Add(sp.at), End: t0.Add(sp.at + sp.dur)}
		d := &decode.Turn{Request: decode.Request{Kind: decode.KindMessages, Model: sp.model}}
		d.Response.StopReason = "end_turn"
		d.Response.Status = 200
		for _, c := range sp.calls {
			d.ToolCalls = append(d.ToolCalls, decode.ToolCall{ID: "toolu_" + c, Name: c})
		}
		t := &timeline.Turn{Index: i + 1, Thread: sp.thread, Exchange: ex, Decoded: d}
		for _, k := range sp.flags {
			t.Flags = append(t.Flags, timeline.Flag{Kind: k, Severity: timeline.SeverityWarning, Detail: k + " detail"})
		}
		th := threads[sp.thread]
		if th == nil {
			kind := timeline.KindSubagent
			if sp.thread == "main" {
				kind = timeline.KindMain
			}
			th = &timeline.Thread{ID: sp.thread, Kind: kind}
			threads[sp.thread] = th
			s.Threads = append(s.Threads, th)
		} else {
			t.Prev = th.Turns[len(th.Turns)-1]
		}
		th.Turns = append(th.Turns, t.Index)
		s.Turns = append(s.Turns, t)
		s.LastAt = ex.Start
	}
	return s
}

// recorder records the changes a model reports.
type recorder struct{ got []Change }

func (r *recorder) Changed(c Change) { r.got = append(r.got, c) }

func (r *recorder) last() Change {
	if len(r.got) == 0 {
		return 0
	}
	return r.got[len(r.got)-1]
}

func rows(m *Model) string {
	var out []string
	for i := 0; i < m.Len(); i++ {
		out = append(out, strconv.Itoa(m.Row(i).Index))
	}
	return strings.Join(out, ",")
}

func sel(m *Model) int {
	if t := m.Selected(); t != nil {
		return t.Index
	}
	return 0
}

func demoSpecs() []spec {
	return []spec{
		{thread: "main", at: 0, dur: time.Second, model: "claude-sonnet-4-5", calls: []string{"ToolSearch"}},
		{thread: "main", at: 2 * time.Second, dur: time.Second, calls: []string{"mcp__demo__echo"}},
		{thread: "main", at: 4 * time.Second, dur: time.Second, flags: []string{"empty_search"}},
		{thread: "sub1", at: 5 * time.Second, dur: 3 * time.Second},
		{thread: "main", at: 6 * time.Second, dur: time.Second, flags: []string{"call_before_load"}, calls: []string{"mcp__demo__action_7"}},
		{thread: "sub1", at: 9 * time.Second, dur: time.Second},
		{thread: "main", at: 11 * time.Second, dur: time.Second, flags: []string{"cache_break"}},
	}
}

func TestSelectionAndFilters(t *testing.T) {
	m := New(session(demoSpecs()...))
	rec := &recorder{}
	m.SetListener(rec)
	if got := rows(m); got != "1,2,3,4,5,6,7" || sel(m) != 1 {
		t.Fatalf("rows %s sel %d", got, sel(m))
	}
	m.Move(3)
	if sel(m) != 4 || rec.last() != ChangeSelection {
		t.Errorf("after Move(3): sel %d, change %b", sel(m), rec.last())
	}
	m.Move(100)
	if sel(m) != 7 {
		t.Errorf("Move clamps: sel %d", sel(m))
	}
	m.Select(3) // turn 4, sub1
	// Threads: all, main, sub1, all.
	m.CycleThread()
	if m.Thread() != "main" || rows(m) != "1,2,3,5,7" || sel(m) != 3 {
		t.Errorf("main: rows %s sel %d (sub1's turn 4 hidden: nearest earlier is 3)", rows(m), sel(m))
	}
	if rec.last() != ChangeRows|ChangeSelection {
		t.Errorf("change %b", rec.last())
	}
	m.CycleThread()
	if m.Thread() != "sub1" || rows(m) != "4,6" || sel(m) != 4 {
		t.Errorf("sub1: rows %s sel %d", rows(m), sel(m))
	}
	m.CycleThread()
	if m.Thread() != "" || rows(m) != "1,2,3,4,5,6,7" || sel(m) != 4 {
		t.Errorf("all: rows %s sel %d", rows(m), sel(m))
	}
	m.ToggleFlagged()
	if rows(m) != "3,5,7" || sel(m) != 3 {
		t.Errorf("flagged: rows %s sel %d", rows(m), sel(m))
	}
	m.ToggleFlagged()
	m.SetQuery("ECHO")
	if rows(m) != "2" {
		t.Errorf("query echo: rows %s", rows(m))
	}
	m.SetQuery("cache_break")
	if rows(m) != "7" || sel(m) != 7 {
		t.Errorf("query flag kind: rows %s sel %d", rows(m), sel(m))
	}
	m.SetQuery("nothing matches this")
	if m.Len() != 0 || m.Selected() != nil || m.SelectedRow() != -1 {
		t.Errorf("no match: %d rows, selected %v", m.Len(), m.Selected())
	}
	m.SetQuery("")
	if m.Len() != 7 || sel(m) != 1 {
		t.Errorf("cleared: %d rows, sel %d", m.Len(), sel(m))
	}
}

func TestFlagJumps(t *testing.T) {
	m := New(session(demoSpecs()...))
	for _, want := range []int{3, 5, 7, 3} {
		m.NextFlag()
		if sel(m) != want {
			t.Fatalf("NextFlag: sel %d, want %d", sel(m), want)
		}
	}
	if !strings.Contains(m.Status(), "wrapped") {
		t.Errorf("status after wrapping: %q", m.Status())
	}
	m.PrevFlag()
	if sel(m) != 7 {
		t.Errorf("PrevFlag wraps back: sel %d", sel(m))
	}
	m.PrevFlag()
	if sel(m) != 5 || m.Status() != "" {
		t.Errorf("PrevFlag: sel %d status %q", sel(m), m.Status())
	}
	m.SetThread("sub1")
	m.NextFlag()
	if m.Status() != "no flagged turns shown" || sel(m) != 4 {
		t.Errorf("no flags in sub1: status %q sel %d", m.Status(), sel(m))
	}
}

func TestTabs(t *testing.T) {
	m := New(nil)
	rec := &recorder{}
	m.SetListener(rec)
	m.NextTab(-1)
	if m.Tab() != TabConversation || rec.last() != ChangeTab {
		t.Errorf("NextTab(-1) from the first: %v", m.Tab())
	}
	m.NextTab(1)
	if m.Tab() != TabWorkingSet {
		t.Errorf("NextTab(1) from the last: %v", m.Tab())
	}
	m.SetTab(NumTabs)
	if m.Tab() != TabWorkingSet {
		t.Errorf("SetTab out of range changed the tab")
	}
	var names []string
	for tab := Tab(0); tab < NumTabs; tab++ {
		names = append(names, tab.String())
	}
	if got := strings.Join(names, ","); got != "Working set,Catalog,Searches,Cache,Flags,Raw,Conversation" {
		t.Errorf("tabs %s", got)
	}
	if m.Len() != 0 || m.Selected() != nil {
		t.Errorf("an empty model has rows")
	}
	m.NextFlag()
	if m.Status() != "no turns" {
		t.Errorf("status %q", m.Status())
	}
}

func TestSetSessionFollowsTheEnd(t *testing.T) {
	specs := demoSpecs()
	m := New(session(specs[:3]...))
	m.Select(2) // the last row
	m.SetSession(session(specs[:5]...))
	if sel(m) != 5 {
		t.Errorf("at the end: sel %d, want the new last turn 5", sel(m))
	}
	m.Select(1)
	m.SetSession(session(specs...))
	if sel(m) != 2 {
		t.Errorf("not at the end: sel %d, want 2 kept", sel(m))
	}
	m.SetThread("sub1")
	m.SetSession(session(specs[:3]...)) // sub1 gone: back to all threads
	if m.Thread() != "" || m.Len() != 3 {
		t.Errorf("thread %q rows %d", m.Thread(), m.Len())
	}
	// A model that starts empty selects the first turn when they come,
	// or the last after FollowTail.
	m = New(nil)
	m.SetSession(session(specs...))
	if sel(m) != 1 {
		t.Errorf("loaded: sel %d", sel(m))
	}
	m = New(nil)
	m.FollowTail()
	m.SetSession(session(specs[:2]...))
	if sel(m) != 2 {
		t.Errorf("tail: sel %d", sel(m))
	}
	m.SetSession(session(specs[:4]...))
	if sel(m) != 4 {
		t.Errorf("tail grows: sel %d", sel(m))
	}
}

// fakeClock is a clock that moves only when told.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) Advance(d time.Duration) { c.now = c.now.Add(d) }

func TestReplay(t *testing.T) {
	clk := &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := New(session(demoSpecs()...))
	rec := &recorder{}
	m.SetListener(rec)
	m.StartReplay(clk, 2)
	if rows(m) != "1" || sel(m) != 1 || !m.InFlight(m.Turn(1)) {
		t.Fatalf("start: rows %s sel %d in flight %v", rows(m), sel(m), m.InFlight(m.Turn(1)))
	}
	if st := m.Replay(); !st.Playing || st.Total != 12*time.Second || st.Speed != 2 || st.Turns != 7 {
		t.Errorf("state %+v", st)
	}
	clk.Advance(500 * time.Millisecond) // 1 s of capture at ×2
	if c := m.Tick(); c&ChangeRows == 0 || m.InFlight(m.Turn(1)) {
		t.Errorf("turn 1 ended at 1 s: change %b, in flight %v", c, m.InFlight(m.Turn(1)))
	}
	clk.Advance(1500 * time.Millisecond) // 4 s
	m.Tick()
	if rows(m) != "1,2,3" || sel(m) != 3 {
		t.Errorf("at 4 s: rows %s sel %d", rows(m), sel(m))
	}
	if got := m.Replay().String(); got != "▶ 0:04.0 / 0:12.0 ×2 (3/7)" {
		t.Errorf("state %q", got)
	}
	// The user moves up: the selection stops following.
	m.Select(0)
	clk.Advance(time.Second) // 6 s
	m.Tick()
	if rows(m) != "1,2,3,4,5" || sel(m) != 1 {
		t.Errorf("at 6 s: rows %s sel %d", rows(m), sel(m))
	}
	// Pause: time passes, nothing moves.
	m.PauseOrStep()
	if m.Replay().Playing || !strings.Contains(m.Status(), "paused") {
		t.Errorf("not paused: %+v %q", m.Replay(), m.Status())
	}
	clk.Advance(time.Hour)
	if c := m.Tick(); c != 0 || rows(m) != "1,2,3,4,5" {
		t.Errorf("paused tick: change %b rows %s", c, rows(m))
	}
	// Step: the next turn, with its response when nothing starts
	// meanwhile; selected.
	m.PauseOrStep()
	if rows(m) != "1,2,3,4,5,6" || sel(m) != 6 || m.InFlight(m.Turn(6)) {
		t.Errorf("step: rows %s sel %d in flight %v", rows(m), sel(m), m.InFlight(m.Turn(6)))
	}
	if m.Replay().Position != 10*time.Second {
		t.Errorf("step position %v", m.Replay().Position)
	}
	// Play on, faster, to the end.
	m.SetSpeed(4)
	m.TogglePlay()
	clk.Advance(time.Second)
	m.Tick()
	st := m.Replay()
	if !st.Done || st.Playing || m.Status() != "replay finished" || rows(m) != "1,2,3,4,5,6,7" {
		t.Errorf("end: %+v status %q rows %s", st, m.Status(), rows(m))
	}
	// Playing a finished replay starts it over.
	m.TogglePlay()
	if rows(m) != "1" || !m.Replay().Playing {
		t.Errorf("restart: rows %s %+v", rows(m), m.Replay())
	}
	m.Step()
	m.Step()
	if m.Replay().Playing || rows(m) != "1,2,3" {
		t.Errorf("steps from the start: rows %s", rows(m))
	}
}

func TestReplayStepStopsShortOfTheNextTurn(t *testing.T) {
	clk := &fakeClock{now: t0}
	// Turn 1 runs until 5 s; turn 2 from 1 s to 3 s; turn 3 starts at 2 s.
	m := New(session(spec{thread: "main", dur: 5 * time.Second},
		spec{thread: "sub1", at: time.Second, dur: 2 * time.Second},
		spec{thread: "sub2", at: 2 * time.Second, dur: time.Second}))
	m.StartReplay(clk, 1)
	m.PauseOrStep() // pause
	m.PauseOrStep() // step to turn 2, short of turn 3
	if rows(m) != "1,2" || !m.InFlight(m.Turn(1)) || !m.InFlight(m.Turn(2)) {
		t.Errorf("rows %s, in flight %v %v", rows(m), m.InFlight(m.Turn(1)), m.InFlight(m.Turn(2)))
	}
	m.Step() // turn 3, the last: to its end
	if rows(m) != "1,2,3" || !m.InFlight(m.Turn(1)) || m.InFlight(m.Turn(2)) || m.InFlight(m.Turn(3)) {
		t.Errorf("rows %s, in flight %v %v %v", rows(m), m.InFlight(m.Turn(1)), m.InFlight(m.Turn(2)), m.InFlight(m.Turn(3)))
	}
	m.Step()
	if !m.Replay().Done || m.Status() != "replay finished" {
		t.Errorf("%+v %q", m.Replay(), m.Status())
	}
	if New(nil).Replaying() {
		t.Errorf("a new model replays")
	}
}

// TestQueryFilterExpression checks that a query testing a field filters
// by it, and that plain words stay a text search.
func TestQueryFilterExpression(t *testing.T) {
	s := session(
		spec{thread: "main", model: "claude-opus-4-5", calls: []string{"mcp__github__create_issue"}},
		spec{thread: "sub1", model: "claude-sonnet-4-5", flags: []string{"cache_break"}},
		spec{thread: "main", model: "claude-haiku-4-5", calls: []string{"Bash"}},
	)
	s.Turns[0].Decoded.Response.Usage.OutputTokens = 10000 // $0.25 at $25 per million
	m := New(s)
	m.SetPrices(pricing.Default())
	for q, want := range map[string]string{
		"flag:cache_break":                 "2",
		"model:opus or tool:bash":          "1,3",
		"cost>0.1":                         "1",
		"not thread:main":                  "2",
		"tool:mcp__github__* and cost>0.1": "1",
		"github":                           "1",
	} {
		m.SetQuery(q)
		if got := rows(m); got != want {
			t.Errorf("query %q shows %q, want %q", q, got, want)
		}
	}
}
