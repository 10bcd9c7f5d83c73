package advice

import (
	"slices"
	"time"

	"github.com/tsinspect/tsinspect/timeline"
)

// Cache lifetimes, as Break.Lifetime and LifetimeChange name them.
const (
	Life5m = "5m"
	Life1h = "1h"
)

// CacheLife is what a session's usage tells of its cache writes: how
// many tokens were written for 5 minutes and for an hour (the usage's
// cache_creation split), and the lifetime changes of its threads.
type CacheLife struct {
	// Write5m and Write1h are the tokens written for each lifetime;
	// Unsplit those whose usage did not split them.
	Write5m int64 `json:"write_5m"`
	Write1h int64 `json:"write_1h"`
	Unsplit int64 `json:"unsplit,omitempty"`
	// Extra1hUSD is what the 5-minute writes would have cost more at the
	// 1-hour write rate: the price of a 1-hour cache over the session.
	Extra1hUSD float64 `json:"extra_1h_usd,omitempty"`
	// Changes are the places where a thread's writes changed lifetime.
	Changes []LifetimeChange `json:"changes,omitempty"`
}

// LifetimeChange is a thread whose cache writes changed lifetime: the
// first turn written at the new one.
type LifetimeChange struct {
	Turn    int    `json:"turn"`
	Thread  string `json:"thread"`
	From    string `json:"from"`
	To      string `json:"to"`
	Release string `json:"release,omitempty"`
}

// lifetimeOf is the lifetime turn t's writes show: 1h when any of them
// was written for an hour, 5m when all were for 5 minutes, "" when its
// usage does not split them or it wrote nothing.
func lifetimeOf(t *timeline.Turn) string {
	cc := t.Decoded.Response.Usage.CacheCreation
	switch {
	case cc == nil:
		return ""
	case cc.Ephemeral1h > 0:
		return Life1h
	case cc.Ephemeral5m > 0:
		return Life5m
	}
	return ""
}

// startOf is when turn t's request was sent; zero when not known.
func startOf(t *timeline.Turn) time.Time {
	if t == nil || t.Exchange == nil {
		return time.Time{}
	}
	return t.Exchange.Start
}

// cacheLife fills f.Cache from the usage of each billed turn, and each
// break's gap and lifetime, in turn order; it runs after flags.
func (x *extractor) cacheLife() {
	c := &x.f.Cache
	last := map[string]string{} // thread: the lifetime its writes showed last
	before := map[int]string{}  // turn: the lifetime its thread showed before it
	for _, t := range x.s.Turns {
		if !messages(t) || !billed(t) {
			continue
		}
		before[t.Index] = last[t.Thread]
		u := t.Decoded.Response.Usage
		if cc := u.CacheCreation; cc != nil {
			c.Write5m += cc.Ephemeral5m
			c.Write1h += cc.Ephemeral1h
			c.Unsplit += max(u.CacheCreationInputTokens-cc.Ephemeral5m-cc.Ephemeral1h, 0)
			if x.tab != nil && cc.Ephemeral5m > 0 {
				if r, ok := x.tab.Rates(t.Decoded.Request.Model, usageOf(t)); ok {
					c.Extra1hUSD += float64(cc.Ephemeral5m) * (r.CacheWrite1h - r.CacheWrite5m) / 1e6
				}
			}
		} else {
			c.Unsplit += u.CacheCreationInputTokens
		}
		life := lifetimeOf(t)
		if life == "" {
			continue
		}
		if prev := last[t.Thread]; prev != "" && prev != life {
			c.Changes = append(c.Changes, LifetimeChange{Turn: t.Index, Thread: t.Thread, From: prev, To: life, Release: t.Client.Version})
		}
		last[t.Thread] = life
	}
	for i := range x.f.Breaks {
		b := &x.f.Breaks[i]
		t := x.s.Turn(b.Turn)
		if t == nil {
			continue
		}
		b.Lifetime = before[b.Turn]
		b.Release = t.Client.Version
		if p := x.s.Turn(t.Prev); p != nil {
			if a, z := startOf(p), startOf(t); !a.IsZero() && !z.IsZero() && z.After(a) {
				b.GapSeconds = z.Sub(a).Seconds()
			}
		}
		if b.Cause == timeline.CauseTools {
			b.Loaded = loadedBy(t)
		}
	}
}

// loadedBy lists the tools the client searches whose results turn t
// carries loaded: the schemas a tools_changed break on t added.
func loadedBy(t *timeline.Turn) []string {
	var out []string
	for _, sr := range t.NewSearches {
		if sr.Server {
			continue
		}
		for _, name := range sr.Results {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// threadStats counts each thread's billed turns and what they cost, and
// what followed each partial search in its thread: the turns from the one
// that carried its result on,
// their cost and the error results they carried.
func (x *extractor) threadStats() {
	kind := map[string]string{}
	for _, th := range x.s.Threads {
		kind[th.ID] = th.Kind
	}
	idx := map[string]int{}
	for _, t := range x.s.Turns {
		if !messages(t) {
			continue
		}
		i, ok := idx[t.Thread]
		if !ok {
			i = len(x.f.Threads)
			idx[t.Thread] = i
			x.f.Threads = append(x.f.Threads, Thread{ID: t.Thread, Main: kind[t.Thread] == timeline.KindMain})
		}
		x.f.Threads[i].Turns++
		var usd float64
		if billed(t) {
			if c, _, ok := timeline.TurnCost(x.tab, t); ok {
				usd = c.Total
			}
		}
		x.f.Threads[i].USD += usd
		errs := 0
		for _, r := range t.Decoded.LastUser.ToolResults {
			if r.IsError {
				errs++
			}
		}
		for j := range x.f.Searches {
			q := &x.f.Searches[j]
			if q.Kind != timeline.FlagSearchPartial || q.Thread != t.Thread || t.Index < q.Turn {
				continue
			}
			q.TurnsAfter++
			q.USDAfter += usd
			q.ErrorsAfter += errs
		}
	}
}
