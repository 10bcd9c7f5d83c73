package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pricedAnswers are answers shaped like real Claude Code ones, one a day,
// each the case of one pricing rule; BENCHMARKS.md ("Prices by hand")
// works out every figure.
var pricedAnswers = []struct {
	day, model string
	usage      string
	// usd is tsinspect's price, by hand from the published rates;
	// ccusage is ccusage 20.0.24's, which differs where the comment says.
	usd, ccusage float64
	// ccWrites, when not -1, is the cache writes ccusage counts where it
	// differs from cache_creation_input_tokens.
	ccWrites int64
}{
	// Opus 4.6 at $5/$25: 3×$5 + 1,250×$25 + 4,500×$6.25 + 180,000×$0.50.
	{"2026-11-01", "claude-opus-4-6", `{"input_tokens":3,"output_tokens":1250,"cache_read_input_tokens":180000,"cache_creation_input_tokens":4500,"cache_creation":{"ephemeral_5m_input_tokens":4500,"ephemeral_1h_input_tokens":0}}`,
		0.14939, 0.14939, -1},
	// Sonnet 4.5, a 215,000-token prompt: the pricing page bills the whole
	// request at $6/$22.50/$7.50/$0.60 (2,000×6 + 4,000×22.5 + 3,000×7.5 +
	// 210,000×0.6 = $0.2505); ccusage bills only the tokens above 200,000
	// of each kind at the higher rate: 2,000×3 + 4,000×15 + 3,000×3.75 +
	// (200,000×0.3 + 10,000×0.6) = $0.14325, 43 % less.
	{"2026-11-02", "claude-sonnet-4-5-20250929", `{"input_tokens":2000,"output_tokens":4000,"cache_read_input_tokens":210000,"cache_creation_input_tokens":3000,"cache_creation":{"ephemeral_5m_input_tokens":3000,"ephemeral_1h_input_tokens":0}}`,
		0.2505, 0.14325, -1},
	// Fast mode on Opus 4.6, 6×: 10×30 + 2,000×150 + 1,000×37.5 + 50,000×3.
	{"2026-11-03", "claude-opus-4-6", `{"input_tokens":10,"output_tokens":2000,"cache_read_input_tokens":50000,"cache_creation_input_tokens":1000,"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":0},"speed":"fast"}`,
		0.4878, 0.4878, -1},
	// 1-hour writes on Opus 4.8: 5×5 + 800×25 + 20,000×10 + 30,000×0.5.
	{"2026-11-04", "claude-opus-4-8", `{"input_tokens":5,"output_tokens":800,"cache_read_input_tokens":30000,"cache_creation_input_tokens":20000,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":20000}}`,
		0.235025, 0.235025, -1},
	// Three web searches at $10 per 1,000 on Sonnet 4.6: 1,200×3 + 600×15 +
	// 40,000×0.3 + 3×$0.01; ccusage leaves the searches out ($0.03 less).
	{"2026-11-05", "claude-sonnet-4-6", `{"input_tokens":1200,"output_tokens":600,"cache_read_input_tokens":40000,"cache_creation_input_tokens":0,"server_tool_use":{"web_search_requests":3,"web_fetch_requests":0}}`,
		0.0546, 0.0246, -1},
	// Sonnet 5 at $2/$10: 100,000×2 + 5,000×10 + 20,000×0.2 + 2,000×2.5.
	{"2026-11-06", "claude-sonnet-5", `{"input_tokens":100000,"output_tokens":5000,"cache_read_input_tokens":20000,"cache_creation_input_tokens":2000,"cache_creation":{"ephemeral_5m_input_tokens":2000,"ephemeral_1h_input_tokens":0}}`,
		0.259, 0.259, -1},
	// Cache writes with a split of zeros, as Claude Code writes them when
	// the API sent no split: tsinspect counts the 10,000 tokens of
	// cache_creation_input_tokens as 5-minute writes (10×5 + 100×25 +
	// 10,000×6.25); ccusage takes the split and counts no write at all.
	{"2026-11-07", "claude-opus-4-6", `{"input_tokens":10,"output_tokens":100,"cache_read_input_tokens":0,"cache_creation_input_tokens":10000,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0}}`,
		0.06505, 0.00255, 0},
}

// TestPricesAgainstCcusage holds 'sessions --by day' to ccusage 20.0.24's
// daily report on the same directory: the same tokens every day (but cache
// writes under a split of zeros, which ccusage reads as none), the same
// dollars but where docs/sessions.md says why they differ (a prompt above
// 200K tokens, web searches, that split), with the figures of
// BENCHMARKS.md.
func TestPricesAgainstCcusage(t *testing.T) {
	cc := ccusagePath(t)
	cfg := t.TempDir()
	dir := filepath.Join(cfg, "projects", "-home-u-alpha")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i, a := range pricedAnswers {
		lines = append(lines, `{"type":"assistant","sessionId":"aaaaaaaa-0000-4000-8000-000000000001","cwd":"/home/u/alpha","timestamp":"`+a.day+`T12:00:00.000Z","version":"2.1.300","requestId":"req_`+string(rune('a'+i))+
			`","message":{"id":"msg_`+string(rune('a'+i))+`","role":"assistant","model":"`+a.model+`","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":`+a.usage+`}}`)
	}
	if err := os.WriteFile(filepath.Join(dir, "aaaaaaaa-0000-4000-8000-000000000001.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cc, "claude", "daily", "--json", "--offline", "--timezone", "UTC")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "CLAUDE_CONFIG_DIR="+cfg)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("ccusage daily: %v\n%s", err, errb.String())
	}
	var cu struct {
		Daily []ccusagePeriod `json:"daily"`
	}
	if err := json.Unmarshal(out.Bytes(), &cu); err != nil {
		t.Fatalf("ccusage daily: %v\n%s", err, out.String())
	}
	want := map[string]ccusagePeriod{}
	for _, d := range cu.Daily {
		want[d.Date] = d
	}
	code, stdout, stderr := runCLI(t, "sessions", filepath.Join(cfg, "projects"), "--by", "day", "--timezone", "UTC", "--json", "--no-index")
	if code != 0 {
		t.Fatalf("sessions --by day: exit %d: %s", code, stderr)
	}
	type bucket struct {
		Period     string  `json:"period"`
		Input      int64   `json:"input_tokens"`
		Output     int64   `json:"output_tokens"`
		CacheRead  int64   `json:"cache_read_input_tokens"`
		CacheWrite int64   `json:"cache_creation_input_tokens"`
		CostUSD    float64 `json:"cost_usd"`
		CostKnown  bool    `json:"cost_known"`
	}
	got := map[string]bucket{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var b bucket
		if err := json.Unmarshal(sc.Bytes(), &b); err != nil {
			t.Fatalf("sessions --by day --json: %v: %s", err, sc.Text())
		}
		got[b.Period] = b
	}
	if len(got) != len(pricedAnswers) || len(want) != len(pricedAnswers) {
		t.Fatalf("tsinspect %d days, ccusage %d, want %d", len(got), len(want), len(pricedAnswers))
	}
	for _, a := range pricedAnswers {
		g, w := got[a.day], want[a.day]
		if a.ccWrites >= 0 {
			if w.CacheCreationTokens != a.ccWrites {
				t.Errorf("%s %s: ccusage counts %d cache writes, want %d", a.day, a.model, w.CacheCreationTokens, a.ccWrites)
			}
			w.CacheCreationTokens = g.CacheWrite
		}
		if gt, wt := (tokenTotals{g.Input, g.Output, g.CacheRead, g.CacheWrite}), (tokenTotals{w.InputTokens, w.OutputTokens, w.CacheReadTokens, w.CacheCreationTokens}); gt != wt {
			t.Errorf("%s %s: tokens %+v, ccusage %+v", a.day, a.model, gt, wt)
		}
		if !g.CostKnown || math.Abs(g.CostUSD-a.usd) > 1e-9 {
			t.Errorf("%s %s: tsinspect $%v (known %v), want $%v by hand", a.day, a.model, g.CostUSD, g.CostKnown, a.usd)
		}
		if math.Abs(w.TotalCost-a.ccusage) > 1e-9 {
			t.Errorf("%s %s: ccusage $%v, want $%v", a.day, a.model, w.TotalCost, a.ccusage)
		}
	}
}
