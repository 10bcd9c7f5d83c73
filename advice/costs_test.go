package advice_test

import (
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/textout"
	"github.com/tsinspect/tsinspect/timeline"
)

// TestCostsByHand: two sessions' tools summed by tool and by server,
// each dollar worked out on paper.
func TestCostsByHand(t *testing.T) {
	a := &advice.Facts{Ref: advice.Ref{ID: "a"},
		Uses: []advice.ToolUse{{Name: "Bash", Calls: 4, Errors: 1, ResultTokens: 400, ResultUSD: 0.004}, {Name: "mcp__gh__issue", Calls: 2, ResultTokens: 1000, ResultUSD: 0.01}},
		Tools: []advice.Tool{{Name: "mcp__gh__issue", Server: "gh", Calls: 2, SearchTurns: []int{3}, RoundTripUSD: 0.02, SchemaTokens: 300, SchemaFrom: advice.SizeRequest},
			{Name: "mcp__gh__idle", Server: "gh", Requests: 9}},
		Blind:  []advice.Blind{{Turn: 5, Tool: "mcp__gh__pr", USD: 0.003, Priced: true}},
		Breaks: []advice.Break{{Turn: 4, Cause: timeline.CauseTools, USD: 0.5, Loaded: []string{"mcp__gh__issue", "mcp__gh__pr"}}},
	}
	b := &advice.Facts{Ref: advice.Ref{ID: "b"},
		Uses:  []advice.ToolUse{{Name: "mcp__gh__issue", Calls: 1, ResultTokens: 500, ResultUSD: 0.005}, {Name: "mcp__gh__pr", Calls: 1, ResultTokens: 100, ResultUSD: 0.001}},
		Tools: []advice.Tool{{Name: "mcp__gh__pr", Server: "gh", Calls: 1, Inline: 3, InlineUSD: 0.0006, SchemaTokens: 200, SchemaFrom: advice.SizeRequest}},
	}
	r := advice.Advise([]*advice.Facts{a, b}, advice.Options{MinSessions: 1})
	byName := map[string]advice.ToolCost{}
	for _, c := range r.Tools {
		byName[c.Name] = c
	}
	// issue: results 0.01 + 0.005, search 0.02, half the break 0.25.
	issue := byName["mcp__gh__issue"]
	near(t, "issue", issue.CostUSD, 0.015+0.02+0.25)
	if issue.Calls != 3 || issue.Sessions != 2 || issue.ResultTokens != 1500 || issue.SchemaTokens != 300 || issue.Searches != 1 {
		t.Errorf("issue %+v", issue)
	}
	// pr: result 0.001, schema sent whole 0.0006, blind 0.003, half the
	// break 0.25.
	pr := byName["mcp__gh__pr"]
	near(t, "pr", pr.CostUSD, 0.001+0.0006+0.003+0.25)
	if pr.Blind != 1 || pr.Calls != 1 || pr.Sessions != 2 {
		t.Errorf("pr %+v", pr)
	}
	if _, ok := byName["mcp__gh__idle"]; ok {
		t.Error("a tool only announced is in the costs by tool")
	}
	if r.Tools[0].Name != "mcp__gh__issue" {
		t.Errorf("costliest first: %s", r.Tools[0].Name)
	}
	if len(r.Servers) != 2 || r.Servers[0].Name != "gh" || r.Servers[1].Name != advice.OwnTools {
		t.Fatalf("servers %+v", r.Servers)
	}
	near(t, "gh", r.Servers[0].CostUSD, issue.CostUSD+pr.CostUSD)
	if r.Servers[0].SchemaTokens != 500 || r.Servers[0].Calls != 4 {
		t.Errorf("gh %+v", r.Servers[0])
	}
	near(t, "Claude Code's own", r.Servers[1].CostUSD, 0.004)

	// 0.285 (issue) + 0.2546 (pr) + 0.004 (Bash) in all.
	var out strings.Builder
	if err := textout.AdviseCosts(&out, r, advice.ByServer, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "2 MCP servers, $0.5436 in all") {
		t.Errorf("table:\n%s", out.String())
	}
}
