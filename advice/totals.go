package advice

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/timeline"
)

// Total is what one kind of pattern cost over all the sessions read,
// advised or not. Part names the total it is a part of ("" for a whole).
type Total struct {
	Name    string  `json:"name"`
	Part    string  `json:"part_of,omitempty"`
	CostUSD float64 `json:"cost_usd"`
	Count   int     `json:"count"`
}

// Names of the totals.
const (
	TotalBreaks      = "cache breaks"
	TotalAfterLoads  = "after tool loads"
	TotalPausesHour  = "pauses a 1-hour cache would have survived"
	TotalPausesLong  = "pauses nothing would have survived"
	TotalBlind       = "blind calls"
	TotalEmpty       = "searches that found nothing"
	TotalPartial     = "searches that left tools out"
	TotalSearchTrips = "tool searches' round trips"
)

// hourSeconds is an hour, the longest cache lifetime.
const hourSeconds = 3600

// Pause classes of a ttl_expired break (pauseClass).
const (
	// pauseHour: the pause was within an hour and the cache lived 5
	// minutes (or its lifetime is not known): a 1-hour cache would have
	// survived it.
	pauseHour = "hour"
	// pauseLong: the pause was longer than an hour (or its length is not
	// known), or the cache already lived an hour: nothing would have
	// survived it.
	pauseLong = "long"
)

// pauseClass says what would have survived a ttl_expired break: "" for
// another cause.
func pauseClass(b Break) string {
	if b.Cause != timeline.CauseTTL {
		return ""
	}
	if b.GapSeconds > 0 && b.GapSeconds <= hourSeconds && b.Lifetime != Life1h {
		return pauseHour
	}
	return pauseLong
}

// totals sums what each kind of pattern cost over fs.
func totals(fs []*Facts) []Total {
	byName := map[string]*Total{}
	add := func(name, part string, usd float64) {
		t := byName[name]
		if t == nil {
			t = &Total{Name: name, Part: part}
			byName[name] = t
		}
		t.CostUSD += usd
		t.Count++
	}
	for _, f := range fs {
		for _, b := range f.Breaks {
			add(TotalBreaks, "", b.USD)
			switch {
			case len(b.Loaded) > 0:
				add(TotalAfterLoads, TotalBreaks, b.USD)
			case pauseClass(b) == pauseHour:
				add(TotalPausesHour, TotalBreaks, b.USD)
			case pauseClass(b) == pauseLong:
				add(TotalPausesLong, TotalBreaks, b.USD)
			}
		}
		for _, b := range f.Blind {
			add(TotalBlind, "", b.USD)
		}
		for _, q := range f.Searches {
			if q.Kind == timeline.FlagSearchPartial {
				add(TotalPartial, "", q.RoundTripUSD)
			} else {
				add(TotalEmpty, "", q.RoundTripUSD)
			}
		}
		if d := f.Deferral; d.Searches > 0 {
			t := byName[TotalSearchTrips]
			if t == nil {
				t = &Total{Name: TotalSearchTrips}
				byName[TotalSearchTrips] = t
			}
			t.CostUSD += d.SearchUSD
			t.Count += d.Searches
		}
	}
	out := make([]Total, 0, len(byName))
	for _, t := range byName {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CostUSD != out[j].CostUSD {
			return out[i].CostUSD > out[j].CostUSD
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// TotalsText says the totals in one line: "cache breaks $35.86 (of
// which after tool loads $0.55, …), blind calls $0.01, …".
func (r *Result) TotalsText() string {
	var parts []string
	for _, t := range r.Totals {
		if t.Part != "" {
			continue
		}
		s := fmt.Sprintf("%s %s", t.Name, usd(t.CostUSD))
		var subs []string
		for _, p := range r.Totals {
			if p.Part == t.Name {
				subs = append(subs, fmt.Sprintf("%s %s", p.Name, usd(p.CostUSD)))
			}
		}
		if len(subs) > 0 {
			s += " (of which " + strings.Join(subs, ", ") + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return ""
	}
	return "What each kind cost: " + strings.Join(parts, "; ") + "."
}
