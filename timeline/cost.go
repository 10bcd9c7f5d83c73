package timeline

import (
	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/pricing"
)

// PricingUsage converts a response's usage to what [pricing] bills. Cache
// writes without a TTL breakdown count as 5-minute writes.
func PricingUsage(u decode.Usage) pricing.Usage {
	pu := pricing.Usage{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadInputTokens}
	if cc := u.CacheCreation; cc != nil && cc.Ephemeral5m+cc.Ephemeral1h == u.CacheCreationInputTokens {
		pu.CacheWrite5m, pu.CacheWrite1h = cc.Ephemeral5m, cc.Ephemeral1h
	} else {
		pu.CacheWrite5m = u.CacheCreationInputTokens
	}
	return pu
}

// TurnCost prices a turn's usage under its request's model. ok is false
// when there is no table, no decoded turn or no price for the model.
func TurnCost(tab *pricing.Table, t *Turn) (c pricing.Cost, p pricing.Price, ok bool) {
	if tab == nil || t == nil || t.Decoded == nil {
		return pricing.Cost{}, pricing.Price{}, false
	}
	return tab.Cost(t.Decoded.Request.Model, PricingUsage(t.Decoded.Response.Usage))
}

// FlagCost is what a flag cost in US dollars: for a cache_break, its
// tokens_lost written to the cache again instead of read from it
// ([pricing.Table.BreakCost]); for a call_before_load or unknown_tool (a
// blind call), the whole turn whose response made the call, since Claude
// Code refuses the call and the model has to search and call again. ok is
// false for other kinds, or when the turn has no price.
func FlagCost(tab *pricing.Table, t *Turn, f Flag) (usd float64, ok bool) {
	c, _, ok := TurnCost(tab, t)
	if !ok {
		return 0, false
	}
	switch f.Kind {
	case FlagCacheBreak:
		return tab.BreakCost(t.Decoded.Request.Model, PricingUsage(t.Decoded.Response.Usage), f.TokensLost)
	case FlagCallBeforeLoad, FlagUnknownTool:
		return c.Total, true
	}
	return 0, false
}
