package textout

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// SessionBuckets writes the periods of 'sessions --by' for a terminal:
// one row a period (and model or project with per), the tokens and the
// cost, a total line naming the price table (prices) and the models
// priced as a neighbour or not at all.
func SessionBuckets(w io.Writer, bs []sessionfiles.Bucket, by, per, prices string) error {
	cols := []column{{head: strings.ToUpper(by)}}
	switch per {
	case "model":
		cols = append(cols, column{head: "MODEL"})
	case "project":
		cols = append(cols, column{head: "PROJECT"})
	default:
		cols = append(cols, column{head: "MODELS"})
	}
	cols = append(cols, column{head: "SESSIONS", right: true}, column{head: "ANSWERS", right: true}, column{head: "INPUT", right: true},
		column{head: "OUTPUT", right: true}, column{head: "CACHE-RD", right: true}, column{head: "CACHE-NEW", right: true}, column{head: "COST", right: true})
	table := [][]string{header(cols)}
	var in, out, rd, wr int64
	var usd float64
	var estimated, unpriced []string
	answers := 0
	for _, b := range bs {
		what := cell(shortModels(b.Models), 32)
		switch per {
		case "model":
			what = strings.TrimPrefix(b.Model, "claude-")
		case "project":
			what = cell(projectPath(b.Project), 32)
		}
		table = append(table, []string{b.Period, what, strconv.Itoa(b.Sessions), numfmt.Thousands(int64(b.Answers)), numfmt.Thousands(b.InputTokens),
			numfmt.Thousands(b.OutputTokens), numfmt.Thousands(b.CacheRead), numfmt.Thousands(b.CacheWrite), costMark(b.CostUSD, b.Unpriced, b.PricedAs)})
		in, out, rd, wr = in+b.InputTokens, out+b.OutputTokens, rd+b.CacheRead, wr+b.CacheWrite
		usd += b.CostUSD
		answers += b.Answers
		estimated = union(estimated, b.PricedAs)
		unpriced = union(unpriced, b.Unpriced)
	}
	table = append(table, []string{"total", "", "", numfmt.Thousands(int64(answers)), numfmt.Thousands(in), numfmt.Thousands(out), numfmt.Thousands(rd), numfmt.Thousands(wr),
		costMark(usd, unpriced, estimated)})
	if err := writeTable(w, cols, table); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "US dollars at %s; each answer in the %s of its timestamp\n", prices, by); err != nil {
		return err
	}
	return pricedNotes(w, estimated, unpriced)
}

// costMark is a cost for people, "≥" when some of it has no price, "≈"
// when some of it was priced as a neighbour.
func costMark(usd float64, unpriced, estimated []string) string {
	s := pricing.Format(usd, true)
	switch {
	case len(unpriced) > 0:
		return "≥" + s
	case len(estimated) > 0:
		return "≈" + s
	}
	return s
}

func union(a, b []string) []string {
	for _, s := range b {
		if !contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// projectPath shortens a project directory to its last two parts.
func projectPath(p string) string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return strings.Join(parts, "/")
}

// PricesView is what 'tsinspect prices' shows: the table in force and how
// it prices the models of the user's sessions.
type PricesView struct {
	Table *pricing.Table
	// ConfigFile is the price file tsinspect looks for without --prices
	// ("" when the system has no configuration directory).
	ConfigFile string
	// Sessions counts the sessions read, Dir where; Used the models that
	// answered in them.
	Sessions int
	Dir      string
	Used     []sessionfiles.ModelUse
	// Stale is the notice of a table older than the sessions ("" when not).
	Stale string
}

// Prices writes v for a terminal.
func Prices(w io.Writer, v PricesView) error {
	t := v.Table
	var b strings.Builder
	fmt.Fprintf(&b, "Prices in force (US dollars per million tokens): %s.\n", t.Describe())
	if t.Source != "" {
		fmt.Fprintf(&b, "Source: %s.\n", strings.TrimSuffix(t.Source, "."))
	}
	switch {
	case v.ConfigFile == "":
	case t.FromConfig:
		fmt.Fprintf(&b, "Your price file %s is in use (--prices FILE would replace it).\n", v.ConfigFile)
	default:
		fmt.Fprintf(&b, "Your price file: none at %s (the built-in form, LiteLLM's model_prices_and_context_window.json, or {\"extends\": \"built-in\", \"models\": [...]} for a few models).\n", v.ConfigFile)
	}
	if _, err := io.WriteString(w, b.String()+"\n"); err != nil {
		return err
	}
	cols := []column{{head: "MODEL"}, {head: "INPUT", right: true}, {head: "OUTPUT", right: true}, {head: "5M-WRITE", right: true},
		{head: "1H-WRITE", right: true}, {head: "READ", right: true}, {head: "LONG CONTEXT"}, {head: "FAST", right: true}, {head: "READ ON"}}
	table := [][]string{header(cols)}
	var sources strings.Builder
	for _, m := range t.Models {
		name := m.Model
		if m.Until != "" {
			name += " (before " + m.Until + ")"
		}
		long := "-"
		if lc := m.LongContext; lc != nil {
			long = fmt.Sprintf(">%s: %s/%s", numfmt.Thousands(lc.AboveInputTokens), rate(lc.Input), rate(lc.Output))
		}
		fast := "-"
		if m.Fast > 0 {
			fast = strconv.FormatFloat(m.Fast, 'f', -1, 64) + "×"
		}
		src := orDash(m.Source)
		if m.Note != "" {
			src += "; " + m.Note
		}
		fmt.Fprintf(&sources, "  %s: %s\n", name, src)
		table = append(table, []string{name, rate(m.Input), rate(m.Output), rate(m.CacheWrite5m), rate(m.CacheWrite1h), rate(m.CacheRead), long, fast, orDash(m.Read)})
	}
	if err := writeTable(w, cols, table); err != nil {
		return err
	}
	b.Reset()
	b.WriteString("Where each model's rates were read:\n" + sources.String())
	if t.WebSearchPer1K > 0 {
		fmt.Fprintf(&b, "Web search: $%s per 1,000 searches, on top of tokens (%s).\n", strconv.FormatFloat(t.WebSearchPer1K, 'f', -1, 64), orDash(t.WebSearchSource))
	}
	if t.BatchFactor != 1 {
		fmt.Fprintf(&b, "Message Batches: %s%% of every rate.\n", strconv.FormatFloat(t.BatchFactor*100, 'f', -1, 64))
	}
	b.WriteString("Cache writes without a 5m/1h split count as 5-minute writes. Long context: the whole request, output included, at those rates when its prompt (input, cache reads and writes) is above the threshold. Fast: every rate times this for usage.speed \"fast\"; a fast answer of a model without it counts at standard rates, marked ≥.\n")
	b.WriteString("Another Claude model is priced as its neighbour in the table (≈: same family and version, else the nearest older, else the nearest newer); other vendors' models have no price.\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return pricesUsed(w, v)
}

// pricesUsed writes how the table prices the models of the user's sessions.
func pricesUsed(w io.Writer, v PricesView) error {
	if v.Dir == "" {
		return nil
	}
	if _, err := fmt.Fprintf(w, "\nModels in your sessions (%s under %s):\n", numfmt.Count(v.Sessions, "session", "sessions"), v.Dir); err != nil {
		return err
	}
	if len(v.Used) == 0 {
		_, err := io.WriteString(w, "none\n")
		return err
	}
	cols := []column{{head: "MODEL"}, {head: "ANSWERS", right: true}, {head: "LAST"}, {head: "PRICED AS"}}
	table := [][]string{header(cols)}
	var off []string
	for _, m := range v.Used {
		as := m.PricedAs
		switch {
		case !m.Priced:
			as = "≥ no price (left out of every cost)"
			off = append(off, m.Model)
		case m.Estimated:
			as = "≈ " + m.PricedAs + " (a neighbour: not this model's own price)"
			off = append(off, m.Model)
		}
		if m.FastUnpriced {
			as += fmt.Sprintf("; ≥ %s fast-mode answers at standard rates (no fast-mode price)", numfmt.Thousands(int64(m.FastAnswers)))
		}
		last := "-"
		if !m.Last.IsZero() {
			last = m.Last.Local().Format(time.DateOnly)
		}
		table = append(table, []string{m.Model, numfmt.Thousands(int64(m.Answers)), last, as})
	}
	if err := writeTable(w, cols, table); err != nil {
		return err
	}
	var b strings.Builder
	if len(off) == 0 {
		b.WriteString("Every model of your sessions has its own price in the table.\n")
	} else {
		fmt.Fprintf(&b, "%s priced ≈ or not at all: %s. Add %s with --prices FILE or your price file.\n",
			numfmt.Count(len(off), "model is", "models are"), strings.Join(off, ", "), numfmt.Plural(len(off), "its price", "their prices"))
	}
	if v.Stale != "" {
		fmt.Fprintf(&b, "Note: %s.\n", v.Stale)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// rate is a per-million rate for people: "$5", "$0.625".
func rate(r float64) string {
	return "$" + strconv.FormatFloat(r, 'f', -1, 64)
}

// SetUsed sets what the sessions under dir used: their count, the models
// that answered in them, and whether the table is older than they are.
func (v *PricesView) SetUsed(dir string, sessions int, used []sessionfiles.ModelUse) {
	v.Dir, v.Sessions, v.Used = dir, sessions, used
	var newest time.Time
	for _, m := range used {
		if m.Last.After(newest) {
			newest = m.Last
		}
	}
	v.Stale = v.Table.Staleness(newest)
}

// PricesJSON writes v as one JSON object: the table in the built-in form
// and the models of the sessions.
func PricesJSON(w io.Writer, v PricesView) error {
	out := struct {
		Prices     string                  `json:"prices"`
		ConfigFile string                  `json:"config_file"`
		Table      *pricing.Table          `json:"table"`
		Dir        string                  `json:"sessions_dir,omitempty"`
		Sessions   int                     `json:"sessions"`
		Used       []sessionfiles.ModelUse `json:"models_used"`
		Stale      string                  `json:"stale,omitempty"`
	}{v.Table.Describe(), v.ConfigFile, v.Table, v.Dir, v.Sessions, v.Used, v.Stale}
	if out.Used == nil {
		out.Used = []sessionfiles.ModelUse{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
