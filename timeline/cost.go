package timeline

import (
	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/pricing"
)

// PricingUsage converts a response's usage to what [pricing] bills: its
// tokens, fast mode and web searches. Cache writes without a TTL
// breakdown count as 5-minute writes.
func PricingUsage(u decode.Usage) pricing.Usage {
	pu := pricing.Usage{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadInputTokens,
		Speed: u.Speed, WebSearches: u.WebSearchRequests}
	var w5m, w1h int64
	if cc := u.CacheCreation; cc != nil {
		w5m, w1h = cc.Ephemeral5m, cc.Ephemeral1h
	}
	pu.CacheWrite5m, pu.CacheWrite1h = pricing.SplitCacheWrites(u.CacheCreationInputTokens, w5m, w1h)
	return pu
}

// TurnCost prices a turn's usage under its request's model. ok is false
// when there is no table, no decoded turn or no price for the model.
func TurnCost(tab *pricing.Table, t *Turn) (c pricing.Cost, p pricing.Price, ok bool) {
	if tab == nil || t == nil || t.Decoded == nil {
		return pricing.Cost{}, pricing.Price{}, false
	}
	return tab.Cost(t.Decoded.Request.Model, turnUsage(t))
}

// turnUsage is what pricing bills for turn t: its usage, made when its
// request was sent (which chooses between a model's dated rates).
func turnUsage(t *Turn) pricing.Usage {
	u := PricingUsage(t.Decoded.Response.Usage)
	if t.Exchange != nil {
		u.At = t.Exchange.Start
	}
	return u
}

// FlagCost is what a flag of turn t of session s cost in US dollars:
// for a cache_break, its tokens_lost billed again instead of read
// ([pricing.Table.BreakCost]); for a blind call (call_before_load,
// unknown_tool), what the refusal wasted ([BlindCost]). ok is false for
// other kinds, when the turn has no price, or when the capture does not
// hold the turn that answered a blind call.
func FlagCost(tab *pricing.Table, s *Session, t *Turn, f Flag) (usd float64, ok bool) {
	if _, _, ok := TurnCost(tab, t); !ok {
		return 0, false
	}
	u := turnUsage(t)
	switch f.Kind {
	case FlagCacheBreak:
		return tab.BreakCost(t.Decoded.Request.Model, u, f.TokensLost)
	case FlagSearchPartial:
		return missedCost(tab, s, t, f.Tool)
	case FlagCallBeforeLoad, FlagUnknownTool:
		var am string
		var au pricing.Usage
		if a := s.Turn(f.Answer); a != nil && a.Decoded != nil {
			am, au = a.Decoded.Request.Model, turnUsage(a)
		}
		return BlindCost(tab, t.Decoded.Request.Model, u, f, am, au)
	}
	return 0, false
}

// BlindCost is what a blind call wasted, in US dollars: nothing when the
// client ran it all the same; when it refused it, the output tokens the
// model spent on the call (at the output rate of model, the turn's) and
// the price of the error: the whole request that carried it back
// (answerModel, answer: its model and usage) when that request was made
// for refused calls alone (f.RoundTrip), else the error result's own
// tokens at the rate that request paid for the newest part of its
// prompt. A schema loaded in time would have spared both. ok is false
// when the call was never answered in the capture, or a model has no
// price.
func BlindCost(tab *pricing.Table, model string, u pricing.Usage, f Flag, answerModel string, answer pricing.Usage) (usd float64, ok bool) {
	if tab == nil || f.Answer == 0 {
		return 0, false
	}
	if !f.Refused {
		return 0, true
	}
	r, ok := tab.Rates(model, u)
	if !ok {
		return 0, false
	}
	usd = float64(f.CallTokens) * r.Output / 1e6
	if f.RoundTrip {
		c, _, ok := tab.Cost(answerModel, answer)
		if !ok {
			return 0, false
		}
		return usd + c.Total - c.Output, true
	}
	rate, ok := tab.TailRate(answerModel, answer)
	if !ok {
		return 0, false
	}
	return usd + float64(f.ErrorTokens)*rate/1e6, true
}

// missedCost is what the turns of t's thread after t cost until one could
// call tool (all of the thread's remaining turns when none could): the
// work the model did without the tool a search left out. Unpriced turns
// are left out.
func missedCost(tab *pricing.Table, s *Session, t *Turn, tool string) (float64, bool) {
	usd := 0.0
	for _, o := range s.Turns {
		if o.Index <= t.Index || o.Thread != t.Thread || o.Decoded == nil {
			continue
		}
		if o.Decoded.InWorkingSet(tool) {
			break
		}
		if c, _, ok := TurnCost(tab, o); ok {
			usd += c.Total
		}
	}
	return usd, true
}
