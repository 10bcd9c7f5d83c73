package stats_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/stats"
	"github.com/tsinspect/tsinspect/timeline"
)

func demoSession(t *testing.T) *timeline.Session {
	t.Helper()
	return timeline.Build(session.DemoExchanges(t))
}

func TestDemoTwiceMerged(t *testing.T) {
	s := demoSession(t)
	// Two tables merged must equal one table with both captures added.
	a, b := stats.New(pricing.Default()), stats.New(pricing.Default())
	a.Add("one.db", "2.1.328", s)
	b.Add("two.db", "", s)
	a.Merge(b)
	a.Finish()
	if a.Captures != 2 || a.Turns != 2*len(s.Turns) {
		t.Fatalf("captures %d turns %d, want 2 and %d", a.Captures, a.Turns, 2*len(s.Turns))
	}
	if len(a.Servers) != 1 || a.Servers[0].Name != "demo" {
		t.Fatalf("servers %+v, want the demo server only", a.Servers)
	}
	srv := a.Servers[0]
	if srv.Offered != 2 || srv.Loaded != 2 {
		t.Errorf("demo server offered in %d, loaded in %d captures; want 2, 2", srv.Offered, srv.Loaded)
	}
	tools := map[string]stats.ToolStats{}
	for _, tool := range srv.Tools {
		tools[tool.Name] = tool
	}
	// The demo loads echo by a select: search and calls it, and calls
	// action_7 without loading it.
	echo := tools["mcp__demo__echo"]
	if echo.Offered != 2 || echo.Found != 2 || echo.Loaded != 2 || echo.Called != 2 || echo.Blind != 0 {
		t.Errorf("echo %+v", echo.Counts)
	}
	a7 := tools["mcp__demo__action_7"]
	if a7.Called != 2 || a7.Blind != 2 || a7.Loaded != 0 || a7.Found != 0 {
		t.Errorf("action_7 %+v", a7.Counts)
	}
	kinds := map[string]stats.FlagKind{}
	for _, f := range a.Flags {
		kinds[f.Kind] = f
	}
	cb := kinds["cache_break"]
	if cb.Count != 2 || strings.Join(cb.Captures, ",") != "one.db,two.db" {
		t.Errorf("cache_break %+v", cb)
	}
	if want := 200.0 / float64(a.Turns); cb.Per100Turns != want {
		t.Errorf("cache_break per 100 turns %v, want %v", cb.Per100Turns, want)
	}
	if a.CacheBreaks.Count != 2 || a.CacheBreaks.TokensLost <= 0 || a.CacheBreaks.USD <= 0 || a.CacheBreaks.Unpriced != 0 {
		t.Errorf("cache breaks %+v", a.CacheBreaks)
	}
	// Half the breaks, half the cost: one table is the sum of its parts.
	one := stats.New(pricing.Default())
	one.Add("one.db", "", s)
	one.Finish()
	if d := a.CacheBreaks.USD - 2*one.CacheBreaks.USD; d > 1e-9 || d < -1e-9 {
		t.Errorf("two captures' breaks cost %v, one's %v", a.CacheBreaks.USD, one.CacheBreaks.USD)
	}
	if a.Models[0].USD <= a.Models[0].BreakUSD || a.Models[0].Unpriced != 0 {
		t.Errorf("model cost %v, break cost %v, unpriced %d", a.Models[0].USD, a.Models[0].BreakUSD, a.Models[0].Unpriced)
	}
	// Each turn counts under the client its request names, whatever the
	// caller passed.
	if len(a.Clients) != 1 || a.Clients[0].Name != "2.1.328" || a.Clients[0].Turns != a.Turns || a.Clients[0].Captures != 2 {
		t.Errorf("clients %+v: want 2.1.328 for every turn", a.Clients)
	}
	if len(a.Models) != 1 || a.Models[0].Turns != a.Turns || a.Models[0].Captures != 2 {
		t.Errorf("models %+v", a.Models)
	}

	var text, js bytes.Buffer
	if err := a.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mcp__demo (server)", "  echo ", "cache_break", "2.1.328", "claude-sonnet", "BREAK COST", "prices taken 20"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if err := a.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"captures", "turns", "servers", "flags", "cache_breaks", "clients", "models"} {
		if _, ok := back[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
}

func TestServerOf(t *testing.T) {
	for name, want := range map[string]string{
		"mcp__github__create_issue": "github", "mcp__x": "x", "Read": "", "mcp__a__b__c": "a",
	} {
		if got := stats.ServerOf(name); got != want {
			t.Errorf("ServerOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestToolsInNaturalOrder(t *testing.T) {
	tab := stats.New(nil)
	tab.Add("one.db", "", demoSession(t))
	tab.Finish()
	var names []string
	for _, tool := range tab.Servers[0].Tools {
		names = append(names, strings.TrimPrefix(tool.Name, "mcp__demo__"))
	}
	got := strings.Join(names, " ")
	if !strings.HasPrefix(got, "action_0 action_1 action_2 ") || !strings.Contains(got, "action_9 action_10 ") || !strings.HasSuffix(got, " echo") {
		t.Errorf("tools in the order %s", got)
	}
	if tab.Priced || tab.CacheBreaks.USD != 0 {
		t.Errorf("a table without prices has dollars: %+v", tab.CacheBreaks)
	}
}

// TestClientFromBillingHeader: a capture whose requests carry no
// User-Agent (Claude Code's raw-bodies files) counts under the version its
// billing header gives, as turns and the report say.
func TestClientFromBillingHeader(t *testing.T) {
	exs := session.DemoExchanges(t)
	for i := range exs {
		var kept []exchange.Header
		for _, h := range exs[i].ReqHeaders {
			if !strings.EqualFold(h.Name, "User-Agent") {
				kept = append(kept, h)
			}
		}
		exs[i].ReqHeaders = kept
	}
	tab := stats.New(pricing.Default())
	tab.Add("bodies.db", "", timeline.Build(exs))
	tab.Finish()
	if len(tab.Clients) != 1 || tab.Clients[0].Name != "2.1.328" {
		t.Errorf("clients %+v, want 2.1.328 from the billing header", tab.Clients)
	}
}

// TestEstimatedModelMarked: a model the price table does not know is
// priced as its nearest neighbour in the table and marked ≈, as in turns and the
// report, with the table's date.
func TestEstimatedModelMarked(t *testing.T) {
	exs := session.DemoExchanges(t)
	for i := range exs {
		exs[i].ReqBody = bytes.ReplaceAll(exs[i].ReqBody, []byte(`"model":"claude-sonnet-4-5"`), []byte(`"model":"claude-opus-5-7"`))
	}
	tab := stats.New(pricing.Default())
	tab.Add("opus.db", "", timeline.Build(exs))
	tab.Finish()
	if len(tab.Models) != 1 || tab.Models[0].Estimated != tab.Models[0].Turns || tab.Models[0].Unpriced != 0 ||
		strings.Join(tab.Estimated, ",") != "claude-opus-5-7 as claude-opus-5-5" || tab.PricesTaken != "2026-11-26" || tab.CacheBreaks.Estimated != 1 {
		t.Fatalf("models %+v, estimated %v, taken %q, breaks %+v", tab.Models, tab.Estimated, tab.PricesTaken, tab.CacheBreaks)
	}
	var text bytes.Buffer
	if err := tab.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"claude-opus-5-7", "≈$", "≈ Not in the price table, priced as a neighbour: claude-opus-5-7 as claude-opus-5-5.", "built-in prices taken 2026-11-26"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}
