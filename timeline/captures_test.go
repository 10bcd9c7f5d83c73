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
	if len(s.Threads) != 3 || len(s.Thread("main").Turns) != 3 {
		t.Fatalf("want main (3 turns) and two subagents\n%s", dump(s))
	}
	var firsts []*timeline.Turn
	for _, id := range []string{"sub1", "sub2"} {
		th := s.Thread(id)
		if th == nil || th.Kind != timeline.KindSubagent || len(th.Turns) != 2 {
			t.Fatalf("%s: want a subagent of two turns\n%s", id, dump(s))
		}
		first, again := s.Turn(th.Turns[0]), s.Turn(th.Turns[1])
		firsts = append(firsts, first)
		if again.Link != timeline.LinkRetry || again.Prev != first.Index {
			t.Errorf("%s: turn %d link %s prev %d, want a retry of #%d", id, again.Index, again.Link, again.Prev, first.Index)
		}
		want := map[int][]string{first.Index: {timeline.FlagStopSequence}, again.Index: {timeline.FlagRetry, timeline.FlagStopSequence}}
		for i, kinds := range want {
			var got []string
			for _, f := range s.Turn(i).Flags {
				got = append(got, f.Kind)
			}
			slices.Sort(got)
			if !slices.Equal(got, kinds) {
				t.Errorf("turn %d: flags %v, want %v", i, got, kinds)
			}
		}
	}
	a, b := firsts[0].Exchange, firsts[1].Exchange
	if !a.Start.Before(b.End) || !b.Start.Before(a.End) {
		t.Errorf("the recorded subagents do not overlap: %v-%v, %v-%v", a.Start, a.End, b.Start, b.End)
	}
	for _, i := range s.Thread("main").Turns {
		if fl := s.Turn(i).Flags; len(fl) > 0 {
			t.Errorf("main turn %d flagged: %+v", i, fl)
		}
	}
	for _, th := range s.Threads {
		if c := th.Client; !c.ClaudeCode() || c.Version != "2.1.328" {
			t.Errorf("%s: client %+v", th.ID, c)
		}
	}
}

// An agent loop of an app on the official TypeScript SDK (recorded):
// max_tokens 1024, tools with two deferred behind the server-side regex
// search, prompt caching, then a poem that ends on its stop sequence. The
// loop is the main thread, not a side query; the poem is another
// conversation; nothing is flagged.
func TestCapturedSDKAgent(t *testing.T) {
	s := timeline.Build(loadCapture(t, "sdk-agent"))
	wantThreads(t, s, map[string][]int{"main": {1, 2, 3}, "conv1": {4}})
	for _, th := range s.Threads {
		if c := th.Client; c.Family != timeline.ClientSDK || c.Name != "Anthropic TypeScript SDK" || c.Version == "" {
			t.Errorf("%s: client %+v", th.ID, c)
		}
	}
	if got := flagList(s); len(got) > 0 {
		t.Errorf("flags %v\n%s", got, dump(s))
	}
	d := s.Turn(1).Decoded
	if len(d.NewSearches) != 1 || !d.NewSearches[0].Server || len(d.NewSearches[0].Results) != 1 || d.NewSearches[0].Results[0] != "get_weather" {
		t.Errorf("server search of turn 1: %+v", d.NewSearches)
	}
	if r := s.Turn(4).Decoded.Response; r.StopReason != "stop_sequence" || len(r.Content) == 0 {
		t.Errorf("poem: stop %s, %d blocks", r.StopReason, len(r.Content))
	}
	if u := s.Turn(3).Decoded.Response.Usage; u.CacheReadInputTokens == 0 {
		t.Errorf("turn 3 read nothing from the cache: %+v", u)
	}
}
