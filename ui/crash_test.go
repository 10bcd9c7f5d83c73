package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/timeline/view"
)

// finiSim counts the times the screen was given back to the terminal.
type finiSim struct {
	*syncSim
	finis atomic.Int32
}

func (s *finiSim) Fini() {
	s.finis.Add(1)
	s.syncSim.Fini()
}

// A panic in the background work of the interface (reading or following a
// session) gives the terminal back and comes out as one error.
func TestBackgroundPanicRestoresTheScreen(t *testing.T) {
	sim := &finiSim{syncSim: newSim()}
	a := newApp(view.New(nil), Options{Screen: sim, Location: time.UTC})
	done := make(chan error, 1)
	go func() {
		done <- a.run(context.Background(), func(<-chan struct{}) {
			<-sim.shown
			var s []int
			_ = s[:(len(s) - 1)]
		})
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "ui: internal error at ") || !strings.Contains(err.Error(), "slice bounds out of range") {
			t.Fatalf("%v", err)
		}
	case <-time.After(patience):
		t.Fatalf("the interface still runs %v after its background work panicked", patience)
	}
	if sim.finis.Load() == 0 {
		t.Error("the screen was not given back")
	}
}

// Issue 30, row 1: following a session whose request keeps -1 messages of
// its base killed 'open --follow' and left the terminal in raw mode. The
// view now says what is wrong with the file and goes on.
func TestFollowingABadSessionGoesOn(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "0b5e1d2c-0000-4000-8000-000000000001.jsonl")
	lines := []string{
		`{"type":"api-request-shape","sessionId":"0b5e1d2c-0000-4000-8000-000000000001","shapeHash":"h","shape":{"system":[],"tools":[]}}`,
		`{"type":"api-request","sessionId":"0b5e1d2c-0000-4000-8000-000000000001","id":"r1","timestamp":"2026-11-20T10:00:01.000Z","shapeHash":"h","params":{"model":"claude-sonnet-4-5"},"keep":0,"tail":[]}`,
		`{"type":"api-request","sessionId":"0b5e1d2c-0000-4000-8000-000000000001","id":"r2","timestamp":"2026-11-20T10:00:02.000Z","shapeHash":"h","params":{"model":"claude-sonnet-4-5"},"base":"r1","keep":-1,"tail":[]}`,
	}
	if err := os.WriteFile(p, []byte(lines[0]+"\n"+lines[1]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sim := newSim()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunLive(ctx, p, Options{Screen: sim, Poll: 20 * time.Millisecond, Location: time.UTC})
	}()
	waitFor(t, sim, "1 turn", 5*time.Second)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(lines[2] + "\n")
	f.Close()
	waitFor(t, sim, "keeps -1 messages", 5*time.Second)
	waitFor(t, sim, "2 turns", 5*time.Second)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(patience):
		t.Fatal("RunLive did not return")
	}
}

// Issue 30, row 10: what the timeline shows from the files is shown, never
// obeyed: tcell writes a cell's bytes to the terminal as they are.
func TestTaggedTextEscapesControls(t *testing.T) {
	th := theme{}
	got := th.tagged(view.Line{{Text: "mcp__x__\x1b]52;c;cHduZWQ=\x07echo\u202e\u009b"}, {Text: "[red]not a tag", Role: view.RoleWarning}})
	if strings.ContainsAny(got, "\x1b\x07\u202e\u009b") {
		t.Errorf("%q", got)
	}
	if !strings.Contains(got, `mcp__x__\u001b]52;c;cHduZWQ=\u0007echo\u202e\u009b`) || !strings.Contains(got, "[red[]not a tag") {
		t.Errorf("%q", got)
	}
}
