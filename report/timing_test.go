package report

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/svgchart"
)

func TestTiming(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	head := "event: message_start\ndata: {}\n\n"
	body := head + "event: content_block_delta\ndata: {}\n\n"
	ex := &exchange.Exchange{
		Start: start, FirstByte: start.Add(300 * time.Millisecond), End: start.Add(2800 * time.Millisecond),
		RespBody: []byte(body),
		Chunks: []exchange.Chunk{
			{Offset: 0, Size: len(head), At: start.Add(300 * time.Millisecond)},
			{Offset: int64(len(head)), Size: len(body) - len(head), At: start.Add(800 * time.Millisecond)},
		},
	}
	tm := timing(ex, 100)
	// First token at 800 ms; 100 tokens over the 2 s that followed.
	if tm.TTFTMs != 800 || tm.DurationMs != 2800 || tm.OutputTokensPerSecond != 50 {
		t.Errorf("timing %+v, want 800 ms, 2800 ms, 50 tok/s", tm)
	}
	if s := timingText(tm); s != "TTFT 800 ms, 2.8 s, 50 tok/s" {
		t.Errorf("timingText %q", s)
	}
	// Not a stream: the first byte.
	ex.RespBody, ex.Chunks = []byte(`{"type":"message"}`), nil
	if tm := timing(ex, 0); tm.TTFTMs != 300 || tm.OutputTokensPerSecond != 0 {
		t.Errorf("non-stream timing %+v", tm)
	}
	if timingText(Timing{}) != "-" || timing(nil, 1) != (Timing{}) {
		t.Error("unknown timing")
	}
	r := &Report{Turns: []Turn{{Timing: Timing{TTFTMs: 800, DurationMs: 2800, OutputTokensPerSecond: 50}}, {Timing: Timing{TTFTMs: 400, DurationMs: 1000}}, {Timing: Timing{TTFTMs: 1200, DurationMs: 5000, OutputTokensPerSecond: 20}}}}
	if s := r.timingSummary(); !strings.Contains(s, "median time to first token 800 ms") || !strings.Contains(s, "(8.8 s in all)") || !strings.Contains(s, "median 50 output tokens/s") {
		t.Errorf("summary %q", s)
	}
}

// TestXTicksApart checks that no two turn labels of a chart overlap, and
// that the last turn is labelled.
func TestXTicksApart(t *testing.T) {
	for _, n := range []int{1, 5, 24, 25, 82, 83, 240, 1001} {
		turns := make([]*Turn, n)
		for i := range turns {
			turns[i] = &Turn{Index: i + 1}
		}
		c := frame("x", "t", "c", turns, 10)
		if len(c.XTicks) == 0 || c.XTicks[len(c.XTicks)-1].Label != strconv.Itoa(n) {
			t.Errorf("%d turns: last label %v", n, c.XTicks)
			continue
		}
		for i := 1; i < len(c.XTicks); i++ {
			a, b := c.XTicks[i-1], c.XTicks[i]
			if b.Pos-a.Pos < float64(len(b.Label)*svgchart.LabelWidth) {
				t.Errorf("%d turns: labels %s at %v and %s at %v overlap", n, a.Label, a.Pos, b.Label, b.Pos)
			}
		}
	}
}
