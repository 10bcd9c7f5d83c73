package decode

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
)

// mainTools are the non-deferred tools of the main thread's requests.
var mainTools = []string{"Agent", "Bash", "Edit", "ListAgents", "Read", "ReportFindings", "ScheduleWakeup", "Skill", "ToolSearch", "Workflow", "Write"}

func workingNames(turn *Turn) []string {
	var out []string
	for _, w := range turn.WorkingSet {
		out = append(out, w.Name)
	}
	slices.Sort(out)
	return out
}

func decodeSample(t *testing.T, name string) *Turn {
	t.Helper()
	turn := Decode(sampleExchange(t, name))
	noProblems(t, name, turn)
	if _, err := json.Marshal(turn); err != nil {
		t.Fatalf("%s: turn does not marshal: %v", name, err)
	}
	return turn
}

func TestSample01FirstRequest(t *testing.T) {
	turn := decodeSample(t, "01-first-request.json")
	r := turn.Request
	if r.Kind != KindMessages || r.Model != "claude-sonnet-4-5" || r.MaxTokens != 32000 || !r.Stream {
		t.Errorf("request kind=%q model=%q max=%d stream=%v", r.Kind, r.Model, r.MaxTokens, r.Stream)
	}
	if want := []string{"claude-code-20250219", "interleaved-thinking-2025-05-14", "context-management-2025-06-27", "prompt-caching-scope-2026-01-05", "thinking-token-count-2026-05-13", "advanced-tool-use-2025-11-20", "thinking-binding-controls-2026-08-01", "cache-diagnosis-2026-04-07"}; !reflect.DeepEqual(r.Betas, want) {
		t.Errorf("betas %v", r.Betas)
	}
	if len(r.System) != 4 || r.System[0].CacheControl != nil || r.System[1].CacheControl != nil || r.System[2].CacheControl == nil || !strings.HasPrefix(r.System[0].Text, "x-anthropic-billing-header:") {
		t.Errorf("system %+v", r.System[:1])
	}
	wantMarkers := []CacheMarker{
		{Where: "system", Index: 2, Block: -1, Type: "ephemeral"},
		{Where: "system", Index: 3, Block: -1, Type: "ephemeral"},
		{Where: "message", Index: 0, Block: 8, Type: "ephemeral"},
	}
	if !reflect.DeepEqual(r.CacheMarkers, wantMarkers) {
		t.Errorf("cache markers %+v", r.CacheMarkers)
	}
	var meta struct {
		UserID string `json:"user_id"`
	}
	if json.Unmarshal(r.Metadata, &meta) != nil || !strings.Contains(meta.UserID, "session_id") {
		t.Errorf("metadata %s", r.Metadata)
	}
	if _, ok := r.Other["thinking"]; !ok {
		t.Errorf("thinking not kept: %v", r.Other)
	}
	var placeholder *Tool
	for i := range r.Tools {
		if r.Tools[i].Placeholder {
			placeholder = &r.Tools[i]
		}
	}
	if len(r.Tools) != 12 || placeholder == nil || !placeholder.DeferLoading || !json.Valid(placeholder.Raw) {
		t.Errorf("tools: %d, placeholder %+v", len(r.Tools), placeholder)
	}

	if len(turn.Catalog) != 56 {
		t.Errorf("catalog has %d names, want 56", len(turn.Catalog))
	}
	for _, n := range []string{"CronCreate", "TaskCreate", "WebSearch", "mcp__demo__action_0", "mcp__demo__action_39", "mcp__demo__echo"} {
		if !turn.InCatalog(n) {
			t.Errorf("%s not in the catalog", n)
		}
	}
	if !slices.IsSorted(turn.Catalog) {
		t.Error("catalog not sorted")
	}
	if e := turn.CatalogEvents; len(e) != 1 || e[0].Message != 0 || e[0].Block != 2 || e[0].Form != "reminder" || e[0].Remove {
		t.Errorf("catalog events %+v", e)
	}

	if got := workingNames(turn); !reflect.DeepEqual(got, mainTools) {
		t.Errorf("working set %v", got)
	}
	for _, w := range turn.WorkingSet {
		if w.Via != ViaAlways || w.Deferred {
			t.Errorf("working tool %+v", w)
		}
	}
	if turn.InWorkingSet("mcp__demo__echo") || turn.InWorkingSet(PlaceholderTool) {
		t.Error("deferred tool or placeholder in the working set")
	}
	if len(turn.Unreferenced) != 0 || len(turn.Searches) != 0 || len(turn.MissingReferences) != 0 {
		t.Errorf("unreferenced %v searches %v missing %v", turn.Unreferenced, turn.Searches, turn.MissingReferences)
	}
	if turn.LastUser.Message != 0 || turn.LastUser.HasToolReference || turn.LastUser.ToolLoaded {
		t.Errorf("last user %+v", turn.LastUser)
	}
}

func TestSample02AfterToolSearch(t *testing.T) {
	turn := decodeSample(t, "02-after-toolsearch.json")
	if len(turn.Catalog) != 56 {
		t.Errorf("catalog has %d names", len(turn.Catalog))
	}
	want := append(slices.Clone(mainTools), "mcp__demo__echo")
	slices.Sort(want)
	if got := workingNames(turn); !reflect.DeepEqual(got, want) {
		t.Errorf("working set %v", got)
	}
	if via, _ := turn.WorkingVia("mcp__demo__echo"); via != ViaSearch {
		t.Errorf("mcp__demo__echo via %q", via)
	}
	if len(turn.Searches) != 1 || len(turn.NewSearches) != 1 {
		t.Fatalf("searches %+v new %+v", turn.Searches, turn.NewSearches)
	}
	s := turn.NewSearches[0]
	if !strings.HasPrefix(s.ToolUseID, "toolu_") {
		t.Errorf("search tool_use id %q", s.ToolUseID)
	}
	want2 := Search{
		ToolUseID: s.ToolUseID, Tool: "ToolSearch", Query: "select:mcp__demo__echo", MaxResults: 5,
		Mode: ModeSelect, Selected: []string{"mcp__demo__echo"},
		Call: Location{Message: 1, Block: 0}, HasResult: true, Result: Location{Message: 2, Block: 0}, New: true,
		Results: []string{"mcp__demo__echo"}, ToolLoaded: true,
	}
	s.Input = nil
	if !reflect.DeepEqual(s, want2) {
		t.Errorf("search\n got  %+v\n want %+v", s, want2)
	}
	lu := turn.LastUser
	if lu.Message != 2 || !lu.HasToolReference || !lu.ToolLoaded || len(lu.ToolResults) != 1 || !reflect.DeepEqual(lu.ToolResults[0].References, []string{"mcp__demo__echo"}) {
		t.Errorf("last user %+v", lu)
	}
	if m := turn.Request.CacheMarkers; m[len(m)-1] != (CacheMarker{Where: "message", Index: 2, Block: 2, Type: "ephemeral"}) {
		t.Errorf("last cache marker %+v", m[len(m)-1])
	}
}

func TestSample03AfterToolCall(t *testing.T) {
	turn := decodeSample(t, "03-after-tool-call.json")
	if via, _ := turn.WorkingVia("mcp__demo__echo"); via != ViaSearch {
		t.Errorf("mcp__demo__echo via %q", via)
	}
	// The search is in the history, but its result is not new.
	if len(turn.Searches) != 1 || len(turn.NewSearches) != 0 || turn.Searches[0].New {
		t.Errorf("searches %+v new %+v", turn.Searches, turn.NewSearches)
	}
	lu := turn.LastUser
	if lu.Message != 4 || lu.HasToolReference || lu.ToolLoaded || len(lu.ToolResults) != 1 {
		t.Fatalf("last user %+v", lu)
	}
	if tr := lu.ToolResults[0]; !strings.HasPrefix(tr.ToolUseID, "toolu_") || !strings.HasPrefix(tr.Text(), "hello\n") || tr.IsError {
		t.Errorf("tool result %+v", tr)
	}
	if m := turn.Request.CacheMarkers; m[len(m)-1] != (CacheMarker{Where: "message", Index: 4, Block: 0, Type: "ephemeral"}) {
		t.Errorf("last cache marker %+v", m[len(m)-1])
	}
}

func TestSample04Subagent(t *testing.T) {
	turn := decodeSample(t, "04-subagent-first-request.json")
	if len(turn.Catalog) != 56 {
		t.Errorf("subagent catalog has %d names, want 56", len(turn.Catalog))
	}
	for _, n := range []string{"CronCreate", "EnterWorktree", "TaskStop", "mcp__demo__action_5", "mcp__demo__echo"} {
		if !turn.InCatalog(n) {
			t.Errorf("%s not in the subagent catalog", n)
		}
	}
	if e := turn.CatalogEvents; len(e) != 1 || e[0].Block != 0 {
		t.Errorf("catalog events %+v", e)
	}
	want := []string{"Agent", "Bash", "Edit", "ListAgents", "Read", "ReportFindings", "Skill", "ToolSearch", "Write"}
	if got := workingNames(turn); !reflect.DeepEqual(got, want) {
		t.Errorf("subagent working set %v", got)
	}
	if m := turn.Request.CacheMarkers; m[len(m)-1] != (CacheMarker{Where: "message", Index: 0, Block: 6, Type: "ephemeral"}) {
		t.Errorf("last cache marker %+v", m[len(m)-1])
	}
	if !strings.Contains(turn.Request.System[0].Text, "cc_is_subagent=true") {
		t.Errorf("system block 0 %q", turn.Request.System[0].Text)
	}
}

func TestSample05ResumedOnNewModel(t *testing.T) {
	turn := decodeSample(t, "05-resumed-on-new-model.json")
	r := turn.Request
	if r.Model != "claude-opus-5-5" || r.MaxTokens != 128000 {
		t.Errorf("model %q max %d", r.Model, r.MaxTokens)
	}
	if _, ok := r.Other["output_config"]; !ok {
		t.Error("output_config not kept")
	}
	var systems []int
	for i, m := range r.Messages {
		if m.Role == "system" {
			systems = append(systems, i)
		}
	}
	if !reflect.DeepEqual(systems, []int{1, 4, 7, 10}) || !r.Messages[1].StringContent || r.Messages[10].StringContent {
		t.Errorf("system messages at %v", systems)
	}
	// 56 announced in the role:system string, 8 removed by the last one:
	// four MCP tools the resumed session's server no longer offers, and
	// four the newer model does not defer.
	removed := []string{"mcp__demo__action_36", "mcp__demo__action_37", "mcp__demo__action_38", "mcp__demo__action_39", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate"}
	if len(turn.Catalog) != 48 {
		t.Errorf("catalog has %d names, want 48", len(turn.Catalog))
	}
	for _, n := range removed {
		if turn.InCatalog(n) {
			t.Errorf("removed %s still in the catalog", n)
		}
	}
	if !turn.InCatalog("TaskStop") || !turn.InCatalog("mcp__demo__echo") {
		t.Error("TaskStop or mcp__demo__echo missing")
	}
	e := turn.CatalogEvents
	if len(e) != 2 || e[0].Message != 1 || e[0].Block != -1 || len(e[0].Names) != 56 || e[1].Message != 10 || e[1].Block != 0 || !e[1].Remove || !reflect.DeepEqual(e[1].Names, removed) {
		t.Errorf("catalog events %+v", e)
	}
	if via, _ := turn.WorkingVia("mcp__demo__echo"); via != ViaSearch {
		t.Errorf("mcp__demo__echo via %q", via)
	}
	if turn.LastUser.Message != 9 || len(turn.Searches) != 1 || len(turn.NewSearches) != 0 {
		t.Errorf("last user %+v searches %+v", turn.LastUser, turn.Searches)
	}
	if m := r.CacheMarkers; m[len(m)-1] != (CacheMarker{Where: "message", Index: 10, Block: 0, Type: "ephemeral"}) {
		t.Errorf("last cache marker %+v", m[len(m)-1])
	}
}

// TestSampleResponseCalls answers sample 01 with a response that calls
// ToolSearch and, wrongly, the unloaded mcp__demo__echo.
func TestSampleResponseCalls(t *testing.T) {
	ex := sampleExchange(t, "01-first-request.json")
	ex.Status = 200
	ex.RespHeaders = []exchange.Header{{Name: "content-type", Value: "application/json"}}
	ex.RespBody = []byte(`{"id":"msg_x","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[
		{"type":"tool_use","id":"toolu_a","name":"ToolSearch","input":{"query":"+echo demo","max_results":3}},
		{"type":"tool_use","id":"toolu_b","name":"mcp__demo__echo","input":{"text":"hi"}},
		{"type":"tool_use","id":"toolu_c","name":"Nope","input":{}}],
		"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":4}}`)
	turn := Decode(ex)
	noProblems(t, "01+response", turn)
	calls := turn.ToolCalls
	if len(calls) != 3 {
		t.Fatalf("calls %+v", calls)
	}
	if !calls[0].Loaded || calls[0].Via != ViaAlways || calls[0].InCatalog {
		t.Errorf("ToolSearch call %+v", calls[0])
	}
	if calls[1].Loaded || !calls[1].InCatalog {
		t.Errorf("unloaded deferred call %+v", calls[1])
	}
	if calls[2].Loaded || calls[2].InCatalog {
		t.Errorf("unknown tool call %+v", calls[2])
	}
	if len(turn.Searches) != 1 || turn.Searches[0].Mode != ModeRequired || turn.Searches[0].MaxResults != 3 || !turn.Searches[0].Call.Response || turn.Searches[0].HasResult {
		t.Errorf("pending search %+v", turn.Searches)
	}
}

// editSample decodes a sample as a generic JSON object, lets edit change
// it, and decodes the result.
func editSample(t *testing.T, name string, edit func(m map[string]any)) *Turn {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(readFile(t, sampleDir(t)+"/"+name), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	turn := DecodeRequest(b)
	noProblems(t, name+" (edited)", turn)
	return turn
}

// TestSampleCompactedHistory drops the search round trip from sample 03,
// as compaction does: mcp__demo__echo is still sent in tools, with no
// reference left. It shows as restored and unreferenced.
func TestSampleCompactedHistory(t *testing.T) {
	turn := editSample(t, "03-after-tool-call.json", func(m map[string]any) {
		msgs := m["messages"].([]any)
		m["messages"] = append([]any{msgs[0]}, msgs[3:]...)
	})
	if via, ok := turn.WorkingVia("mcp__demo__echo"); !ok || via != ViaRestored {
		t.Errorf("mcp__demo__echo via %q %v", via, ok)
	}
	if !reflect.DeepEqual(turn.Unreferenced, []string{"mcp__demo__echo"}) {
		t.Errorf("unreferenced %v", turn.Unreferenced)
	}
	if len(turn.Searches) != 0 {
		t.Errorf("searches %+v", turn.Searches)
	}
}

// TestSampleMissingReference drops the loaded tool from tools while the
// history still references it.
func TestSampleMissingReference(t *testing.T) {
	turn := editSample(t, "02-after-toolsearch.json", func(m map[string]any) {
		tools := m["tools"].([]any)
		m["tools"] = tools[:len(tools)-1]
	})
	if !reflect.DeepEqual(turn.MissingReferences, []string{"mcp__demo__echo"}) || turn.InWorkingSet("mcp__demo__echo") {
		t.Errorf("missing %v", turn.MissingReferences)
	}
}

func TestCatalogForms(t *testing.T) {
	body := `{"model":"m","max_tokens":1,"tools":[{"name":"ToolSearch","input_schema":{}}],"messages":[
	 {"role":"user","content":"<available-deferred-tools>\nOldA\nOldB\n</available-deferred-tools>"},
	 {"role":"user","content":[{"type":"text","text":"<system-reminder>\nThe following deferred tools are now available via ToolSearch:\nC1\nC2\n</system-reminder>"}]},
	 {"role":"assistant","content":[{"type":"text","text":"The following deferred tools are now available via ToolSearch:\nNotFromAssistant"}]},
	 {"role":"user","content":[{"type":"text","text":"As quoted: The following deferred tools are now available via X:\nQuoted"}]},
	 {"role":"system","content":"The following deferred tools are no longer available (their MCP server disconnected). Do not search for them:\nOldA\n\nmore prose"},
	 {"role":"system","content":[{"type":"tool_addition","tool":{"type":"tool_reference","name":"Added"}},{"type":"tool_addition","tool":{"type":"tool_reference","name":"Gone"}}]},
	 {"role":"user","content":[{"type":"tool_removal","tool":{"type":"tool_reference","name":"Gone"}},{"type":"text","text":"x"}]}
	]}`
	turn := DecodeRequest([]byte(body))
	noProblems(t, "forms", turn)
	want := []string{"Added", "C1", "C2", "OldB"}
	if !reflect.DeepEqual(turn.Catalog, want) {
		t.Errorf("catalog %v, want %v", turn.Catalog, want)
	}
	var forms []string
	for _, e := range turn.CatalogEvents {
		forms = append(forms, e.Form)
	}
	if !reflect.DeepEqual(forms, []string{"available-deferred-tools", "reminder", "reminder", "tool_addition", "tool_addition", "tool_removal"}) {
		t.Errorf("forms %v", forms)
	}
	// A removal after an addition removes; order matters.
	turn = DecodeRequest([]byte(`{"model":"m","max_tokens":1,"messages":[
	 {"role":"user","content":"The following deferred tools are no longer available in this session:\nA"},
	 {"role":"user","content":"The following deferred tools are now available via ToolSearch:\nA"}]}`))
	if !reflect.DeepEqual(turn.Catalog, []string{"A"}) {
		t.Errorf("re-added: %v", turn.Catalog)
	}
}

func TestQueryMode(t *testing.T) {
	cases := []struct {
		q, mode string
		sel     []string
	}{
		{"select:A,B", ModeSelect, []string{"A", "B"}},
		{" select: A , ,B ", ModeSelect, []string{"A", "B"}},
		{"notebook jupyter", ModeKeyword, nil},
		{"+slack send", ModeRequired, nil},
		{"send +slack", ModeRequired, nil},
		{"mcp__github", ModePrefix, nil},
		{"mcp__github issues", ModeKeyword, nil},
		{"", ModeKeyword, nil},
	}
	for _, c := range cases {
		mode, sel := QueryMode(c.q)
		if mode != c.mode || !reflect.DeepEqual(sel, c.sel) {
			t.Errorf("QueryMode(%q) = %q %v, want %q %v", c.q, mode, sel, c.mode, c.sel)
		}
	}
}

func TestClientSearchResults(t *testing.T) {
	body := `{"model":"m","max_tokens":1,"tools":[{"name":"ToolSearch","input_schema":{}},{"name":"DeferredToolPlaceholder","defer_loading":true,"input_schema":{}}],"messages":[
	 {"role":"user","content":"go"},
	 {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ToolSearch","input":{"query":"mcp__nothing"}},{"type":"tool_use","id":"t2","name":"mcp__x__y","input":{}},{"type":"tool_use","id":"t3","name":"Ghost","input":{}}]},
	 {"role":"user","content":[
	   {"type":"tool_result","tool_use_id":"t1","content":"No matching deferred tools found for query"},
	   {"type":"tool_result","tool_use_id":"t2","is_error":true,"content":"<tool_use_error>InputValidationError: x. This tool's schema was not sent to the API — it was not in the discovered-tool set derived from message history</tool_use_error>"},
	   {"type":"tool_result","tool_use_id":"t3","is_error":true,"content":[{"type":"text","text":"<tool_use_error>Error: No such tool available: Ghost</tool_use_error>"}]}]}]}`
	turn := DecodeRequest([]byte(body))
	noProblems(t, "client results", turn)
	if len(turn.NewSearches) != 1 || !turn.NewSearches[0].NoMatch || turn.NewSearches[0].Mode != ModePrefix || len(turn.NewSearches[0].Results) != 0 {
		t.Errorf("search %+v", turn.NewSearches)
	}
	trs := turn.LastUser.ToolResults
	if len(trs) != 3 || !trs[1].IsError || !strings.Contains(trs[1].Text(), "schema was not sent") || !strings.Contains(trs[2].Text(), "No such tool available: Ghost") {
		t.Errorf("tool results %+v", trs)
	}
	if turn.InWorkingSet(PlaceholderTool) || len(turn.Unreferenced) != 0 {
		t.Errorf("placeholder counted: %+v %v", turn.WorkingSet, turn.Unreferenced)
	}
}

// TestAbsentToolSearchIsNoSearch: with tool search off the request offers
// no ToolSearch; the model's call of it is a call of an absent tool, which
// Claude Code refuses, not a search that loaded nothing. With no tools at
// all (a compaction summary) the history's searches still count, and so
// does a result that loaded tools.
func TestAbsentToolSearchIsNoSearch(t *testing.T) {
	history := `"messages":[
	 {"role":"user","content":"go"},
	 {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ToolSearch","input":{"query":"select:mcp__demo__echo","max_results":5}}]},
	 {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"<tool_use_error>Error: No such tool available: ToolSearch</tool_use_error>"}]}]}`
	off := DecodeRequest([]byte(`{"model":"m","max_tokens":1,"tools":[{"name":"mcp__demo__echo","input_schema":{}}],` + history))
	noProblems(t, "tool search off", off)
	if len(off.Searches) != 0 || len(off.NewSearches) != 0 {
		t.Errorf("tool search off: searches %+v", off.Searches)
	}
	// A search that failed otherwise, where ToolSearch is offered or no
	// tool is (a compaction summary), is a search.
	failed := strings.Replace(history, "Error: No such tool available: ToolSearch", "InputValidationError: max_results is too large", 1)
	on := DecodeRequest([]byte(`{"model":"m","max_tokens":1,"tools":[{"name":"ToolSearch","input_schema":{}},{"name":"mcp__demo__echo","input_schema":{}}],` + failed))
	if len(on.NewSearches) != 1 || !on.NewSearches[0].IsError {
		t.Errorf("ToolSearch offered: searches %+v", on.NewSearches)
	}
	none := DecodeRequest([]byte(`{"model":"m","max_tokens":1,` + failed))
	if len(none.NewSearches) != 1 {
		t.Errorf("no tools at all: searches %+v", none.NewSearches)
	}
	// The call in the response, its result not yet sent, of a ToolSearch
	// the request does not offer: no search either.
	call := DecodeRequest([]byte(`{"model":"m","max_tokens":1,"tools":[{"name":"mcp__demo__echo","input_schema":{}}],"messages":[{"role":"user","content":"go"}]}`))
	call.Response.Content = []Block{{Type: "tool_use", ID: "t9", Name: "ToolSearch"}}
	searches(call, (*Parts)(nil).historyOf(call.Request.Messages))
	if len(call.Searches) != 0 {
		t.Errorf("a call of an absent ToolSearch in the response: searches %+v", call.Searches)
	}
	loaded := DecodeRequest([]byte(`{"model":"m","max_tokens":1,"tools":[{"name":"mcp__demo__echo","input_schema":{}}],"messages":[
	 {"role":"user","content":"go"},
	 {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ToolSearch","input":{"query":"select:mcp__demo__echo"}}]},
	 {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"tool_reference","tool_name":"mcp__demo__echo"}]}]}]}`))
	if len(loaded.NewSearches) != 1 || len(loaded.NewSearches[0].Results) != 1 {
		t.Errorf("a search that loaded echo, ToolSearch since gone: searches %+v", loaded.NewSearches)
	}
}

func TestRequestKinds(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"betas":["b1"],"stop_sequences":["X"],"cache_control":{"type":"ephemeral","ttl":"1h"},"diagnostics":{"previous_message_id":"msg_0"}}`)
	cases := map[string]string{
		"https://api.anthropic.com/v1/messages?beta=true":    KindMessages,
		"https://api.anthropic.com/v1/messages/count_tokens": KindCountTokens,
		"http://127.0.0.1:9/proxy/v1/messages":               KindMessages,
		"https://api.anthropic.com/v1/models":                KindOther,
	}
	for u, want := range cases {
		turn := Decode(&exchange.Exchange{Method: "POST", URL: u, ReqBody: body, ReqHeaders: []exchange.Header{{Name: "Anthropic-Beta", Value: "a, b"}, {Name: "anthropic-beta", Value: "c"}}})
		noProblems(t, u, turn)
		r := turn.Request
		if r.Kind != want {
			t.Errorf("%s: kind %q, want %q", u, r.Kind, want)
		}
		if !reflect.DeepEqual(r.Betas, []string{"a", "b", "c"}) || !reflect.DeepEqual(r.BodyBetas, []string{"b1"}) || !reflect.DeepEqual(r.StopSequences, []string{"X"}) || r.Diagnostics == nil {
			t.Errorf("%s: request %+v", u, r)
		}
		if len(r.CacheMarkers) != 1 || r.CacheMarkers[0] != (CacheMarker{Where: "request", Index: -1, Block: -1, Type: "ephemeral", TTL: "1h"}) {
			t.Errorf("%s: markers %+v", u, r.CacheMarkers)
		}
	}
	// A GET with no body is fine for "other".
	turn := Decode(&exchange.Exchange{Method: "GET", URL: "https://api.anthropic.com/v1/models", Status: 200, RespBody: []byte(`{"data":[]}`)})
	noProblems(t, "GET models", turn)
	if turn.Request.Kind != KindOther || turn.Response.Other == nil {
		t.Errorf("GET models: %+v", turn)
	}
}

func TestMalformedRequests(t *testing.T) {
	cases := map[string]string{
		"not json":          `{"model":`,
		"messages object":   `{"model":"m","messages":{}}`,
		"content number":    `{"model":"m","messages":[{"role":"user","content":5}]}`,
		"block not object":  `{"model":"m","messages":[{"role":"user","content":[7]}]}`,
		"tools not array":   `{"model":"m","messages":[],"tools":{}}`,
		"max_tokens string": `{"model":"m","max_tokens":"9","messages":[]}`,
		"model number":      `{"model":5,"messages":[]}`,
		"result content":    `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":{}}]}]}`,
		"empty":             ``,
		"null":              `null`,
	}
	for name, body := range cases {
		turn := DecodeRequest([]byte(body))
		if len(turn.Problems) == 0 {
			t.Errorf("%s: no problem", name)
		}
		if _, err := json.Marshal(turn); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if turn := Decode(nil); turn == nil || len(turn.Problems) != 1 {
		t.Errorf("nil exchange: %+v", turn)
	}
}

// TestSearchIDCollision: a ToolSearch call in the history whose id is
// also the tool_use_id of a server result in the response (nonsense, but
// possible on the wire) is linked without touching the request messages.
func TestSearchIDCollision(t *testing.T) {
	ex := &exchange.Exchange{
		Method: "POST", URL: "/v1/messages", Status: 200,
		ReqBody:  []byte(`{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"x","name":"ToolSearch","input":{"query":"a"}}]}]}`),
		RespBody: []byte(`{"type":"message","id":"msg","stop_reason":"end_turn","content":[{"type":"tool_search_tool_result","tool_use_id":"x","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"A"}]}}],"usage":{"input_tokens":1,"output_tokens":1}}`),
	}
	turn := Decode(ex)
	noProblems(t, "collision", turn)
	if len(turn.Searches) != 1 || !turn.Searches[0].HasResult || turn.Searches[0].New || turn.Searches[0].ToolLoaded {
		t.Errorf("searches %+v", turn.Searches)
	}
}
