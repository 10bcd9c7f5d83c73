package view

import (
	"fmt"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/tooltokens"
)

// Deferral keeps the tool-definition figures of one session
// ([tooltokens.Compute]), worked out the first time the Catalog tab needs
// them, and writes them under that tab. The zero value is ready to use.
type Deferral struct {
	s    *timeline.Session
	figs *tooltokens.Figures
	// turns finds the session's turns by index, to price their figures.
	turns map[int]*timeline.Turn
}

// Lines says, under the Catalog tab, what deferring tools saved on t's
// request and in its thread up to it, in tokens and in dollars at tab's
// prices: the figures of the report's tool-definition summary. It is nil
// when t's request announced no catalog.
func (d *Deferral) Lines(s *timeline.Session, t *timeline.Turn, tab *pricing.Table) []Line {
	if s == nil || t == nil {
		return nil
	}
	if d.s != s {
		*d = Deferral{s: s, figs: tooltokens.Compute(s, nil), turns: map[int]*timeline.Turn{}}
		for _, u := range s.Turns {
			if u != nil {
				d.turns[u.Index] = u
			}
		}
	}
	ft := d.figs.Turn(t.Index)
	if ft == nil || len(decoded(t).Catalog) == 0 {
		return nil
	}
	var sumTokens int64
	var sumUSD float64
	priced, unknown, estimated := true, 0, 0
	for _, idx := range threadUpTo(s, t) {
		o := d.figs.Turn(idx)
		if o == nil {
			continue
		}
		sumTokens += o.Tokens.Saved
		unknown = max(unknown, o.Tokens.Unknown)
		estimated = max(estimated, o.Tokens.Estimated)
		if usd, ok := savedUSD(tab, d.turns[idx], o); ok {
			sumUSD += usd
		} else {
			priced = false
		}
	}
	usd, ok := savedUSD(tab, t, ft)
	tt := ft.Tokens
	dollars := func(usd float64, ok bool, mark string) string {
		if !ok {
			return "-"
		}
		return mark + pricing.Format(usd, true)
	}
	return []Line{
		{},
		{{Text: fmt.Sprintf("Deferral saved: this request %s tokens (%s)", tooltokens.TokensText(tt.Saved, tt.Unknown, tt.Estimated), dollars(usd, ok, tooltokens.Mark(tt.Unknown, tt.Estimated))), Role: RoleDim}},
		{{Text: fmt.Sprintf("                %s up to here %s tokens (%s)", t.Thread, tooltokens.TokensText(sumTokens, unknown, estimated), dollars(sumUSD, priced, tooltokens.Mark(unknown, estimated))), Role: RoleDim}},
		{{Text: fmt.Sprintf("Tool definitions sent: %s of %s prompt tokens (%.1f bytes a token)", numfmt.Thousands(tt.Sent), numfmt.Thousands(tt.Prompt), tt.BytesPerToken), Role: RoleDim}},
	}
}

// savedUSD prices what deferral saved on turn t (whose figures are ft)
// at the rate its request paid for the start of its prompt; ok is false
// when t was not decoded or its model has no price.
func savedUSD(tab *pricing.Table, t *timeline.Turn, ft *tooltokens.Turn) (float64, bool) {
	d := decoded(t)
	return tooltokens.SavedUSD(tab, d.Request.Model, timeline.PricingUsage(d.Response.Usage), ft.Tokens.Saved)
}

// threadUpTo lists the indexes of the turns of t's thread up to t.
func threadUpTo(s *timeline.Session, t *timeline.Turn) []int {
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
