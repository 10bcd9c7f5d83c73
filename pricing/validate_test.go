package pricing

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tsinspect/tsinspect/internal/oddfiles"
)

// Issue 42, item 8: huge but finite prices made every total $NaN or
// $+Inf, and --json failed. Every figure of a price file is now finite,
// not negative and bounded, or the file is refused naming the model and
// its line.
func TestPricesAreBounded(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ body, want string }{
		"huge input": {"{\"taken\":\"2026-01-01\",\"models\":[\n{\"model\":\"a\",\"input\":1},\n{\"model\":\"claude-x\",\"input\":1e300}]}",
			"line 3: claude-x: input: 1e+300 is more than"},
		"huge long context": {`{"taken":"2026-01-01","models":[{"model":"m","input":1,"long_context":{"above_input_tokens":1,"output":1e308}}]}`,
			"line 1: m: long_context: output: 1e+308 is more than"},
		"huge fast":       {`{"taken":"2026-01-01","models":[{"model":"m","input":1,"fast":1e300}]}`, "fast-mode multiplier"},
		"negative fast":   {`{"taken":"2026-01-01","models":[{"model":"m","input":1,"fast":-2}]}`, "fast-mode multiplier: negative"},
		"huge web search": {`{"taken":"2026-01-01","web_search_per_1k":1e300,"models":[{"model":"m","input":1}]}`, "web_search_per_1k"},
		"batch above 1":   {`{"taken":"2026-01-01","batch_factor":1e300,"models":[{"model":"m","input":1}]}`, "batch_factor"},
		"priced twice": {"{\"taken\":\"2026-01-01\",\"models\":[\n{\"model\":\"claude-x\",\"input\":1},\n{\"model\":\"claude-x\",\"input\":2}]}",
			"line 3: claude-x: priced twice (also line 2)"},
	} {
		_, err := Load(write(t, dir, strings.ReplaceAll(name, " ", "_"), c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", name, err, c.want)
		}
	}
	// The largest prices a file may hold, over the largest counts a
	// session may claim, still give finite figures.
	tab, err := Load(write(t, dir, "max.json", `{"taken":"2026-01-01","web_search_per_1k":1e5,"models":[{"model":"claude-x","input":1e5,"output":1e5,"fast":100}]}`))
	if err != nil {
		t.Fatal(err)
	}
	u := Usage{Input: math.MaxInt64, Output: math.MaxInt64, CacheRead: math.MaxInt64, CacheWrite5m: math.MaxInt64, CacheWrite1h: math.MaxInt64, WebSearches: math.MaxInt64, Speed: "fast"}
	var sum Cost
	for range 1000 {
		c, _, ok := tab.Cost("claude-x", u)
		if !ok {
			t.Fatal("no price")
		}
		sum = sum.Add(c)
	}
	if math.IsInf(sum.Total, 0) || math.IsNaN(sum.Total) {
		t.Errorf("a thousand turns at the largest counts: %v", sum.Total)
	}
	if _, err := json.Marshal(sum); err != nil {
		t.Errorf("--json of the sum: %v", err)
	}
	if f := Format(math.Inf(1), true); f != "-" {
		t.Errorf("Format(+Inf) = %q", f)
	}
}

// Issue 42, item 10: LiteLLM entries with wrong-typed prices were dropped
// unnamed, a negative fast-mode multiplier was accepted, and a model
// priced twice kept the first entry without a word. Each is now named
// with its line, and the rest of the file is used.
func TestLiteLLMEntriesNamedWithTheirLine(t *testing.T) {
	body := `{
  "claude-good-1": {"input_cost_per_token": 1e-06, "output_cost_per_token": 5e-06, "mode": "chat"},
  "claude-typed-1": {"input_cost_per_token": "1e-06", "output_cost_per_token": 5e-06, "mode": "chat"},
  "claude-fast-1": {"input_cost_per_token": 1e-06, "output_cost_per_token": 5e-06, "mode": "chat", "provider_specific_entry": {"fast": -6}},
  "claude-huge-1": {"input_cost_per_token": 1e300, "output_cost_per_token": 5e-06, "mode": "chat"},
  "anthropic.claude-good-1-v1": {"input_cost_per_token": 2e-06, "output_cost_per_token": 9e-06, "mode": "chat"},
  "anthropic/claude-good-1": {"input_cost_per_token": 1e-06, "output_cost_per_token": 5e-06, "mode": "chat"}
}`
	tab, err := Load(write(t, t.TempDir(), "litellm.json", body))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(tab.Warnings, "\n")
	for _, want := range []string{
		"line 3: claude-typed-1: left out: input_cost_per_token: want a float64, not a string",
		"line 4: claude-fast-1: left out: fast-mode multiplier: negative",
		"line 5: claude-huge-1: left out: input: 1e+306 is more than",
		"line 6: anthropic.claude-good-1-v1: priced twice, as claude-good-1 at line 2 too, at other rates; the one at line 2 counts",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	// The same prices under another name are an alias, not said.
	if len(tab.Warnings) != 4 {
		t.Errorf("%d warnings, want 4:\n%s", len(tab.Warnings), all)
	}
	if p, ok := tab.Lookup("claude-good-1"); !ok || p.Input != 1 {
		t.Errorf("claude-good-1: %+v %v", p, ok)
	}
	for _, id := range []string{"claude-typed-1", "claude-fast-1", "claude-huge-1"} {
		if p, ok := tab.Lookup(id); ok && !p.Estimated {
			t.Errorf("%s was priced from its rejected entry: %+v", id, p)
		}
	}
}

// Issue 42, item 6: a named pipe or a link to /dev/zero as --prices or as
// the price file in the configuration directory hung every command or
// ran it out of memory. Both are refused at once, in one line.
func TestPriceFileThatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo, zero := filepath.Join(dir, "fifo.json"), filepath.Join(dir, "zero.json")
	oddfiles.Make(t, fifo, zero)
	for _, p := range []string{fifo, zero} {
		if _, err := LoadFor(p); err == nil || !strings.Contains(err.Error(), "not a regular file") || strings.Contains(err.Error(), "\n") {
			t.Errorf("--prices %s: %v", filepath.Base(p), err)
		}
	}
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	if err := os.MkdirAll(filepath.Join(config, "tsinspect"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(config, "tsinspect", "prices.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFor(""); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a named pipe as the user's price file: %v", err)
	}
}
