package e2e

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
)

// TestRecordLongSession records a long real Claude Code session: rounds of
// one ToolSearch and two MCP tool calls, each result about 6 KB of text.
// It runs only with TSINSPECT_LONG_ROUNDS=N (N rounds, 3 turns each);
// TSINSPECT_LONG_OUT=FILE keeps the capture. It checks the capture holds
// the turns and takes at most 5 % of the raw bytes, and logs the figures.
func TestRecordLongSession(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("TSINSPECT_LONG_ROUNDS"))
	if rounds <= 0 {
		t.Skip("set TSINSPECT_LONG_ROUNDS=N to record a session of N rounds")
	}
	kit.RequireClaude(t)
	words := strings.Fields("alpha beta gamma delta service request latency cache token window ledger queue")
	var steps []fixtures.Step
	for r := 0; r < rounds; r++ {
		action := fmt.Sprintf("mcp__demo__action_%d", r%40)
		var text strings.Builder
		for i := 0; text.Len() < 6000; i++ {
			fmt.Fprintf(&text, "%05d %s %s %s\n", (r*977+i*131)%99991, words[(r+i)%len(words)], words[(r*3+i*7)%len(words)], words[(i*5)%len(words)])
		}
		steps = append(steps,
			fixtures.Step{fixtures.ToolSearch("select:"+action, 5)},
			fixtures.Step{fixtures.CallTool("mcp__demo__echo", map[string]any{"text": text.String()})},
			fixtures.Step{fixtures.CallTool(action, map[string]any{"target": fmt.Sprintf("svc-%d", r), "count": r})},
		)
	}
	steps = append(steps, fixtures.Step{fixtures.Text("All rounds done.")})
	sc := fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: steps}}
	_, up := session.StandIn(t, sc, fixtures.Options{})
	start := time.Now()
	rec := kit.Record(t, up, session.Options{Prompt: "go through the demo actions", Timeout: time.Duration(rounds) * 20 * time.Second})
	if rec.Err != nil {
		t.Fatalf("record: %v\n%s", rec.Err, rec.Output)
	}
	took := time.Since(start)
	exs := session.ReadCapture(t, rec.DB)
	var raw int64
	turns := 0
	for _, ex := range exs {
		raw += int64(len(ex.ReqBody) + len(ex.RespBody))
		if ex.Method == "POST" && strings.HasPrefix(urlPath(ex.URL), "/v1/messages") && !strings.Contains(ex.URL, "count_tokens") {
			turns++
		}
	}
	var size int64
	for _, p := range []string{rec.DB, rec.DB + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			size += fi.Size()
		}
	}
	t.Logf("%d rounds: %d exchanges, %d Messages turns in %v; raw %d bytes, capture %d bytes (%.2f %%)",
		rounds, len(exs), turns, took.Round(time.Second), raw, size, 100*float64(size)/float64(raw))
	if turns < 3*rounds {
		t.Errorf("%d Messages turns, want at least %d", turns, 3*rounds)
	}
	if size*20 > raw {
		t.Errorf("capture %d bytes for %d raw: more than 5 %%", size, raw)
	}
	if out := os.Getenv("TSINSPECT_LONG_OUT"); out != "" {
		copyTo(t, rec.DB, out)
	}
}

func copyTo(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
