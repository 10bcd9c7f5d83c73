package ui

import (
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/report"
)

// TestDeferralLinesAgreeWithTheReport: on the last turn of each thread,
// the Catalog tab's "up to here" figures are the report's per-thread
// deferral savings, in tokens and dollars.
func TestDeferralLinesAgreeWithTheReport(t *testing.T) {
	s := goldenSession()
	r := report.BuildWithCounts(s, "", nil)
	r.Price(pricing.Default())
	a := &app{prices: pricing.Default()}
	checked := 0
	for _, tt := range r.TokenSummary.Threads {
		var last int
		for _, th := range s.Threads {
			if th.ID == tt.Thread {
				last = th.Turns[len(th.Turns)-1]
			}
		}
		turn := s.Turns[last-1]
		lines := a.deferral.Lines(s, turn, a.prices)
		if len(turn.Decoded.Catalog) == 0 {
			if lines != nil {
				t.Errorf("%s: deferral lines on a turn without a catalog", tt.Thread)
			}
			continue
		}
		if len(lines) != 4 {
			t.Fatalf("%s: %d lines", tt.Thread, len(lines))
		}
		got := lines[2][0].Text
		mark := report.Mark(len(tt.Unknown), len(tt.Estimated))
		if !strings.Contains(got, mark+numfmt.Thousands(tt.Saved)+" tokens ("+mark+pricing.Format(tt.SavedUSD, true)+")") {
			t.Errorf("%s: %q, want the report's %d tokens, %s", tt.Thread, got, tt.Saved, pricing.Format(tt.SavedUSD, true))
		}
		// The definitions sent are within the prompt the API measured.
		if rt := r.Turns[last-1].ToolTokens; rt.Sent > rt.Prompt || !strings.Contains(lines[3][0].Text, numfmt.Thousands(rt.Sent)+" of "+numfmt.Thousands(rt.Prompt)) {
			t.Errorf("%s: %q, sent %d of prompt %d", tt.Thread, lines[3][0].Text, rt.Sent, rt.Prompt)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no thread with a catalog checked")
	}
}
