// Package pricing turns the token counts of a Messages API response into US
// dollars, from a per-model price table: input, output, cache writes (5
// minutes and 1 hour), cache reads, long-context rates where a model has
// them, and the batch discount. The built-in table carries the date its
// prices were taken; a table of the same JSON form can replace it
// ([Load], `--prices FILE`).
package pricing

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
)

//go:embed prices.json
var builtin []byte

// Rates are prices in US dollars per million tokens.
type Rates struct {
	Input        float64 `json:"input"`
	Output       float64 `json:"output"`
	CacheWrite5m float64 `json:"cache_write_5m"`
	CacheWrite1h float64 `json:"cache_write_1h"`
	CacheRead    float64 `json:"cache_read"`
}

// LongContext are the rates of a request whose prompt (input, cache reads
// and cache writes together) is larger than AboveInputTokens: the whole
// request is then billed at them.
type LongContext struct {
	AboveInputTokens int64 `json:"above_input_tokens"`
	Rates
}

// Model is the price of one model, or of every model whose ID starts with
// Model (the longest such prefix wins: "claude-sonnet-4-5" prices
// "claude-sonnet-4-5-20250929").
type Model struct {
	Model string `json:"model"`
	// Family is "opus", "sonnet" or "haiku": a model missing from the table
	// is priced as the first model of its family, marked estimated.
	Family string `json:"family,omitempty"`
	Rates
	LongContext *LongContext `json:"long_context,omitempty"`
}

// Table is a price table.
type Table struct {
	// Taken is the date (YYYY-MM-DD) the prices were read from Source.
	Taken    string `json:"taken"`
	Source   string `json:"source,omitempty"`
	Currency string `json:"currency,omitempty"`
	Unit     string `json:"unit,omitempty"`
	// BatchFactor multiplies every rate of a Message Batches request (0.5:
	// half price).
	BatchFactor float64 `json:"batch_factor,omitempty"`
	Models      []Model `json:"models"`
	// File is where the table was loaded from; "" for the built-in one.
	File string `json:"-"`
}

// Default returns the built-in table, a new copy on each call.
func Default() *Table {
	t, err := Parse(builtin)
	if err != nil {
		panic("pricing: built-in table: " + err.Error())
	}
	return t
}

// Load reads a table in the built-in table's JSON form from path.
func Load(path string) (*Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pricing: load prices: %w", err)
	}
	t, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("pricing: load prices %s: %w", path, err)
	}
	t.File = path
	return t, nil
}

// Parse decodes and checks a table: known fields only, a date, at least one
// model, and no negative rate.
func Parse(b []byte) (*Table, error) {
	t, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("pricing: parse: %w", err)
	}
	return t, nil
}

func parse(b []byte) (*Table, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var t Table
	if err := dec.Decode(&t); err != nil {
		return nil, err
	}
	if t.Taken == "" {
		return nil, errors.New("\"taken\" (the date the prices were taken) is missing")
	}
	if len(t.Models) == 0 {
		return nil, errors.New("no models")
	}
	if t.Currency != "" && t.Currency != "USD" {
		return nil, fmt.Errorf("currency %q: only USD is supported", t.Currency)
	}
	if t.BatchFactor == 0 {
		t.BatchFactor = 1
	}
	for _, m := range t.Models {
		if m.Model == "" {
			return nil, errors.New("a model without \"model\"")
		}
		rs := []Rates{m.Rates}
		if m.LongContext != nil {
			rs = append(rs, m.LongContext.Rates)
		}
		for _, r := range rs {
			if r.Input < 0 || r.Output < 0 || r.CacheWrite5m < 0 || r.CacheWrite1h < 0 || r.CacheRead < 0 {
				return nil, fmt.Errorf("%s: negative rate", m.Model)
			}
		}
	}
	return &t, nil
}

// Price is what [Table.Lookup] found for a model ID.
type Price struct {
	Model
	// Estimated is true when the ID is not in the table and was priced as
	// Model.Model, the first model of its family.
	Estimated bool
}

// normalize strips what is not part of the model's name: a provider
// prefix ("us.anthropic.", "anthropic/"), a "[1m]" suffix, a Bedrock
// version suffix ("-v1:0") and a Vertex date ("@20250929").
func normalize(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	if i := strings.Index(id, "claude-"); i > 0 {
		id = id[i:]
	}
	id, _, _ = strings.Cut(id, "[")
	id, _, _ = strings.Cut(id, "@")
	if i := strings.Index(id, "-v1:"); i > 0 {
		id = id[:i]
	}
	return id
}

// family returns "opus", "sonnet" or "haiku" when id names one.
func family(id string) string {
	for _, f := range []string{"opus", "sonnet", "haiku"} {
		if strings.Contains(id, f) {
			return f
		}
	}
	return ""
}

// Lookup finds the price of a model ID: the table entry that is the
// longest prefix of it, else the first entry of its family (Estimated).
func (t *Table) Lookup(id string) (Price, bool) {
	id = normalize(id)
	if id == "" {
		return Price{}, false
	}
	best := -1
	for i, m := range t.Models {
		if strings.HasPrefix(id, strings.ToLower(m.Model)) && (best < 0 || len(m.Model) > len(t.Models[best].Model)) {
			best = i
		}
	}
	if best >= 0 {
		return Price{Model: t.Models[best]}, true
	}
	if f := family(id); f != "" {
		for _, m := range t.Models {
			if m.Family == f {
				return Price{Model: m, Estimated: true}, true
			}
		}
	}
	return Price{}, false
}

// Usage is the token counts of one response, as the API reports them.
type Usage struct {
	Input        int64 // input_tokens: uncached input
	Output       int64 // output_tokens
	CacheRead    int64 // cache_read_input_tokens
	CacheWrite5m int64 // cache_creation.ephemeral_5m_input_tokens
	CacheWrite1h int64 // cache_creation.ephemeral_1h_input_tokens
	// Batch is set for a Message Batches request.
	Batch bool
}

// Prompt returns the whole prompt size: input, cache reads and writes.
func (u Usage) Prompt() int64 {
	return u.Input + u.CacheRead + u.CacheWrite5m + u.CacheWrite1h
}

// Cost is a response's price in US dollars, split by kind of token.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheWrite float64 `json:"cache_write"`
	CacheRead  float64 `json:"cache_read"`
	Total      float64 `json:"total"`
	// LongContext is set when the long-context rates applied.
	LongContext bool `json:"long_context,omitempty"`
}

// Add returns the sum of two costs.
func (c Cost) Add(o Cost) Cost {
	return Cost{
		Input: c.Input + o.Input, Output: c.Output + o.Output,
		CacheWrite: c.CacheWrite + o.CacheWrite, CacheRead: c.CacheRead + o.CacheRead,
		Total: c.Total + o.Total, LongContext: c.LongContext || o.LongContext,
	}
}

// RatesFor returns the rates that apply to a request of the given prompt
// size (long-context ones above the model's threshold) and batch mode, and
// whether the long-context rates were chosen.
func (t *Table) RatesFor(p Price, prompt int64, batch bool) (Rates, bool) {
	r, long := p.Rates, false
	if lc := p.LongContext; lc != nil && lc.AboveInputTokens > 0 && prompt > lc.AboveInputTokens {
		r, long = lc.Rates, true
	}
	if batch && t.BatchFactor != 1 {
		f := t.BatchFactor
		r = Rates{Input: r.Input * f, Output: r.Output * f, CacheWrite5m: r.CacheWrite5m * f, CacheWrite1h: r.CacheWrite1h * f, CacheRead: r.CacheRead * f}
	}
	return r, long
}

// Cost prices usage for a model ID; ok is false when the model is not in
// the table, nor its family.
func (t *Table) Cost(model string, u Usage) (c Cost, p Price, ok bool) {
	p, ok = t.Lookup(model)
	if !ok {
		return Cost{}, p, false
	}
	r, long := t.RatesFor(p, u.Prompt(), u.Batch)
	c = Cost{
		Input:       float64(u.Input) * r.Input / 1e6,
		Output:      float64(u.Output) * r.Output / 1e6,
		CacheWrite:  (float64(u.CacheWrite5m)*r.CacheWrite5m + float64(u.CacheWrite1h)*r.CacheWrite1h) / 1e6,
		CacheRead:   float64(u.CacheRead) * r.CacheRead / 1e6,
		LongContext: long,
	}
	c.Total = c.Input + c.Output + c.CacheWrite + c.CacheRead
	return c, p, true
}

// ModelIDs returns the model IDs of the table, sorted.
func (t *Table) ModelIDs() []string {
	out := make([]string, len(t.Models))
	for i, m := range t.Models {
		out[i] = m.Model
	}
	sort.Strings(out)
	return out
}

// Describe is a one-line account of the table for reports: where it came
// from and when its prices were taken ("built-in prices taken
// 2025-11-24", "prices taken 2026-01-05 from prices.json").
func (t *Table) Describe() string {
	if t.File != "" {
		return "prices taken " + t.Taken + " from " + t.File
	}
	return "built-in prices taken " + t.Taken
}

// Format writes dollars for people: "$0.0123" below a dollar (four decimal
// places, so a cent's fraction shows), "$12.34" above; "-" for no price.
func Format(usd float64, ok bool) string {
	if !ok {
		return "-"
	}
	neg := usd < 0
	if neg {
		usd = -usd
	}
	var s string
	switch {
	case usd == 0:
		s = "$0"
	case usd < 1:
		s = fmt.Sprintf("$%.4f", usd)
	default:
		s = fmt.Sprintf("$%.2f", usd)
	}
	if neg {
		return "-" + s
	}
	return s
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
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	r, _ := t.RatesFor(p, u.Prompt(), u.Batch)
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
// (long-context and batch rates applied). ok is false when the model has
// no price.
func (t *Table) Rates(model string, u Usage) (Rates, bool) {
	p, ok := t.Lookup(model)
	if !ok {
		return Rates{}, false
	}
	r, _ := t.RatesFor(p, u.Prompt(), u.Batch)
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
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	r, _ := t.RatesFor(p, u.Prompt(), u.Batch)
	switch {
	case u.CacheRead > 0:
		return r.CacheRead, true
	case u.CacheWrite5m+u.CacheWrite1h > 0:
		return writeRate(r, u), true
	}
	return r.Input, true
}
