package sessionfiles

import (
	"slices"
	"sort"

	"github.com/tsinspect/tsinspect/pricing"
)

// Priced is what a session, or some of its answers, cost at a price table.
type Priced struct {
	// USD sums the priced answers; BreaksUSD what the cache breaks cost of
	// it (their lost tokens billed again instead of read).
	USD       float64
	BreaksUSD float64
	// PricedAs lists the models priced as a neighbour in the table, as
	// "MODEL as PRICED_AS": their cost is an estimate.
	PricedAs []string
	// Unpriced lists the models with no price (their answers are left out
	// of USD) and "MODEL (fast mode)" for fast-mode answers of a model with
	// no fast-mode price (counted at standard rates): USD is then a lower
	// bound.
	Unpriced []string
}

// Known reports whether every answer had its whole price.
func (p Priced) Known() bool { return len(p.Unpriced) == 0 }

// add prices one answer into p.
func (p *Priced) add(tab *pricing.Table, u TurnUsage) {
	if pricing.NotAModel(u.Model) {
		return // Claude Code's own messages: never billed
	}
	c, pr, ok := tab.Cost(u.Model, u.pricing())
	if !ok {
		p.Unpriced = appendNew(p.Unpriced, u.Model)
		return
	}
	if pr.Estimated {
		p.PricedAs = appendNew(p.PricedAs, u.Model+" as "+pr.Model.Model)
	}
	if c.FastUnpriced {
		p.Unpriced = appendNew(p.Unpriced, u.Model+" (fast mode)")
	}
	p.USD += c.Total
}

func appendNew(ss []string, s string) []string {
	if slices.Contains(ss, s) {
		return ss
	}
	ss = append(ss, s)
	sort.Strings(ss)
	return ss
}

// Cost prices the session's answers and its cache breaks with tab.
func (s *Summary) Cost(tab *pricing.Table) Priced {
	var p Priced
	for _, u := range s.Usage {
		p.add(tab, u)
	}
	for _, b := range s.Breaks {
		if b.Turn < 0 || b.Turn >= len(s.Usage) {
			continue
		}
		u := s.Usage[b.Turn]
		if c, priced := tab.BreakCost(u.Model, u.pricing(), b.Lost); priced {
			p.BreaksUSD += c
		}
	}
	return p
}

// pricing is what the price table bills for the answer.
func (u TurnUsage) pricing() pricing.Usage {
	return pricing.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite5m: u.CacheWrite5m, CacheWrite1h: u.CacheWrite1h,
		Speed: u.Speed, WebSearches: u.WebSearches, At: u.At}
}

// Tokens sums the usage: input, output, cache reads and cache writes.
func (s *Summary) Tokens() (in, out, read, write int64) {
	for _, u := range s.Usage {
		in += u.Input
		out += u.Output
		read += u.CacheRead
		write += u.CacheWrite5m + u.CacheWrite1h
	}
	return
}

// Pricing is what the price table bills for the answer (as Cost prices
// it): for a front end that prices the answers one by one.
func (u TurnUsage) Pricing() pricing.Usage { return u.pricing() }
