package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
)

// A thread of 184 turns (the issue's, whose text chart stopped at #101)
// has a bar of its prompt and of its cost for every turn, each leading to
// it, and a point of its context; a compaction before turn 120 is marked,
// and the cost the caption sums is the turns' own.
func TestThreadFiguresEveryTurn(t *testing.T) {
	const n = 184
	ss := &timeline.Session{Threads: []*timeline.Thread{{ID: "main", Kind: timeline.KindMain}}}
	for i := 1; i <= n; i++ {
		tu := &timeline.Turn{Index: i, Thread: "main", Decoded: &decode.Turn{
			Request:  decode.Request{Model: "claude-sonnet-4-5"},
			Response: decode.Response{Usage: decode.Usage{InputTokens: 10, CacheReadInputTokens: int64(1000 * i), CacheCreationInputTokens: 500, OutputTokens: 20}},
		}}
		if i == 120 {
			tu.Link = timeline.LinkCompaction
		}
		ss.Turns = append(ss.Turns, tu)
		ss.Threads[0].Turns = append(ss.Threads[0].Turns, i)
	}
	tab, err := pricing.LoadFor("")
	if err != nil {
		t.Fatal(err)
	}
	figs := threadFigures("k", "main", ss, ss.Turns[9], tab)
	if len(figs) != 3 {
		t.Fatalf("%d figures", len(figs))
	}
	cache, ctx, cost := figs[0].Chart, figs[1].Chart, figs[2].Chart
	if len(cache.Columns) != n || len(cost.Columns) != n {
		t.Fatalf("%d prompt bars and %d cost bars, want %d each", len(cache.Columns), len(cost.Columns), n)
	}
	var sum float64
	for i := range n {
		href := fmt.Sprintf("/s/k/turn/%d", i+1)
		if cache.Columns[i].Href != href || cost.Columns[i].Href != href {
			t.Errorf("bar %d leads to %q and %q", i, cache.Columns[i].Href, cost.Columns[i].Href)
		}
		// Read, written, uncached: three parts, the last turn's the tallest.
		if len(cache.Columns[i].Bars) != 3 {
			t.Errorf("turn %d: %d parts", i+1, len(cache.Columns[i].Bars))
		}
		c, _, _ := timeline.TurnCost(tab, ss.Turns[i])
		sum += c.Total
	}
	if last := cache.Columns[n-1].Bars[0]; last.Y > cache.Columns[0].Bars[0].Y || last.Y < cache.PlotTop {
		t.Errorf("the last turn's bar at %v, the first's at %v, the plot's top %v", last.Y, cache.Columns[0].Bars[0].Y, cache.PlotTop)
	}
	if len(ctx.Lines) != 1 || strings.Count(ctx.Lines[0].Points, ",") != n {
		t.Errorf("the context line has %d points, want %d", strings.Count(ctx.Lines[0].Points, ","), n)
	}
	marked := 0
	for _, m := range ctx.Markers {
		if m.Class == "m-compact" {
			marked++
			if m.Href != "/s/k/turn/120" {
				t.Errorf("the compaction marked at %q", m.Href)
			}
		}
	}
	if marked != 1 || !strings.Contains(figs[1].Caption, "1 compaction marked") {
		t.Errorf("%d compactions marked: %q", marked, figs[1].Caption)
	}
	if want := pricing.Format(sum, true) + " over its 184 turns"; !strings.Contains(figs[2].Caption, want) {
		t.Errorf("the cost caption %q does not say %q", figs[2].Caption, want)
	}
	// Turn 1 by hand: 10 input at $3, 1,000 read at $0.30, 500 written at
	// $3.75 and 20 output at $15 a million: $0.002505.
	if got := cost.Columns[0].Title; got != "turn 1: "+pricing.Format(0.002505, true) {
		t.Errorf("turn 1's cost %q", got)
	}
}
