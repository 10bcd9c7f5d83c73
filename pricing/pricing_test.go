package pricing

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCostGolden checks the built-in table against costs worked out by
// hand from the published per-million-token rates.
func TestCostGolden(t *testing.T) {
	tab := Default()
	for _, tc := range []struct {
		model string
		u     Usage
		as    string
		est   bool
		long  bool
		want  Cost
	}{
		// 1,000×$3 + 2,000×$15 + 10,000×$3.75 + 50,000×$0.30 per million.
		{"claude-sonnet-4-5-20250929", Usage{Input: 1000, Output: 2000, CacheRead: 50000, CacheWrite5m: 10000}, "claude-sonnet-4-5", false, false,
			Cost{Input: 0.003, Output: 0.03, CacheWrite: 0.0375, CacheRead: 0.015, Total: 0.0855}},
		// A 215,000-token prompt: every token at the long-context rates,
		// $6 / $22.50 / 1h write $12 / read $0.60.
		{"claude-sonnet-4-5", Usage{Input: 10000, Output: 1000, CacheRead: 200000, CacheWrite1h: 5000}, "claude-sonnet-4-5", false, true,
			Cost{Input: 0.06, Output: 0.0225, CacheWrite: 0.06, CacheRead: 0.12, Total: 0.2625}},
		// Exactly 200,000: still the standard rates.
		{"us.anthropic.claude-sonnet-4-20250514-v1:0", Usage{Input: 200000}, "claude-sonnet-4", false, false,
			Cost{Input: 0.6, Total: 0.6}},
		// Batch: half of $15 and $75.
		{"claude-opus-4-1-20250805", Usage{Input: 100000, Output: 10000, Batch: true}, "claude-opus-4-1", false, false,
			Cost{Input: 0.75, Output: 0.375, Total: 1.125}},
		// Not in the table: priced as the newest Opus, estimated.
		// 2,000×$5 + 500×$25 + 3,000×$6.25 + 100,000×$0.50.
		{"claude-opus-5-5", Usage{Input: 2000, Output: 500, CacheRead: 100000, CacheWrite5m: 3000}, "claude-opus-4-5", true, false,
			Cost{Input: 0.01, Output: 0.0125, CacheWrite: 0.01875, CacheRead: 0.05, Total: 0.09125}},
		// 1h and 5m writes together: 4,000×$1.25 + 1,000×$2 (Haiku 4.5).
		{"claude-haiku-4-5[1m]", Usage{Output: 100, CacheWrite5m: 4000, CacheWrite1h: 1000}, "claude-haiku-4-5", false, false,
			Cost{Output: 0.0005, CacheWrite: 0.007, Total: 0.0075}},
	} {
		got, p, ok := tab.Cost(tc.model, tc.u)
		if !ok || p.Model.Model != tc.as || p.Estimated != tc.est || got.LongContext != tc.long {
			t.Errorf("%s: ok %v priced as %q estimated %v long %v; want %q %v %v", tc.model, ok, p.Model.Model, p.Estimated, got.LongContext, tc.as, tc.est, tc.long)
		}
		for _, f := range []struct {
			name      string
			got, want float64
		}{{"input", got.Input, tc.want.Input}, {"output", got.Output, tc.want.Output}, {"cache write", got.CacheWrite, tc.want.CacheWrite}, {"cache read", got.CacheRead, tc.want.CacheRead}, {"total", got.Total, tc.want.Total}} {
			if math.Abs(f.got-f.want) > 1e-12 {
				t.Errorf("%s: %s $%v, want $%v", tc.model, f.name, f.got, f.want)
			}
		}
	}
	if _, _, ok := tab.Cost("gpt-4o", Usage{Input: 1}); ok {
		t.Error("a model of another vendor got a price")
	}
}

func TestDefaultTable(t *testing.T) {
	tab := Default()
	if tab.Taken != "2025-11-24" || tab.BatchFactor != 0.5 || len(tab.Models) < 8 {
		t.Errorf("built-in table: taken %q batch %v models %d", tab.Taken, tab.BatchFactor, len(tab.Models))
	}
	// Each copy is its own.
	tab.Models[0].Input = 99
	if Default().Models[0].Input == 99 {
		t.Error("Default shares its table")
	}
	if d := Default().Describe(); !strings.Contains(d, "2025-11-24") || !strings.Contains(d, "built-in") {
		t.Errorf("describe %q", d)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "prices.json")
	if err := os.WriteFile(good, []byte(`{"taken":"2026-11-01","models":[{"model":"claude-sonnet","family":"sonnet","input":1,"output":2,"cache_write_5m":3,"cache_write_1h":4,"cache_read":0.5}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tab, err := Load(good)
	if err != nil {
		t.Fatal(err)
	}
	c, p, ok := tab.Cost("claude-sonnet-4-5", Usage{Input: 1e6, Output: 1e6, CacheRead: 1e6, CacheWrite5m: 1e6, CacheWrite1h: 1e6, Batch: true})
	if !ok || p.Estimated || c.Total != 10.5 {
		t.Errorf("loaded table: ok %v estimated %v total %v, want 10.5 (no batch factor: full price)", ok, p.Estimated, c.Total)
	}
	if d := tab.Describe(); !strings.Contains(d, good) {
		t.Errorf("describe %q does not name the file", d)
	}
	for name, body := range map[string]string{
		"no date":       `{"models":[{"model":"m","input":1}]}`,
		"no models":     `{"taken":"2026-01-01","models":[]}`,
		"unknown field": `{"taken":"2026-01-01","models":[{"model":"m","inptu":1}]}`,
		"negative":      `{"taken":"2026-01-01","models":[{"model":"m","input":-1}]}`,
		"currency":      `{"taken":"2026-01-01","currency":"EUR","models":[{"model":"m","input":1}]}`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err == nil || !strings.HasPrefix(err.Error(), "pricing: load") {
			t.Errorf("%s: err %v", name, err)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file loaded")
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
