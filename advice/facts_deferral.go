package advice

import (
	"slices"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/tooltokens"
	"github.com/tsinspect/tsinspect/toolsearch/claudetools"
)

// deferral works out what deferring tools saved in the session, or what
// it would have saved where tool search was off.
func (x *extractor) deferral() {
	s, f := x.s, x.f
	df := &f.Deferral
	df.Window = window200k
	off := map[string]bool{} // threads with tool search off
	for _, t := range s.Turns {
		if !messages(t) {
			continue
		}
		for _, fl := range t.Flags {
			if fl.Kind == timeline.FlagToolSearchOff {
				off[t.Thread] = true
			}
		}
		d := t.Decoded
		if strings.Contains(d.Request.Model, "[1m]") || slices.ContainsFunc(d.Request.Betas, func(b string) bool { return strings.HasPrefix(b, "context-1m") }) {
			df.Window = window1m
		}
		if len(d.Catalog) > 0 && (d.InWorkingSet(decode.ClientSearchTool) || slices.ContainsFunc(d.Request.Tools, func(tl decode.Tool) bool { return tl.ServerSearch })) {
			df.Mode = ModeOn
		}
	}
	if df.Mode == "" && len(off) > 0 {
		df.Mode = ModeOff
	}
	switch df.Mode {
	case ModeOn:
		for _, t := range s.Turns {
			if !messages(t) {
				continue
			}
			ft := x.figs.Turn(t.Index)
			if ft == nil || t.Decoded.Request.Transcript != nil || ft.Tokens.NotRecorded {
				continue
			}
			tt := ft.Tokens
			df.Known = true
			df.SearchToolTokens = max(df.SearchToolTokens, tt.SearchTool)
			df.PoolTokens = max(df.PoolTokens, tt.Inlined-(tt.Sent-tt.Loaded-tt.SearchTool))
			df.Estimated = df.Estimated || tt.Estimated > 0
			df.LowerBound = df.LowerBound || tt.Unknown > 0
			if !billed(t) {
				continue
			}
			df.SavedTokens += tt.Saved
			if usd, ok := tooltokens.SavedUSD(x.tab, t.Decoded.Request.Model, usageOf(t), tt.Saved); ok {
				df.SavedUSD += usd
			}
		}
	case ModeOff:
		x.offDeferral(off)
	}
}

// offDeferral estimates what deferring tools would have saved in the
// threads where tool search was off: the MCP tools and Claude Code's own
// deferrable tools (those its release defers when tool search is on).
func (x *extractor) offDeferral(off map[string]bool) {
	s, df := x.s, &x.f.Deferral
	rel, _ := claudetools.For(firstOr(x.f.Releases))
	own := map[string]bool{}
	for _, t := range rel.Tools {
		own[t.Name] = true
	}
	deferrable := func(name string) bool { return serverOf(name) != "" || own[name] }
	called := map[string]map[string]bool{}
	est := timeline.NewEstimates()
	for _, t := range s.Turns {
		if !messages(t) || !off[t.Thread] {
			continue
		}
		ft := x.figs.Turn(t.Index)
		if ft == nil || ft.Tokens.NotRecorded {
			continue
		}
		df.Known = true
		d := t.Decoded
		if called[t.Thread] == nil {
			called[t.Thread] = map[string]bool{}
		}
		var pool, kept, lines int64
		rate := x.rateOf(t)
		bytesRate, _ := est.PromptRate(d)
		for _, def := range ft.Definitions {
			if def.Deferred || def.Placeholder || !deferrable(def.Name) {
				continue
			}
			pool += def.Tokens
			if !called[t.Thread][def.Name] {
				kept += def.Tokens
				lines += timeline.Tokens(len(def.Name)+1, bytesRate)
			}
		}
		df.PoolTokens = max(df.PoolTokens, pool)
		if billed(t) && pool > 0 {
			df.Requests++
			df.RateSum += rate
			df.GrossTokens += kept - lines
			df.GrossUSD += float64(kept-lines) * rate / 1e6
		}
		// A first call of a deferrable tool in the thread: deferring would
		// have put a search before it, and the round trip of a request
		// like this one, its prefix read from the cache.
		for _, c := range d.ToolCalls {
			if c.Server || !deferrable(c.Name) || called[t.Thread][c.Name] {
				continue
			}
			called[t.Thread][c.Name] = true
			df.RoundTrips++
			if x.tab != nil && billed(t) {
				if r, ok := x.tab.Rates(d.Request.Model, usageOf(t)); ok {
					df.RoundTripUSD += float64(d.Response.Usage.TotalInput()) * r.CacheRead / 1e6
				}
			}
		}
	}
}

// finishTools fills in each tool's schema size and per-thread figures and
// sorts them into f.Tools.
func (x *extractor) finishTools(files map[string]int) {
	// Average known deferred sizes, by server ("" for all), for the tools
	// whose schema the session never shows.
	type sum struct{ n, tokens int64 }
	avg := map[string]*sum{}
	for name, n := range x.sizes {
		for _, k := range []string{"", "mcp__" + serverOf(name)} {
			if k == "mcp__" {
				continue
			}
			a := avg[k]
			if a == nil {
				a = &sum{}
				avg[k] = a
			}
			a.n++
			a.tokens += n
		}
	}
	for _, tl := range x.tools {
		switch n, ok := x.sizes[tl.Name]; {
		case ok:
			tl.SchemaTokens, tl.SchemaFrom = n, SizeRequest
		case files[tl.Name] > 0:
			tl.SchemaTokens, tl.SchemaFrom = timeline.Tokens(files[tl.Name], 1/timeline.CharsPerToken), SizeFiles
		default:
			a := avg["mcp__"+tl.Server]
			if tl.Server == "" || a == nil {
				a = avg[""]
			}
			if a != nil && a.n > 0 {
				tl.SchemaTokens, tl.SchemaFrom = (a.tokens+a.n/2)/a.n, SizeEstimate
			}
		}
		for _, fc := range x.firstCall {
			if _, ok := fc[tl.Name]; ok {
				tl.UsedThreads++
			}
		}
		for _, sd := range x.searched {
			if sd[tl.Name] {
				tl.SearchedThreads++
			}
		}
		x.f.Tools = append(x.f.Tools, *tl)
	}
	sort.Slice(x.f.Tools, func(i, j int) bool { return x.f.Tools[i].Name < x.f.Tools[j].Name })
}
