package redact

import (
	"strings"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/report"
	"github.com/tsinspect/tsinspect/timeline"
)

// Report builds the report of a capture read into b (its count_tokens
// exchanges with their bodies), priced with tab, and returns it whole and
// as it may be shared under policy p: with p Off, the conversation is
// added and nothing is taken out. version is tsinspect's.
func Report(b *timeline.Builder, version string, tab *pricing.Table, p Policy) (full, shared *report.Report) {
	s := b.Session()
	exs := b.Exchanges()
	// count_tokens exchanges keep their bodies in the builder.
	var counted []exchange.Exchange
	for _, ex := range exs {
		if strings.Contains(ex.URL, "count_tokens") {
			counted = append(counted, *ex)
		}
	}
	known, _ := knownOf(exs, s)
	r := report.BuildWithCounts(s, version, report.CountTokens(counted))
	r.Price(tab)
	if p == Off {
		r.AddConversation(s) // what was said: never in a redacted report
	}
	return r, Apply(r, p, known)
}
