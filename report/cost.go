package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tsinspect/tsinspect/internal/numfmt"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/tooltokens"
)

// Cost is a turn's price in US dollars, split by kind of token.
type Cost struct {
	USD        float64 `json:"usd"`
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheWrite float64 `json:"cache_write"`
	CacheRead  float64 `json:"cache_read"`
	// PricedAs is the price table's model the turn was priced as;
	// Estimated is set when the request's model is not in the table and
	// was priced as its nearest neighbour in the table.
	PricedAs    string `json:"priced_as"`
	Estimated   bool   `json:"estimated"`
	LongContext bool   `json:"long_context"`
	// WebSearch is what the turn's web searches cost (part of USD); Fast
	// is set when fast-mode rates applied, FastUnpriced when the turn ran
	// in fast mode on a model with no published fast-mode price (USD then
	// counts standard rates: a lower bound).
	WebSearch    float64 `json:"web_search,omitempty"`
	Fast         bool    `json:"fast,omitempty"`
	FastUnpriced bool    `json:"fast_unpriced,omitempty"`
}

// Costs sums what the session cost in US dollars.
type Costs struct {
	// Prices says which table priced the report and when its prices were
	// taken; PricesTaken is that date (YYYY-MM-DD).
	Prices      string `json:"prices"`
	PricesTaken string `json:"prices_taken"`
	// TotalUSD sums the priced turns; Threads splits it.
	TotalUSD float64      `json:"total_usd"`
	Threads  []ThreadCost `json:"threads"`
	// CacheBreaksUSD sums the cost of the cache_break flags, BlindCallsUSD
	// that of the call_before_load and unknown_tool flags (see
	// Flag.CostUSD): parts of TotalUSD, not additions to it.
	// BlindCallsUnknown counts the blind calls whose cost is unknown (the
	// capture ends before they were answered).
	CacheBreaks       int     `json:"cache_breaks"`
	CacheBreaksUSD    float64 `json:"cache_breaks_usd"`
	BlindCalls        int     `json:"blind_calls"`
	BlindCallsUSD     float64 `json:"blind_calls_usd"`
	BlindCallsUnknown int     `json:"blind_calls_unknown"`
	// DeferralSavedUSD sums the threads' SavedUSD (negative when deferral
	// cost more than inlining); DeferralSavedLowerBound is set when some
	// catalog tools were of unknown size and left out,
	// DeferralSavedEstimated when some were counted at an estimated size.
	DeferralSavedUSD        float64 `json:"deferral_saved_usd"`
	DeferralSavedLowerBound bool    `json:"deferral_saved_lower_bound"`
	DeferralSavedEstimated  bool    `json:"deferral_saved_estimated"`
	// DeferralUnknown counts the turns whose tools are not known (made
	// from a transcript), left out of DeferralSavedUSD.
	DeferralUnknown int `json:"deferral_unknown_turns,omitempty"`
	// UsageProblems counts the turns whose usage could not be read whole
	// (see decode.IsUsageProblem): what could not be read counts 0, so
	// TotalUSD is a lower bound.
	UsageProblems int `json:"usage_problems,omitempty"`
	// OutputPlaceholders counts the turns whose output tokens are a
	// placeholder (Turn.OutputPlaceholder): TotalUSD is a lower bound.
	OutputPlaceholders int `json:"output_placeholders,omitempty"`
	// Unpriced lists the models with no price (their turns are left out
	// of the sums), and "MODEL (fast mode)" for fast-mode turns of a model
	// with no fast-mode price (counted at standard rates); Estimated the
	// models priced as a neighbour in the table, as "MODEL as PRICED_AS".
	Unpriced  []string `json:"unpriced"`
	Estimated []string `json:"estimated"`
}

// ThreadCost is what one thread cost.
type ThreadCost struct {
	Thread string  `json:"thread"`
	USD    float64 `json:"usd"`
}

// usage converts a report turn's usage to what pricing bills.
func (u Usage) pricing() pricing.Usage {
	pu := pricing.Usage{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadInputTokens, Speed: u.Speed, WebSearches: u.WebSearchRequests}
	pu.CacheWrite5m, pu.CacheWrite1h = pricing.SplitCacheWrites(u.CacheCreationInputTokens, u.CacheCreation5m, u.CacheCreation1h)
	return pu
}

// pricingUsage is what pricing bills for the turn: its usage, made at its
// time (which chooses between a model's dated rates).
func (t *Turn) pricingUsage() pricing.Usage {
	u := t.Usage.pricing()
	if t.At != nil {
		u.At = *t.At
	}
	return u
}

// Price fills in the costs of r from tab: each turn's Cost, the CostUSD of
// its cache_break and blind-call flags, each thread's SavedUSD and
// [Report.Costs]. A nil tab leaves r unpriced. Calling it again reprices.
func (r *Report) Price(tab *pricing.Table) {
	r.Costs = nil
	for i := range r.TokenSummary.Threads {
		r.TokenSummary.Threads[i].SavedUSD = 0
	}
	if tab == nil {
		return
	}
	c := &Costs{Prices: tab.Describe(), PricesTaken: tab.Taken, Threads: []ThreadCost{}, Unpriced: []string{}, Estimated: []string{}}
	byThread := map[string]int{}
	for _, th := range r.Threads {
		byThread[th.ID] = len(c.Threads)
		c.Threads = append(c.Threads, ThreadCost{Thread: th.ID})
	}
	byIndex := make(map[int]*Turn, len(r.Turns))
	for i := range r.Turns {
		byIndex[r.Turns[i].Index] = &r.Turns[i]
	}
	savedBy := map[string]int{}
	for i, th := range r.TokenSummary.Threads {
		savedBy[th.Thread] = i
		if len(th.Unknown) > 0 {
			c.DeferralSavedLowerBound = true
		}
		if len(th.Estimated) > 0 {
			c.DeferralSavedEstimated = true
		}
	}
	for i := range r.Turns {
		t := &r.Turns[i]
		t.Cost = nil
		if slices.ContainsFunc(t.Problems, decode.IsUsageProblem) {
			c.UsageProblems++
		}
		if t.OutputPlaceholder {
			c.OutputPlaceholders++
		}
		if t.Model == "" {
			continue
		}
		u := t.pricingUsage()
		pc, p, ok := tab.Cost(t.Model, u)
		if !ok {
			if !slices.Contains(c.Unpriced, t.Model) {
				c.Unpriced = append(c.Unpriced, t.Model)
			}
			continue
		}
		if e := fmt.Sprintf("%s as %s", t.Model, p.Model.Model); p.Estimated && !slices.Contains(c.Estimated, e) {
			c.Estimated = append(c.Estimated, e)
		}
		if e := t.Model + " (fast mode)"; pc.FastUnpriced && !slices.Contains(c.Unpriced, e) {
			c.Unpriced = append(c.Unpriced, e)
		}
		t.Cost = &Cost{USD: pc.Total, Input: pc.Input, Output: pc.Output, CacheWrite: pc.CacheWrite, CacheRead: pc.CacheRead,
			PricedAs: p.Model.Model, Estimated: p.Estimated, LongContext: pc.LongContext,
			WebSearch: pc.WebSearch, Fast: pc.Fast, FastUnpriced: pc.FastUnpriced}
		c.TotalUSD += pc.Total
		if k, ok := byThread[t.Thread]; ok {
			c.Threads[k].USD += pc.Total
		}
		for j := range t.Flags {
			f := &t.Flags[j]
			f.CostUSD = nil
			var usd float64
			switch f.Kind {
			case timeline.FlagCacheBreak:
				usd, _ = tab.BreakCost(t.Model, u, f.TokensLost)
				c.CacheBreaks++
				c.CacheBreaksUSD += usd
			case timeline.FlagCallBeforeLoad, timeline.FlagUnknownTool:
				c.BlindCalls++
				var am string
				var au pricing.Usage
				if a := byIndex[f.Answer]; a != nil {
					am, au = a.Model, a.pricingUsage()
				}
				var ok bool
				usd, ok = timeline.BlindCost(tab, t.Model, u, blindFlag(f), am, au)
				if !ok {
					c.BlindCallsUnknown++
					continue
				}
				c.BlindCallsUSD += usd
			default:
				continue
			}
			f.CostUSD = &usd
		}
		if t.ToolTokens.NotRecorded {
			c.DeferralUnknown++
		}
		if k, ok := savedBy[t.Thread]; ok && t.ToolTokens.Saved != 0 {
			if saved, ok := t.DeferralSavedUSD(tab); ok {
				r.TokenSummary.Threads[k].SavedUSD += saved
				c.DeferralSavedUSD += saved
			}
		}
	}
	r.priceMissed()
	r.Costs = c
}

// priceMissed gives each search_partial flag what the turns of its thread
// after it cost until one could call the tool left out (all of the
// thread's remaining turns when none could): the work done without it.
func (r *Report) priceMissed() {
	for i := range r.Turns {
		t := &r.Turns[i]
		for j := range t.Flags {
			f := &t.Flags[j]
			if f.Kind != timeline.FlagSearchPartial {
				continue
			}
			usd := 0.0
			for k := i + 1; k < len(r.Turns); k++ {
				o := &r.Turns[k]
				if o.Thread != t.Thread {
					continue
				}
				if slices.Contains(o.WorkingSet.Names, f.Tool) {
					break
				}
				if o.Cost != nil {
					usd += o.Cost.USD
				}
			}
			f.CostUSD = &usd
		}
	}
}

// blindFlag is the part of f that timeline.BlindCost reads.
func blindFlag(f *Flag) timeline.Flag {
	return timeline.Flag{Kind: f.Kind, Answer: f.Answer, Refused: f.Refused, CallTokens: f.CallTokens, ErrorTokens: f.ErrorTokens, RoundTrip: f.RoundTrip}
}

// costText is a turn's cost for people: "$0.0123", "≈$0.0123" when the
// model was priced as a neighbour in the table, "-" when not priced.
func costText(c *Cost) string {
	if c == nil {
		return "-"
	}
	s := pricing.Format(c.USD, true)
	if c.Estimated {
		s = "≈" + s
	}
	return s
}

// flagCostText is " (cost $X)" for a flag with a cost, else "".
func flagCostText(f Flag) string {
	if f.CostUSD == nil {
		return ""
	}
	return " (cost " + pricing.Format(*f.CostUSD, true) + ")"
}

// costSentences describes r.Costs in a few sentences for the Markdown and
// HTML reports; nil when the report was not priced.
func (r *Report) costSentences() []string {
	c := r.Costs
	if c == nil {
		return nil
	}
	out := []string{fmt.Sprintf("%s in total (%s).", pricing.Format(c.TotalUSD, true), c.Prices)}
	if len(c.Threads) > 1 {
		s := "Per thread:"
		for i, th := range c.Threads {
			if i > 0 {
				s += ","
			}
			s += fmt.Sprintf(" %s %s", th.Thread, pricing.Format(th.USD, true))
		}
		out = append(out, s+".")
	}
	if c.CacheBreaks > 0 {
		out = append(out, fmt.Sprintf("Cache breaks (%d) cost %s of it: %s.", c.CacheBreaks, pricing.Format(c.CacheBreaksUSD, true), BreakCostMeaning))
	}
	if c.BlindCalls > 0 {
		s := fmt.Sprintf("Blind calls (%d) cost %s of it: %s.", c.BlindCalls, pricing.Format(c.BlindCallsUSD, true), BlindCostMeaning)
		if c.BlindCallsUnknown > 0 {
			s += fmt.Sprintf(" %s never answered in the capture %s left out.", numfmt.Count(c.BlindCallsUnknown, "call", "calls"), numfmt.Plural(c.BlindCallsUnknown, "is", "are"))
		}
		out = append(out, s)
	}
	if !c.deferralKnown() {
		out = append(out, capitalize(c.DeferralText())+".")
	} else {
		out = append(out, capitalize(c.DeferralText())+" ("+DeferralCostMeaning+").")
	}
	if len(c.Estimated) > 0 {
		out = append(out, fmt.Sprintf("Not in the price table, priced as a neighbour (≈): %s.", joinComma(c.Estimated)))
	}
	if len(c.Unpriced) > 0 {
		out = append(out, fmt.Sprintf("No price for %s: left out of the sums, or at standard rates for fast mode (add it with --prices FILE).", joinComma(c.Unpriced)))
	}
	return out
}

func joinComma(xs []string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += x
	}
	return s
}

// threadCostText sums the costs of turns: "-" when none was priced, "≈"
// before it when one was estimated.
func threadCostText(turns []*Turn) string {
	var sum float64
	priced, est := false, false
	for _, t := range turns {
		if t.Cost != nil {
			sum += t.Cost.USD
			priced = true
			est = est || t.Cost.Estimated
		}
	}
	if !priced {
		return "-"
	}
	s := pricing.Format(sum, true)
	if est {
		s = "≈" + s
	}
	return s
}

// What the dollar figures of flags and deferral count, for every view to
// print beside them.
const (
	BreakCostMeaning = "the tokens a kept cache would have read, billed again as cache writes or uncached input, less what reading them would have cost"
	BlindCostMeaning = "what the refusals wasted: the output spent on each refused call and the request that carried the error back " +
		"(only the error's own tokens when that request also carried a result that ran); a call the client ran all the same cost nothing"
	DeferralCostMeaning = "the tool-definition tokens deferral kept out of each request, less the search tool and the catalog announcement, " +
		"at the rate that request paid for the start of its prompt"
)

// Mark is how exact a deferral figure is: "≥ " when catalog tools of
// unknown size are left out of it (a lower bound), "≈" when some are
// counted at an estimated size, "" when every size was seen.
func Mark(unknown, estimated int) string {
	return tooltokens.Mark(unknown, estimated)
}

// DeferralText says what deferral saved in the session, dollars and sign
// in words: "deferral saved ≈$0.0174", "deferral cost $0.0040 more than
// inlining every tool", "deferral cost at most $0.0040 more than
// inlining every tool" (tools of unknown size left out).
func (c *Costs) DeferralText() string {
	if c == nil {
		return ""
	}
	if !c.deferralKnown() {
		return "what deferral saved is not known (the transcript does not hold the tools sent)"
	}
	mark := Mark(boolInt(c.DeferralSavedLowerBound), boolInt(c.DeferralSavedEstimated))
	s := SavedPhrase(c.DeferralSavedUSD, mark)
	if c.DeferralUnknown > 0 {
		s += fmt.Sprintf(" (%s made from the transcript left out)", numfmt.Count(c.DeferralUnknown, "turn", "turns"))
	}
	return s
}

// deferralKnown reports whether any turn gave a deferral figure: not when
// every turn was made from a transcript.
func (c *Costs) deferralKnown() bool {
	return c.DeferralUnknown == 0 || c.DeferralSavedUSD != 0 || c.DeferralSavedLowerBound || c.DeferralSavedEstimated
}

// SavedPhrase writes a deferral saving in US dollars with its mark (see
// [Mark]) so that its sign reads as words.
func SavedPhrase(usd float64, mark string) string {
	if usd >= 0 {
		return "deferral saved " + mark + pricing.Format(usd, true)
	}
	cost := pricing.Format(-usd, true)
	switch mark {
	case "≥ ":
		return "deferral cost at most " + cost + " more than inlining every tool"
	case "≈":
		return "deferral cost ≈" + cost + " more than inlining every tool"
	}
	return "deferral cost " + cost + " more than inlining every tool"
}

// TokensText writes a deferral token figure with its mark: "≈2,263",
// "≥ −1,092", "2,263".
func TokensText(n int64, unknown, estimated int) string {
	return tooltokens.TokensText(n, unknown, estimated)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// savedUSDText is a thread's SavedUSD for people, marked as [Mark] says,
// "-" when the report was not priced.
func savedUSDText(r *Report, t ThreadTokens) string {
	if r.Costs == nil {
		return "-"
	}
	return Mark(len(t.Unknown), len(t.Estimated)) + pricing.Format(t.SavedUSD, true)
}

// DeferralSavedUSD prices what deferral saved on t's request: its saved
// tool-definition tokens (ToolTokens.Saved, negative when deferral cost)
// at the rate the request paid for the start of its prompt (cache read,
// cache write or input). ok is false when t's model has no price.
func (t *Turn) DeferralSavedUSD(tab *pricing.Table) (usd float64, ok bool) {
	return tooltokens.SavedUSD(tab, t.Model, t.pricingUsage(), t.ToolTokens.Saved)
}
