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
