package ui

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/tsinspect/tsinspect/timeline/view"
)

// TestSelectionInViewAfterShrink opens a session on a screen where every
// turn fits, then shrinks it (as a terminal's first size report or a
// resize does): the list must still show turn 1, selected and highlighted,
// not the last turns with the selection off screen.
func TestSelectionInViewAfterShrink(t *testing.T) {
	h := newHarness(t, goldenSession(), 120, 60, Options{})
	for _, size := range [][2]int{{80, 14}, {100, 16}} {
		h.sim.SetSize(size[0], size[1])
		h.draw()
		lines := strings.Split(h.text(), "\n")
		if f := strings.Fields(lines[2]); len(f) == 0 || f[0] != "1" {
			t.Fatalf("%dx%d: first row is %q, want turn 1:\n%s", size[0], size[1], lines[2], h.text())
		}
		cells, w, _ := h.sim.GetContents()
		_, _, attr := cells[2*w+4].Style.Decompose()
		if attr&tcell.AttrReverse == 0 {
			t.Errorf("%dx%d: turn 1 is not highlighted", size[0], size[1])
		}
	}
	// Moving down past the bottom scrolls, and the selection stays in view.
	for i := 0; i < 8; i++ {
		h.keys("j")
	}
	if !strings.Contains(h.text(), "9 03:04:23") {
		t.Errorf("turn 9 not in view after moving down to it:\n%s", h.text())
	}
}

// TestHeaderNamesThreadOnce checks that the header names the main thread
// once ("thread main"), and a subagent with its kind.
func TestHeaderNamesThreadOnce(t *testing.T) {
	h := newHarness(t, goldenSession(), 120, 40, Options{})
	h.keys("t")
	head := strings.SplitN(h.text(), "\n", 2)[0]
	if !strings.Contains(head, "thread main  ") || strings.Contains(head, "main main") {
		t.Errorf("header %q, want \"thread main\" once", head)
	}
	// Turns 1, 3, 4, 5, 6, 9, 10, 11, 13 and 14 of the golden session.
	if !strings.HasSuffix(head, " in main") || strings.HasSuffix(head, "$0.1066 in main") {
		t.Errorf("header %q does not end in the main thread's dollars", head)
	}
	for i := 0; i < 5 && !strings.Contains(strings.SplitN(h.text(), "\n", 2)[0], "thread sub1"); i++ {
		h.keys("t")
	}
	if head := strings.SplitN(h.text(), "\n", 2)[0]; !strings.HasSuffix(head, "$0.0080 in sub1") {
		t.Errorf("header %q, want sub1's $0.0080 (turns 7 and 8, $0.0070 and $0.0009 each rounded down)", head)
	}
}

// TestReplayFooterFits checks that the replay's key line fits 80 columns.
func TestReplayFooterFits(t *testing.T) {
	h := newHarness(t, goldenSession(), 80, 24, Options{}, func(m *view.Model) { m.StartReplay(nil, 1) })
	lines := strings.Split(strings.TrimRight(h.text(), "\n"), "\n")
	foot := lines[len(lines)-1]
	if !strings.Contains(foot, "space pause") || !strings.HasSuffix(foot, "Tab pane") {
		t.Errorf("replay footer %q is cut or lacks the replay keys", foot)
	}
}

// TestWideListShowsFlagDetails checks that a list wider than 120 columns
// uses the room: each flag with what it is about.
func TestWideListShowsFlagDetails(t *testing.T) {
	h := newHarness(t, goldenSession(), 180, 40, Options{})
	screen := h.text()
	for _, want := range []string{"✖ call_before_load mcp__demo__action_7 · ▲", "▲ cache_break system_changed −"} {
		if !strings.Contains(screen, want) {
			t.Errorf("180 columns: no %q:\n%s", want, screen)
		}
	}
	h.sim.SetSize(120, 40)
	h.draw()
	if strings.Contains(h.text(), "call_before_load mcp__demo__action_7") {
		t.Error("120 columns show the wide flags")
	}
}

// TestHeaderKeepsDollars: at every width from 60 columns up, whatever else
// the header holds (a long file name, the recorder's note, a replay, a
// search, a thread), the session's dollars are on screen whole; the other
// parts give way first.
func TestHeaderKeepsDollars(t *testing.T) {
	for _, w := range []int{60, 80, 100, 120, 160} {
		for _, replay := range []bool{false, true} {
			var setup []func(*view.Model)
			if replay {
				setup = append(setup, func(m *view.Model) { m.StartReplay(nil, 1) })
			}
			h := newHarness(t, goldenSession(), w, 24, Options{Title: "a-session-with-a-long-name.db"}, setup...)
			h.a.note = "command exited with status 0"
			h.keys("/echo\n")
			h.a.header.width = 0 // lay it out again
			h.draw()
			head := strings.SplitN(h.text(), "\n", 2)[0]
			want := "$0.1066"
			if replay {
				want = "$0" // nothing revealed yet
			}
			if !strings.Contains(head, want) || len([]rune(head)) > w {
				t.Errorf("%d columns, replay %v: header %q lacks %s or overflows", w, replay, head, want)
			}
			if w >= 120 && !replay && (!strings.Contains(head, "/echo") || !strings.Contains(head, "in all")) {
				t.Errorf("%d columns: header %q lost the search or the dollars' scope", w, head)
			}
		}
	}
}
