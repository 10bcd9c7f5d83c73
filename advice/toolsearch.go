package advice

import (
	"fmt"
	"math"
	"sort"

	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// sessionValue is what deferring tools was worth in one session.
type sessionValue struct {
	f  *Facts
	on bool
	// value is deferral's worth in US dollars: what it saved less what
	// its searches cost (on), or an estimate of that (off).
	value float64
	// share is the deferred tools' size as a percentage of the context
	// window, what ENABLE_TOOL_SEARCH=auto:N compares with N.
	share float64
}

// settingText names the ENABLE_TOOL_SEARCH setting that defers tools in
// the sessions whose share is above n.
func settingText(n int) string {
	switch n {
	case 0:
		return "ENABLE_TOOL_SEARCH=true"
	case 100:
		return "ENABLE_TOOL_SEARCH=false"
	}
	return fmt.Sprintf("ENABLE_TOOL_SEARCH=auto:%d", n)
}

// toolSearch advises the ENABLE_TOOL_SEARCH setting that would have cost
// least over the sessions: always deferring, never, or deferring past a
// share of the context window (auto:N).
func (a *adviser) toolSearch() {
	var searchTool int64
	for _, f := range a.fs {
		searchTool = max(searchTool, f.Deferral.SearchToolTokens)
	}
	var vs []sessionValue
	offUnsized := false
	for _, f := range a.fs {
		d := f.Deferral
		if d.Mode == "" || !d.Known || d.PoolTokens <= 0 {
			continue
		}
		v := sessionValue{f: f, on: d.Mode == ModeOn, share: float64(d.PoolTokens) * 100 / float64(max(d.Window, 1))}
		if v.on {
			v.value = d.SavedUSD - d.SearchUSD
		} else {
			v.value = d.GrossUSD - float64(searchTool)*d.RateSum/1e6 - d.RoundTripUSD
			offUnsized = offUnsized || searchTool == 0
		}
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return
	}
	worth := func(n int) float64 {
		sum := 0.0
		for _, v := range vs {
			if v.share > float64(n) {
				sum += v.value
			}
		}
		return sum
	}
	current := 0.0
	for _, v := range vs {
		if v.on {
			current += v.value
		}
	}
	// The candidates: always, never, and a threshold at each session's
	// share; the default (always) first, then never, then the lowest N,
	// win ties.
	cands := []int{0, 100}
	for _, v := range vs {
		for _, n := range []int{int(math.Floor(v.share)), int(math.Ceil(v.share))} {
			if n > 0 && n < 100 {
				cands = append(cands, n)
			}
		}
	}
	sort.Ints(cands[2:])
	best, bestWorth := 0, worth(0)
	for _, n := range cands[1:] {
		if w := worth(n); w > bestWorth+1e-9 {
			best, bestWorth = n, w
		}
	}
	gain := bestWorth - current
	var changed []sessionValue
	for _, v := range vs {
		if (v.share > float64(best)) != v.on {
			changed = append(changed, v)
		}
	}
	setting := settingText(best)
	if len(changed) == 0 || gain <= 0 {
		return
	}
	if !a.enough(KindToolSearch, setting, len(changed)) {
		return
	}
	var ev []Evidence
	toOn, toOff := 0, 0
	for _, v := range changed {
		g := v.value
		note := fmt.Sprintf("tool search on, deferred tools %.1f %% of the window; deferral was worth %s", v.share, usd(v.value))
		if v.on {
			g = -v.value
			toOff++
		} else {
			note = fmt.Sprintf("tool search off, deferrable tools %.1f %% of the window; deferring would have been worth ≈%s", v.share, usd(v.value))
			toOn++
		}
		ev = append(ev, Evidence{Session: v.f.ID, Project: v.f.Project, USD: g, Note: note})
	}
	adv := Advice{Kind: KindToolSearch, Subject: setting, Sessions: len(changed), Of: len(vs),
		SavesUSD: gain, PerSessionUSD: gain / float64(len(changed)), Evidence: evidence(ev),
		Assumes: "deferral's worth in a session is the tool-definition tokens it kept out of each request less the search tool and the catalog lines, less what its searches cost; where tool search was off, the same estimated from the schemas of the MCP tools and Claude Code's own deferrable tools sent whole, with one search per such tool and thread called, its round trip priced as the calling request's prompt read from the cache; auto:N defers when the deferred tools exceed N % of the context window (200k tokens, 1M with the 1M-context beta).",
	}
	switch {
	case best == 100:
		adv.Title = "Turn tool search off: " + setting
		adv.Why = fmt.Sprintf("In %s with tool search on, deferring tools cost more than it saved: the deferred tools are small, and the searches and the search tool cost more than their schemas would.", numfmt.Count(toOff, "session", "sessions"))
		adv.Do = "Set ENABLE_TOOL_SEARCH=false in the environment (or the env block of settings.json) of these projects: every tool is then sent whole, and nothing needs a search."
	case best == 0:
		adv.Title = "Turn tool search on: " + setting
		adv.Why = fmt.Sprintf("In %s, tool search was off and the MCP tools (and Claude Code's own deferrable tools) were sent whole in every request; deferring them would have cost less.", numfmt.Count(toOn, "session", "sessions"))
		adv.Do = "Leave ENABLE_TOOL_SEARCH unset or set it to true (behind a proxy or gateway set in ANTHROPIC_BASE_URL Claude Code turns it off unless it is set)."
	default:
		adv.Title = "Defer tools only past a threshold: " + setting
		adv.Why = fmt.Sprintf("Deferring paid in the sessions with many tools and cost in those with few: %s would have changed %s (%d to tool search on, %d to off).",
			setting, numfmt.Count(len(changed), "session", "sessions"), toOn, toOff)
		adv.Do = fmt.Sprintf("Set %s in the environment (or the env block of settings.json): Claude Code then defers tools only when their definitions exceed %d %% of the context window.", setting, best)
	}
	adv.Figures = []string{
		fmt.Sprintf("deferral as it ran was worth %s over the %s with tool search on; with %s it would have been worth %s", usd(current), numfmt.Count(countOn(vs), "session", "sessions"), setting, usd(bestWorth)),
	}
	if offUnsized && toOn > 0 {
		adv.Figures = append(adv.Figures, "no session sent the search tool's definition, so the estimates for sessions with tool search off leave it out")
		adv.Estimated = true
	}
	if toOn > 0 {
		adv.Estimated = true
	}
	a.r.Advice = append(a.r.Advice, adv)
}

func countOn(vs []sessionValue) int {
	n := 0
	for _, v := range vs {
		if v.on {
			n++
		}
	}
	return n
}
