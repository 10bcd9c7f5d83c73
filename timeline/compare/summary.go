package compare

import (
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/timeline"
)

// totals are a session's figures.
type totals struct {
	turns, threads                       int
	models, clients                      []string
	cost                                 float64
	priced                               bool
	input, output, cacheRead, cacheWrite int64
	searches, emptySearches              int
	flags                                map[string]int
	cacheBreaksUSD, blindUSD             float64
	threadKinds                          map[string]int
	unpricedTurns                        int
}

func totalsOf(s Side, fs map[int]*facts) totals {
	t := totals{threads: len(s.Session.Threads), flags: map[string]int{}, threadKinds: map[string]int{},
		cacheBreaksUSD: s.CacheBreaksUSD, blindUSD: s.BlindCallsUSD, priced: s.Cost != nil}
	for _, th := range s.Session.Threads {
		t.threadKinds[th.Kind]++
	}
	for _, tu := range s.Session.Turns {
		f := fs[tu.Index]
		if f == nil {
			continue
		}
		t.turns++
		if f.model != "" && !contains(t.models, f.model) {
			t.models = append(t.models, f.model)
		}
		if c := tu.Client.String(); !contains(t.clients, c) {
			t.clients = append(t.clients, c)
		}
		if f.priced {
			t.cost += f.cost
		} else {
			t.unpricedTurns++
		}
		t.input += f.usage.InputTokens
		t.output += f.usage.OutputTokens
		t.cacheRead += f.usage.CacheReadInputTokens
		t.cacheWrite += f.usage.CacheCreationInputTokens
		for _, sr := range tu.NewSearches {
			t.searches++
			if sr.HasResult && len(sr.Results) == 0 {
				t.emptySearches++
			}
		}
		for _, k := range f.flags {
			t.flags[k]++
		}
	}
	return t
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// summary lists the figures of a and b side by side.
func summary(a, b Side, fa, fb map[int]*facts) []Figure {
	ta, tb := totalsOf(a, fa), totalsOf(b, fb)
	var out []Figure
	num := func(name, unit string, x, y float64) {
		out = append(out, Figure{Name: name, Unit: unit, A: x, B: y, Differs: x != y})
	}
	list := func(name string, x, y []string) {
		xs, ys := strings.Join(x, ", "), strings.Join(y, ", ")
		out = append(out, Figure{Name: name, Unit: UnitList, AText: xs, BText: ys, Differs: xs != ys})
	}
	num("turns", UnitCount, float64(ta.turns), float64(tb.turns))
	num("threads", UnitCount, float64(ta.threads), float64(tb.threads))
	kinds := map[string]bool{}
	for k := range ta.threadKinds {
		kinds[k] = true
	}
	for k := range tb.threadKinds {
		kinds[k] = true
	}
	for _, k := range []string{timeline.KindSubagent, timeline.KindSide, timeline.KindConversation} {
		if kinds[k] {
			num("  "+k+" threads", UnitCount, float64(ta.threadKinds[k]), float64(tb.threadKinds[k]))
		}
	}
	list("models", ta.models, tb.models)
	list("clients", ta.clients, tb.clients)
	if ta.priced || tb.priced {
		num("cost", UnitUSD, ta.cost, tb.cost)
		num("  of it cache breaks", UnitUSD, ta.cacheBreaksUSD, tb.cacheBreaksUSD)
		num("  of it blind calls", UnitUSD, ta.blindUSD, tb.blindUSD)
	}
	num("input tokens", UnitTokens, float64(ta.input), float64(tb.input))
	num("cache read", UnitTokens, float64(ta.cacheRead), float64(tb.cacheRead))
	num("cache write", UnitTokens, float64(ta.cacheWrite), float64(tb.cacheWrite))
	num("output tokens", UnitTokens, float64(ta.output), float64(tb.output))
	num("searches", UnitCount, float64(ta.searches), float64(tb.searches))
	num("  empty", UnitCount, float64(ta.emptySearches), float64(tb.emptySearches))
	var fk []string
	for k := range ta.flags {
		fk = append(fk, k)
	}
	for k := range tb.flags {
		if _, ok := ta.flags[k]; !ok {
			fk = append(fk, k)
		}
	}
	sort.Strings(fk)
	for _, k := range fk {
		num("flags "+k, UnitCount, float64(ta.flags[k]), float64(tb.flags[k]))
	}
	return out
}
