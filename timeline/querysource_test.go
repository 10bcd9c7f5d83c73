package timeline_test

import (
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

// TestQuerySourceNamesThreads: where the capture kept Claude Code's
// query_source (raw-bodies captures), it decides the thread kinds the
// heuristics cannot: here a subagent whose system prompt carries no
// subagent marker and that did not overlap the main agent, which the
// heuristics take for a side query.
func TestQuerySourceNamesThreads(t *testing.T) {
	build := func(sources ...string) *timeline.Session {
		c := newCapture(t)
		m := mainConv("fix the bug")
		c.send(m, say("Delegating.", 0, 100))
		sub := subConv("look into the bug")
		sub.system = mainConv("").system[1:] // no billing block: nothing marks it
		c.send(sub, say("Found it.", 0, 100))
		exs := c.exs
		for i, q := range sources {
			if q != "" {
				exs[i].ReqHeaders = append(exs[i].ReqHeaders, exchange.Header{Name: exchange.QuerySourceHeader, Value: q})
			}
		}
		return timeline.Build(exs)
	}
	kinds := func(s *timeline.Session) []string {
		var out []string
		for _, th := range s.Threads {
			out = append(out, th.Kind+":"+th.QuerySource)
		}
		return out
	}
	plain := build()
	if got := kinds(plain); len(got) != 2 || got[1] != timeline.KindSide+":" {
		t.Fatalf("without query sources the threads are %v; the test needs the heuristics to call the second a side query", got)
	}
	named := build("repl_main_thread", "agent:builtin:general-purpose")
	got := kinds(named)
	want := []string{timeline.KindMain + ":repl_main_thread", timeline.KindSubagent + ":agent:builtin:general-purpose"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("threads %v, want %v", got, want)
	}
	side := build("sdk", "generate_session_title")
	if got := kinds(side); len(got) != 2 || got[1] != timeline.KindSide+":generate_session_title" {
		t.Errorf("threads %v, want the second a side query", got)
	}
}
