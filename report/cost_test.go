package report

import (
	"math"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/pricing"
)

// TestPriceGolden checks Report.Price against dollars worked out by hand
// from the built-in table (Sonnet 4.5: $3 input, $15 output, $3.75 5-minute
// write, $0.30 read; Opus 4.5: $5, $25, 1-hour write $10, read $0.50).
func TestPriceGolden(t *testing.T) {
	r := &Report{
		Threads: []Thread{{ID: "main", Kind: "main", Turns: []int{1, 2, 4}}, {ID: "sub1", Kind: "subagent", Turns: []int{3, 5, 6}}},
		Turns: []Turn{
			// 1,000×3 + 2,000×15 + 10,000×3.75 = $0.0705; 5,000 saved
			// tokens at the write rate = $0.01875.
			{Index: 1, Thread: "main", Model: "claude-sonnet-4-5",
				Usage:      Usage{InputTokens: 1000, OutputTokens: 2000, CacheCreationInputTokens: 10000},
				ToolTokens: ToolTokens{Saved: 5000}},
			// 10×3 + 500×15 + 50,000×3.75 + 10,000×0.30 = $0.19803; the
			// break: 40,000×(3.75−0.30) = $0.138; saved 5,000×0.30 = $0.0015.
			{Index: 2, Thread: "main", Model: "claude-sonnet-4-5-20250929",
				Usage:      Usage{InputTokens: 10, OutputTokens: 500, CacheReadInputTokens: 10000, CacheCreationInputTokens: 50000, CacheCreation5m: 50000},
				Flags:      []Flag{{Kind: "cache_break", TokensLost: 40000}},
				ToolTokens: ToolTokens{Saved: 5000}},
			// Not in the table: as Opus 4.5, its neighbour. 100×5 + 1,000×25 + 1,000×10
			// (1h) + 20,000×0.50 = $0.0455. Two blind calls, both refused
			// in turn 5: a's 200 output tokens ×25 = $0.005 and turn 5's
			// prompt (21,000×0.50 + 400×10 = $0.0145) = $0.0195; b's 100
			// output tokens = $0.0025 (its error is in turn 5's prompt,
			// counted once with a).
			{Index: 3, Thread: "sub1", Model: "claude-opus-4-5-thinking",
				Usage: Usage{InputTokens: 100, OutputTokens: 1000, CacheReadInputTokens: 20000, CacheCreationInputTokens: 1000, CacheCreation1h: 1000},
				Flags: []Flag{{Kind: "call_before_load", Tool: "a", Answer: 5, Refused: true, CallTokens: 200, RoundTrip: true},
					{Kind: "call_before_load", Tool: "b", Answer: 5, Refused: true, CallTokens: 100}, {Kind: "retry"}}},
			{Index: 4, Thread: "main", Model: "gpt-5", Usage: Usage{InputTokens: 1e6}},
			// 21,000×0.50 + 400×10 + 300×25 = $0.022. A blind call the
			// client ran ($0), one whose answer is not in the capture (no
			// figure), and one refused beside a call that ran: its 40
			// output tokens ×25 = $0.001 and its 50-token error at the
			// write rate of turn 6 (1h: $10) = $0.0005.
			{Index: 5, Thread: "sub1", Model: "claude-opus-4-5-thinking",
				Usage: Usage{OutputTokens: 300, CacheReadInputTokens: 21000, CacheCreationInputTokens: 400, CacheCreation1h: 400},
				Flags: []Flag{{Kind: "call_before_load", Tool: "c", Answer: 6, CallTokens: 10},
					{Kind: "unknown_tool", Tool: "d", CallTokens: 10},
					{Kind: "call_before_load", Tool: "e", Answer: 6, Refused: true, CallTokens: 40, ErrorTokens: 50}}},
			{Index: 6, Thread: "sub1", Model: "claude-opus-4-5-thinking",
				Usage: Usage{CacheReadInputTokens: 21400, CacheCreationInputTokens: 100, CacheCreation1h: 100}},
		},
		TokenSummary: TokenSummary{Threads: []ThreadTokens{{Thread: "main"}, {Thread: "sub1"}}},
	}
	r.Price(pricing.Default())
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: $%v, want $%v", what, got, want)
		}
	}
	c := r.Costs
	if c == nil {
		t.Fatal("no costs")
	}
	near("turn 1", r.Turns[0].Cost.USD, 0.0705)
	near("turn 1 cache write", r.Turns[0].Cost.CacheWrite, 0.0375)
	near("turn 2", r.Turns[1].Cost.USD, 0.19803)
	near("turn 3", r.Turns[2].Cost.USD, 0.0455)
	if r.Turns[3].Cost != nil {
		t.Errorf("unpriced model got %+v", r.Turns[3].Cost)
	}
	if !r.Turns[2].Cost.Estimated || r.Turns[2].Cost.PricedAs != "claude-opus-4-5" || r.Turns[1].Cost.PricedAs != "claude-sonnet-4-5" {
		t.Errorf("priced as %+v, %+v", r.Turns[2].Cost, r.Turns[1].Cost)
	}
	near("cache break flag", *r.Turns[1].Flags[0].CostUSD, 0.138)
	near("blind call a", *r.Turns[2].Flags[0].CostUSD, 0.0195)
	near("blind call b", *r.Turns[2].Flags[1].CostUSD, 0.0025)
	near("blind call that ran", *r.Turns[4].Flags[0].CostUSD, 0)
	if r.Turns[4].Flags[1].CostUSD != nil {
		t.Error("a blind call never answered got a cost")
	}
	near("blind call beside one that ran", *r.Turns[4].Flags[2].CostUSD, 0.0015)
	if r.Turns[2].Flags[2].CostUSD != nil {
		t.Error("a retry flag got a cost")
	}
	near("total", c.TotalUSD, 0.34773)
	near("main", c.Threads[0].USD, 0.26853)
	near("sub1", c.Threads[1].USD, 0.0792)
	near("cache breaks", c.CacheBreaksUSD, 0.138)
	near("blind calls", c.BlindCallsUSD, 0.0235)
	near("deferral saved", c.DeferralSavedUSD, 0.02025)
	near("main saved", r.TokenSummary.Threads[0].SavedUSD, 0.02025)
	if c.CacheBreaks != 1 || c.BlindCalls != 5 || c.BlindCallsUnknown != 1 || c.PricesTaken != "2026-11-26" {
		t.Errorf("counts %d %d %d, taken %q", c.CacheBreaks, c.BlindCalls, c.BlindCallsUnknown, c.PricesTaken)
	}
	if strings.Join(c.Unpriced, ",") != "gpt-5" || strings.Join(c.Estimated, ",") != "claude-opus-4-5-thinking as claude-opus-4-5" {
		t.Errorf("unpriced %v estimated %v", c.Unpriced, c.Estimated)
	}
	var md strings.Builder
	if err := r.WriteMarkdown(&md, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"$0.3477 in total (built-in prices taken 2026-11-26)", "Cache breaks (1) cost $0.1380", "Blind calls (5) cost $0.0235", "Deferral saved $0.0203 (", "| $0.0705 |", "≈$0.0455", "(cost $0.1380)", "No price for gpt-5"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	var html strings.Builder
	if err := r.WriteHTML(&html, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<b>$0.3477</b>", "cache breaks $0.1380", "deferral saved $0.0203", ">$0.0705<", "(cost $0.1380)"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("html lacks %q", want)
		}
	}
	// Repricing with no table clears every figure.
	r.Price(nil)
	if r.Costs != nil || r.Turns[0].Cost == nil && r.TokenSummary.Threads[0].SavedUSD != 0 {
		t.Error("Price(nil) left costs")
	}
}
