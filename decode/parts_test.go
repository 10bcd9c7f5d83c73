package decode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures/longsession"
	"github.com/tsinspect/tsinspect/store"
)

// demoExchanges reads the bundled real capture.
func demoExchanges(t testing.TB) []exchange.Exchange {
	t.Helper()
	db, err := store.OpenReadOnly("../fixtures/democapture/demo.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exs, err := db.Exchanges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return exs
}

// longExchanges generates a session on the demo capture's requests.
func longExchanges(t testing.TB, turns int) []exchange.Exchange {
	t.Helper()
	base, err := longsession.BaseFrom(demoExchanges(t))
	if err != nil {
		t.Fatal(err)
	}
	exs, _, err := longsession.Collect(context.Background(), base, longsession.Options{
		Turns: turns, Seed: 3, SubagentEvery: 20, SideEvery: 15, CompactEvery: 50})
	if err != nil {
		t.Fatal(err)
	}
	return exs
}

func asJSON(t *testing.T, d *decode.Turn) []byte {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeWithCacheSameAsDecode: decoding a session with a cache gives,
// turn by turn, what decoding each exchange alone gives.
func TestDecodeWithCacheSameAsDecode(t *testing.T) {
	exs := append(demoExchanges(t), longExchanges(t, 120)...)
	c := decode.NewParts()
	for i := range exs {
		ex := exs[i]
		ex.ReqBody = bytes.Clone(ex.ReqBody)
		d := decode.DecodeWith(&ex, c)
		got := asJSON(t, d)
		want := asJSON(t, decode.Decode(&exs[i]))
		if !bytes.Equal(got, want) {
			t.Fatalf("exchange %d decodes differently with the cache:\n got %.600s\nwant %.600s", i, got, want)
		}
		// Nothing decoded points into the request body: the caller may
		// reuse it.
		for j := range ex.ReqBody {
			ex.ReqBody[j] = 'X'
		}
		if after := asJSON(t, d); !bytes.Equal(after, got) {
			t.Fatalf("exchange %d: the decoded turn changed with its request body", i)
		}
	}
}

// TestDecodeWithCacheKeepsProblems: a malformed part is reported on every
// turn that holds it, not only on the first.
func TestDecodeWithCacheKeepsProblems(t *testing.T) {
	body := func(extra string) []byte {
		return []byte(`{"model":"m","max_tokens":5,"tools":[{"name":5}],"messages":[{"role":"user","content":[{"type":"text","text":7}]}` + extra + `]}`)
	}
	c := decode.NewParts()
	for i, b := range [][]byte{body(""), body(`,{"role":"assistant","content":"ok"}`)} {
		own := bytes.Clone(b)
		d := decode.DecodeWith(&exchange.Exchange{Method: "POST", URL: "/v1/messages", ReqBody: own}, c)
		alone := decode.Decode(&exchange.Exchange{Method: "POST", URL: "/v1/messages", ReqBody: b})
		if len(d.Problems) < 2 || strings.Join(d.Problems, "\n") != strings.Join(alone.Problems, "\n") {
			t.Errorf("request %d: problems %q, want those of decoding it alone %q", i+1, d.Problems, alone.Problems)
		}
		want := asJSON(t, alone)
		for j := range own {
			own[j] = 'X'
		}
		if got := asJSON(t, d); !bytes.Equal(got, want) {
			t.Errorf("request %d: the decoded turn changed with its request body:\n got %s\nwant %s", i+1, got, want)
		}
	}
}

// BenchmarkDecodeSession decodes a generated 150-turn session, each
// exchange alone and with a cache.
func BenchmarkDecodeSession(b *testing.B) {
	exs := longExchanges(b, 150)
	var size int64
	for _, ex := range exs {
		size += int64(len(ex.ReqBody) + len(ex.RespBody))
	}
	b.Run("alone", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			for i := range exs {
				decode.Decode(&exs[i])
			}
		}
	})
	b.Run("cache", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			c := decode.NewParts()
			for i := range exs {
				decode.DecodeWith(&exs[i], c)
			}
		}
	})
}

// TestDecodeWithCacheSharesHistory: with a cache, the turns of a session
// share what their histories repeat. Each message, tool list and search is
// held once however many turns list it again, so what a session holds
// grows with what is new in each turn, not with the square of its length.
func TestDecodeWithCacheSharesHistory(t *testing.T) {
	exs := longExchanges(t, 120)
	c := decode.NewParts()
	messages := map[*decode.Message]bool{}
	searches := map[*decode.Search]bool{}
	searchIDs := map[string]bool{}
	toolArrays := map[*decode.Tool]bool{}
	listed, turns := 0, 0
	for i := range exs {
		d := decode.DecodeWith(&exs[i], c)
		if d.Request.Kind != decode.KindMessages {
			continue
		}
		turns++
		listed += len(d.Request.Messages)
		for _, m := range d.Request.Messages {
			messages[m] = true
		}
		for _, s := range d.Searches {
			searches[s] = true
			searchIDs[s.ToolUseID] = true
		}
		if len(d.Request.Tools) > 0 {
			toolArrays[&d.Request.Tools[0]] = true
		}
	}
	// A message is held once; the last of each request differs from the
	// next request's copy (its cache_control moves on), so up to one more
	// per turn.
	if len(messages) > listed/4 {
		t.Errorf("%d distinct messages for %d listed over %d turns: the history is not shared", len(messages), listed, turns)
	}
	// A search is held again only when it changes: called in a response,
	// answered (its result new), then history.
	if len(searchIDs) == 0 || len(searches) > 3*len(searchIDs)+turns/10 {
		t.Errorf("%d search values for %d searches over %d turns", len(searches), len(searchIDs), turns)
	}
	if len(toolArrays) > turns/4 {
		t.Errorf("%d tool lists held for %d turns", len(toolArrays), turns)
	}
	t.Logf("%d turns: %d messages listed, %d held; %d searches, %d values; %d tool arrays", turns, listed, len(messages), len(searchIDs), len(searches), len(toolArrays))
}

// TestAnnouncementLen: an announcement's Len is that of the list alone,
// its header line and one line per name, on the real Claude Code requests
// of the bundled capture (the list in a text block of its own) and in a
// request shaped as Claude Code 2.1.328 sends one with its default model:
// the list inside a role "system" message of ~10 kB that also holds the
// environment and the agent types.
func TestAnnouncementLen(t *testing.T) {
	check := func(name string, d *decode.Turn) int {
		n := 0
		for _, ev := range d.CatalogEvents {
			if ev.Form != "reminder" || ev.Message < 0 {
				continue
			}
			m := d.Request.Messages[ev.Message]
			text := m.Text
			if ev.Block >= 0 {
				text = m.Blocks[ev.Block].Text
			}
			start := strings.Index(text, "The following deferred tools are now available via")
			if start < 0 {
				t.Fatalf("%s: announcement text not found", name)
			}
			want := strings.Index(text[start:], "\n")
			for _, n := range ev.Names {
				want += len(n) + 1
			}
			if ev.Len != want || !strings.HasSuffix(text[start:start+ev.Len], "\n"+ev.Names[len(ev.Names)-1]) {
				t.Errorf("%s: Len %d, want %d", name, ev.Len, want)
			}
			n++
		}
		return n
	}
	checked := 0
	for _, ex := range demoExchanges(t) {
		checked += check(fmt.Sprintf("exchange %d", ex.ID), decode.Decode(&ex))
	}
	if checked == 0 {
		t.Fatal("no announcement in the bundled capture")
	}
	names := []string{"CronCreate", "WebFetch", "mcp__demo__action_0", "mcp__demo__echo"}
	system := "# Environment\nYou have been invoked in the following environment: \n - Platform: linux\n" + strings.Repeat(" - a rule of the environment\n", 250) +
		"\nYou are powered by the model named Opus 5.5.\n\n" +
		"The following deferred tools are now available via ToolSearch. Their schemas are NOT loaded — calling them directly will fail with InputValidationError. Use ToolSearch with query \"select:<name>[,<name>...]\" to load tool schemas before calling them:\n" +
		strings.Join(names, "\n") + "\n\nAvailable agent types for the Agent tool:\n- claude: Catch-all.\n" + strings.Repeat("- another agent type\n", 100)
	body, _ := json.Marshal(map[string]any{"model": "claude-opus-5-5", "max_tokens": 32000, "messages": []any{
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Show me what the demo MCP tools can do."}}},
		map[string]any{"role": "system", "content": []any{map[string]any{"type": "text", "text": system}}},
	}})
	ex := exchange.Exchange{ID: 1, Method: "POST", URL: "https://api.anthropic.com/v1/messages?beta=true", ReqBody: body}
	d := decode.Decode(&ex)
	if check("system message", d) != 1 || fmt.Sprint(d.Catalog) != fmt.Sprint(names) {
		t.Fatalf("catalog %v, events %+v", d.Catalog, d.CatalogEvents)
	}
	if ev := d.CatalogEvents[0]; 4*ev.Len > len(system) {
		t.Errorf("Len %d of a %d-byte message", ev.Len, len(system))
	}
}
