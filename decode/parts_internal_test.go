package decode

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
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
