package e2e

import (
	"testing"

	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
)

// TestResumeWithoutTheServer loads echo with a search, then resumes the
// session with the MCP server under another name, so that mcp__demo__echo
// no longer exists. Claude Code 2.1.328 keeps sending the loaded schema
// and keeps the old announcement: no reference goes unsent (no
// reference_not_sent, no unknown_reference), echo stays loaded by the
// search, and the catalog holds the old server's tools beside the new.
func TestResumeWithoutTheServer(t *testing.T) {
	kit.RequireClaude(t)
	first, _ := fixtures.Scenario("toolsearch")
	again := fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(fixtures.Text("done"))}}
	rec := recordRuns(t,
		run{script: first, opts: session.Options{Args: []string{"--session-id", sessionID}}},
		run{script: again, opts: session.Options{Prompt: "anything else?", Server: "other", Args: []string{"--resume", sessionID}}},
	)
	code, out, stderr := runCLI(t, "report", rec.db)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	r := parseReport(t, out)
	for _, k := range []string{"reference_not_sent", "unknown_reference", "catalog_without_search", "search_without_catalog", "deferred_sent_inline"} {
		if r.Capture.Flags[k] != 0 {
			t.Errorf("flag %s raised: %v", k, r.Capture.Flags)
		}
	}
	last := r.Turns[len(r.Turns)-1]
	if last.WorkingSet.Via[echoTool] != "search" {
		t.Errorf("resumed turn working set %+v: want %s loaded by the search", last.WorkingSet, echoTool)
	}
	if last.Catalog.Count != 56+41 || len(last.Catalog.Removed) != 0 {
		t.Errorf("resumed turn catalog %+v: want the 56 first announced plus the other server's 41, none removed", last.Catalog)
	}
}
