package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/source"
)

// gatedSource hands out exchanges as the test lets it: the first half at
// once, the rest when release is closed.
type gatedSource struct {
	exs     []exchange.Exchange
	release chan struct{}
}

func (g *gatedSource) Name() string { return "gated" }
func (g *gatedSource) Close() error { return nil }
func (g *gatedSource) Len(context.Context) (int64, error) {
	return int64(len(g.exs)), nil
}

func (g *gatedSource) Get(_ context.Context, id int64) (*exchange.Exchange, error) {
	ex := g.exs[id-1]
	return &ex, nil
}

func (g *gatedSource) Stream(ctx context.Context, fn func(*exchange.Exchange) error) ([]source.Problem, error) {
	for i := range g.exs {
		if i == len(g.exs)/2 {
			select {
			case <-g.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ex := g.exs[i]
		if err := fn(&ex); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// TestOpenSaysHowFarItRead: while a session is read, the header says how
// many of its requests are read, never "0 turns"; then the turns appear.
func TestOpenSaysHowFarItRead(t *testing.T) {
	exs := goldenExchanges()
	for i := range exs {
		exs[i].ID = int64(i + 1)
	}
	src := &gatedSource{exs: exs, release: make(chan struct{})}
	sim := newSim()
	done := make(chan error, 1)
	go func() {
		done <- OpenSource(context.Background(), src, "gated.db", Options{Screen: sim, Location: time.UTC, Title: "gated.db"})
	}()
	half := len(exs) / 2
	screen := waitFor(t, sim, "reading ", 5*time.Second)
	waitUntil(t, sim, "the header counts the requests read", 3*time.Second, func(s string) bool {
		screen = s
		return strings.Contains(strings.Split(s, "\n")[0], "requests (")
	})
	head := strings.Split(screen, "\n")[0]
	want := fmt.Sprintf("reading %d of %d requests (%d %%)", half, len(exs), half*100/len(exs))
	if strings.Contains(screen, "0 turns") || strings.Contains(screen, "No Messages API turns") || !strings.Contains(head, want) {
		t.Errorf("while reading, the header says %q, want %q:\n%s", head, want, screen)
	}
	// The turns read so far are shown while the rest is read, the header
	// still saying how far the reading is.
	waitUntil(t, sim, "the turns read so far are listed", patience, func(s string) bool {
		screen = s
		return rowOfTurn(s, half) != "" && rowOfTurn(s, half+1) == ""
	})
	if head := strings.Split(screen, "\n")[0]; !strings.Contains(head, want) {
		t.Errorf("with the first turns shown, the header says %q, want %q", head, want)
	}
	close(src.release)
	screen = waitFor(t, sim, "14 turns", 5*time.Second)
	if rowOfTurn(screen, len(exs)) == "" && rowOfTurn(screen, 1) == "" {
		t.Errorf("once read, no turn row:\n%s", screen)
	}
	if strings.Contains(screen, "reading") {
		t.Errorf("still reading once read:\n%s", screen)
	}
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

// rowOfTurn is the line of the turn list that starts with turn number n,
// or "".
func rowOfTurn(screen string, n int) string {
	for _, l := range strings.Split(screen, "\n") {
		f := strings.Fields(l)
		if len(f) > 3 && f[0] == fmt.Sprint(n) && strings.Contains(l, "tool_use") {
			return l
		}
	}
	return ""
}
