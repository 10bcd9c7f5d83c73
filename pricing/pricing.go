// Package pricing turns the token counts of a Messages API response into US
// dollars, from a per-model price table: input, output, cache writes (5
// minutes and 1 hour), cache reads, long-context rates where a model has
// them, fast mode, web searches and the batch discount.
//
// The built-in table carries the date its prices were read and, per model,
// the date and the source of its rates. A model ID is priced by the entry
// it names exactly, once a date suffix and the providers' prefixes and
// suffixes are removed ([Normalize]); any other Claude model is priced as
// its nearest neighbour in the table and marked as such (Price.Estimated),
// and a model of another vendor has no price. Users replace the table, or
// some of its models, with a file in the built-in form or in LiteLLM's
// model_prices_and_context_window.json form ([Load], [LoadFor]).
package pricing

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/internal/regfile"
)

//go:embed prices.json
var builtin []byte

// maxPriceFile bounds a price file tsinspect reads (LiteLLM's whole file
// is about 1.5 MB).
const maxPriceFile = 64 << 20

// Rates are prices in US dollars per million tokens.
type Rates struct {
	Input        float64 `json:"input"`
	Output       float64 `json:"output"`
	CacheWrite5m float64 `json:"cache_write_5m"`
	CacheWrite1h float64 `json:"cache_write_1h"`
	CacheRead    float64 `json:"cache_read"`
}

// scale returns r with every rate multiplied by f.
func (r Rates) scale(f float64) Rates {
	return Rates{Input: r.Input * f, Output: r.Output * f, CacheWrite5m: r.CacheWrite5m * f, CacheWrite1h: r.CacheWrite1h * f, CacheRead: r.CacheRead * f}
}

// fill derives the cache rates a file left out (0) from the input rate by
// the published multipliers: 1.25× for 5-minute writes, 2× for 1-hour
// writes, 0.1× for reads.
func (r Rates) fill() Rates {
	if r.CacheWrite5m == 0 {
		r.CacheWrite5m = r.Input * 1.25
	}
	if r.CacheWrite1h == 0 {
		r.CacheWrite1h = r.Input * 2
	}
	if r.CacheRead == 0 {
		r.CacheRead = r.Input * 0.1
	}
	return r
}

// LongContext are the rates of a request whose prompt (input, cache reads
// and cache writes together) is larger than AboveInputTokens: the whole
// request, output included, is then billed at them.
type LongContext struct {
	AboveInputTokens int64 `json:"above_input_tokens"`
	Rates
}

// Model is the price of one model: its ID, other names of it, and its rates.
type Model struct {
	Model string `json:"model"`
	// Aliases are other IDs of the same model ("claude-opus-4-0").
	Aliases []string `json:"aliases,omitempty"`
	// Family is "opus", "sonnet", "haiku", "fable" or "mythos"; worked out
	// from Model when empty. A Claude model missing from the table is
	// priced as the nearest one of its family (see [Table.Lookup]).
	Family string `json:"family,omitempty"`
	// Read is the date (YYYY-MM-DD) the rates were read, Source where.
	Read   string `json:"read,omitempty"`
	Source string `json:"source,omitempty"`
	// Until, when set (YYYY-MM-DD), ends the entry: it prices the requests
	// made before that day (UTC), and another entry of the same model the
	// later ones.
	Until string `json:"until,omitempty"`
	Rates
	LongContext *LongContext `json:"long_context,omitempty"`
	// Fast multiplies every rate of a request answered in fast mode
	// (usage.speed "fast"); 0 when no multiplier is published.
	Fast float64 `json:"fast,omitempty"`
	Note string  `json:"note,omitempty"`
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
	// WebSearchPer1K is the price of 1,000 web searches (the server's web
	// search tool, usage.server_tool_use.web_search_requests).
	WebSearchPer1K  float64 `json:"web_search_per_1k,omitempty"`
	WebSearchSource string  `json:"web_search_source,omitempty"`
	// Extends is "built-in" in a user's file that adds models to the
	// built-in table, or replaces some of them, rather than replacing it.
	Extends string  `json:"extends,omitempty"`
	Models  []Model `json:"models"`
	// File is where the table, or the models it added, came from ("" for
	// the built-in one); FromConfig is set when File was found in the
	// user's configuration directory rather than named by --prices.
	File       string `json:"-"`
	FromConfig bool   `json:"-"`
	// FromFile names the models File added or replaced in the built-in
	// table; empty when File is the whole table.
	FromFile []string `json:"-"`
	// FileForm is "tsinspect" or "litellm": the form of File.
	FileForm string `json:"-"`
	// Warnings name, one line each with its line in File, the entries of
	// File left out (a price that is not a number, negative or too large)
	// and the models File priced twice; the command says them once.
	Warnings []string `json:"-"`

	// memo keeps what LookupAt found for each model ID (nil: none kept).
	memo *lookupMemo
}

// Default returns the built-in table, a new copy on each call.
func Default() *Table {
	t, err := Parse(builtin)
	if err != nil {
		panic("pricing: built-in table: " + err.Error())
	}
	return t
}

// Load reads a price file: a table in the built-in table's JSON form (which
// replaces the built-in table, or with "extends": "built-in" adds to it),
// or LiteLLM's model_prices_and_context_window.json form (whose models are
// laid over the built-in table).
func Load(path string) (*Table, error) {
	b, err := regfile.ReadAll(path, maxPriceFile)
	if err != nil {
		return nil, fmt.Errorf("pricing: load prices: %w", err)
	}
	t, err := parseFile(b, path)
	if err != nil {
		return nil, fmt.Errorf("pricing: load prices %s: %w", path, err)
	}
	return t, nil
}

// parseFile reads a user's price file in either form.
func parseFile(b []byte, path string) (*Table, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, err
	}
	if _, ok := top["models"]; !ok {
		over, warnings, err := parseLiteLLM(b)
		if err != nil {
			return nil, err
		}
		t := Default()
		t.overlay(over, path)
		t.FileForm = "litellm"
		t.Warnings = warnings
		return t, nil
	}
	f, err := parse(b)
	if err != nil {
		return nil, err
	}
	if f.Extends == "" {
		f.File, f.FileForm = path, "tsinspect"
		return f, nil
	}
	if f.Extends != "built-in" {
		return nil, fmt.Errorf("extends %q: only \"built-in\" can be extended", f.Extends)
	}
	t := Default()
	for i := range f.Models {
		if f.Models[i].Read == "" {
			f.Models[i].Read = f.Taken
		}
	}
	t.overlay(f.Models, path)
	t.FileForm = "tsinspect"
	return t, nil
}

// overlay puts models over the table's: each replaces every entry of the
// same ID (dated ones too), or is added.
func (t *Table) overlay(models []Model, path string) {
	for _, m := range models {
		id := Normalize(m.Model)
		kept := t.Models[:0]
		for _, o := range t.Models {
			if Normalize(o.Model) != id {
				kept = append(kept, o)
			}
		}
		t.Models = kept
	}
	t.Models = append(t.Models, models...)
	t.File = path
	for _, m := range models {
		t.FromFile = append(t.FromFile, m.Model)
	}
	sort.Strings(t.FromFile)
}

// Parse decodes and checks a table in the built-in JSON form: known fields
// only, a date, at least one model, and no negative rate.
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
	t := Table{memo: &lookupMemo{}}
	if err := dec.Decode(&t); err != nil {
		return nil, err
	}
	if t.Taken == "" && t.Extends == "" {
		return nil, errors.New("\"taken\" (the date the prices were taken) is missing")
	}
	for _, d := range []string{t.Taken} {
		if _, err := time.Parse(time.DateOnly, d); d != "" && err != nil {
			return nil, fmt.Errorf("taken %q: want a date, YYYY-MM-DD", d)
		}
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
	if err := checkFigure("batch_factor", t.BatchFactor, maxBatch); err != nil {
		return nil, err
	}
	if err := checkFigure("web_search_per_1k", t.WebSearchPer1K, maxWebSearch); err != nil {
		return nil, err
	}
	lines := modelLines(b)
	at := func(i int) string {
		if i < len(lines) {
			return fmt.Sprintf("line %d: ", lines[i])
		}
		return ""
	}
	// A model priced twice for the same days: which one counts would be
	// the file's order, so neither does.
	seen := map[[2]string]int{}
	for i := range t.Models {
		m := &t.Models[i]
		if m.Model == "" {
			return nil, fmt.Errorf("%sa model without \"model\"", at(i))
		}
		if err := checkModel(*m); err != nil {
			return nil, fmt.Errorf("%s%s: %w", at(i), m.Model, err)
		}
		key := [2]string{Normalize(m.Model), m.Until}
		if j, ok := seen[key]; ok {
			return nil, fmt.Errorf("%s%s: priced twice (also %s); keep one, or end the older with \"until\"", at(i), m.Model, strings.TrimSuffix(at(j), ": "))
		}
		seen[key] = i
		for _, d := range []string{m.Read, m.Until} {
			if _, err := time.Parse(time.DateOnly, d); d != "" && err != nil {
				return nil, fmt.Errorf("%s: date %q: want YYYY-MM-DD", m.Model, d)
			}
		}
		rs := []*Rates{&m.Rates}
		if m.LongContext != nil {
			rs = append(rs, &m.LongContext.Rates)
		}
		for _, r := range rs {
			*r = r.fill()
		}
		if m.Family == "" {
			m.Family, _ = familyVersion(Normalize(m.Model))
		}
		if m.Read == "" {
			m.Read = t.Taken
		}
	}
	return &t, nil
}

// ModelIDs returns the model IDs of the table, sorted, each once.
func (t *Table) ModelIDs() []string {
	var out []string
	for _, m := range t.Models {
		if len(out) == 0 || !contains(out, m.Model) {
			out = append(out, m.Model)
		}
	}
	sort.Strings(out)
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Describe is a one-line account of the table for every place that prints
// a dollar figure: where it came from and when its prices were taken
// ("built-in prices taken 2026-11-26", "prices taken 2026-12-01 from
// prices.json", "built-in prices taken 2026-11-26, with claude-opus-5-5
// from ~/.config/tsinspect/prices.json (your configuration directory)").
func (t *Table) Describe() string {
	where := t.File
	if t.FromConfig {
		where += " (your configuration directory)"
	}
	switch {
	case t.File == "":
		return "built-in prices taken " + t.Taken
	case len(t.FromFile) == 0:
		return "prices taken " + t.Taken + " from " + where
	case len(t.FromFile) <= 3:
		return "built-in prices taken " + t.Taken + ", with " + strings.Join(t.FromFile, ", ") + " from " + where
	}
	return fmt.Sprintf("built-in prices taken %s, with %d models from %s", t.Taken, len(t.FromFile), where)
}

// TakenTime is the table's date as a time (UTC midnight); zero when it has
// none.
func (t *Table) TakenTime() time.Time {
	d, _ := time.Parse(time.DateOnly, t.Taken)
	return d
}

// StaleAfter is how much newer than the table's date a session may be
// before the commands say that the table may lack its models.
const StaleAfter = 30 * 24 * time.Hour

// Staleness returns a notice when newest (the newest session or turn seen)
// is more than [StaleAfter] later than the table's date, else "".
func (t *Table) Staleness(newest time.Time) string {
	taken := t.TakenTime()
	if taken.IsZero() || newest.IsZero() || newest.Sub(taken) <= StaleAfter {
		return ""
	}
	days := int(newest.Sub(taken).Hours() / 24)
	return fmt.Sprintf("the newest session (%s) is %d days newer than the price table (%s): models released since are priced ≈ as a neighbour or not at all; see 'tsinspect prices'",
		newest.Local().Format(time.DateOnly), days, t.Taken)
}

// Format writes dollars for people: "$0.0123" below a dollar (four decimal
// places, so a cent's fraction shows), "$12.34" above; "-" for no price
// (and for a figure that is not a finite number, which validated prices
// never give).
func Format(usd float64, ok bool) string {
	if _, fin := finite(usd); !ok || !fin {
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

// modelLines returns the line each entry of a table's "models" starts on
// (none when b is not such a table).
func modelLines(b []byte) []int {
	top, err := objectMembers(b, 0)
	if err != nil {
		return nil
	}
	for _, m := range top {
		if m.key == "models" {
			lines, _ := arrayLines(b, m.at)
			return lines
		}
	}
	return nil
}
