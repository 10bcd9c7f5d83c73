package timeline_test

import (
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/timeline"
)

// After /compact the history restarts from a summary. When the request
// that continues also changed its betas, nothing is read back; the break is
// the compaction's, not the betas' alone, and the flag says so.
func TestCacheBreakAfterCompactionWithNewBetas(t *testing.T) {
	c := newCapture(t)
	hist := toolsearchSession(c)
	c.send(compactionRequest(hist), say("<summary>the user asked for echo</summary>", 20230, 60))
	cont := mainConv("x")
	cont.messages = []any{
		obj{"role": "user", "content": "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary: echo."},
		obj{"role": "user", "content": []any{catalogReminder(echo), text("again please")}},
	}
	cont.tools = append(cont.tools, deferred(echo))
	cont.betas += ",context-management-2025-06-27"
	c.send(cont, say("ok", 0, 11000))
	s := c.build()
	last := s.Turns[len(s.Turns)-1]
	if last.Link != timeline.LinkCompaction {
		t.Fatalf("continuation: link %s", last.Link)
	}
	f := oneFlag(t, s, timeline.FlagCacheBreak, last.Index)
	if f.Cause != timeline.CauseCompaction {
		t.Errorf("cause %s, want %s: %s", f.Cause, timeline.CauseCompaction, f.Detail)
	}
	for _, want := range []string{"the compaction before this turn replaced the whole history with a summary, and the betas changed (added context-management-2025-06-27)"} {
		if !strings.Contains(f.Detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, f.Detail)
		}
	}
}
