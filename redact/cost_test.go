package redact

import (
	"testing"

	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/report"
)

// TestCostsKept checks that redaction keeps the dollar figures, the
// client, the betas and the timing.
func TestCostsKept(t *testing.T) {
	r := &report.Report{
		Threads: []report.Thread{{ID: "main", Kind: "main", Turns: []int{1}}},
		Capture: report.Capture{Clients: []string{"claude-cli/2.1.328 (external, sdk-cli)"}, Betas: []string{"advanced-tool-use-2025-11-20"}},
		Turns: []report.Turn{{Index: 1, Thread: "main", Model: "claude-opus-5-7",
			Client: "claude-cli/2.1.328 (external, sdk-cli)", Betas: []string{"advanced-tool-use-2025-11-20"},
			Timing: report.Timing{TTFTMs: 812, DurationMs: 3200, OutputTokensPerSecond: 45},
			Usage:  report.Usage{InputTokens: 1000, CacheCreationInputTokens: 5000},
			Flags:  []report.Flag{{Kind: "cache_break", Severity: "warning", TokensLost: 4000}}}},
		TokenSummary: report.TokenSummary{Threads: []report.ThreadTokens{{Thread: "main"}}},
	}
	r.Price(pricing.Default())
	for _, p := range []Policy{Default, Strict} {
		out := Apply(r, p, nil)
		c := out.Costs
		if c == nil || c.TotalUSD != r.Costs.TotalUSD || c.CacheBreaksUSD != r.Costs.CacheBreaksUSD || len(c.Estimated) != 1 || c.PricesTaken != "2026-11-26" {
			t.Fatalf("%s: costs %+v, want %+v", p, c, r.Costs)
		}
		if tc := out.Turns[0].Cost; tc == nil || tc.USD != r.Turns[0].Cost.USD || tc.PricedAs != "claude-opus-5-5" {
			t.Errorf("%s: turn cost %+v", p, tc)
		}
		if f := out.Turns[0].Flags[0].CostUSD; f == nil || *f != *r.Turns[0].Flags[0].CostUSD {
			t.Errorf("%s: flag cost %v", p, f)
		}
		if tu := out.Turns[0]; tu.Client != r.Turns[0].Client || len(tu.Betas) != 1 || tu.Timing != r.Turns[0].Timing ||
			len(out.Capture.Clients) != 1 || out.Capture.Betas[0] != "advanced-tool-use-2025-11-20" {
			t.Errorf("%s: client, betas or timing lost: %+v %+v", p, tu, out.Capture)
		}
	}
}
