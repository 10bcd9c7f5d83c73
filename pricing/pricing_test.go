package pricing

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCostGolden checks the built-in table against costs worked out by
// hand from the published per-million-token rates (BENCHMARKS.md, "Prices
// by hand", shows the same sums).
func TestCostGolden(t *testing.T) {
	tab := Default()
	for _, tc := range []struct {
		name  string
		model string
		u     Usage
		as    string
		est   bool
		long  bool
		fast  bool
		want  Cost
	}{
		// Opus 4.6 at $5/$25: 3×$5 + 1,250×$25 + 4,500×$6.25 + 180,000×$0.50
		// per million. Opus 4's $15/$75 would make it three times as much.
		{"opus 4.6", "claude-opus-4-6", Usage{Input: 3, Output: 1250, CacheRead: 180000, CacheWrite5m: 4500}, "claude-opus-4-6", false, false, false,
			Cost{Input: 0.000015, Output: 0.03125, CacheWrite: 0.028125, CacheRead: 0.09, Total: 0.14939}},
		// The usage of two Opus 4.6 answers as public Claude Code
		// transcripts hold them: a first turn writing 28,787 tokens to the
		// 5-minute cache, 3×$5 + 220×$25 + 28,787×$6.25; and one writing
		// 19,623 to the 1-hour cache and reading 19,635, 3×$5 + 34×$25 +
		// 19,623×$10 + 19,635×$0.50.
		{"public opus 4.6 first turn", "claude-opus-4-6", Usage{Input: 3, Output: 220, CacheWrite5m: 28787}, "claude-opus-4-6", false, false, false,
			Cost{Input: 0.000015, Output: 0.0055, CacheWrite: 0.17991875, Total: 0.18543375}},
		{"public opus 4.6 1h", "claude-opus-4-6", Usage{Input: 3, Output: 34, CacheWrite1h: 19623, CacheRead: 19635}, "claude-opus-4-6", false, false, false,
			Cost{Input: 0.000015, Output: 0.00085, CacheWrite: 0.19623, CacheRead: 0.0098175, Total: 0.2069125}},
		// Sonnet 4.5, a 215,000-token prompt: the whole request at the
		// long-context rates, $6 / $22.50 / 5m write $7.50 / read $0.60.
		// 2,000×$6 + 4,000×$22.50 + 3,000×$7.50 + 210,000×$0.60.
		{"sonnet 4.5 over 200k", "claude-sonnet-4-5-20250929", Usage{Input: 2000, Output: 4000, CacheRead: 210000, CacheWrite5m: 3000}, "claude-sonnet-4-5", false, true, false,
			Cost{Input: 0.012, Output: 0.09, CacheWrite: 0.0225, CacheRead: 0.126, Total: 0.2505}},
		// Exactly 200,000: still the standard rates.
		{"sonnet 4 at 200k", "us.anthropic.claude-sonnet-4-20250514-v1:0", Usage{Input: 200000}, "claude-sonnet-4", false, false, false,
			Cost{Input: 0.6, Total: 0.6}},
		// Fast mode on Opus 4.6: 6× every rate, $30 / $150 / 5m write
		// $37.50 / read $3. 10×$30 + 2,000×$150 + 1,000×$37.50 + 50,000×$3.
		{"opus 4.6 fast", "claude-opus-4-6", Usage{Input: 10, Output: 2000, CacheRead: 50000, CacheWrite5m: 1000, Speed: "fast"}, "claude-opus-4-6", false, false, true,
			Cost{Input: 0.0003, Output: 0.3, CacheWrite: 0.0375, CacheRead: 0.15, Total: 0.4878}},
		// 1-hour writes on Opus 4.8 at $10 (2× input): 20,000×$10 +
		// 30,000×$0.50 + 5×$5 + 800×$25.
		{"opus 4.8 1h writes", "claude-opus-4-8", Usage{Input: 5, Output: 800, CacheRead: 30000, CacheWrite1h: 20000}, "claude-opus-4-8", false, false, false,
			Cost{Input: 0.000025, Output: 0.02, CacheWrite: 0.2, CacheRead: 0.015, Total: 0.235025}},
		// Three web searches at $10 per 1,000 on top of Sonnet 4.6's
		// tokens: 1,200×$3 + 600×$15 + 40,000×$0.30 + 3×$0.01.
		{"web search", "claude-sonnet-4-6", Usage{Input: 1200, Output: 600, CacheRead: 40000, WebSearches: 3}, "claude-sonnet-4-6", false, false, false,
			Cost{Input: 0.0036, Output: 0.009, CacheRead: 0.012, WebSearch: 0.03, Total: 0.0546}},
		// Haiku 5.5 above its 100,000-token tier: 1,000×$0.50 +
		// 2,000×$2.50 + 120,000×$0.05.
		{"haiku 5.5 over 100k", "claude-haiku-5-5", Usage{Input: 1000, Output: 2000, CacheRead: 120000}, "claude-haiku-5-5", false, true, false,
			Cost{Input: 0.0005, Output: 0.005, CacheRead: 0.006, Total: 0.0115}},
		// Batch: half of $15 and $75.
		{"batch", "claude-opus-4-1-20250805", Usage{Input: 100000, Output: 10000, Batch: true}, "claude-opus-4-1", false, false, false,
			Cost{Input: 0.75, Output: 0.375, Total: 1.125}},
		// A Claude model newer than the table: priced as the newest Opus,
		// marked. 2,000×$4 + 500×$20 + 3,000×$5 + 100,000×$0.20.
		{"newer opus", "claude-opus-5-7", Usage{Input: 2000, Output: 500, CacheRead: 100000, CacheWrite5m: 3000}, "claude-opus-5-5", true, false, false,
			Cost{Input: 0.008, Output: 0.01, CacheWrite: 0.015, CacheRead: 0.02, Total: 0.053}},
		// 1h and 5m writes together: 4,000×$1.25 + 1,000×$2 (Haiku 4.5).
		{"haiku 4.5 mixed writes", "claude-haiku-4-5[1m]", Usage{Output: 100, CacheWrite5m: 4000, CacheWrite1h: 1000}, "claude-haiku-4-5", false, false, false,
			Cost{Output: 0.0005, CacheWrite: 0.007, Total: 0.0075}},
	} {
		got, p, ok := tab.Cost(tc.model, tc.u)
		if !ok || p.Model.Model != tc.as || p.Estimated != tc.est || got.LongContext != tc.long || got.Fast != tc.fast {
			t.Errorf("%s: ok %v priced as %q estimated %v long %v fast %v; want %q %v %v %v", tc.name, ok, p.Model.Model, p.Estimated, got.LongContext, got.Fast, tc.as, tc.est, tc.long, tc.fast)
		}
		for _, f := range []struct {
			name      string
			got, want float64
		}{{"input", got.Input, tc.want.Input}, {"output", got.Output, tc.want.Output}, {"cache write", got.CacheWrite, tc.want.CacheWrite},
			{"cache read", got.CacheRead, tc.want.CacheRead}, {"web search", got.WebSearch, tc.want.WebSearch}, {"total", got.Total, tc.want.Total}} {
			if math.Abs(f.got-f.want) > 1e-12 {
				t.Errorf("%s: %s $%v, want $%v", tc.name, f.name, f.got, f.want)
			}
		}
	}
	// Fast mode on a model with no published multiplier: standard rates,
	// and the figure says it is a lower bound.
	c, _, ok := tab.Cost("claude-fable-5-2", Usage{Output: 1000, Speed: "fast"})
	if !ok || !c.FastUnpriced || c.Fast || math.Abs(c.Total-0.04) > 1e-12 {
		t.Errorf("fast Fable 5.2: %+v %v, want $0.04 marked fast-unpriced", c, ok)
	}
	for _, id := range []string{"gpt-4o", "glm-4.6", "<synthetic>"} {
		if _, _, ok := tab.Cost(id, Usage{Input: 1}); ok {
			t.Errorf("%s got a price", id)
		}
	}
}

// TestLookup covers every form of model ID: exact, with a date, with the
// providers' prefixes and suffixes, neighbours, and IDs with no price.
func TestLookup(t *testing.T) {
	tab := Default()
	for _, tc := range []struct {
		id, as string
		est    bool
	}{
		{"claude-opus-4-6", "claude-opus-4-6", false},
		{"claude-opus-4-7", "claude-opus-4-7", false},
		{"claude-opus-4-8", "claude-opus-4-8", false},
		{"claude-opus-4", "claude-opus-4", false},
		{"claude-opus-4-0", "claude-opus-4", false},        // an alias
		{"claude-opus-4-20250514", "claude-opus-4", false}, // a date
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5", false},
		{"Claude-Sonnet-4-5", "claude-sonnet-4-5", false},
		{"claude-3-5-sonnet-20241022", "claude-3-5-sonnet", false},
		{"claude-3-7-sonnet-latest", "claude-3-7-sonnet", false},
		{"claude-opus-4-6[1m]", "claude-opus-4-6", false},          // Claude Code's 1M-context suffix
		{"claude-sonnet-4-5@20250929", "claude-sonnet-4-5", false}, // Vertex
		{"claude-opus-4-6@default", "claude-opus-4-6", false},      // Vertex
		{"anthropic.claude-opus-4-6-v1", "claude-opus-4-6", false}, // Bedrock
		{"anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1", false},
		{"anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet", false},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5", false},
		{"eu.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5", false},
		{"apac.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4", false},
		{"global.anthropic.claude-opus-4-6-v1", "claude-opus-4-6", false},
		{"anthropic/claude-opus-5-5", "claude-opus-5-5", false},
		{"claude-fable-5-2", "claude-fable-5-2", false},
		{"claude-haiku-5-5", "claude-haiku-5-5", false},
		// Neighbours, marked.
		{"claude-opus-4-6-thinking", "claude-opus-4-6", true}, // same version, more name
		{"claude-opus-4.6", "claude-opus-4-6", true},
		{"claude-opus-5-7", "claude-opus-5-5", true}, // newer than the table: its newest Opus
		{"claude-opus-4-9", "claude-opus-4-8", true}, // between: the nearest older
		{"claude-sonnet-4-7", "claude-sonnet-4-6", true},
		{"claude-sonnet-6", "claude-sonnet-5-5", true},
		{"claude-haiku-3", "claude-3-haiku", true},
		{"claude-fable-6", "claude-fable-5-2", true},
		{"claude-opus-4-6-20260205-v1:0-extra", "claude-opus-4-6", true},
	} {
		p, ok := tab.Lookup(tc.id)
		if !ok || p.Model.Model != tc.as || p.Estimated != tc.est {
			t.Errorf("Lookup(%q) = %q estimated %v ok %v; want %q estimated %v", tc.id, p.Model.Model, p.Estimated, ok, tc.as, tc.est)
		}
	}
	for _, id := range []string{"", "<synthetic>", "gpt-4o", "glm-4.6", "GLM-4.5-Air", "kimi-k2", "deepseek-chat", "claude-2.1", "claude-instant-1.2",
		"claude", "my-claude-opus-4-6", "anthropic.titan-text", "claude-opus"} {
		if p, ok := tab.Lookup(id); ok {
			t.Errorf("Lookup(%q) priced it as %s", id, p.Model.Model)
		}
	}
	if !NotAModel("<synthetic>") || !NotAModel(" ") || NotAModel("glm-4.6") {
		t.Error("NotAModel")
	}
}

// TestNoPrefixMatch is the rule the old lookup broke: a table entry never
// prices a longer ID as if it were the same model. With only Opus 4 and
// Opus 4.5 in the table, Opus 4.6 is not Opus 4 ($15/$75, 3× too much) but
// the nearest older Opus, Opus 4.5, and marked as such.
func TestNoPrefixMatch(t *testing.T) {
	tab, err := Parse([]byte(`{"taken":"2026-01-01","models":[
		{"model":"claude-opus-4","input":15,"output":75},
		{"model":"claude-opus-4-5","input":5,"output":25},
		{"model":"claude-sonnet-4","input":3,"output":15,"long_context":{"above_input_tokens":200000,"input":6,"output":22.5}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ id, as string }{
		{"claude-opus-4-6", "claude-opus-4-5"},
		{"claude-opus-4-1", "claude-opus-4"},
		{"claude-sonnet-4-6", "claude-sonnet-4"},
	} {
		p, ok := tab.Lookup(tc.id)
		if !ok || p.Model.Model != tc.as || !p.Estimated {
			t.Errorf("Lookup(%q) = %q estimated %v, want ≈ %q", tc.id, p.Model.Model, p.Estimated, tc.as)
		}
	}
	if p, _ := tab.Lookup("claude-opus-4"); p.Estimated {
		t.Error("the entry itself is estimated")
	}
}

// TestDatedEntries checks rates that changed: Opus 4.6 and Sonnet 4.6 had
// a long-context surcharge until 2026-03-13, Sonnet 5.5's cache reads fell
// on 2026-10-07.
func TestDatedEntries(t *testing.T) {
	tab := Default()
	long := Usage{Input: 1000, CacheRead: 249000, Output: 1000}
	before := time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC)
	after := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	// Before: 1,000×$10 + 249,000×$1 + 1,000×$37.50.
	long.At = before
	if c, _, _ := tab.Cost("claude-opus-4-6", long); !c.LongContext || math.Abs(c.Total-0.2965) > 1e-12 {
		t.Errorf("Opus 4.6 in February: %+v, want $0.2965 long-context", c)
	}
	// After, and with no date: 1,000×$5 + 249,000×$0.50 + 1,000×$25.
	for _, at := range []time.Time{after, {}} {
		long.At = at
		if c, _, _ := tab.Cost("claude-opus-4-6", long); c.LongContext || math.Abs(c.Total-0.1545) > 1e-12 {
			t.Errorf("Opus 4.6 at %v: %+v, want $0.1545", at, c)
		}
	}
	// A neighbour follows its entry's dates too.
	long.At = before
	if c, p, _ := tab.Cost("claude-sonnet-4-6-thinking", long); !p.Estimated || !c.LongContext {
		t.Errorf("Sonnet 4.6 neighbour in February: %+v %+v", c, p)
	}
	read := Usage{CacheRead: 1e6}
	for _, tc := range []struct {
		at   time.Time
		want float64
	}{{time.Date(2026, 10, 6, 23, 59, 0, 0, time.UTC), 0.2}, {time.Date(2026, 10, 7, 0, 0, 0, 0, time.UTC), 0.1}, {time.Time{}, 0.1}} {
		read.At = tc.at
		if c, _, _ := tab.Cost("claude-sonnet-5-5", read); math.Abs(c.Total-tc.want) > 1e-12 {
			t.Errorf("Sonnet 5.5 reads at %v: $%v, want $%v", tc.at, c.Total, tc.want)
		}
	}
}

func TestDefaultTable(t *testing.T) {
	tab := Default()
	if tab.Taken != "2026-11-26" || tab.BatchFactor != 0.5 || tab.WebSearchPer1K != 10 || len(tab.Models) < 20 {
		t.Errorf("built-in table: taken %q batch %v web search %v models %d", tab.Taken, tab.BatchFactor, tab.WebSearchPer1K, len(tab.Models))
	}
	undated := map[string]bool{}
	for _, m := range tab.Models {
		if m.Read == "" || m.Source == "" || m.Family == "" {
			t.Errorf("%s: read %q source %q family %q", m.Model, m.Read, m.Source, m.Family)
		}
		if Normalize(m.Model) != m.Model {
			t.Errorf("%s is not in normal form", m.Model)
		}
		rs := []Rates{m.Rates}
		if m.LongContext != nil {
			rs = append(rs, m.LongContext.Rates)
		}
		// Cache writes are 1.25× and 2× input on every model the page lists
		// but Haiku 3, whose page rounded them ($0.30 and $0.03 on $0.25).
		for _, r := range rs {
			if m.Model == "claude-3-haiku" {
				continue
			}
			if math.Abs(r.CacheWrite5m-1.25*r.Input) > 1e-9 || math.Abs(r.CacheWrite1h-2*r.Input) > 1e-9 || r.CacheRead <= 0 || r.CacheRead > 0.1*r.Input+1e-9 {
				t.Errorf("%s: rates %+v do not follow the cache multipliers", m.Model, r)
			}
		}
		if m.Until == "" {
			if undated[m.Model] {
				t.Errorf("%s: two entries in force today", m.Model)
			}
			undated[m.Model] = true
		}
	}
	for _, m := range tab.Models {
		if m.Until != "" && !undated[m.Model] {
			t.Errorf("%s: a dated entry without one for today", m.Model)
		}
	}
	// Each copy is its own.
	tab.Models[0].Input = 99
	if Default().Models[0].Input == 99 {
		t.Error("Default shares its table")
	}
	if d := Default().Describe(); d != "built-in prices taken 2026-11-26" {
		t.Errorf("describe %q", d)
	}
}

func TestStaleness(t *testing.T) {
	tab := Default()
	if s := tab.Staleness(time.Date(2026, 12, 20, 0, 0, 0, 0, time.UTC)); s != "" {
		t.Errorf("24 days later: %q", s)
	}
	s := tab.Staleness(time.Date(2027, 2, 1, 12, 0, 0, 0, time.UTC))
	if !strings.Contains(s, "67 days newer than the price table (2026-11-26)") {
		t.Errorf("67 days later: %q", s)
	}
	if tab.Staleness(time.Time{}) != "" {
		t.Error("no session, a notice")
	}
}

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := write(t, dir, "prices.json", `{"taken":"2026-11-01","models":[{"model":"claude-sonnet-4-5","input":1,"output":2,"cache_write_5m":3,"cache_write_1h":4,"cache_read":0.5}]}`)
	tab, err := Load(good)
	if err != nil {
		t.Fatal(err)
	}
	c, p, ok := tab.Cost("claude-sonnet-4-5", Usage{Input: 1e6, Output: 1e6, CacheRead: 1e6, CacheWrite5m: 1e6, CacheWrite1h: 1e6, Batch: true})
	if !ok || p.Estimated || c.Total != 10.5 {
		t.Errorf("loaded table: ok %v estimated %v total %v, want 10.5 (no batch factor: full price)", ok, p.Estimated, c.Total)
	}
	if _, ok := tab.Lookup("claude-opus-4-6"); ok {
		t.Error("a whole table kept the built-in models")
	}
	if d := tab.Describe(); d != "prices taken 2026-11-01 from "+good {
		t.Errorf("describe %q", d)
	}
	for name, body := range map[string]string{
		"no date":       `{"models":[{"model":"m","input":1}]}`,
		"bad date":      `{"taken":"26 Nov","models":[{"model":"m","input":1}]}`,
		"no models":     `{"taken":"2026-01-01","models":[]}`,
		"unknown field": `{"taken":"2026-01-01","models":[{"model":"m","inptu":1}]}`,
		"negative":      `{"taken":"2026-01-01","models":[{"model":"m","input":-1}]}`,
		"negative fast": `{"taken":"2026-01-01","models":[{"model":"m","input":1,"fast":-2}]}`,
		"currency":      `{"taken":"2026-01-01","currency":"EUR","models":[{"model":"m","input":1}]}`,
		"extends":       `{"extends":"litellm","models":[{"model":"m","input":1}]}`,
		"not json":      `{"taken":`,
		"empty object":  `{}`,
		"litellm bad":   `{"claude-x":{"input_cost_per_token":-1e-6}}`,
	} {
		p := write(t, dir, strings.ReplaceAll(name, " ", "_"), body)
		if _, err := Load(p); err == nil || !strings.HasPrefix(err.Error(), "pricing: load") {
			t.Errorf("%s: err %v", name, err)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file loaded")
	}
}

// TestLoadOverride replaces one model of the built-in table: Opus 5.5 at a
// negotiated rate, with its cache rates derived from the input rate.
func TestLoadOverride(t *testing.T) {
	p := write(t, t.TempDir(), "one.json", `{"extends":"built-in","taken":"2026-12-01","models":[{"model":"claude-opus-5-5","input":3,"output":15}]}`)
	tab, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	pr, ok := tab.Lookup("claude-opus-5-5")
	if !ok || pr.Input != 3 || pr.CacheWrite5m != 3.75 || pr.CacheWrite1h != 6 || math.Abs(pr.CacheRead-0.3) > 1e-12 || pr.Read != "2026-12-01" {
		t.Errorf("override: %+v", pr.Model)
	}
	if pr, _ := tab.Lookup("claude-opus-4-6"); pr.Input != 5 {
		t.Error("the rest of the built-in table is gone")
	}
	if d := tab.Describe(); d != "built-in prices taken 2026-11-26, with claude-opus-5-5 from "+p {
		t.Errorf("describe %q", d)
	}
}

// litellmSample is the shape of LiteLLM's model_prices_and_context_window.json.
const litellmSample = `{
  "sample_spec": {"input_cost_per_token": 0, "litellm_provider": "one of the providers"},
  "claude-opus-4-6": {"input_cost_per_token": 5e-06, "output_cost_per_token": 2.5e-05, "cache_creation_input_token_cost": 6.25e-06,
    "cache_creation_input_token_cost_above_1hr": 1e-05, "cache_read_input_token_cost": 5e-07, "litellm_provider": "anthropic", "mode": "chat",
    "provider_specific_entry": {"us": 1.1, "fast": 6}},
  "anthropic.claude-opus-4-6-v1": {"input_cost_per_token": 9e-06, "output_cost_per_token": 9e-05, "litellm_provider": "bedrock_converse", "mode": "chat"},
  "vertex_ai/claude-opus-4-6": {"input_cost_per_token": 1e-05, "output_cost_per_token": 1e-04, "litellm_provider": "vertex_ai-anthropic_models", "mode": "chat"},
  "claude-sonnet-4-5": {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05, "cache_creation_input_token_cost": 3.75e-06, "cache_read_input_token_cost": 3e-07,
    "input_cost_per_token_above_200k_tokens": 6e-06, "output_cost_per_token_above_200k_tokens": 2.25e-05,
    "cache_creation_input_token_cost_above_200k_tokens": 7.5e-06, "cache_read_input_token_cost_above_200k_tokens": 6e-07, "litellm_provider": "anthropic", "mode": "chat"},
  "glm-4.6": {"input_cost_per_token": 6e-07, "output_cost_per_token": 2.2e-06, "litellm_provider": "zai", "mode": "chat"},
  "text-embedding-3-small": {"input_cost_per_token": 2e-08, "output_cost_per_token": 0, "litellm_provider": "openai", "mode": "embedding"}
}`

func TestLoadLiteLLM(t *testing.T) {
	p := write(t, t.TempDir(), "model_prices_and_context_window.json", litellmSample)
	tab, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if tab.FileForm != "litellm" || len(tab.FromFile) != 3 {
		t.Errorf("form %q, models from the file %v", tab.FileForm, tab.FromFile)
	}
	// The plain key wins over the Bedrock one; the fast multiplier comes along.
	c, pr, ok := tab.Cost("claude-opus-4-6", Usage{Input: 1e6, Output: 1e6, CacheWrite1h: 1e6, Speed: "fast"})
	if !ok || pr.Estimated || pr.Fast != 6 || math.Abs(c.Total-6*(5+25+10)) > 1e-9 {
		t.Errorf("opus 4.6 from LiteLLM: %+v %+v", c, pr.Model)
	}
	// Above 200K: the whole request at LiteLLM's above-200K rates.
	c, _, _ = tab.Cost("claude-sonnet-4-5", Usage{Input: 1000, CacheRead: 200000})
	if !c.LongContext || math.Abs(c.Total-(1000*6+200000*0.6)/1e6) > 1e-12 {
		t.Errorf("sonnet 4.5 above 200K: %+v", c)
	}
	// The user priced GLM: it is priced, as GLM, never as Claude.
	if c, pr, ok := tab.Cost("glm-4.6", Usage{Input: 1e6}); !ok || pr.Model.Model != "glm-4.6" || math.Abs(c.Total-0.6) > 1e-9 {
		t.Errorf("glm from LiteLLM: %+v %+v %v", c, pr.Model, ok)
	}
	if _, ok := tab.Lookup("text-embedding-3-small"); ok {
		t.Error("an embedding model became a chat price")
	}
	// The built-in table is under it.
	if pr, ok := tab.Lookup("claude-fable-5-2"); !ok || pr.Input != 8 {
		t.Error("built-in models lost under a LiteLLM file")
	}
}

func TestLoadFor(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("HOME", t.TempDir())
	tab, err := LoadFor("")
	if err != nil || tab.File != "" {
		t.Fatalf("no files: %v %q", err, tab.File)
	}
	path, ok := ConfigPath()
	if !ok || path != filepath.Join(cfg, "tsinspect", "prices.json") {
		t.Fatalf("config path %q", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Dir(path), "prices.json", `{"extends":"built-in","models":[{"model":"claude-opus-5-5","input":3,"output":15}]}`)
	tab, err = LoadFor("")
	if err != nil || !tab.FromConfig || !strings.Contains(tab.Describe(), "(your configuration directory)") {
		t.Fatalf("config file: %v %q", err, tab.Describe())
	}
	if pr, _ := tab.Lookup("claude-opus-5-5"); pr.Input != 3 {
		t.Error("the config file's price is not used")
	}
	flagFile := write(t, t.TempDir(), "p.json", `{"taken":"2026-11-30","models":[{"model":"claude-opus-5-5","input":1,"output":1}]}`)
	if tab, err := LoadFor(flagFile); err != nil || tab.FromConfig || tab.File != flagFile {
		t.Errorf("--prices over the config file: %v %+v", err, tab)
	}
	write(t, filepath.Dir(path), "prices.json", `{"extends":"built-in"`)
	if _, err := LoadFor(""); err == nil || !strings.Contains(err.Error(), "configuration directory") {
		t.Errorf("a broken config file: %v", err)
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0": "claude-sonnet-4-5",
		"claude-opus-4-6[1m]":                          "claude-opus-4-6",
		"claude-opus-4-6@20260205":                     "claude-opus-4-6",
		"anthropic.claude-opus-4-6-v1":                 "claude-opus-4-6",
		"claude-3-7-sonnet-latest":                     "claude-3-7-sonnet",
		"claude-opus-4-6-v2x":                          "claude-opus-4-6-v2x",
		"us.claude-opus-4-6":                           "us.claude-opus-4-6",
		"glm-4.6":                                      "glm-4.6",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		usd  float64
		ok   bool
		want string
	}{{0, true, "$0"}, {0.0855, true, "$0.0855"}, {0.00001, true, "$0.0000"}, {12.345, true, "$12.35"}, {-0.5, true, "-$0.5000"}, {1, false, "-"}} {
		if got := Format(tc.usd, tc.ok); got != tc.want {
			t.Errorf("Format(%v, %v) = %q, want %q", tc.usd, tc.ok, got, tc.want)
		}
	}
}

func TestBreakCostAndPrefixRate(t *testing.T) {
	tab := Default()
	// 50,000 tokens written at $3.75 instead of read at $0.30.
	if c, ok := tab.BreakCost("claude-sonnet-4-5", Usage{CacheWrite5m: 60000}, 50000); !ok || math.Abs(c-0.1725) > 1e-12 {
		t.Errorf("5m break: %v %v, want 0.1725", c, ok)
	}
	// Only 1-hour writes: $6 instead of $0.30.
	if c, ok := tab.BreakCost("claude-sonnet-4-5", Usage{CacheWrite1h: 60000}, 50000); !ok || math.Abs(c-0.285) > 1e-12 {
		t.Errorf("1h break: %v %v, want 0.285", c, ok)
	}
	// Billed as uncached input: $3 instead of $0.30.
	if c, ok := tab.BreakCost("claude-sonnet-4-5", Usage{Input: 60000}, 50000); !ok || math.Abs(c-0.135) > 1e-12 {
		t.Errorf("uncached break: %v %v, want 0.135", c, ok)
	}
	// Part written (20,000 at $3.75), the rest uncached (30,000 at $3).
	if c, ok := tab.BreakCost("claude-sonnet-4-5", Usage{CacheWrite5m: 20000, Input: 40000}, 50000); !ok || math.Abs(c-0.15) > 1e-12 {
		t.Errorf("mixed break: %v %v, want 0.15", c, ok)
	}
	// Never more than what the request was billed for.
	if c, ok := tab.BreakCost("claude-sonnet-4-5", Usage{CacheWrite5m: 10000, CacheRead: 5000}, 50000); !ok || math.Abs(c-0.0345) > 1e-12 {
		t.Errorf("capped break: %v %v, want 0.0345", c, ok)
	}
	// In fast mode the break costs the fast rates: 50,000 × ($37.50 − $3) on Opus 4.6.
	if c, ok := tab.BreakCost("claude-opus-4-6", Usage{CacheWrite5m: 60000, Speed: "fast"}, 50000); !ok || math.Abs(c-1.725) > 1e-12 {
		t.Errorf("fast break: %v %v, want 1.725", c, ok)
	}
	for _, tc := range []struct {
		u    Usage
		want float64
	}{{Usage{CacheRead: 1, CacheWrite5m: 1}, 0.3}, {Usage{CacheWrite5m: 1}, 3.75}, {Usage{CacheWrite1h: 1}, 6}, {Usage{Input: 1}, 3}} {
		if r, ok := tab.PrefixRate("claude-sonnet-4-5", tc.u); !ok || r != tc.want {
			t.Errorf("prefix rate of %+v: %v, want %v", tc.u, r, tc.want)
		}
	}
	if _, ok := tab.BreakCost("mistral-large", Usage{}, 1); ok {
		t.Error("a break priced for an unknown model")
	}
}
