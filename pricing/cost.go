package pricing

import "time"

// Usage is the token counts of one response, as the API reports them, and
// what else its price depends on.
type Usage struct {
	Input        int64 // input_tokens: uncached input
	Output       int64 // output_tokens
	CacheRead    int64 // cache_read_input_tokens
	CacheWrite5m int64 // cache_creation.ephemeral_5m_input_tokens
	CacheWrite1h int64 // cache_creation.ephemeral_1h_input_tokens
	// Batch is set for a Message Batches request.
	Batch bool
	// Speed is usage.speed: "fast" for a request answered in fast mode.
	Speed string
	// WebSearches is usage.server_tool_use.web_search_requests.
	WebSearches int64
	// At is when the request was made: it chooses between a model's dated
	// entries. Zero prices it as of today.
	At time.Time
}

// SplitCacheWrites is a response's cache writes by how long they live:
// the 5-minute and 1-hour counts of its usage's cache_creation when they
// add up to total (its cache_creation_input_tokens), else all of total as
// 5-minute writes (a response without the split, or one whose split does
// not add up).
func SplitCacheWrites(total, ephemeral5m, ephemeral1h int64) (w5m, w1h int64) {
	if ephemeral5m+ephemeral1h == total {
		return ephemeral5m, ephemeral1h
	}
	return total, 0
}

// Prompt returns the whole prompt size: input, cache reads and writes.
func (u Usage) Prompt() int64 {
	return u.Input + u.CacheRead + u.CacheWrite5m + u.CacheWrite1h
}

// Fast reports whether the request was answered in fast mode.
func (u Usage) Fast() bool { return u.Speed == "fast" }

// Cost is a response's price in US dollars, split by kind of token.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheWrite float64 `json:"cache_write"`
	CacheRead  float64 `json:"cache_read"`
	// WebSearch is what the request's web searches cost, on top of tokens.
	WebSearch float64 `json:"web_search,omitempty"`
	Total     float64 `json:"total"`
	// LongContext is set when the long-context rates applied, Fast when
	// the fast-mode multiplier did.
	LongContext bool `json:"long_context,omitempty"`
	Fast        bool `json:"fast,omitempty"`
	// FastUnpriced is set for a fast-mode request of a model with no
	// published fast-mode multiplier: Total counts it at standard rates,
	// so it is a lower bound.
	FastUnpriced bool `json:"fast_unpriced,omitempty"`
}

// Add returns the sum of two costs.
func (c Cost) Add(o Cost) Cost {
	return Cost{
		Input: c.Input + o.Input, Output: c.Output + o.Output,
		CacheWrite: c.CacheWrite + o.CacheWrite, CacheRead: c.CacheRead + o.CacheRead,
		WebSearch: c.WebSearch + o.WebSearch, Total: c.Total + o.Total,
		LongContext: c.LongContext || o.LongContext, Fast: c.Fast || o.Fast, FastUnpriced: c.FastUnpriced || o.FastUnpriced,
	}
}

// RatesFor returns the rates a request of usage u was billed at under p:
// the long-context rates when its prompt is above the model's threshold
// (the whole request, output included), times the fast-mode multiplier
// for a fast request, times the batch factor for a batch one; and whether
// the long-context rates were chosen.
func (t *Table) RatesFor(p Price, u Usage) (Rates, bool) {
	r, long := p.Rates, false
	if lc := p.LongContext; lc != nil && lc.AboveInputTokens > 0 && u.Prompt() > lc.AboveInputTokens {
		r, long = lc.Rates, true
	}
	if u.Fast() && p.Fast > 0 {
		r = r.scale(p.Fast)
	}
	if u.Batch && t.BatchFactor != 1 {
		r = r.scale(t.BatchFactor)
	}
	return r, long
}

// Cost prices usage for a model ID; ok is false when the model has no
// price (see [Table.LookupAt]).
func (t *Table) Cost(model string, u Usage) (c Cost, p Price, ok bool) {
	p, ok = t.LookupAt(model, u.At)
	if !ok {
		return Cost{}, p, false
	}
	r, long := t.RatesFor(p, u)
	c = Cost{
		Input:        float64(u.Input) * r.Input / 1e6,
		Output:       float64(u.Output) * r.Output / 1e6,
		CacheWrite:   (float64(u.CacheWrite5m)*r.CacheWrite5m + float64(u.CacheWrite1h)*r.CacheWrite1h) / 1e6,
		CacheRead:    float64(u.CacheRead) * r.CacheRead / 1e6,
		WebSearch:    float64(u.WebSearches) * t.WebSearchPer1K / 1000,
		LongContext:  long,
		Fast:         u.Fast() && p.Fast > 0,
		FastUnpriced: u.Fast() && p.Fast == 0,
	}
	c.Total = c.Input + c.Output + c.CacheWrite + c.CacheRead + c.WebSearch
	if _, fin := finite(c.Total); !fin {
		// Validated prices never get here; no output shows NaN or Inf.
		return Cost{}, p, false
	}
	return c, p, true
}

// writeRate returns the cache-write rate usage paid: the 1-hour one when
// all its writes were 1-hour writes, else the 5-minute one.
func writeRate(r Rates, u Usage) float64 {
	if u.CacheWrite1h > 0 && u.CacheWrite5m == 0 {
		return r.CacheWrite1h
	}
	return r.CacheWrite5m
}

// BreakCost is what a prompt-cache break cost a request: the lost tokens
// (those a kept cache would have read) were billed instead as they were
// sent this time, and reading them would have cost the read rate. They
// are taken first from the request's cache writes, at the write rate (of
// the 1-hour TTL for its 1-hour writes), then from its uncached input, at
// the input rate; lost tokens beyond both (none, when lost comes from
// this request's usage) cost nothing. ok is false when the model has no
// price.
func (t *Table) BreakCost(model string, u Usage, lost int64) (usd float64, ok bool) {
	r, ok := t.Rates(model, u)
	if !ok {
		return 0, false
	}
	if lost <= 0 {
		return 0, true
	}
	// Of the writes, the 5-minute ones first: a break re-writes the
	// prefix, which Claude Code marks with its shortest TTL.
	w5 := min(lost, u.CacheWrite5m)
	w1 := min(lost-w5, u.CacheWrite1h)
	in := min(lost-w5-w1, u.Input)
	usd = float64(w5)*(r.CacheWrite5m-r.CacheRead) + float64(w1)*(r.CacheWrite1h-r.CacheRead) + float64(in)*(r.Input-r.CacheRead)
	return usd / 1e6, true
}

// Rates returns the rates a request of model with usage u was billed at
// (long-context, fast-mode and batch rates applied). ok is false when the
// model has no price.
func (t *Table) Rates(model string, u Usage) (Rates, bool) {
	p, ok := t.LookupAt(model, u.At)
	if !ok {
		return Rates{}, false
	}
	r, _ := t.RatesFor(p, u)
	return r, true
}

// TailRate is the rate, in US dollars per million tokens, a request paid
// for the newest tokens of its prompt (after the last cache read): the
// cache-write rate when it wrote the cache, else the input rate.
func (t *Table) TailRate(model string, u Usage) (float64, bool) {
	r, ok := t.Rates(model, u)
	if !ok {
		return 0, false
	}
	if u.CacheWrite5m+u.CacheWrite1h > 0 {
		return writeRate(r, u), true
	}
	return r.Input, true
}

// PrefixRate is the rate, in US dollars per million tokens, a request paid
// for the first tokens of its prompt (where tool definitions sit): the
// cache-read rate when it read the cache, else the cache-write rate when it
// wrote it, else the input rate. It prices tokens that would have been
// added to, or were kept out of, the start of the prompt.
func (t *Table) PrefixRate(model string, u Usage) (float64, bool) {
	r, ok := t.Rates(model, u)
	if !ok {
		return 0, false
	}
	switch {
	case u.CacheRead > 0:
		return r.CacheRead, true
	case u.CacheWrite5m+u.CacheWrite1h > 0:
		return writeRate(r, u), true
	}
	return r.Input, true
}
