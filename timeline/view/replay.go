package view

import (
	"fmt"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

// Clock tells the time. Replays read it; tests inject a fake one.
type Clock interface {
	Now() time.Time
}

// WallClock is the real clock.
type WallClock struct{}

// Now returns time.Now().
func (WallClock) Now() time.Time { return time.Now() }

// replay reveals the turns of a session in recorded order and timing.
type replay struct {
	clock   Clock
	speed   float64
	playing bool
	// The capture position is base while paused; while playing it is base
	// plus the wall time since anchor, times speed.
	base   time.Duration
	anchor time.Time

	starts   []time.Duration // per turn, from the session start; never decreasing
	ends     []time.Duration // per turn, when its response ended
	total    time.Duration
	revealed int // turns revealed
	settled  int // revealed turns whose response has ended
}

func (r *replay) reset(s *timeline.Session) {
	r.starts = r.starts[:0]
	r.ends = r.ends[:0]
	var last time.Duration
	for _, t := range s.Turns {
		var start, end time.Duration
		if ex := t.Exchange; ex != nil && !s.FirstAt.IsZero() {
			start = ex.Start.Sub(s.FirstAt)
			end = ex.End.Sub(s.FirstAt)
			if ex.End.IsZero() {
				end = start
			}
		}
		start = max(start, last, 0)
		last = start
		end = max(end, start)
		r.starts = append(r.starts, start)
		r.ends = append(r.ends, end)
		r.total = max(r.total, end)
	}
}

// position returns how far into the capture the replay is.
func (r *replay) position() time.Duration {
	p := r.base
	if r.playing {
		p += time.Duration(float64(r.clock.Now().Sub(r.anchor)) * r.speed)
	}
	return min(max(p, 0), r.total)
}

// update recomputes revealed and settled and reports whether either moved.
func (r *replay) update() bool {
	pos := r.position()
	rev := 0
	for rev < len(r.starts) && r.starts[rev] <= pos {
		rev++
	}
	set := 0
	for i := 0; i < rev; i++ {
		if r.ends[i] <= pos {
			set++
		}
	}
	changed := rev != r.revealed || set != r.settled
	r.revealed, r.settled = rev, set
	return changed
}

// ReplayState describes a replay.
type ReplayState struct {
	Position, Total time.Duration
	Speed           float64
	Playing         bool
	Done            bool // every turn revealed and ended
	Revealed, Turns int
}

// String renders the state for a status line: "▶ 0:12.3 / 3:40.0 ×4 (5/42)".
func (s ReplayState) String() string {
	mark := "▶"
	switch {
	case s.Done:
		mark = "■"
	case !s.Playing:
		mark = "⏸"
	}
	return fmt.Sprintf("%s %s / %s ×%s (%d/%d)", mark, clock(s.Position), clock(s.Total), speed(s.Speed), s.Revealed, s.Turns)
}

func clock(d time.Duration) string {
	d = d.Round(100 * time.Millisecond)
	m := int(d / time.Minute)
	s := (d % time.Minute).Seconds()
	return fmt.Sprintf("%d:%04.1f", m, s)
}

func speed(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%g", f)
}

// StartReplay hides every turn and starts revealing them in recorded order
// at their recorded times, speed times faster, as read from clock. The
// selection follows the newest turn while the last row is selected.
func (m *Model) StartReplay(clock Clock, speed float64) {
	if clock == nil {
		clock = WallClock{}
	}
	if speed <= 0 {
		speed = 1
	}
	m.replay = &replay{clock: clock, speed: speed, playing: true, anchor: clock.Now()}
	m.replay.reset(m.s)
	m.replay.update()
	m.filter()
	m.sel = 0
	if len(m.rows) > 0 {
		m.sel = m.rows[len(m.rows)-1]
	}
	m.notify(ChangeRows | ChangeSelection | ChangeReplay)
}

// Replaying reports whether the model is in replay mode.
func (m *Model) Replaying() bool { return m.replay != nil }

// Replay returns the replay's state; the zero value when not replaying.
func (m *Model) Replay() ReplayState {
	r := m.replay
	if r == nil {
		return ReplayState{}
	}
	return ReplayState{
		Position: r.position(), Total: r.total, Speed: r.speed,
		Playing: r.playing, Revealed: r.revealed, Turns: len(r.starts),
		Done: r.revealed == len(r.starts) && r.settled == r.revealed,
	}
}

// Tick brings the replay up to the clock: turns whose time has come are
// revealed (and selected, while the selection follows the newest turn).
// It returns what changed, and reports ChangeReplay while playing so that
// the position shown moves.
func (m *Model) Tick() Change {
	r := m.replay
	if r == nil {
		return 0
	}
	var c Change
	if r.playing {
		c |= ChangeReplay
	}
	if r.update() {
		c |= m.revealChange()
	}
	if r.playing && r.position() >= r.total && r.revealed == len(r.starts) {
		r.base, r.playing = r.total, false
		m.status = "replay finished"
		c |= ChangeReplay | ChangeStatus
	}
	m.notify(c)
	return c
}

// revealChange refilters after the revealed turns changed.
func (m *Model) revealChange() Change {
	old := m.sel
	atEnd := len(m.rows) == 0 || old == m.rows[len(m.rows)-1]
	m.filter()
	switch {
	case len(m.rows) == 0:
		m.sel = 0
	case atEnd:
		m.sel = m.rows[len(m.rows)-1]
	default:
		m.sel = m.nearest(old)
	}
	c := ChangeRows
	if m.sel != old {
		c |= ChangeSelection
	}
	return c
}

// PauseOrStep pauses a playing replay; on a paused one it reveals the next
// turn (the space key).
func (m *Model) PauseOrStep() {
	r := m.replay
	if r == nil {
		return
	}
	if r.playing {
		m.setPlaying(false)
		return
	}
	m.Step()
}

// TogglePlay pauses or resumes the replay. Resuming a finished replay
// starts it over.
func (m *Model) TogglePlay() {
	r := m.replay
	if r == nil {
		return
	}
	if !r.playing && r.base >= r.total && r.revealed == len(r.starts) {
		r.base = 0
		r.update()
		m.notify(m.revealChange())
	}
	m.setPlaying(!r.playing)
}

func (m *Model) setPlaying(on bool) {
	r := m.replay
	if on == r.playing {
		return
	}
	if on {
		r.anchor = r.clock.Now()
		m.status = ""
	} else {
		r.base = r.position()
		m.status = "paused: space steps, p plays"
	}
	r.playing = on
	m.notify(ChangeReplay | ChangeStatus)
}

// Step pauses the replay and reveals the next turn with its response.
func (m *Model) Step() {
	r := m.replay
	if r == nil {
		return
	}
	m.setPlaying(false)
	if r.revealed >= len(r.starts) {
		r.base = r.total
		m.SetStatus("replay finished")
	} else {
		// Reveal the next turn and let its response end, but stop short
		// of the turn after it (a subagent may start meanwhile).
		i := r.revealed
		to := r.ends[i]
		if i+1 < len(r.starts) {
			to = min(to, r.starts[i+1]-1)
		}
		r.base = max(r.base, r.starts[i], to)
	}
	var c Change = ChangeReplay
	if r.update() {
		c |= m.revealChange()
		if len(m.rows) > 0 {
			last := m.rows[len(m.rows)-1]
			if last != m.sel {
				m.sel = last
				c |= ChangeSelection
			}
		}
	}
	m.notify(c)
}

// SetSpeed changes the replay speed (clamped to 1/64..1024).
func (m *Model) SetSpeed(f float64) {
	r := m.replay
	if r == nil {
		return
	}
	f = min(max(f, 1.0/64), 1024)
	r.base = r.position()
	r.anchor = r.clock.Now()
	r.speed = f
	m.notify(ChangeReplay)
}

// InFlight reports whether t's response has not ended yet: in a replay,
// that the replay has revealed t but not reached the end of its response;
// otherwise, that the exchange was still in flight when it was read (a live
// capture).
func (m *Model) InFlight(t *timeline.Turn) bool {
	if t == nil {
		return false
	}
	r := m.replay
	if r == nil {
		return t.Exchange != nil && t.Exchange.State == exchange.StateInFlight
	}
	i := t.Index - 1
	if i < 0 || i >= len(r.ends) || i >= r.revealed {
		return false
	}
	return r.ends[i] > r.position()
}
