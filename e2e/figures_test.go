package e2e

import (
	"math"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/report"
)

// TestBlindCallCost records real Claude Code with two blind calls: first
// WebFetch, one of its own deferred tools, called before it was loaded
// with an input its schema refuses, so that Claude Code answers
// InputValidationError; then mcp__demo__echo, also never loaded, which
// Claude Code runs all the same. The refused call's cost is what the
// refusal wasted: the output the model spent on it, and the whole request
// that carried the error back, since no call of that response ran. It is
// checked against the figure worked out here from the recorded usage at
// Sonnet 4.5's list prices, not against the turn that made the call. The
// call that ran wasted nothing.
func TestBlindCallCost(t *testing.T) {
	kit.RequireClaude(t)
	const echo = "mcp__demo__echo"
	_, url := session.StandIn(t, fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{
		fixtures.RouteMain: fixtures.Steps(
			fixtures.CallTool("WebFetch", map[string]any{"link": "https://example.com"}).WithPreamble("Fetching."),
			fixtures.CallTool(echo, map[string]any{"text": "hello"}).WithPreamble("Calling echo."),
			fixtures.Text("Echo answered."),
		),
	}}, fixtures.Options{})
	res := kit.Record(t, url, session.Options{Prompt: "Call the demo echo tool."})
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Output)
	}
	code, out, stderr := runCLI(t, "report", res.DB)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	r := parseReport(t, out)
	var blind, ran *report.Flag
	var turn, answer *report.Turn
	for i := range r.Turns {
		for j := range r.Turns[i].Flags {
			switch f := &r.Turns[i].Flags[j]; {
			case f.Kind == "call_before_load" && f.Tool == "WebFetch":
				blind, turn = f, &r.Turns[i]
			case f.Kind == "call_before_load" && f.Tool == echo:
				ran = f
			}
		}
	}
	if blind == nil || ran == nil {
		t.Fatalf("no call_before_load flags for WebFetch and echo; turns %+v", r.Turns)
	}
	if ran.Refused || ran.Answer == 0 || ran.CostUSD == nil || *ran.CostUSD != 0 {
		t.Errorf("the blind call Claude Code ran: %+v", ran)
	}
	for i := range r.Turns {
		if r.Turns[i].Index == blind.Answer {
			answer = &r.Turns[i]
		}
	}
	if answer == nil || !blind.Refused || !blind.RoundTrip || blind.CostUSD == nil ||
		blind.CallTokens <= 0 || blind.CallTokens > turn.Usage.OutputTokens {
		t.Fatalf("blind call %+v of turn %d (output %d), answered in %v", blind, turn.Index, turn.Usage.OutputTokens, answer)
	}
	if !strings.Contains(blind.Detail, "InputValidationError") || blind.Answer != turn.Index+1 {
		t.Errorf("detail %q does not say Claude Code refused the call", blind.Detail)
	}
	// Sonnet 4.5: $15 output, $3 input, $3.75 5-minute write, $0.30 read,
	// per million tokens.
	u := answer.Usage
	want := (float64(blind.CallTokens)*15 + float64(u.InputTokens)*3 + float64(u.CacheCreationInputTokens)*3.75 + float64(u.CacheReadInputTokens)*0.30) / 1e6
	if math.Abs(*blind.CostUSD-want) > 1e-9 || math.Abs(r.Costs.BlindCallsUSD-want) > 1e-9 {
		t.Errorf("blind call cost %v (session %v), want %v: %d call tokens, answer usage %+v", *blind.CostUSD, r.Costs.BlindCallsUSD, want, blind.CallTokens, u)
	}
	t.Logf("refused blind call: %d output tokens of %d, answered in turn %d (read %d, written %d, input %d): %s; the turn that made it cost %s",
		blind.CallTokens, turn.Usage.OutputTokens, answer.Index, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.InputTokens,
		pricing.Format(want, true), pricing.Format(turn.Cost.USD, true))
	if want >= turn.Cost.USD {
		t.Errorf("the waste %v is not less than the turn that made the call (%v)", want, turn.Cost.USD)
	}
	if _, out, _ := runCLI(t, "turns", res.DB); !strings.Contains(out, "blind calls "+pricing.Format(want, true)) {
		t.Errorf("turns prices line does not give %s:\n%s", pricing.Format(want, true), out)
	}
	if _, md, _ := runCLI(t, "report", res.DB, "--format", "markdown"); !strings.Contains(md, "Blind calls (2) cost "+pricing.Format(want, true)+" of it: what the refusals wasted") {
		t.Errorf("markdown does not define the blind-call figure beside it")
	}
}
