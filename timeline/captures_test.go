package timeline_test

import (
	"slices"
	"testing"

	"github.com/tsinspect/tsinspect/timeline"
)

// Claude Code's two parallel subagents of different types, both given the
// prompt "Warmup" (recorded): they start within milliseconds of each other
// with different system prompts and tools, so they are two subagent
// threads and neither is a retry of the other. Each got an empty
// stop_sequence reply, and Claude Code asked each again with a nudge
// added: those are retries, each in its own thread.
func TestCapturedParallelSubagents(t *testing.T) {
	s := timeline.Build(loadCapture(t, "claude-code-parallel-subagents"))
	wantThreads(t, s, map[string][]int{"main": {1, 3, 7}, "sub1": {2, 5}, "sub2": {4, 6}})
	a, b := s.Turn(2).Exchange, s.Turn(4).Exchange
	if !a.Start.Before(b.End) || !b.Start.Before(a.End) {
		t.Errorf("the recorded subagents do not overlap: %v-%v, %v-%v", a.Start, a.End, b.Start, b.End)
	}
	for _, th := range s.Threads {
		if c := th.Client; !c.ClaudeCode() || c.Version != "2.1.328" {
			t.Errorf("%s: client %+v", th.ID, c)
		}
	}
	want := []string{"2:stop_sequence_anomaly", "4:stop_sequence_anomaly", "5:retry", "5:stop_sequence_anomaly", "6:retry", "6:stop_sequence_anomaly"}
	got := flagList(s)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("flags %v, want %v\n%s", got, want, dump(s))
	}
	for i, p := range map[int]int{5: 2, 6: 4} {
		if tt := s.Turn(i); tt.Link != timeline.LinkRetry || tt.Prev != p {
			t.Errorf("turn %d: link %s prev %d, want a retry of #%d", i, tt.Link, tt.Prev, p)
		}
	}
}
