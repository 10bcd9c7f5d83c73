package ui

import (
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// harness drives an app on a simulation screen without running tview's
// event loop: keys go through the same capture and focus path, and every
// step draws synchronously, so screens are deterministic.
type harness struct {
	a   *app
	sim tcell.SimulationScreen
}

func newHarness(tb testing.TB, s *timeline.Session, w, h int, opts Options, setup ...func(*view.Model)) *harness {
	tb.Helper()
	sim := tcell.NewSimulationScreen("UTF-8")
	opts.Screen = sim
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	m := view.New(s)
	for _, f := range setup {
		f(m)
	}
	a := newApp(m, opts) // initialises the screen, at 80x25
	sim.SetSize(w, h)
	hs := &harness{a: a, sim: sim}
	hs.draw()
	return hs
}

// draw draws the whole screen.
func (h *harness) draw() { h.a.tv.ForceDraw() }

// key sends one key event as tview would and redraws.
func (h *harness) key(k tcell.Key, r rune) {
	ev := tcell.NewEventKey(k, r, tcell.ModNone)
	if capture := h.a.tv.GetInputCapture(); capture != nil {
		ev = capture(ev)
	}
	if ev != nil {
		if p := h.a.tv.GetFocus(); p != nil {
			if handler := p.InputHandler(); handler != nil {
				handler(ev, func(p tview.Primitive) { h.a.tv.SetFocus(p) })
			}
		}
	}
	h.draw()
}

// keys types runes; "\t", "\n", "\x1b" are Tab, Enter and Esc.
func (h *harness) keys(s string) {
	for _, r := range s {
		switch r {
		case '\t':
			h.key(tcell.KeyTab, 0)
		case '\n':
			h.key(tcell.KeyEnter, 0)
		case 0x1b:
			h.key(tcell.KeyEscape, 0)
		default:
			h.key(tcell.KeyRune, r)
		}
	}
}

// text returns the screen as lines of text, trailing blanks trimmed.
func (h *harness) text() string { return cellsText(h.sim.GetContents()) }
