package view

import (
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/compare"
)

func TestComparisonMarksAndLines(t *testing.T) {
	d := &compare.Diff{Threads: []compare.ThreadDiff{{A: "main", B: "main", Kind: "main", Rows: []compare.Row{
		{Op: compare.OpSame, AFirst: 1, ALast: 2, BFirst: 1, BLast: 2, Count: 2},
		{Op: compare.OpInserted, BFirst: 3, BLast: 3, What: "claude-sonnet-4-5; calls ToolSearch"},
		{Op: compare.OpChanged, AFirst: 3, ALast: 3, BFirst: 4, BLast: 4, Fields: []compare.Field{{Name: "cache read", A: "21,880", B: "21,988 (+108)"}}},
		{Op: compare.OpDeleted, AFirst: 4, ALast: 4},
	}}}, Shape: []compare.Change{{Area: "betas", Op: "removed", Item: "cache-diagnosis-2026-04-07"}}}
	c := NewComparison(d, "b.db")
	turn := func(i int) *timeline.Turn { return &timeline.Turn{Index: i, Thread: "main"} }
	for i, want := range map[int]string{1: "", 2: "", 3: "≠", 4: "−", 5: "−"} {
		if got := c.Mark(turn(i)); got != want {
			t.Errorf("turn %d: mark %q, want %q", i, got, want)
		}
	}
	text := func(ls []Line) string {
		var b strings.Builder
		for _, l := range ls {
			for _, s := range l {
				b.WriteString(s.Text)
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	got := text(c.Lines(turn(3)))
	for _, want := range []string{"Compared with b.db of #3", "B's turn 4 differs", "A: 21,880", "B: 21,988 (+108)", "Before it, only in B: turn 3", "betas: removed cache-diagnosis-2026-04-07"} {
		if !strings.Contains(got, want) {
			t.Errorf("Compare tab of #3 lacks %q:\n%s", want, got)
		}
	}
	if got := text(c.Lines(turn(2))); !strings.Contains(got, "The same as B's turn 2.") {
		t.Errorf("#2:\n%s", got)
	}
	m := New(nil)
	if m.NumTabs() != NumTabs {
		t.Errorf("tabs without a comparison: %d", m.NumTabs())
	}
	m.SetTab(TabCompare)
	if m.Tab() == TabCompare {
		t.Error("the Compare tab opened without a comparison")
	}
	m.SetComparison(c)
	m.SetTab(TabCompare)
	if m.Tab() != TabCompare || TabCompare.String() != "Compare" {
		t.Errorf("tab %v", m.Tab())
	}
}
