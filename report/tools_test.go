package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/tooltokens"
	"github.com/tsinspect/tsinspect/toolsearch/claudetools"
)

// toolSession makes a two-turn Claude Code-like session: Bash always,
// ToolSearch, a catalog of echo and other, echo loaded on turn 2 (its
// schema 250 characters), other never loaded. Each request is 10,000
// bytes and its prompt 3,000 tokens (0.3 tokens a byte); the announcement
// is 100 bytes of a longer text block.
func toolSession() (*timeline.Session, string) {
	echo := fmt.Sprintf(`{"name":"mcp__demo__echo","description":%q,"input_schema":{"type":"object"},"defer_loading":true}`, strings.Repeat("e", 180))
	bash := `{"name":"Bash","description":"Run a command.","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}`
	search := `{"name":"ToolSearch","description":"Search deferred tools.","input_schema":{"type":"object"}}`
	announce := "Environment: much else.\n<system-reminder>\nThe following deferred tools are now available via ToolSearch:\nmcp__demo__echo\nmcp__demo__other\n</system-reminder>"
	s := &timeline.Session{Exchanges: 2, Threads: []*timeline.Thread{{ID: "main", Kind: timeline.KindMain, Turns: []int{1, 2}}}}
	for i := 1; i <= 2; i++ {
		raws := []string{bash, search}
		ws := []decode.WorkingTool{{Name: "Bash", Via: decode.ViaAlways}, {Name: "ToolSearch", Via: decode.ViaAlways}}
		if i == 2 {
			raws = append(raws, echo)
			ws = append(ws, decode.WorkingTool{Name: "mcp__demo__echo", Via: decode.ViaSearch, Deferred: true})
		}
		d := &decode.Turn{ExchangeID: int64(i), WorkingSet: ws, Catalog: []string{"mcp__demo__echo", "mcp__demo__other"}}
		d.Request.Kind = decode.KindMessages
		d.Request.Size = 10000
		d.Request.Model = "claude-sonnet-4-5"
		d.Response.Usage = decode.Usage{InputTokens: 500, CacheCreationInputTokens: 2500}
		for _, raw := range raws {
			var head struct {
				Name         string `json:"name"`
				DeferLoading bool   `json:"defer_loading"`
			}
			json.Unmarshal([]byte(raw), &head)
			d.Request.Tools = append(d.Request.Tools, decode.Tool{Name: head.Name, DeferLoading: head.DeferLoading, Raw: json.RawMessage(raw)})
		}
		d.Request.Messages = []*decode.Message{{Role: "user", Blocks: []decode.Block{{Type: "text", Text: announce}}}}
		d.CatalogEvents = []decode.CatalogEvent{{Message: 0, Block: 0, Form: "reminder", Names: d.Catalog, Len: 100}}
		t := &timeline.Turn{Index: i, Thread: "main", Prev: i - 1, Decoded: d, Exchange: &exchange.Exchange{ID: int64(i), Status: 200}}
		if i == 2 {
			d.NewSearches = []decode.Search{{ToolUseID: "toolu_1", Tool: "ToolSearch", Query: "select:mcp__demo__echo", Mode: "select", Results: []string{"mcp__demo__echo"}}}
			t.NewSearches = d.NewSearches
			t.WorkingAdded = []string{"mcp__demo__echo"}
		}
		s.Turns = append(s.Turns, t)
	}
	return s, echo
}

func TestToolTokens(t *testing.T) {
	s, echo := toolSession()
	r := Build(s, "1")
	// 0.3 tokens a byte of compact JSON, rounded down.
	est := func(raw string) int64 { return int64(float64(len(timeline.CanonicalJSON(json.RawMessage(raw)))) * 0.3) }
	t1, t2 := r.Turns[0], r.Turns[1]
	if len(t2.ToolDefinitions) != 3 || t2.ToolDefinitions[2].Name != "mcp__demo__echo" || !t2.ToolDefinitions[2].Deferred ||
		!t2.ToolDefinitions[2].Loaded || len(t2.ToolDefinitions[2].SHA256) != 64 || t2.ToolDefinitions[2].TokensFrom != FromEstimate {
		t.Fatalf("turn 2 definitions %+v", t2.ToolDefinitions)
	}
	e := est(echo)
	if e != t2.ToolDefinitions[2].Tokens || e < 60 {
		t.Errorf("echo tokens %d, estimate %d", t2.ToolDefinitions[2].Tokens, e)
	}
	search := t1.ToolDefinitions[1].Tokens
	bash := t1.ToolDefinitions[0].Tokens
	// Turn 1: echo not loaded, but its schema is known from turn 2; other
	// is never seen, and counted at the size of its server's one known
	// deferred schema, echo's. The announcement is its 100 bytes, not the
	// text block it sits in.
	want1 := ToolTokens{Sent: bash + search, SearchTool: search, Inlined: bash + e + e, Estimated: 1, Announcement: 30, Prompt: 3000, BytesPerToken: 3.33}
	want1.Saved = want1.Inlined - want1.Sent - want1.Announcement
	if t1.ToolTokens != want1 {
		t.Errorf("turn 1 tokens %+v, want %+v", t1.ToolTokens, want1)
	}
	if t2.ToolTokens.Sent != bash+search+e || t2.ToolTokens.Loaded != e || t2.ToolTokens.Inlined != bash+e+e || t2.ToolTokens.Estimated != 1 || t2.ToolTokens.Unknown != 0 {
		t.Errorf("turn 2 tokens %+v", t2.ToolTokens)
	}
	for _, rt := range r.Turns {
		if tt := rt.ToolTokens; tt.Sent+tt.Announcement > tt.Prompt {
			t.Errorf("turn %d: %d tool tokens and %d of announcement in a prompt of %d", rt.Index, tt.Sent, tt.Announcement, tt.Prompt)
		}
	}
	th := r.TokenSummary.Threads[0]
	if th.Turns != 2 || th.Sent != t1.ToolTokens.Sent+t2.ToolTokens.Sent || th.Searches != 1 ||
		fmt.Sprint(th.LoadedTools) != "[mcp__demo__echo]" || fmt.Sprint(th.Estimated) != "[mcp__demo__other]" || len(th.Unknown) != 0 {
		t.Errorf("thread tokens %+v", th)
	}
	if th.Saved != t1.ToolTokens.Saved+t2.ToolTokens.Saved || th.UnknownSlots != 0 || th.BreakEven != 0 {
		t.Errorf("thread saved %d, %d unknown slots, break-even %d", th.Saved, th.UnknownSlots, th.BreakEven)
	}
	if r.TokenSummary.Method == "" || r.TokenSummary.CharsPerToken != 2.5 {
		t.Errorf("summary %+v", r.TokenSummary)
	}
}

// TestToolTokensNoDeferredSchema: with no deferred schema in the capture,
// the catalog tools are of unknown size, left out, and "saved" is a
// negative lower bound with a break-even size.
func TestToolTokensNoDeferredSchema(t *testing.T) {
	s, _ := toolSession()
	s.Turns = s.Turns[:1]
	s.Threads[0].Turns = []int{1}
	r := Build(s, "1")
	th := r.TokenSummary.Threads[0]
	tt := r.Turns[0].ToolTokens
	if tt.Unknown != 2 || tt.Estimated != 0 || fmt.Sprint(th.Unknown) != "[mcp__demo__echo mcp__demo__other]" {
		t.Fatalf("tokens %+v, thread %+v", tt, th)
	}
	if th.Saved >= 0 || th.UnknownSlots != 2 || th.BreakEven != (-th.Saved+1)/2 {
		t.Errorf("break-even: saved %d, %d unknown slots, break-even %d", th.Saved, th.UnknownSlots, th.BreakEven)
	}
	want := fmt.Sprintf("In thread main deferral comes out ahead if the 2 tools of unknown size average at least %d tokens each.", th.BreakEven)
	if got := breakEven(th); got != want {
		t.Errorf("break-even text:\n got %s\nwant %s", got, want)
	}
	if got := TokensText(th.Saved, len(th.Unknown), len(th.Estimated)); !strings.HasPrefix(got, "≥ −") {
		t.Errorf("saved shown as %q", got)
	}
	r.Price(pricing.Default())
	if got := r.Costs.DeferralText(); !strings.HasPrefix(got, "deferral cost at most $") {
		t.Errorf("deferral text %q", got)
	}
}

// TestToolTokensWithoutUsage: a request whose response carried no usage
// (it failed) is measured at the rate of its thread's last measured one.
func TestToolTokensWithoutUsage(t *testing.T) {
	s, _ := toolSession()
	s.Turns[1].Decoded.Response.Usage = decode.Usage{}
	r := Build(s, "1")
	if a, b := r.Turns[0].ToolTokens, r.Turns[1].ToolTokens; b.Prompt != 0 || b.BytesPerToken != a.BytesPerToken || b.SearchTool != a.SearchTool {
		t.Errorf("turn 2 %+v, turn 1 %+v", b, a)
	}
}

func TestCountTokens(t *testing.T) {
	tool := `{"name":"mcp__demo__echo","description":"Echo.","input_schema":{"type":"object"}}`
	body := func(tools string) []byte {
		return []byte(`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"foo"}],"tools":[` + tools + `]}`)
	}
	ex := func(id int64, tools string, n int) exchange.Exchange {
		return exchange.Exchange{ID: id, Method: "POST", URL: "https://api.anthropic.com/v1/messages/count_tokens", Status: 200,
			ReqBody: body(tools), RespBody: []byte(fmt.Sprintf(`{"input_tokens":%d}`, n)),
			RespHeaders: []exchange.Header{{Name: "Content-Type", Value: "application/json"}}}
	}
	other := `{"name":"Bash","description":"Run.","input_schema":{"type":"object"}}`
	counts := CountTokens([]exchange.Exchange{ex(1, "", 8), ex(2, tool, 420), ex(3, other, 500), ex(4, tool+","+other, 900)})
	h := tooltokens.Hash(json.RawMessage(tool))
	if counts[h] != 412 || counts[tooltokens.Hash(json.RawMessage(other))] != 492 {
		t.Errorf("counts %v (echo %s)", counts, h)
	}
	s, _ := toolSession()
	s.Turns[1].Decoded.Request.Tools[0].Raw = json.RawMessage(other)
	r := BuildWithCounts(s, "1", counts)
	if d := r.Turns[1].ToolDefinitions[0]; d.Tokens != 492 || d.TokensFrom != FromCountTokens || r.TokenSummary.CountTokensUsed != 1 {
		t.Errorf("definition %+v", d)
	}
}

// TestClaudeCodeToolSizes: in a Claude Code capture, one of its own
// deferred tools that no request sent is counted at the size the project
// recorded of that release, not at the average of the MCP schemas.
func TestClaudeCodeToolSizes(t *testing.T) {
	s, _ := toolSession()
	s.Threads[0].Client = timeline.Client{Family: timeline.ClientClaudeCode, Name: "Claude Code", Version: "2.1.328"}
	for _, tu := range s.Turns {
		tu.Decoded.Catalog = append(tu.Decoded.Catalog, "WebFetch")
	}
	before := Build(s, "1").Turns[0].ToolTokens
	size, ok := claudetools.Size("2.1.328", "WebFetch")
	if !ok {
		t.Fatal("no recorded size of WebFetch")
	}
	want := timeline.Tokens(size, 0.3)
	s2, _ := toolSession()
	base := Build(s2, "1").Turns[0].ToolTokens
	if got := before.Inlined - base.Inlined; got != want || before.Estimated != base.Estimated+1 {
		t.Errorf("WebFetch counted at %d tokens (%d estimated), want %d (%d bytes at 0.3)", got, before.Estimated, want, size)
	}
}
