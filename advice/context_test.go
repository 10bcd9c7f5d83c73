package advice_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/timeline"
)

// TestContextByHand: a recorded request of 1,000 prompt tokens whose
// parts are 100 bytes of system prompt, a 300-byte tool (a deferred one
// left out), 100 bytes of user text, a Bash call of 4+46 bytes and its
// 450-byte result: the tokens share the prompt by bytes.
func TestContextByHand(t *testing.T) {
	raw := func(n int) json.RawMessage { return json.RawMessage(make([]byte, n)) }
	d := &decode.Turn{}
	d.Request.System = []decode.SystemBlock{{Text: string(make([]byte, 100))}}
	d.Request.Tools = []decode.Tool{{Name: "Bash", Raw: raw(300)}, {Name: "mcp__x__y", DeferLoading: true, Raw: raw(999)}}
	d.Request.Messages = []*decode.Message{
		{Role: "user", StringContent: true, Text: string(make([]byte, 100))},
		{Role: "assistant", Blocks: []decode.Block{{Type: "tool_use", ID: "c1", Name: "Bash", Input: raw(46)}}},
		{Role: "user", Blocks: []decode.Block{{Type: "tool_result", ToolUseID: "c1", Raw: raw(450)}}},
	}
	d.Response.Usage.InputTokens = 1000
	c := advice.ContextOf(&timeline.Turn{Decoded: d})
	want := map[string]int64{"results: Bash": 450, advice.PartTools: 300, advice.PartSystem: 100, advice.PartUser: 100, advice.PartCalls: 50}
	if !c.Scaled || c.Tokens != 1000 || len(c.Parts) != len(want) || c.Parts[0].Name != "results: Bash" {
		t.Fatalf("composition %+v", c)
	}
	for _, p := range c.Parts {
		if want[p.Name] != p.Tokens {
			t.Errorf("%s: %d tokens, by hand %d (1,000 × its bytes / 1,000)", p.Name, p.Tokens, want[p.Name])
		}
	}
}

// TestContextFromTranscript: a turn made from a public session's
// transcript counts its messages at 2.5 bytes a token, and the rest of
// the billed prompt as what the files do not hold.
func TestContextFromTranscript(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "source", "testdata", "public", "28-*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("public session 28: %v", files)
	}
	b, _, err := source.ReadFile(context.Background(), files[0])
	if err != nil {
		t.Fatal(err)
	}
	s := b.Session()
	var last *timeline.Turn
	for _, tu := range s.Turns {
		if tu.Decoded != nil && tu.Decoded.Response.Usage.TotalInput() > 0 {
			last = tu
		}
	}
	if last == nil {
		t.Fatal("no billed turn")
	}
	c := advice.ContextOf(last)
	if c.Scaled || c.Tokens != last.Decoded.Response.Usage.TotalInput() {
		t.Fatalf("composition %+v", c)
	}
	var sum, rest int64
	results := false
	for _, p := range c.Parts {
		if p.Name == advice.PartNotInFiles {
			rest = p.Tokens
			continue
		}
		sum += p.Tokens
		if p.Name != advice.PartNotInFiles && p.Tokens != timeline.Tokens(p.Bytes, 1/timeline.CharsPerToken) {
			t.Errorf("%s: %d tokens for %d bytes", p.Name, p.Tokens, p.Bytes)
		}
		results = results || len(p.Name) > len(advice.PartResults) && p.Name[:len(advice.PartResults)] == advice.PartResults
	}
	// What the files do not hold is the rest of the billed prompt.
	if sum >= c.Tokens || rest != c.Tokens-sum || !results {
		t.Errorf("parts %+v of %d tokens", c.Parts, c.Tokens)
	}
}

// TestContextNeverExceedsTheBill: on every billed turn of every public
// session, what the parts of the prompt come to is never more than the
// prompt the answer's usage billed (estimates from bytes that would come
// to more share the billed prompt by their bytes instead).
func TestContextNeverExceedsTheBill(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "source", "testdata", "public", "*", "*.jsonl"))
	if len(files) < 10 {
		t.Fatalf("public sessions: %v", files)
	}
	turns, shared := 0, 0
	for _, f := range files {
		b, _, err := source.ReadFile(context.Background(), f)
		if err != nil {
			continue // a subagents-only session's main file is absent
		}
		for _, tu := range b.Session().Turns {
			billed := int64(0)
			if tu.Decoded != nil {
				billed = tu.Decoded.Response.Usage.TotalInput()
			}
			if billed == 0 {
				continue
			}
			c := advice.ContextOf(tu)
			var sum int64
			for _, p := range c.Parts {
				sum += p.Tokens
			}
			turns++
			if c.Scaled {
				shared++
			}
			if sum > billed {
				t.Errorf("%s #%d: parts %d tokens, billed %d", filepath.Base(f), tu.Index, sum, billed)
			}
		}
	}
	if turns < 500 {
		t.Errorf("%d billed turns read", turns)
	}
	t.Logf("%d billed turns, %d with the parts sharing the bill by their bytes", turns, shared)
}

// TestContextOfATranscriptBilledLess: a turn made from a transcript whose
// 2,500 bytes of results would be 1,000 tokens at 2.5 bytes a token, when
// the answer billed a prompt of 400: the parts share the 400 by their
// bytes (results 2,500 of 3,004 bytes: 332; user text 500: 66; the call's
// 4 bytes: 0), never more than billed.
func TestContextOfATranscriptBilledLess(t *testing.T) {
	raw := func(n int) json.RawMessage { return json.RawMessage(make([]byte, n)) }
	d := &decode.Turn{}
	d.Request.Transcript = &decode.Transcript{}
	d.Request.Messages = []*decode.Message{
		{Role: "user", StringContent: true, Text: string(make([]byte, 500))},
		{Role: "assistant", Blocks: []decode.Block{{Type: "tool_use", ID: "c1", Name: "Read"}}},
		{Role: "user", Blocks: []decode.Block{{Type: "tool_result", ToolUseID: "c1", Raw: raw(2500)}}},
	}
	d.Response.Usage.InputTokens = 400
	c := advice.ContextOf(&timeline.Turn{Decoded: d})
	var sum int64
	got := map[string]int64{}
	for _, p := range c.Parts {
		sum += p.Tokens
		got[p.Name] = p.Tokens
	}
	if !c.Scaled || sum > 400 || got["results: Read"] != 332 || got[advice.PartUser] != 66 {
		t.Errorf("composition %+v (sum %d of 400 billed)", c, sum)
	}
}
