package advice

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// Claude Code's cache-lifetime settings, as the releases named here hold
// them (see docs/advise.md, "Sources").
const (
	// ttlSettingFrom is the oldest release in which the promptCacheTtl
	// setting and CLAUDE_CODE_PROMPT_CACHE_TTL were verified.
	ttlSettingFrom = "2.1.299"
	// verifiedReleases names every release they, and the MCP
	// configuration's per-server alwaysLoad, were verified in.
	verifiedReleases = "2.1.299, 2.1.328 and 2.1.332"
	// hourHow says how to turn the 1-hour cache on.
	hourHow = "Set `\"promptCacheTtl\": \"1h\"` in settings.json (`\"subagentPromptCacheTtl\": \"1h\"` for subagents), or CLAUDE_CODE_PROMPT_CACHE_TTL=1h (CLAUDE_CODE_SUBAGENT_PROMPT_CACHE_TTL) in the environment; ENABLE_PROMPT_CACHING_1H=1 does it too where neither is set, and FORCE_PROMPT_CACHING_5M overrides them all. Verified in Claude Code " + verifiedReleases + ", whose default is 1 hour on a Claude subscription within its usage limits and 5 minutes on an API key, Bedrock, Vertex or Foundry."
)

// oldReleases lists the releases of fs's sessions older than from.
func oldReleases(fs []*Facts, from string) []string {
	var out []string
	for _, f := range fs {
		for _, r := range f.Releases {
			if exchange.CompareVersions(r, from) < 0 && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.SortFunc(out, exchange.CompareVersions)
	return out
}

// pauses advises on the cache breaks of pauses longer than the cache's
// lifetime: those a 1-hour cache would have survived (within an hour,
// on a 5-minute cache), with what the 1-hour writes would have cost
// instead; those nothing would have survived (over an hour); and threads
// whose lifetime changed mid-session.
func (a *adviser) pauses() {
	type group struct {
		hits  map[*Facts][]Break
		usd   float64
		toks  int64
		n     int
		lost  float64 // the longest pause, in seconds
		short float64 // the shortest
	}
	groups := map[string]*group{pauseHour: {hits: map[*Facts][]Break{}}, pauseLong: {hits: map[*Facts][]Break{}}}
	for _, f := range a.fs {
		for _, b := range f.Breaks {
			c := pauseClass(b)
			if c == "" || len(b.Loaded) > 0 {
				continue
			}
			g := groups[c]
			g.hits[f] = append(g.hits[f], b)
			g.usd += b.USD
			g.toks += b.TokensLost
			g.n++
			g.lost = max(g.lost, b.GapSeconds)
			if g.short == 0 || b.GapSeconds > 0 && b.GapSeconds < g.short {
				g.short = b.GapSeconds
			}
		}
	}
	evOf := func(g *group) []Evidence {
		return breakEvidence(a.fs, g.hits, func(bs []Break) string {
			var gaps []string
			for _, b := range bs[:min(len(bs), 4)] {
				gaps = append(gaps, minutes(b.GapSeconds))
			}
			return "pauses of " + strings.Join(gaps, ", ")
		})
	}
	if g := groups[pauseHour]; g.n > 0 && a.enough(KindPauses, "pauses within an hour", len(g.hits)) {
		// A 1-hour cache costs more on every 5-minute write of every
		// session read, not only of those that paused.
		var extra float64
		var written int64
		for _, f := range a.fs {
			extra += f.Cache.Extra1hUSD
			written += f.Cache.Write5m
		}
		adv := Advice{Kind: KindPauses, Subject: "pauses within an hour", Sessions: len(g.hits), Of: len(a.fs),
			CostUSD: g.usd, Tokens: g.toks, PerSessionUSD: g.usd / float64(len(g.hits)),
			Why: fmt.Sprintf("%s of %s to %s passed between two requests of a thread whose cache lived 5 minutes (its usage's cache_creation wrote ephemeral_5m tokens, or did not split its writes), and the cached prompt was written again; a 1-hour cache would have been read instead.",
				numfmt.Count(g.n, "pause", "pauses"), minutes(g.short), minutes(g.lost)),
			Figures: []string{
				fmt.Sprintf("%s: %s tokens written again instead of read, %s", numfmt.Count(g.n, "break", "breaks"), tokens(g.toks), usd(g.usd)),
				fmt.Sprintf("a 1-hour cache would have cost %s more: the %s tokens all the sessions read wrote for 5 minutes, at the 1-hour write rate (2× the input price) instead of the 5-minute one (1.25×)", usd(extra), tokens(written)),
			},
			Assumes:  "a 1-hour cache survives every pause up to an hour, and every 5-minute write of every session read would have been written for an hour instead; pauses over an hour are not counted here (nothing survives them).",
			Evidence: evOf(g),
		}
		if save := g.usd - extra; save > 0 {
			adv.SavesUSD = save
			adv.Title = "Turn on the 1-hour cache"
			adv.Do = hourHow
			adv.Figures = append(adv.Figures, fmt.Sprintf("the breaks' %s less the dearer writes' %s: %s saved", usd(g.usd), usd(extra), usd(save)))
		} else {
			adv.Title = "Pauses of 5 to 60 minutes: the 1-hour cache would cost more than they did"
			adv.Do = "Keep the 5-minute cache: the 1-hour one would have cost more on its writes than these pauses cost. Should long pauses grow common, weigh it again (how to turn it on: " + strings.TrimSuffix(hourHow, ".") + ")."
		}
		if old := oldReleases(fs(g.hits), ttlSettingFrom); len(old) > 0 && adv.SavesUSD > 0 {
			adv.Do += fmt.Sprintf(" These sessions ran Claude Code %s, older than the releases the setting was verified in: upgrade first.", strings.Join(old, ", "))
		}
		a.r.Advice = append(a.r.Advice, adv)
	}
	if g := groups[pauseLong]; g.n > 0 && a.enough(KindPauses, "pauses over an hour", len(g.hits)) {
		a.r.Advice = append(a.r.Advice, Advice{Kind: KindPauses, Subject: "pauses over an hour", Sessions: len(g.hits), Of: len(a.fs),
			Title:   "Pauses no cache survives: compact before a long break",
			CostUSD: g.usd, Tokens: g.toks, PerSessionUSD: g.usd / float64(len(g.hits)),
			Why: fmt.Sprintf("%s of up to %s (over an hour, or past a 1-hour cache's lifetime; a pause whose length the files do not tell is counted here) expired the cache, and the whole prompt was written again: no lifetime the API offers survives them.",
				numfmt.Count(g.n, "pause", "pauses"), minutes(g.lost)),
			Do:       "Nothing keeps a cache over such a pause. What it costs is the prompt's size: /compact before leaving a long session for hours, or start the next task in a new session, and the prompt written again is small.",
			Figures:  []string{fmt.Sprintf("%s: %s tokens written again, %s; none of it is recoverable by a setting", numfmt.Count(g.n, "break", "breaks"), tokens(g.toks), usd(g.usd))},
			Assumes:  "the lost tokens would have been read at the cache-read rate had the cache lived; no cache lives over an hour, so nothing here is counted as a saving.",
			Evidence: evOf(g),
		})
	}
	a.lifetimeChanges()
}

// lifetimeChanges names the sessions whose threads changed cache
// lifetime mid-session.
func (a *adviser) lifetimeChanges() {
	hits := map[*Facts][]LifetimeChange{}
	down := 0
	for _, f := range a.fs {
		for _, c := range f.Cache.Changes {
			hits[f] = append(hits[f], c)
			if c.From == Life1h && c.To == Life5m {
				down++
			}
		}
	}
	if len(hits) == 0 || !a.enough(KindPauses, "lifetime changed mid-session", len(hits)) {
		return
	}
	var ev []Evidence
	var rels []string
	var cost float64
	for _, f := range inOrder(a.fs, hits) {
		e := Evidence{Session: f.ID, Project: f.Project}
		var notes []string
		for _, c := range hits[f] {
			e.Turns = append(e.Turns, c.Turn)
			notes = append(notes, fmt.Sprintf("%s → %s on turn %d (%s)", c.From, c.To, c.Turn, orUnknown(c.Release)))
			if !slices.Contains(rels, orUnknown(c.Release)) {
				rels = append(rels, orUnknown(c.Release))
			}
			// What the 5-minute lifetime cost after a drop: the pauses
			// within an hour that followed in the thread.
			if c.To != Life5m {
				continue
			}
			for _, b := range f.Breaks {
				if b.Turn >= c.Turn && pauseClass(b) == pauseHour && len(b.Loaded) == 0 {
					cost += b.USD
					e.USD += b.USD
				}
			}
		}
		e.Note = strings.Join(notes, "; ")
		ev = append(ev, e)
	}
	slices.SortFunc(rels, exchange.CompareVersions)
	adv := Advice{Kind: KindPauses, Subject: "lifetime changed mid-session", Sessions: len(hits), Of: len(a.fs),
		Title:   "The cache's lifetime changed mid-session",
		CostUSD: cost, PerSessionUSD: cost / float64(len(hits)),
		Why: fmt.Sprintf("In %s a thread's cache writes changed lifetime part-way (the usage's cache_creation moved between ephemeral_5m and ephemeral_1h), %s from an hour to 5 minutes; Claude Code %s wrote them. The releases verified here choose the lifetime from settings and the environment, and by default give a Claude subscription 1 hour only within its usage limits: a drop mid-session means the limits were reached, a setting changed, or the release chose differently.",
			numfmt.Count(len(hits), "session", "sessions"), numfmt.Count(down, "one", "of them"), strings.Join(rels, ", ")),
		Do:       "Pin the lifetime instead of leaving it to the default. " + hourHow,
		Figures:  []string{fmt.Sprintf("the pauses within an hour after a drop to 5 minutes cost %s (they are also counted under the pauses within an hour)", usd(cost))},
		Assumes:  "the lifetime is read from each billed turn's usage: 1 hour when it wrote any ephemeral_1h tokens, 5 minutes when it wrote only ephemeral_5m ones.",
		Evidence: evidence(ev),
	}
	if old := oldReleases(fs(hits), ttlSettingFrom); len(old) > 0 {
		adv.Do += fmt.Sprintf(" Claude Code %s predates the releases the setting was verified in: upgrade.", strings.Join(old, ", "))
	}
	a.r.Advice = append(a.r.Advice, adv)
}

// fs lists the sessions of a map keyed by them.
func fs[T any](m map[*Facts]T) []*Facts {
	out := make([]*Facts, 0, len(m))
	for f := range m {
		out = append(out, f)
	}
	return out
}

// minutes writes a pause in minutes or hours: "7 min", "2.5 h"; "?"
// when not known.
func minutes(s float64) string {
	switch {
	case s <= 0:
		return "unknown length"
	case s < hourSeconds:
		return fmt.Sprintf("%.0f min", s/60)
	}
	return trimFloat(s/hourSeconds) + " h"
}

// orUnknown is r, or "an unknown release".
func orUnknown(r string) string {
	if r == "" {
		return "an unknown release"
	}
	return r
}
