package sessionfiles

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/pricing"
)

// answerLine is one assistant record of a transcript-only session file.
func answerLine(t *testing.T, session, cwd, id, at, model string, usage map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": "assistant", "sessionId": session, "cwd": cwd, "timestamp": at, "version": "2.1.200",
		"message": map[string]any{"id": id, "role": "assistant", "model": model, "content": []any{map[string]any{"type": "text", "text": "ok"}}, "stop_reason": "end_turn", "usage": usage}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// bucketSessions writes two sessions of several models and days under a
// projects directory and summarises them.
func bucketSessions(t *testing.T) []*Summary {
	t.Helper()
	root := t.TempDir()
	a, b := "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"
	files := map[string][]string{
		filepath.Join(root, "-home-u-alpha", a+".jsonl"): {
			// Opus 4.6: 3×$5 + 1,250×$25 + 4,500×$6.25 + 180,000×$0.50 = $0.14939.
			answerLine(t, a, "/home/u/alpha", "msg_a1", "2026-11-24T23:30:00.000Z", "claude-opus-4-6",
				map[string]any{"input_tokens": 3, "output_tokens": 1250, "cache_read_input_tokens": 180000, "cache_creation_input_tokens": 4500,
					"cache_creation": map[string]any{"ephemeral_5m_input_tokens": 4500, "ephemeral_1h_input_tokens": 0}}),
			// Fast mode, 6×: 10×$30 + 2,000×$150 + 1,000×$37.50 + 50,000×$3 = $0.4878.
			answerLine(t, a, "/home/u/alpha", "msg_a2", "2026-11-25T00:30:00.000Z", "claude-opus-4-6",
				map[string]any{"input_tokens": 10, "output_tokens": 2000, "cache_read_input_tokens": 50000, "cache_creation_input_tokens": 1000, "speed": "fast"}),
			// Claude Code's own message: no answer, no cost.
			answerLine(t, a, "/home/u/alpha", "msg_a3", "2026-11-25T10:00:00.000Z", "<synthetic>",
				map[string]any{"input_tokens": 0, "output_tokens": 0}),
			// Another vendor's model driven through Claude Code: no price.
			answerLine(t, a, "/home/u/alpha", "msg_a4", "2026-11-25T11:00:00.000Z", "glm-4.6",
				map[string]any{"input_tokens": 1000, "output_tokens": 100}),
		},
		filepath.Join(root, "-home-u-beta", b+".jsonl"): {
			// Sonnet 4.5 over 200K: 2,000×$6 + 4,000×$22.50 + 3,000×$7.50 + 210,000×$0.60 = $0.2505.
			answerLine(t, b, "/home/u/beta", "msg_b1", "2026-11-29T12:00:00.000Z", "claude-sonnet-4-5-20250929",
				map[string]any{"input_tokens": 2000, "output_tokens": 4000, "cache_read_input_tokens": 210000, "cache_creation_input_tokens": 3000}),
			// Three web searches: 1,200×$3 + 600×$15 + 40,000×$0.30 + 3×$0.01 = $0.0546.
			answerLine(t, b, "/home/u/beta", "msg_b2", "2026-12-01T08:00:00.000Z", "claude-sonnet-4-6",
				map[string]any{"input_tokens": 1200, "output_tokens": 600, "cache_read_input_tokens": 40000, "cache_creation_input_tokens": 0,
					"server_tool_use": map[string]any{"web_search_requests": 3}}),
		},
	}
	for p, lines := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := List(root)
	if err != nil {
		t.Fatal(err)
	}
	sums, st := Scan(entries, LoadIndex(""), nil)
	if len(st.Failed) > 0 || len(sums) != 2 {
		t.Fatalf("scan: %+v, %d sessions", st, len(sums))
	}
	return sums
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s: $%v, want $%v", what, got, want)
	}
}

// TestSummaryPricesEveryAnswer: the listing's usage carries what the price
// depends on (fast mode, web searches, the time), <synthetic> is no
// model, and a model of another vendor is named as unpriced.
func TestSummaryPricesEveryAnswer(t *testing.T) {
	tab := pricing.Default()
	var alpha, beta *Summary
	for _, s := range bucketSessions(t) {
		if strings.HasPrefix(s.ID, "a") {
			alpha = s
		} else {
			beta = s
		}
	}
	if u := alpha.Usage[1]; u.Speed != "fast" || !u.At.Equal(time.Date(2026, 11, 25, 0, 30, 0, 0, time.UTC)) {
		t.Errorf("fast answer %+v", u)
	}
	if u := beta.Usage[1]; u.WebSearches != 3 {
		t.Errorf("web search answer %+v", u)
	}
	p := alpha.Cost(tab)
	near(t, "alpha", p.USD, 0.14939+0.4878)
	if p.Known() || strings.Join(p.Unpriced, ",") != "glm-4.6" || len(p.PricedAs) != 0 {
		t.Errorf("alpha: %+v", p)
	}
	p = beta.Cost(tab)
	near(t, "beta", p.USD, 0.2505+0.0546)
	if !p.Known() {
		t.Errorf("beta: %+v", p)
	}
	row := RowOf(alpha, tab)
	if row.CostKnown || row.PricesTaken != "2026-11-26" || strings.Join(row.Unpriced, ",") != "glm-4.6" || strings.Join(row.Models, ",") != "claude-opus-4-6,glm-4.6" {
		t.Errorf("row %+v", row)
	}
}

func TestBuckets(t *testing.T) {
	sums := bucketSessions(t)
	tab := pricing.Default()
	type want struct {
		period, key string
		answers     int
		in, out     int64
		usd         float64
		known       bool
	}
	check := func(name string, o BucketOptions, wants []want) {
		t.Helper()
		bs, st, err := Buckets(sums, tab, o)
		if err != nil {
			t.Fatal(err)
		}
		if st.NoTime != 0 || !st.Newest.Equal(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: stats %+v", name, st)
		}
		if len(bs) != len(wants) {
			t.Fatalf("%s: %d buckets %+v, want %d", name, len(bs), bs, len(wants))
		}
		for i, w := range wants {
			b := bs[i]
			key := b.Model + b.Project
			if b.Period != w.period || key != w.key || b.Answers != w.answers || b.InputTokens != w.in || b.OutputTokens != w.out || b.CostKnown != w.known || b.PricesTaken != "2026-11-26" {
				t.Errorf("%s: bucket %d %+v, want %+v", name, i, b, w)
			}
			near(t, name+" "+b.Period+" "+key, b.CostUSD, w.usd)
		}
	}
	// In UTC the first answer (23:30) is on the 24th.
	check("day UTC", BucketOptions{By: "day", Loc: time.UTC}, []want{
		{"2026-11-24", "", 1, 3, 1250, 0.14939, true},
		{"2026-11-25", "", 2, 1010, 2100, 0.4878, false},
		{"2026-11-29", "", 1, 2000, 4000, 0.2505, true},
		{"2026-12-01", "", 1, 1200, 600, 0.0546, true},
	})
	// Two hours east, it is on the 25th with the next one.
	check("day UTC+2", BucketOptions{By: "day", Loc: time.FixedZone("UTC+2", 2*3600)}, []want{
		{"2026-11-25", "", 3, 1013, 3350, 0.14939 + 0.4878, false},
		{"2026-11-29", "", 1, 2000, 4000, 0.2505, true},
		{"2026-12-01", "", 1, 1200, 600, 0.0546, true},
	})
	// Weeks start on Sunday (2026-11-22, 2026-11-29), as ccusage's do.
	check("week", BucketOptions{By: "week", Loc: time.UTC}, []want{
		{"2026-11-22", "", 3, 1013, 3350, 0.14939 + 0.4878, false},
		{"2026-11-29", "", 2, 3200, 4600, 0.2505 + 0.0546, true},
	})
	check("week from Monday", BucketOptions{By: "week", Loc: time.UTC, WeekStart: time.Monday}, []want{
		{"2026-11-23", "", 4, 3013, 7350, 0.14939 + 0.4878 + 0.2505, false},
		{"2026-11-30", "", 1, 1200, 600, 0.0546, true},
	})
	check("month per model", BucketOptions{By: "month", Per: "model", Loc: time.UTC}, []want{
		{"2026-11", "claude-opus-4-6", 2, 13, 3250, 0.14939 + 0.4878, true},
		{"2026-11", "claude-sonnet-4-5-20250929", 1, 2000, 4000, 0.2505, true},
		{"2026-11", "glm-4.6", 1, 1000, 100, 0, false},
		{"2026-12", "claude-sonnet-4-6", 1, 1200, 600, 0.0546, true},
	})
	check("month per project", BucketOptions{By: "month", Per: "project", Loc: time.UTC}, []want{
		{"2026-11", "/home/u/alpha", 3, 1013, 3350, 0.14939 + 0.4878, false},
		{"2026-11", "/home/u/beta", 1, 2000, 4000, 0.2505, true},
		{"2026-12", "/home/u/beta", 1, 1200, 600, 0.0546, true},
	})
	bs, _, _ := Buckets(sums, tab, BucketOptions{By: "day", Loc: time.UTC, Keep: func(s *Summary) bool { return strings.Contains(s.Cwd, "beta") }, From: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if len(bs) != 1 || bs[0].Period != "2026-12-01" || bs[0].Sessions != 1 {
		t.Errorf("project and since: %+v", bs)
	}
	all, _, _ := Buckets(sums, tab, BucketOptions{By: "day", Loc: time.UTC})
	if last := LastPeriods(all, 2); len(last) != 2 || last[0].Period != "2026-11-29" {
		t.Errorf("last 2 periods: %+v", last)
	}
	if _, _, err := Buckets(sums, tab, BucketOptions{By: "year"}); err == nil {
		t.Error("--by year accepted")
	}
}

func TestModelsUsed(t *testing.T) {
	used := ModelsUsed(bucketSessions(t), pricing.Default())
	got := map[string]ModelUse{}
	for _, m := range used {
		got[m.Model] = m
	}
	if len(used) != 4 || used[0].Model != "claude-opus-4-6" || used[0].Answers != 2 || used[0].FastAnswers != 1 || used[0].FastUnpriced {
		t.Errorf("models used %+v", used)
	}
	if g := got["glm-4.6"]; g.Priced || g.Answers != 1 {
		t.Errorf("glm %+v", g)
	}
	if s := got["claude-sonnet-4-5-20250929"]; !s.Priced || s.Estimated || s.PricedAs != "claude-sonnet-4-5" {
		t.Errorf("sonnet 4.5 %+v", s)
	}
	if _, ok := got["<synthetic>"]; ok {
		t.Error("<synthetic> listed as a model")
	}
}

// A cache break's cost is on the day of its answer, as Summary.Cost
// prices it: 10,000 tokens lost of a request that wrote 20,000 to the
// 5-minute cache, on claude-sonnet-4-5 ($3.75 a million written, $0.30
// read), cost 10,000 × ($3.75 − $0.30) / 1e6 = $0.0345.
func TestBucketsBreaksOnTheirDay(t *testing.T) {
	day1 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	s := &Summary{ID: "s", Usage: []TurnUsage{
		{Model: "claude-sonnet-4-5", CacheWrite5m: 30_000, At: day1},
		{Model: "claude-sonnet-4-5", CacheRead: 10_000, CacheWrite5m: 20_000, At: day1.Add(24 * time.Hour)},
	}, Breaks: []Break{{Turn: 1, Lost: 10_000}}}
	tab := pricing.Default()
	bs, _, err := Buckets([]*Summary{s}, tab, BucketOptions{By: "day", Loc: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || bs[0].BreaksUSD != 0 || math.Abs(bs[1].BreaksUSD-0.0345) > 1e-9 {
		t.Fatalf("buckets %+v: want the break's $0.0345 on the second day alone", bs)
	}
	if whole := s.Cost(tab).BreaksUSD; math.Abs(whole-bs[1].BreaksUSD) > 1e-12 {
		t.Errorf("the session's breaks cost %v, its days %v", whole, bs[1].BreaksUSD)
	}
}
