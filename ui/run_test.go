package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/internal/testwait"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// lineWith returns the first line of screen that holds s, or "".
func lineWith(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// syncSim is a simulation screen for a running app: tcell's simulation
// hands out its cells without a copy and tview initialises it unlocked, so
// the text is taken in Show, on tview's goroutine, and read from there.
type syncSim struct {
	tcell.SimulationScreen
	once  sync.Once
	shown chan struct{}
	mu    sync.Mutex
	text  string
}

func newSim() *syncSim {
	return &syncSim{SimulationScreen: tcell.NewSimulationScreen("UTF-8"), shown: make(chan struct{})}
}

// Show shows the screen and keeps its text.
func (s *syncSim) Show() {
	s.SimulationScreen.Show()
	text := cellsText(s.SimulationScreen.GetContents())
	s.mu.Lock()
	s.text = text
	s.mu.Unlock()
	s.once.Do(func() { close(s.shown) })
}

// screenText returns the text last shown.
func screenText(s *syncSim) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text
}

// cellsText renders screen cells as lines, trailing blanks trimmed.
func cellsText(cells []tcell.SimCell, w, h int) string {
	var b strings.Builder
	for y := 0; y < h; y++ {
		var line strings.Builder
		for x := 0; x < w; x++ {
			if c := cells[y*w+x]; len(c.Runes) > 0 {
				line.WriteString(string(c.Runes))
			} else {
				line.WriteByte(' ')
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}

// patience is the least a wait on the screen lasts before it fails: the
// waits poll, so a passing test takes no longer, and only a broken program
// (not a loaded machine) runs them out. The within a test gives says how
// soon the screen is expected to change.
const patience = testwait.Patience

// waitFor waits until the screen shows want, and returns the screen.
func waitFor(t *testing.T, sim *syncSim, want string, within time.Duration) string {
	t.Helper()
	within = max(within, patience)
	deadline := time.Now().Add(within)
	select {
	case <-sim.shown:
	case <-time.After(within):
		t.Fatalf("nothing drawn after %v", within)
	}
	for {
		text := screenText(sim)
		if strings.Contains(text, want) {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v the screen does not show %q:\n%s", within, want, text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitUntil polls the screen for up to within until ok holds, failing
// with what it shows then.
func waitUntil(t *testing.T, sim *syncSim, what string, within time.Duration, ok func(string) bool) {
	t.Helper()
	within = max(within, patience)
	deadline := time.Now().Add(within)
	for {
		text := screenText(sim)
		if ok(text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v, not so: %s:\n%s", within, what, text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// find returns the screen position of the first occurrence of s.
func find(t *testing.T, sim *syncSim, s string) (int, int) {
	t.Helper()
	for y, line := range strings.Split(screenText(sim), "\n") {
		if i := strings.Index(line, s); i >= 0 {
			return len([]rune(line[:i])), y
		}
	}
	t.Fatalf("%q not on screen", s)
	return 0, 0
}

// click presses and releases the left button at x, y.
func click(sim tcell.SimulationScreen, x, y int) {
	sim.InjectMouse(x, y, tcell.Button1, tcell.ModNone)
	sim.InjectMouse(x, y, tcell.ButtonNone, tcell.ModNone)
}

// TestRunKeysAndMouse drives Run through tview's own event loop.
func TestRunKeysAndMouse(t *testing.T) {
	sim := newSim()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), goldenSession(), Options{Screen: sim, Location: time.UTC, Title: "run"})
	}()
	waitFor(t, sim, "14 turns", 5*time.Second)
	sim.InjectKey(tcell.KeyRune, 'n', tcell.ModNone)
	waitFor(t, sim, "Working set of #5", 2*time.Second)
	x, y := find(t, sim, "6 Raw")
	click(sim, x, y)
	waitFor(t, sim, "▾ request  POST /v1/messages?beta=true", 2*time.Second)
	x, y = find(t, sim, " 2  side1") // 80 columns: no TIME
	click(sim, x+3, y)
	waitFor(t, sim, "max_tokens: 512", 2*time.Second)
	sim.InjectKey(tcell.KeyRune, '?', tcell.ModNone)
	waitFor(t, sim, "tsinspect help", 2*time.Second)
	sim.InjectKey(tcell.KeyRune, 'x', tcell.ModNone) // any key closes the help
	waitFor(t, sim, "max_tokens: 512", 2*time.Second)
	sim.InjectKey(tcell.KeyRune, 'q', tcell.ModNone)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(patience):
		t.Fatal("q did not quit")
	}
}

// TestRunStopsWithContext checks that cancelling the context ends Run.
func TestRunStopsWithContext(t *testing.T) {
	sim := newSim()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, goldenSession(), Options{Screen: sim}) }()
	waitFor(t, sim, "14 turns", 5*time.Second)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(patience):
		t.Fatal("Run did not return after cancel")
	}
}

// lockedClock is a fake clock shared between the test and the UI.
type lockedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *lockedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *lockedClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestReplayRun plays the golden session on a fake clock.
func TestReplayRun(t *testing.T) {
	sim := newSim()
	clk := &lockedClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	done := make(chan error, 1)
	go func() {
		done <- Replay(context.Background(), goldenSession(), Options{Screen: sim, Clock: clk, Speed: 2, Location: time.UTC})
	}()
	waitFor(t, sim, "▶ 0:00.0 / 0:", 5*time.Second)
	waitFor(t, sim, "streaming", 2*time.Second) // turn 1 has started, not ended
	clk.Advance(2500 * time.Millisecond)        // 5 s of capture
	screen := waitFor(t, sim, "(3/14)", 2*time.Second)
	if strings.Contains(screen, " 4 03:04:") {
		t.Errorf("turn 4 shown before its time:\n%s", screen)
	}
	sim.InjectKey(tcell.KeyRune, ' ', tcell.ModNone) // pause
	waitFor(t, sim, "paused", 2*time.Second)
	clk.Advance(time.Hour)
	sim.InjectKey(tcell.KeyRune, ' ', tcell.ModNone) // step
	waitFor(t, sim, "(4/14)", 2*time.Second)
	sim.InjectKey(tcell.KeyRune, '+', tcell.ModNone)
	waitFor(t, sim, "×4", 2*time.Second)
	sim.InjectKey(tcell.KeyRune, 'p', tcell.ModNone) // play on
	waitFor(t, sim, "▶ 0:", 2*time.Second)
	clk.Advance(time.Minute)
	waitFor(t, sim, "replay finished", 2*time.Second)
	waitFor(t, sim, "(14/14)", 2*time.Second)
	sim.InjectKey(tcell.KeyRune, 'q', tcell.ModNone)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestRunLive records into a capture while RunLive shows it: the file does
// not exist when it starts, a turn shows while in flight and again when it
// ends, and new turns show within a second.
func TestRunLive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.db")
	sim := newSim()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunLive(ctx, path, Options{Screen: sim, Poll: 50 * time.Millisecond, Location: time.UTC})
	}()
	waitFor(t, sim, "waiting for", 5*time.Second)

	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exs := goldenExchanges()
	bg := context.Background()
	for i := range 3 {
		if err := db.Insert(bg, &exs[i]); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, sim, "3 turns", time.Second)
	// The fourth is in flight: only its request is stored.
	flying := exs[3]
	flying.Status, flying.RespBody, flying.RespHeaders, flying.Chunks, flying.End = 0, nil, nil, nil, time.Time{}
	flying.State = exchange.StateInFlight
	if err := db.Insert(bg, &flying); err != nil {
		t.Fatal(err)
	}
	// Each check waits for its frame: a loaded machine may first draw
	// one that a later poll completes.
	waitUntil(t, sim, "the in-flight turn says it waits for its response", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "4 turns") && strings.Contains(s, "waiting")
	})
	// The response begins: the recorder writes the bytes so far each
	// second, and the row shows them, with the prompt message_start named.
	half := exs[3]
	half.ID, half.State, half.End = flying.ID, exchange.StateInFlight, time.Time{}
	cut := len(half.Chunks) / 2
	half.Chunks = half.Chunks[:cut]
	last := half.Chunks[cut-1]
	half.RespBody = half.RespBody[:last.Offset+int64(last.Size)]
	if err := db.Update(bg, &half); err != nil {
		t.Fatal(err)
	}
	arrived := "↓" + numfmt.Bytes(int64(len(half.RespBody)))
	waitUntil(t, sim, "the arriving turn's row gives its bytes and its prompt", 5*time.Second, func(s string) bool {
		return strings.Contains(lineWith(s, arrived), "7.2k ")
	})
	exs[3].ID = flying.ID
	if err := db.Update(bg, &exs[3]); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := 4; i < len(exs); i++ {
		if err := db.Insert(bg, &exs[i]); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, sim, "14 turns", time.Second)
	waitUntil(t, sim, "the 14 turns, the finished one no longer arriving", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "14 turns") && !strings.Contains(s, "↓") && !strings.Contains(s, "waiting")
	})
	t.Logf("10 new turns shown %v after they were written", time.Since(start).Round(time.Millisecond))
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestOpen checks that Open draws before the session is built, shows it
// when it is, and refuses a file that is not a capture before drawing.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	exs := goldenExchanges()
	for i := range exs {
		if err := db.Insert(context.Background(), &exs[i]); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	sim := newSim()
	done := make(chan error, 1)
	go func() { done <- Open(context.Background(), path, Options{Screen: sim, Title: "c.db"}) }()
	screen := waitFor(t, sim, "14 turns", 5*time.Second)
	if !strings.Contains(screen, "Working set of #1") {
		t.Errorf("the first turn is not selected:\n%s", screen)
	}
	sim.InjectKey(tcell.KeyRune, 'q', tcell.ModNone)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	notCapture := filepath.Join(dir, "notes.txt")
	os.WriteFile(notCapture, []byte("hello"), 0o600)
	err = Open(context.Background(), notCapture, Options{Screen: tcell.NewSimulationScreen("UTF-8")})
	if err == nil || !strings.HasPrefix(err.Error(), "ui: open: ") || !errors.Is(err, store.ErrNotCapture) {
		t.Errorf("not a capture: %v", err)
	}
}

// TestRunLiveWake: with a poll too slow to matter, a write followed by a
// wake is on screen at once.
func TestRunLiveWake(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exs := goldenExchanges()
	bg := context.Background()
	for i := range 2 {
		if err := db.Insert(bg, &exs[i]); err != nil {
			t.Fatal(err)
		}
	}
	sim := newSim()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- RunLive(ctx, path, Options{Screen: sim, Poll: time.Hour, Wake: wake, Location: time.UTC})
	}()
	waitFor(t, sim, "2 turns", 5*time.Second)
	if err := db.Insert(bg, &exs[2]); err != nil {
		t.Fatal(err)
	}
	wake <- struct{}{}
	waitFor(t, sim, "3 turns", 5*time.Second)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestTextScreen: the simulated terminal the benchmarks drive keeps the
// text of the frame shown.
func TestTextScreen(t *testing.T) {
	s := NewTextScreen()
	if s.Text() != "" {
		t.Fatalf("text before the first frame: %q", s.Text())
	}
	m := view.New(nil)
	m.SetStatus("hello from the screen")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- newApp(m, Options{Screen: s}).run(ctx, nil) }()
	deadline := time.Now().Add(patience)
	for !strings.Contains(s.Text(), "hello from the screen") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.Text(), "hello from the screen") {
		t.Errorf("the frame's text %q lacks the status", s.Text())
	}
}
