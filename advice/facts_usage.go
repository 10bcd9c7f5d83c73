package advice

import (
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
)

// ToolUse is what one tool's calls did in a session, for every tool
// called (Claude Code's own too): its calls, the error results, and the
// size of its results.
type ToolUse struct {
	Name   string `json:"name"`
	Calls  int    `json:"calls"`
	Errors int    `json:"errors,omitempty"`
	// ResultTokens estimates its results' size (their text at the
	// request's bytes per token, see timeline.Estimates); ResultUSD
	// prices each result once, at the rate the request that carried it
	// wrote its new tokens (the 1-hour or 5-minute cache write, else
	// input): later requests read it from the cache, not counted here.
	ResultTokens int64   `json:"result_tokens,omitempty"`
	ResultUSD    float64 `json:"result_usd,omitempty"`
}

// writeRate is the rate turn t paid for the tokens it wrote, in US
// dollars per million: its cache writes' (1-hour when it wrote any for
// an hour), else input; 0 without a price.
func writeRate(tab *pricing.Table, t *timeline.Turn) float64 {
	if tab == nil {
		return 0
	}
	r, ok := tab.Rates(t.Decoded.Request.Model, usageOf(t))
	if !ok {
		return 0
	}
	u := t.Decoded.Response.Usage
	switch {
	case u.CacheCreation != nil && u.CacheCreation.Ephemeral1h > 0:
		return r.CacheWrite1h
	case u.CacheCreationInputTokens > 0:
		return r.CacheWrite5m
	}
	return r.Input
}

// toolUse counts each tool's calls and results over the session: a
// result is found in the request after the call's and counted once.
func (x *extractor) toolUse() {
	byName := map[string]*ToolUse{}
	var order []string
	use := func(name string) *ToolUse {
		u := byName[name]
		if u == nil {
			u = &ToolUse{Name: name}
			byName[name] = u
			order = append(order, name)
		}
		return u
	}
	callName := map[string]string{} // tool_use id: tool
	seen := map[string]bool{}       // results counted
	est := timeline.NewEstimates()
	for _, t := range x.s.Turns {
		if !messages(t) {
			continue
		}
		d := t.Decoded
		rate, _ := est.PromptRate(d)
		wr := 0.0
		if billed(t) {
			wr = writeRate(x.tab, t)
		}
		for _, r := range d.LastUser.ToolResults {
			name, ok := callName[r.ToolUseID]
			if !ok || seen[r.ToolUseID] {
				continue
			}
			seen[r.ToolUseID] = true
			u := use(name)
			if r.IsError {
				u.Errors++
			}
			n := timeline.Tokens(len(r.Text()), rate)
			u.ResultTokens += n
			u.ResultUSD += float64(n) * wr / 1e6
		}
		for _, c := range d.ToolCalls {
			if c.Server || c.ID == "" {
				continue
			}
			if _, ok := callName[c.ID]; ok {
				continue // the same response again (a retry)
			}
			callName[c.ID] = c.Name
			use(c.Name).Calls++
		}
	}
	for _, name := range order {
		x.f.Uses = append(x.f.Uses, *byName[name])
	}
}
