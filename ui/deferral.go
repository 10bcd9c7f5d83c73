package ui

import (
	"fmt"

	"github.com/tsinspect/tsinspect/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/report"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// deferralCache keeps the tool-definition figures of one session, worked
// out by the report package the first time the Catalog tab needs them.
type deferralCache struct {
	s     *timeline.Session
	turns map[int]*report.Turn
}

// deferralLines says, under the Catalog tab, what deferring tools saved on
// the selected request and in its thread up to it, in tokens and dollars:
// the figures of the report's tool-definition summary.
func (a *app) deferralLines(s *timeline.Session, t *timeline.Turn) []view.Line {
	if s == nil || t == nil {
		return nil
	}
	if a.deferral.s != s {
		r := report.BuildWithCounts(s, "", nil)
		a.deferral = deferralCache{s: s, turns: map[int]*report.Turn{}}
		for i := range r.Turns {
			a.deferral.turns[r.Turns[i].Index] = &r.Turns[i]
		}
	}
	rt := a.deferral.turns[t.Index]
	if rt == nil || len(decodedCatalog(t)) == 0 {
		return nil
	}
	var sumTokens int64
	var sumUSD float64
	priced, unknown, estimated := true, 0, 0
	for _, idx := range threadTurns(s, t) {
		o := a.deferral.turns[idx]
		if o == nil {
			continue
		}
		sumTokens += o.ToolTokens.Saved
		unknown = max(unknown, o.ToolTokens.Unknown)
		estimated = max(estimated, o.ToolTokens.Estimated)
		if usd, ok := o.DeferralSavedUSD(a.prices); ok {
			sumUSD += usd
		} else {
			priced = false
		}
	}
	usd, ok := rt.DeferralSavedUSD(a.prices)
	tt := rt.ToolTokens
	dollars := func(usd float64, ok bool, mark string) string {
		if !ok {
			return "-"
		}
		return mark + pricing.Format(usd, true)
	}
	return []view.Line{
		{},
		{{Text: fmt.Sprintf("Deferral saved: this request %s tokens (%s)", report.TokensText(tt.Saved, tt.Unknown, tt.Estimated), dollars(usd, ok, report.Mark(tt.Unknown, tt.Estimated))), Role: view.RoleDim}},
		{{Text: fmt.Sprintf("                %s up to here %s tokens (%s)", t.Thread, report.TokensText(sumTokens, unknown, estimated), dollars(sumUSD, priced, report.Mark(unknown, estimated))), Role: view.RoleDim}},
		{{Text: fmt.Sprintf("Tool definitions sent: %s of %s prompt tokens (%.1f bytes a token)", numfmt.Thousands(tt.Sent), numfmt.Thousands(tt.Prompt), tt.BytesPerToken), Role: view.RoleDim}},
	}
}

// decodedCatalog is the catalog t's request announced, or nil.
func decodedCatalog(t *timeline.Turn) []string {
	if t.Decoded == nil {
		return nil
	}
	return t.Decoded.Catalog
}

// threadTurns lists the turns of t's thread up to t.
func threadTurns(s *timeline.Session, t *timeline.Turn) []int {
	for _, th := range s.Threads {
		if th.ID != t.Thread {
			continue
		}
		var out []int
		for _, idx := range th.Turns {
			if idx <= t.Index {
				out = append(out, idx)
			}
		}
		return out
	}
	return []int{t.Index}
}
