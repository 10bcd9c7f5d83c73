package decode

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
)

// TestCacheIsJSONSameVerdict: validating through Parts, resuming at the
// marks of earlier bodies, gives isJSON's verdict on growing
// conversations, some with a byte broken before, at or after the part they
// share with the previous body.
func TestCacheIsJSONSameVerdict(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	item := func(n int) string {
		var b bytes.Buffer
		fmt.Fprintf(&b, `{"role":"user","content":[{"type":"text","text":"`)
		for i := 0; i < n; i++ {
			b.WriteByte("abcdefgh ijk\\n"[rng.IntN(14)])
			if b.Bytes()[b.Len()-1] == '\\' {
				b.WriteByte('n')
			}
		}
		fmt.Fprintf(&b, `"}],"n":%d}`, rng.IntN(1000))
		return b.String()
	}
	c := NewParts()
	var items []string
	checked := 0
	for turn := 0; turn < 120; turn++ {
		items = append(items, item(2000+rng.IntN(30000)))
		if rng.IntN(15) == 0 {
			items = items[:rng.IntN(len(items))+1] // a restart or a branch
		}
		var b bytes.Buffer
		b.WriteString(`{"model":"m","messages":[`)
		for i, it := range items {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(it)
		}
		b.WriteString(`],"tools":[{"name":"x","input_schema":{"type":"object"}}],"stream":true}`)
		body := b.Bytes()
		if rng.IntN(3) == 0 && len(body) > 10 {
			at := rng.IntN(len(body))
			body = append([]byte{}, body...)
			body[at] = "\"}]{[,:\x01x"[rng.IntN(9)]
		}
		got, want := c.isJSON(body), isJSON(body)
		if got != want {
			t.Fatalf("turn %d (%d bytes): cached verdict %v, isJSON %v", turn, len(body), got, want)
		}
		checked++
	}
	if c.resumes < checked/2 {
		t.Errorf("only %d of %d validations resumed from a mark", c.resumes, checked)
	}
}

// TestSearchResultTextReadOnce: a search's result text is read from its
// block once for all the turns that carry its message shared, not again on
// every turn (a long thread carries every earlier search), and the text
// read for a turn is the block's.
func TestSearchResultTextReadOnce(t *testing.T) {
	msgs := []string{
		`{"role":"user","content":"find a weather tool"}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_s1","name":"ToolSearch","input":{"query":"weather forecast"}}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_s1","content":"No matching deferred tools found"}]}`,
	}
	for i := range 12 {
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_b%d","name":"Bash","input":{"command":"ls"}}]}`, i),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_b%d","content":"file %d"}]}`, i, i))
	}
	c := NewParts()
	turns := 0
	for n := 3; n <= len(msgs); n += 2 {
		body := `{"model":"claude-opus-5","max_tokens":100,"tools":[{"name":"ToolSearch","input_schema":{"type":"object"}}],"messages":[` + strings.Join(msgs[:n], ",") + `]}`
		ex := exchange.Exchange{Method: "POST", URL: "https://api.anthropic.com/v1/messages", ReqBody: []byte(body), State: exchange.StateComplete}
		d := DecodeWith(&ex, c)
		if len(d.Problems) > 0 {
			t.Fatalf("turn %d: %v", turns+1, d.Problems)
		}
		if len(d.Searches) != 1 || !d.Searches[0].NoMatch || d.Searches[0].Text != "No matching deferred tools found" {
			t.Fatalf("turn %d: searches %+v, want the one that found nothing", turns+1, d.Searches)
		}
		turns++
	}
	if len(c.texts) != 1 {
		t.Errorf("%d result texts kept over %d turns, want the search's alone, read once", len(c.texts), turns)
	}
	for b, text := range c.texts {
		if want := b.ResultText(); text != want {
			t.Errorf("kept %q for a block whose text is %q", text, want)
		}
	}
}
