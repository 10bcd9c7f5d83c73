package timeline

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
)

// fakeView is a ruleView made by hand: no capture, no decoding, no
// linking. ref names turn k "turn <k>"; resultFor answers from results;
// earlierFlag from flagged.
type fakeView struct {
	turns   []*info
	results map[fakeCall]fakeResult
	flagged map[fakeFlag]bool
	// searched answers earlierSearch: by turn asking and searchKey, the
	// earlier turn.
	searched map[fakeSearch]int
	// nexts answers next: by turn, the later turns of its thread.
	nexts map[int][]int
}

// fakeSearch is a search key asked about from turn k.
type fakeSearch struct {
	k   int
	key string
}

// fakeCall is a tool use id asked about from turn k.
type fakeCall struct {
	k  int
	id string
}

// fakeResult is the later turn and the tool_result block answering a call.
type fakeResult struct {
	l     int
	block decode.Block
}

// fakeFlag is a flag of kind, naming name or not, on a turn of k's
// thread before k.
type fakeFlag struct {
	k          int
	kind, name string
}

func (v *fakeView) turn(k int) *info { return v.turns[k] }
func (v *fakeView) ref(k int) string { return fmt.Sprintf("turn <%d>", k) }
func (v *fakeView) earlierFlag(k int, kind, name string) bool {
	return v.flagged[fakeFlag{k, kind, name}]
}

func (v *fakeView) earlierSearch(k int, key string) (int, decode.Search) {
	j, ok := v.searched[fakeSearch{k, key}]
	if !ok {
		return -1, decode.Search{}
	}
	for _, s := range v.turns[j].t.NewSearches {
		if searchKey(s) == key {
			return j, s
		}
	}
	return -1, decode.Search{}
}

func (v *fakeView) next(k int) []int { return v.nexts[k] }

func (v *fakeView) resultFor(k int, id string) (int, *decode.Block) {
	r, ok := v.results[fakeCall{k, id}]
	if !ok {
		return -1, nil
	}
	return r.l, &r.block
}

// fakeTurn is the info of a turn with the given 1-based index, exchange
// status and decoded exchange.
func fakeTurn(index, status int, d *decode.Turn) *info {
	return &info{t: &Turn{Index: index, Exchange: &exchange.Exchange{Status: status}, Decoded: d}, d: d}
}

func TestRuleRetryOnAView(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	failed := fakeTurn(1, 529, &decode.Turn{Response: decode.Response{Error: &decode.APIError{Type: "overloaded_error"}}})
	failed.end = at
	again := fakeTurn(2, 200, &decode.Turn{})
	again.start = at.Add(3 * time.Second)
	again.t.Prev, again.t.Link = 1, LinkRepeat
	v := &fakeView{turns: []*info{failed, again}}

	got := ruleRetry(v, 1)
	want := "The same request as turn <0> was sent again after it failed with HTTP 529 overloaded_error, 3 s later."
	if len(got) != 1 || got[0].Detail != want {
		t.Fatalf("retry of a failed request: %+v, want one flag %q", got, want)
	}
	if got := ruleRetry(v, 0); got != nil {
		t.Errorf("first turn: %+v", got)
	}

	// A repeat of a request that worked is not a retry.
	worked := fakeTurn(1, 200, &decode.Turn{Response: decode.Response{Content: []decode.Block{{Type: "text", Text: "ok"}}}})
	v.turns[0] = worked
	if got := ruleRetry(v, 1); got != nil {
		t.Errorf("repeat after success: %+v", got)
	}
	// Nor is a turn that extends the failed one.
	v.turns[0], again.t.Link = failed, LinkExtends
	if got := ruleRetry(v, 1); got != nil {
		t.Errorf("extends: %+v", got)
	}
}

func TestRuleCallBeforeLoadOnAView(t *testing.T) {
	const echo = "mcp__demo__echo"
	d := &decode.Turn{ToolCalls: []decode.ToolCall{
		{ID: "toolu_1", Name: echo, InCatalog: true},
		{ID: "toolu_2", Name: "Read", Loaded: true},
		{ID: "srvtoolu_3", Name: "tool_search_tool_regex", Server: true, InCatalog: true},
	}}
	v := &fakeView{turns: []*info{fakeTurn(1, 200, d)}}

	got := ruleCallBeforeLoad(v, 0)
	if len(got) != 1 || got[0].Tool != echo || !strings.HasSuffix(got[0].Detail, "No later request of this thread answers the call.") {
		t.Fatalf("unanswered blind call: %+v", got)
	}

	v.results = map[fakeCall]fakeResult{{0, "toolu_1"}: {l: 4, block: decode.Block{Type: "tool_result", ToolUseID: "toolu_1", IsError: true,
		Raw: json.RawMessage(`{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":"InputValidationError: mcp__demo__echo failed. This tool's schema was not sent to the API."}`)}}}
	got = ruleCallBeforeLoad(v, 0)
	want := "Its tool_result in turn <4> says InputValidationError: the schema was not sent to the API."
	if len(got) != 1 || got[0].Tool != echo || !strings.HasSuffix(got[0].Detail, want) {
		t.Fatalf("refused blind call: %+v, want a detail ending %q", got, want)
	}
	if !strings.HasPrefix(got[0].Detail, "The model called "+echo+", a deferred tool the catalog lists") {
		t.Errorf("detail %q", got[0].Detail)
	}
	// The same call, not in the catalog, is unknown_tool's.
	if u := ruleUnknownTool(v, 0); len(u) != 0 {
		t.Errorf("unknown_tool on a catalog tool: %+v", u)
	}
}

func TestRuleDeferredInlineOnAView(t *testing.T) {
	in := fakeTurn(3, 200, &decode.Turn{})
	in.inline = []string{"mcp__a__x", "mcp__a__y", "mcp__a__z"}
	v := &fakeView{turns: []*info{fakeTurn(1, 200, &decode.Turn{}), fakeTurn(2, 200, &decode.Turn{}), in}}

	// An earlier turn of the thread flagged x: only y and z are new. A
	// flag seen from another turn does not count.
	v.flagged = map[fakeFlag]bool{{2, FlagDeferredInline, "mcp__a__x"}: true, {1, FlagDeferredInline, "mcp__a__y"}: true}
	got := ruleDeferredInline(v, 2)
	if len(got) != 1 || got[0].Tool != "" || !strings.Contains(got[0].Detail, "2 tools announced as deferred") ||
		!strings.Contains(got[0].Detail, "in tools: mcp__a__y, mcp__a__z.") {
		t.Fatalf("two new inline tools: %+v", got)
	}
	if n := flagNames(got[0]); len(n) != 2 || !n["mcp__a__y"] || !n["mcp__a__z"] {
		t.Errorf("names %v: later turns would not find them", n)
	}

	v.flagged[fakeFlag{2, FlagDeferredInline, "mcp__a__y"}] = true
	got = ruleDeferredInline(v, 2)
	if len(got) != 1 || got[0].Tool != "mcp__a__z" {
		t.Fatalf("one new inline tool: %+v", got)
	}

	v.flagged[fakeFlag{2, FlagDeferredInline, "mcp__a__z"}] = true
	if got := ruleDeferredInline(v, 2); got != nil {
		t.Errorf("all flagged before: %+v", got)
	}
}

func TestRuleToolSearchOffOnAView(t *testing.T) {
	d := &decode.Turn{Request: decode.Request{Tools: []decode.Tool{{Name: "Read"}, {Name: "mcp__a__x"}, {Name: "mcp__a__y"}}}}
	in := fakeTurn(1, 200, d)
	in.client = Client{Family: ClientClaudeCode}
	v := &fakeView{turns: []*info{in}}

	got := ruleToolSearchOff(v, 0)
	if len(got) != 1 || !strings.HasPrefix(got[0].Detail, "This thread sends 2 MCP tools (mcp__a__x, mcp__a__y) with full schemas") {
		t.Fatalf("first turn: %+v", got)
	}
	// Once per thread.
	v.flagged = map[fakeFlag]bool{{0, FlagToolSearchOff, ""}: true}
	if got := ruleToolSearchOff(v, 0); got != nil {
		t.Errorf("flagged earlier in the thread: %+v", got)
	}
	v.flagged = nil
	// Not on a side query, nor with a ToolSearch.
	in.side = true
	if got := ruleToolSearchOff(v, 0); got != nil {
		t.Errorf("side query: %+v", got)
	}
	in.side = false
	d.Request.Tools = append(d.Request.Tools, decode.Tool{Name: decode.ClientSearchTool})
	if got := ruleToolSearchOff(v, 0); got != nil {
		t.Errorf("with ToolSearch: %+v", got)
	}
}

func TestRuleSearchPartialOnAView(t *testing.T) {
	d := &decode.Turn{Catalog: []string{"WebFetch", "WebSearch", "mcp__x__a"}, WorkingSet: []decode.WorkingTool{{Name: "Read"}, {Name: "WebSearch"}}}
	in := fakeTurn(3, 200, d)
	search := func(query string, max int64, results ...string) decode.Search {
		return decode.Search{Tool: "ToolSearch", Query: query, Mode: "keyword", MaxResults: max, HasResult: true, Results: results}
	}
	in.t.NewSearches = []decode.Search{search("WebSearch WebFetch", 1, "WebSearch")}
	v := &fakeView{turns: []*info{in}}
	got := ruleSearchPartial(v, 0)
	want := `ToolSearch "WebSearch WebFetch" (keyword query, max_results 1) named 2 tools but loaded WebSearch: WebFetch left out, so the model cannot call it.`
	if len(got) != 1 || got[0].Detail != want || got[0].Tool != "WebFetch" {
		t.Fatalf("got %+v\nwant %q", got, want)
	}
	// Words that are not catalog tools, a name already loaded, or every
	// name returned: no flag.
	for _, s := range []decode.Search{search("fetch a web page", 5), search("WebSearch", 1), search("WebFetch mcp__x__a", 5, "WebFetch", "mcp__x__a")} {
		in.t.NewSearches = []decode.Search{s}
		if got := ruleSearchPartial(v, 0); got != nil {
			t.Errorf("%q: %+v", s.Query, got)
		}
	}
	// A select: list counts its names.
	in.t.NewSearches = []decode.Search{{Tool: "ToolSearch", Query: "select:WebFetch,mcp__x__a", Mode: "select", Selected: []string{"WebFetch", "mcp__x__a"}, HasResult: true, Results: []string{"WebFetch"}}}
	if got := ruleSearchPartial(v, 0); len(got) != 1 || got[0].Tool != "mcp__x__a" {
		t.Errorf("select: %+v", got)
	}
}

// TestRuleSearchPartialNoCatalog: without a catalog (a 2.1.79 subagent's
// transcript), Claude Code's own tool names and +required terms name
// tools; the flag says what the thread called next, and a word that names
// no tool is no name.
func TestRuleSearchPartialNoCatalog(t *testing.T) {
	d := &decode.Turn{WorkingSet: []decode.WorkingTool{{Name: "WebFetch"}}, ToolCalls: []decode.ToolCall{{ID: "c1", Name: "WebFetch"}}}
	in := fakeTurn(2, 200, d)
	in.client = Client{Family: ClientClaudeCode}
	in.t.NewSearches = []decode.Search{{ToolUseID: "s1", Tool: "ToolSearch", Query: "WebSearch WebFetch", Mode: "keyword", HasResult: true, Results: []string{"WebFetch"}}}
	next := fakeTurn(3, 200, &decode.Turn{WorkingSet: []decode.WorkingTool{{Name: "WebFetch"}}, ToolCalls: []decode.ToolCall{{ID: "c2", Name: "Bash"}}})
	v := &fakeView{turns: []*info{in, next}, nexts: map[int][]int{0: {1}},
		results: map[fakeCall]fakeResult{{1, "c2"}: {l: 1, block: decode.Block{Type: "tool_result", IsError: true,
			Raw: json.RawMessage(`{"type":"tool_result","tool_use_id":"c2","is_error":true,"content":[{"type":"text","text":"curl: not found"}]}`)}}}}
	got := ruleSearchPartial(v, 0)
	if len(got) != 1 || got[0].Tool != "WebSearch" || got[0].Search != "s1" ||
		!strings.Contains(got[0].Detail, "turn <0> called WebFetch; turn <1> called Bash (an error: \"curl: not found\")") {
		t.Fatalf("got %+v", got)
	}
	// A +required term that is a tool's name counts; "+web" names none.
	in.t.NewSearches = []decode.Search{{Tool: "ToolSearch", Query: "+web WebSearch", Mode: "required", HasResult: true, Results: []string{"WebFetch"}}}
	if got := ruleSearchPartial(v, 0); len(got) != 1 || got[0].Tool != "WebSearch" || strings.Contains(got[0].Detail, "web,") {
		t.Errorf("+required: %+v", got)
	}
	// Not Claude Code: its tool names are just words.
	in.client = Client{}
	in.t.NewSearches = []decode.Search{{Tool: "ToolSearch", Query: "WebSearch WebFetch", Mode: "keyword", HasResult: true, Results: []string{"WebFetch"}}}
	if got := ruleSearchPartial(v, 0); got != nil {
		t.Errorf("another client: %+v", got)
	}
}

// TestRuleSearchRepeatedOnAView: a search that asks again what an earlier
// turn of the thread asked, in other words (a select: list in another
// order, keywords in another case), is flagged with what the first one
// loaded, and whether that was still loaded; a new question is not.
func TestRuleSearchRepeatedOnAView(t *testing.T) {
	sel := func(id string, names ...string) decode.Search {
		return decode.Search{ToolUseID: id, Tool: "ToolSearch", Query: "select:" + strings.Join(names, ","), Mode: "select", Selected: names, HasResult: true, Results: names}
	}
	first := fakeTurn(1, 200, &decode.Turn{})
	first.t.NewSearches = []decode.Search{sel("t1", "mcp__x__a", "mcp__x__b")}
	caller := fakeTurn(2, 200, &decode.Turn{WorkingSet: []decode.WorkingTool{{Name: "mcp__x__a"}, {Name: "mcp__x__b"}}})
	again := fakeTurn(3, 200, &decode.Turn{})
	again.t.Prev = 2
	again.t.NewSearches = []decode.Search{sel("t2", "mcp__x__b", "mcp__x__a")}
	v := &fakeView{turns: []*info{first, caller, again}, searched: map[fakeSearch]int{{2, searchKey(first.t.NewSearches[0])}: 0}}
	got := ruleSearchRepeated(v, 2)
	want := `ToolSearch "select:mcp__x__b,mcp__x__a" asks again what turn <0> asked ("select:mcp__x__a,mcp__x__b"), which loaded mcp__x__a, mcp__x__b; all were still in the working set when the model asked again.`
	if len(got) != 1 || got[0].Detail != want || got[0].Search != "t2" {
		t.Fatalf("got %+v\nwant %q", got, want)
	}
	// A keyword query in other case and spacing asks the same.
	kw := func(id, q string) decode.Search {
		return decode.Search{ToolUseID: id, Tool: "ToolSearch", Query: q, Mode: "keyword", HasResult: true}
	}
	if searchKey(kw("a", "Weather  forecast")) != searchKey(kw("b", "weather forecast")) {
		t.Error("keyword queries in other case and spacing differ")
	}
	first.t.NewSearches = []decode.Search{kw("t1", "weather forecast")}
	again.t.NewSearches = []decode.Search{kw("t2", "Weather forecast")}
	v.searched = map[fakeSearch]int{{2, searchKey(first.t.NewSearches[0])}: 0}
	if got := ruleSearchRepeated(v, 2); len(got) != 1 || !strings.HasSuffix(got[0].Detail, `("weather forecast"), which loaded nothing.`) {
		t.Errorf("keyword: %+v", got)
	}
	// Another question, or none asked before: no flag.
	again.t.NewSearches = []decode.Search{kw("t2", "weather today")}
	if got := ruleSearchRepeated(v, 2); got != nil {
		t.Errorf("another query: %+v", got)
	}
	if searchKey(kw("a", "x")) == searchKey(decode.Search{Tool: "tool_search_tool_regex", Query: "x", Mode: "regex"}) {
		t.Error("a server search and a ToolSearch of the same text ask the same")
	}
}
