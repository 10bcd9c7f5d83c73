package report

import (
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/tooltokens"
)

// Build makes the report of s. version is the tsinspect release named in
// "generator". A nil session gives an empty report. Costs come from the
// built-in price table ([pricing.Default]); [Report.Price] reprices. Tool-definition sizes
// are estimates; see [BuildWithCounts].
func Build(s *timeline.Session, version string) *Report {
	return BuildWithCounts(s, version, nil)
}

// BuildWithCounts is [Build] with the definition sizes that count_tokens
// answers gave (see [CountTokens]) used instead of estimates where known.
func BuildWithCounts(s *timeline.Session, version string, counts Counts) *Report {
	r := &Report{SchemaVersion: SchemaVersion, Generator: "tsinspect"}
	if version != "" {
		r.Generator += " " + version
	}
	r.Capture.Flags = map[string]int{}
	if s == nil {
		summariseTokens(r, nil)
		r.Price(pricing.Default())
		r.fillNil()
		return r
	}
	figs := tooltokens.Compute(s, counts)
	r.Capture.Exchanges = s.Exchanges
	r.Capture.Turns = len(s.Turns)
	r.Capture.FirstAt = timePtr(s.FirstAt)
	r.Capture.LastAt = timePtr(s.LastAt)

	r.Turns = make([]Turn, 0, len(s.Turns))
	models := map[string][]string{}
	for _, t := range s.Turns {
		if t == nil {
			continue
		}
		// figs.Turns holds the session's turns but the nil ones, in order.
		rt := buildTurn(t, &figs.Turns[len(r.Turns)])
		for _, f := range rt.Flags {
			r.Capture.Flags[f.Kind]++
		}
		if rt.Client != "" && !contains(r.Capture.Clients, rt.Client) {
			r.Capture.Clients = append(r.Capture.Clients, rt.Client)
		}
		for _, b := range rt.Betas {
			if !contains(r.Capture.Betas, b) {
				r.Capture.Betas = append(r.Capture.Betas, b)
			}
		}
		if rt.Model != "" && !contains(models[rt.Thread], rt.Model) {
			models[rt.Thread] = append(models[rt.Thread], rt.Model)
		}
		r.Turns = append(r.Turns, rt)
	}
	r.Capture.Sources = sources(s)
	r.Threads = make([]Thread, 0, len(s.Threads))
	for _, th := range s.Threads {
		if th == nil {
			continue
		}
		r.Threads = append(r.Threads, Thread{
			ID:          th.ID,
			Kind:        th.Kind,
			Client:      th.Client,
			Turns:       append([]int{}, th.Turns...),
			Models:      strs(models[th.ID]),
			QuerySource: th.QuerySource,
			Session:     th.Session,
		})
	}
	if sessions(r.Threads) < 2 {
		for i := range r.Threads {
			r.Threads[i].Session = ""
		}
	}
	summariseTokens(r, figs)
	r.Price(pricing.Default())
	r.fillNil()
	return r
}

// sources counts the turns of each source that lacks something, in order
// of first appearance.
func sources(s *timeline.Session) []Source {
	var out []Source
	at := map[string]int{}
	for _, t := range s.Turns {
		if t == nil || t.Exchange == nil {
			continue
		}
		src := t.Exchange.Source
		lacks := exchange.Limits(src)
		if lacks == nil {
			continue
		}
		i, ok := at[src]
		if !ok {
			i = len(out)
			at[src] = i
			out = append(out, Source{Source: src, Lacks: append([]string(nil), lacks...)})
		}
		out[i].Turns++
	}
	return out
}

func buildTurn(t *timeline.Turn, ft *tooltokens.Turn) Turn {
	rt := Turn{
		Index:  t.Index,
		Thread: t.Thread,
		Prev:   t.Prev,
		Link:   t.Link,
		Catalog: Catalog{
			Added:   strs(t.CatalogAdded),
			Removed: strs(t.CatalogRemoved),
		},
		WorkingSet: WorkingSet{
			Added:   strs(t.WorkingAdded),
			Removed: strs(t.WorkingRemoved),
		},
		Flags: make([]Flag, 0, len(t.Flags)),
	}
	if ex := t.Exchange; ex != nil {
		rt.ExchangeID = ex.ID
		rt.At = timePtr(ex.Start)
		rt.Status = ex.Status
		rt.Client = ex.ReqHeader("User-Agent")
	}
	for _, f := range t.Flags {
		rt.Flags = append(rt.Flags, Flag{
			Kind: f.Kind, Severity: f.Severity, Detail: f.Detail, Tool: f.Tool,
			Cause: f.Cause, TokensLost: f.TokensLost, CacheMissReason: f.CacheMissReason,
			Agrees: boolPtr(f.Agrees), Search: f.Search,
			Answer: f.Answer, Refused: f.Refused, CallTokens: f.CallTokens, ErrorTokens: f.ErrorTokens, RoundTrip: f.RoundTrip,
		})
	}
	d := t.Decoded
	if d == nil {
		rt.fillNil()
		return rt
	}
	if rt.ExchangeID == 0 {
		rt.ExchangeID = d.ExchangeID
	}
	if rt.Status == 0 {
		rt.Status = d.Response.Status
	}
	resp := &d.Response
	rt.Model = d.Request.Model
	if resp.Model != "" && resp.Model != rt.Model {
		rt.ResponseModel = resp.Model
	}
	rt.Incomplete = resp.Incomplete
	if resp.Error != nil {
		rt.Error = &Error{Type: resp.Error.Type, Message: resp.Error.Message, Event: resp.Error.Event}
	}
	rt.ResponseID = resp.ID
	rt.StopReason = resp.StopReason
	rt.OutputPlaceholder = t.OutputPlaceholder()
	if resp.StopSequence != nil {
		s := *resp.StopSequence
		rt.StopSequence = &s
	}
	rt.Usage = Usage{
		InputTokens:              resp.Usage.InputTokens,
		OutputTokens:             resp.Usage.OutputTokens,
		CacheReadInputTokens:     resp.Usage.CacheReadInputTokens,
		CacheCreationInputTokens: resp.Usage.CacheCreationInputTokens,
		Speed:                    resp.Usage.Speed,
		WebSearchRequests:        resp.Usage.WebSearchRequests,
	}
	if cc := resp.Usage.CacheCreation; cc != nil {
		rt.Usage.CacheCreation5m, rt.Usage.CacheCreation1h = cc.Ephemeral5m, cc.Ephemeral1h
	}

	rt.Betas = strs(d.Request.Betas)
	rt.Timing = timing(t.Exchange, resp.Usage.OutputTokens)

	rt.Catalog.Count = len(d.Catalog)
	rt.WorkingSet.Count = len(d.WorkingSet)
	if tr := d.Request.Transcript; tr != nil {
		rt.Catalog.NotRecorded = !tr.CatalogRecorded
		rt.WorkingSet.DeferredOnly = true
	}
	rt.WorkingSet.Names = make([]string, 0, len(d.WorkingSet))
	rt.WorkingSet.Via = make(map[string]string, len(d.WorkingSet))
	for _, w := range d.WorkingSet {
		rt.WorkingSet.Names = append(rt.WorkingSet.Names, w.Name)
		rt.WorkingSet.Via[w.Name] = w.Via
	}
	rt.Unreferenced = strs(d.Unreferenced)
	rt.MissingReferences = strs(d.MissingReferences)

	rt.ToolSearches = make([]Search, 0, len(t.NewSearches))
	for _, s := range t.NewSearches {
		rt.ToolSearches = append(rt.ToolSearches, Search{
			ToolUseID: s.ToolUseID, Tool: s.Tool, Server: s.Server,
			Query: s.Query, Mode: s.Mode, Selected: strs(s.Selected),
			MaxResults: s.MaxResults, Results: strs(s.Results),
			NoMatch: s.NoMatch, ToolLoaded: s.ToolLoaded,
			IsError: s.IsError, ErrorCode: s.ErrorCode,
		})
	}
	rt.ToolCalls = make([]ToolCall, 0, len(d.ToolCalls))
	for _, c := range d.ToolCalls {
		rt.ToolCalls = append(rt.ToolCalls, ToolCall{
			ID: c.ID, Name: c.Name, Server: c.Server,
			Loaded: c.Loaded, Via: c.Via, InCatalog: c.InCatalog,
		})
	}
	rt.Problems = strs(d.Problems)
	toolSection(&rt, ft)
	rt.fillNil()
	return rt
}

// Normalize replaces nil slices and maps by empty ones, as WriteJSON does,
// so that a Report changed after Build reads like one Build made.
func (r *Report) Normalize() { r.fillNil() }

// fillNil replaces nil slices and maps by empty ones, so that a Report
// changed after Build still writes [] rather than null.
func (r *Report) fillNil() {
	if r.Threads == nil {
		r.Threads = []Thread{}
	}
	if r.Turns == nil {
		r.Turns = []Turn{}
	}
	if r.Capture.Flags == nil {
		r.Capture.Flags = map[string]int{}
	}
	if r.Capture.Clients == nil {
		r.Capture.Clients = []string{}
	}
	if r.Capture.Betas == nil {
		r.Capture.Betas = []string{}
	}
	for i := range r.Threads {
		if r.Threads[i].Turns == nil {
			r.Threads[i].Turns = []int{}
		}
		if r.Threads[i].Models == nil {
			r.Threads[i].Models = []string{}
		}
	}
	for i := range r.Turns {
		r.Turns[i].fillNil()
	}
	if c := r.Costs; c != nil {
		if c.Threads == nil {
			c.Threads = []ThreadCost{}
		}
		if c.Unpriced == nil {
			c.Unpriced = []string{}
		}
		if c.Estimated == nil {
			c.Estimated = []string{}
		}
	}
	if r.TokenSummary.Threads == nil {
		r.TokenSummary.Threads = []ThreadTokens{}
	}
	for i := range r.TokenSummary.Threads {
		th := &r.TokenSummary.Threads[i]
		if th.LoadedTools == nil {
			th.LoadedTools = []string{}
		}
		if th.Unknown == nil {
			th.Unknown = []string{}
		}
	}
}

func (t *Turn) fillNil() {
	for _, p := range []*[]string{
		&t.Catalog.Added, &t.Catalog.Removed,
		&t.WorkingSet.Names, &t.WorkingSet.Added, &t.WorkingSet.Removed,
		&t.Unreferenced, &t.MissingReferences, &t.Problems, &t.Betas,
	} {
		if *p == nil {
			*p = []string{}
		}
	}
	if t.WorkingSet.Via == nil {
		t.WorkingSet.Via = map[string]string{}
	}
	if t.ToolSearches == nil {
		t.ToolSearches = []Search{}
	}
	for i := range t.ToolSearches {
		if t.ToolSearches[i].Selected == nil {
			t.ToolSearches[i].Selected = []string{}
		}
		if t.ToolSearches[i].Results == nil {
			t.ToolSearches[i].Results = []string{}
		}
	}
	if t.ToolCalls == nil {
		t.ToolCalls = []ToolCall{}
	}
	if t.Flags == nil {
		t.Flags = []Flag{}
	}
	if t.ToolDefinitions == nil {
		t.ToolDefinitions = []ToolDefinition{}
	}
}

// strs copies xs, never returning nil.
func strs(xs []string) []string {
	return append(make([]string, 0, len(xs)), xs...)
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func boolPtr(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}

// appendNew appends the elements of add that xs lacks.
func appendNew(xs, add []string) []string {
	for _, x := range add {
		if !contains(xs, x) {
			xs = append(xs, x)
		}
	}
	return xs
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
