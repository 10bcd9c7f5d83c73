package coverage_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/coverage"
	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/fixtures/democapture"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/timeline"
)

// demoSession builds the timeline of the bundled real session: main turn
// 1 searches select:mcp__demo__echo, turn 2 searches "weather forecast"
// and finds nothing, turn 3 calls echo, turn 4 calls mcp__demo__action_7
// without loading it, a subagent runs, and the main thread ends.
func demoSession(t *testing.T) *timeline.Session {
	t.Helper()
	path := filepath.Join(t.TempDir(), "demo.db")
	if err := os.WriteFile(path, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return timeline.Build(session.ReadCapture(t, path))
}

func TestSearchesOfTheDemo(t *testing.T) {
	s := demoSession(t)
	searches, _ := coverage.Of(s, coverage.Options{})
	if len(searches) != 2 {
		t.Fatalf("%d searches, want 2: %+v", len(searches), searches)
	}
	sel, kw := searches[0], searches[1]
	if sel.Turn != 2 || sel.Thread != "main" || sel.Tool != "ToolSearch" || sel.Mode != "select" || sel.Query != "select:mcp__demo__echo" ||
		sel.Outcome != coverage.OutcomeLoaded || strings.Join(sel.Results, ",") != "mcp__demo__echo" {
		t.Errorf("select search: %+v", sel)
	}
	if sel.CalledAt["mcp__demo__echo"] != 3 {
		t.Errorf("echo called at %v, want turn 3", sel.CalledAt)
	}
	if kw.Turn != 3 || kw.Mode != "keyword" || kw.Query != "weather forecast" || kw.Outcome != coverage.OutcomeNoMatch ||
		!strings.Contains(kw.Detail, "No matching deferred tools found") || len(kw.Results) != 0 {
		t.Errorf("keyword search: %+v", kw)
	}
}

func TestToolsOfTheDemo(t *testing.T) {
	s := demoSession(t)
	_, tools := coverage.Of(s, coverage.Options{Match: func(n string) bool { return strings.HasPrefix(n, "mcp__demo__") }})
	if len(tools) != 41 {
		t.Fatalf("%d demo tools, want the MCP server's 41", len(tools))
	}
	byName := map[string]*coverage.Tool{}
	for _, tt := range tools {
		byName[tt.Name] = tt
		if !tt.Deferred {
			t.Errorf("%s not deferred", tt.Name)
		}
	}
	echo := byName["mcp__demo__echo"]
	if len(echo.FoundBy) != 1 || echo.FoundBy[0].Turn != 2 || echo.FirstLoaded != 2 || echo.Calls != 1 || echo.Blind != 0 || echo.FirstCall != 3 {
		t.Errorf("echo: found by %d, loaded at %d, %d calls (%d blind), first at %d", len(echo.FoundBy), echo.FirstLoaded, echo.Calls, echo.Blind, echo.FirstCall)
	}
	a7 := byName["mcp__demo__action_7"]
	if len(a7.FoundBy) != 0 || a7.FirstLoaded != 0 || a7.Calls != 1 || a7.Blind != 1 || a7.FirstCall != 4 {
		t.Errorf("action_7: found by %d, loaded at %d, %d calls (%d blind), first at %d", len(a7.FoundBy), a7.FirstLoaded, a7.Calls, a7.Blind, a7.FirstCall)
	}
	a0 := byName["mcp__demo__action_0"]
	if a0.Calls != 0 || a0.FirstLoaded != 0 || a0.Turns != 7 {
		t.Errorf("action_0: %d calls, loaded at %d, in %d turns (want all 7)", a0.Calls, a0.FirstLoaded, a0.Turns)
	}
}

func TestThreadAndDefaultPick(t *testing.T) {
	s := demoSession(t)
	searches, tools := coverage.Of(s, coverage.Options{Thread: "sub1"})
	if len(searches) != 0 {
		t.Errorf("the subagent made %d searches", len(searches))
	}
	for _, tt := range tools {
		if !tt.Deferred {
			t.Errorf("default pick holds the always-loaded %s", tt.Name)
		}
		if tt.Turns != 1 {
			t.Errorf("%s in %d subagent turns, want 1", tt.Name, tt.Turns)
		}
	}
	if len(tools) == 0 {
		t.Error("no deferred tools in the subagent's catalog")
	}
}

// TestServerSideSearch: a server search is listed on the turn whose
// response holds it, and a call in that same response counts as made
// with the schema loaded.
func TestServerSideSearch(t *testing.T) {
	turn := func(i int, d *decode.Turn) *timeline.Turn {
		d.Request.Kind = decode.KindMessages
		return &timeline.Turn{Index: i, Thread: "main", Decoded: d, NewSearches: d.NewSearches}
	}
	first := &decode.Turn{
		Catalog:    []string{"get_weather", "get_time"},
		WorkingSet: []decode.WorkingTool{{Name: "tool_search_tool_bm25", Via: decode.ViaAlways}},
		NewSearches: []decode.Search{
			{Server: true, ToolUseID: "srvtoolu_1", Tool: "tool_search_tool_bm25", Mode: decode.ModeBM25, Query: "weather", HasResult: true, Results: []string{"get_weather"}},
			{Server: true, ToolUseID: "srvtoolu_2", Tool: "tool_search_tool_bm25", Mode: decode.ModeBM25, Query: "clock", HasResult: true, ErrorCode: "too_many_requests"},
		},
		ToolCalls: []decode.ToolCall{{ID: "toolu_1", Name: "get_weather", Loaded: true, Via: decode.ViaResponseSearch, InCatalog: true}},
	}
	second := &decode.Turn{
		Catalog:    []string{"get_weather", "get_time"},
		WorkingSet: []decode.WorkingTool{{Name: "tool_search_tool_bm25", Via: decode.ViaAlways}, {Name: "get_weather", Via: decode.ViaSearch, Deferred: true}},
		ToolCalls:  []decode.ToolCall{{ID: "toolu_2", Name: "get_time", InCatalog: true}},
	}
	s := &timeline.Session{Turns: []*timeline.Turn{turn(1, first), turn(2, second)}}
	searches, tools := coverage.Of(s, coverage.Options{})
	if len(searches) != 2 {
		t.Fatalf("%d searches", len(searches))
	}
	if w := searches[0]; w.Turn != 1 || !w.Server || w.Outcome != coverage.OutcomeLoaded || w.CalledAt["get_weather"] != 1 {
		t.Errorf("weather search %+v", w)
	}
	if c := searches[1]; c.Outcome != coverage.OutcomeError || c.Detail != "too_many_requests" {
		t.Errorf("clock search %+v", c)
	}
	if len(tools) != 2 || tools[0].Name != "get_time" || tools[1].Name != "get_weather" {
		t.Fatalf("tools %v", tools)
	}
	gt, gw := tools[0], tools[1]
	if gw.Calls != 1 || gw.Blind != 0 || gw.FirstLoaded != 2 || len(gw.FoundBy) != 1 || gw.Turns != 2 {
		t.Errorf("get_weather: %d calls (%d blind), loaded at %d, found by %d, in %d turns", gw.Calls, gw.Blind, gw.FirstLoaded, len(gw.FoundBy), gw.Turns)
	}
	if gt.Calls != 1 || gt.Blind != 1 || gt.FirstLoaded != 0 || len(gt.FoundBy) != 0 {
		t.Errorf("get_time: %d calls (%d blind), loaded at %d, found by %d", gt.Calls, gt.Blind, gt.FirstLoaded, len(gt.FoundBy))
	}
}
