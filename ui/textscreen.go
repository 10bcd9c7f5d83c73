package ui

import (
	"strings"
	"sync"

	"github.com/gdamore/tcell/v2"
)

// TextScreen is a simulated terminal for driving the UI without one (in
// benchmarks and tools), keeping the text of the last frame shown. The
// text is taken in Show and Sync, on the drawing goroutine: reading a
// simulation screen's cells from another goroutine races with drawing.
// Pass it as Options.Screen.
type TextScreen struct {
	tcell.SimulationScreen
	mu   sync.Mutex
	text string
}

// NewTextScreen returns a simulated UTF-8 terminal (tview sizes it at
// 80×25 unless SetSize is called after it is initialised).
func NewTextScreen() *TextScreen {
	return &TextScreen{SimulationScreen: tcell.NewSimulationScreen("UTF-8")}
}

// Show shows the frame and keeps its text.
func (s *TextScreen) Show() {
	s.SimulationScreen.Show()
	s.keep()
}

// Sync repaints the frame and keeps its text.
func (s *TextScreen) Sync() {
	s.SimulationScreen.Sync()
	s.keep()
}

func (s *TextScreen) keep() {
	cells, _, _ := s.GetContents()
	var b strings.Builder
	for _, c := range cells {
		if len(c.Runes) > 0 {
			b.WriteRune(c.Runes[0])
		}
	}
	s.mu.Lock()
	s.text = b.String()
	s.mu.Unlock()
}

// Text is the text of the last frame shown, row after row without line
// breaks; "" before the first.
func (s *TextScreen) Text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text
}
