package recording

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
)

// TurnLog tells, as a recording goes, what each Messages turn cost: its
// tokens and dollars, and the session's running total. It reads only the
// request's model and the response of each exchange, in the recorder's
// writer, never on the proxy's path.
type TurnLog struct {
	prices *pricing.Table

	mu     sync.Mutex
	turns  int
	total  float64
	priced bool
	est    bool              // a model was priced as a neighbour in the table
	as     map[string]string // such a model, and the one it was priced as
}

func NewTurnLog(prices *pricing.Table) *TurnLog { return &TurnLog{prices: prices} }

// describe returns what a completed Messages exchange cost, for its line
// ("turn 3 opus-5-5: 12,086 read, 76 written, 46 out, ≈$0.0077; ≈$0.0917
// in all"), and "" for an exchange that is no Messages turn or is still
// under way.
func (l *TurnLog) Describe(ex *exchange.Exchange) string {
	if ex.State == exchange.StateInFlight {
		return ""
	}
	b := decode.DecodeBill(ex)
	if !b.Messages {
		return ""
	}
	u := b.Response.Usage
	c, p, ok := l.prices.Cost(b.Model, timeline.PricingUsage(u))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.turns++
	var parts []string
	if u.InputTokens > 0 || u.CacheReadInputTokens+u.CacheCreationInputTokens == 0 {
		parts = append(parts, numfmt.Thousands(u.InputTokens)+" in")
	}
	if u.CacheReadInputTokens > 0 {
		parts = append(parts, numfmt.Thousands(u.CacheReadInputTokens)+" read")
	}
	if u.CacheCreationInputTokens > 0 {
		parts = append(parts, numfmt.Thousands(u.CacheCreationInputTokens)+" written")
	}
	parts = append(parts, numfmt.Thousands(u.OutputTokens)+" out")
	s := fmt.Sprintf("turn %d %s: %s", l.turns, orDash(decode.ShortModel(b.Model)), strings.Join(parts, ", "))
	if ok {
		l.total += c.Total
		l.priced = true
		l.est = l.est || p.Estimated
		if p.Estimated {
			if l.as == nil {
				l.as = map[string]string{}
			}
			l.as[b.Model] = p.Model.Model
		}
		s += ", " + approx(p.Estimated) + pricing.Format(c.Total, true)
	} else if b.Model != "" {
		s += ", no price for " + b.Model
	}
	if l.priced {
		s += "; " + approx(l.est) + pricing.Format(l.total, true) + " in all"
	}
	return s
}

// summary is the session's total for the end of a recording, "" when no
// turn was priced.
func (l *TurnLog) Summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.priced {
		return ""
	}
	why := l.prices.Describe()
	if len(l.as) > 0 {
		var as []string
		for m, p := range l.as {
			as = append(as, m+" priced as "+p)
		}
		sort.Strings(as)
		why = "≈: " + strings.Join(as, ", ") + "; " + why
	}
	return fmt.Sprintf("%s over %s (%s)", approx(l.est)+pricing.Format(l.total, true), numfmt.Count(l.turns, "Messages turn", "Messages turns"), why)
}

// approx is "≈" for a figure that priced a model as another of its
// family.
func approx(b bool) string {
	if b {
		return "≈"
	}
	return ""
}

// orDash is s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
