package decode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures/longsession"
	"github.com/tsinspect/tsinspect/store"
)

// storedSession writes a generated session of the given turns, on the
// bundled real capture's requests, into a capture file and returns its
// path.
func storedSession(t testing.TB, turns int) string {
	t.Helper()
	ctx := context.Background()
	demo, err := store.OpenReadOnly("../fixtures/democapture/demo.db")
	if err != nil {
		t.Fatal(err)
	}
	exs, err := demo.Exchanges(ctx)
	demo.Close()
	if err != nil {
		t.Fatal(err)
	}
	base, err := longsession.BaseFrom(exs)
	if err != nil {
		t.Fatal(err)
	}
	gen, _, err := longsession.Collect(ctx, base, longsession.Options{
		Turns: turns, Seed: 5, SubagentEvery: 20, SideEvery: 15, CompactEvery: 60})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "long.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range gen {
		gen[i].ID = 0
		if err := db.Insert(ctx, &gen[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLayoutsSameAsDecode: a session read back from a capture, its request
// bodies named by the store and decoded with Parts that takes what each
// shares with an earlier body from that body's layout, decodes turn by
// turn as each exchange decoded alone does; and most turns did take their
// history that way.
func TestLayoutsSameAsDecode(t *testing.T) {
	path := storedSession(t, 160)
	db, err := store.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := NewParts()
	n, fromPrior, resumed := 0, 0, 0
	_, err = db.Scan(context.Background(), store.ScanOptions{Stream: true}, func(ex *exchange.Exchange) error {
		if ex.ReqRef.Key == "" {
			t.Fatalf("exchange %d: the store named no request body", ex.ID)
		}
		// What the prior gives, seen from the turn being decoded.
		pr := c.priorFor(ex.ReqRef.Base, ex.ReqRef.Prefix)
		before, taken := c.resumes, c.taken
		d := DecodeWith(ex, c)
		alone := *ex
		alone.ReqRef = exchange.BodyRef{}
		alone.ReqBody = bytes.Clone(ex.ReqBody)
		got, _ := json.Marshal(d)
		want, _ := json.Marshal(Decode(&alone))
		if !bytes.Equal(got, want) {
			t.Fatalf("exchange %d decodes differently through the layouts:\n got %.600s\nwant %.600s", ex.ID, got, want)
		}
		n++
		if c.taken > taken {
			fromPrior++
		}
		if c.resumes > before && pr.l != nil {
			resumed++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fromPrior < n/2 {
		t.Errorf("only %d of %d turns took messages from an earlier body's layout", fromPrior, n)
	}
	if resumed == 0 {
		t.Error("no validation resumed from an earlier body's mark")
	}
}

// TestLayoutElementsRecorded: the spans of a body are its top-level
// arrays' elements, in order, and a body that begins with another's bytes
// takes exactly those of its elements that lie within them.
func TestLayoutElementsRecorded(t *testing.T) {
	msg := func(role, text string) string {
		return `{"role":"` + role + `","content":[{"type":"text","text":"` + text + `"}]}`
	}
	head := `{"model":"m","messages":[` + msg("user", "a") + `, ` + msg("assistant", "b")
	first := []byte(head + `],"tools":[]}`)
	second := []byte(head + `,` + msg("user", "c") + `],"tools":[]}`)
	c := NewParts()
	DecodeWith(&exchange.Exchange{Method: "POST", URL: "/v1/messages", ReqBody: first, ReqRef: exchange.BodyRef{Key: "1"}}, c)
	if len(c.layouts) != 1 || len(c.layouts[0].spans) != 2 {
		t.Fatalf("layouts %+v", c.layouts)
	}
	for _, s := range c.layouts[0].spans {
		if s.msg == nil || first[s.start] != '{' || first[s.end-1] != '}' {
			t.Errorf("span %d..%d (%q) has no message or is not an element", s.start, s.end, first[s.start:s.end])
		}
	}
	common := len(head) // up to the end of the second message
	l1 := c.layouts[0]
	d := DecodeWith(&exchange.Exchange{Method: "POST", URL: "/v1/messages", ReqBody: second, ReqRef: exchange.BodyRef{Key: "2", Base: "1", Prefix: common}}, c)
	if len(d.Request.Messages) != 3 || d.Request.Messages[0] != l1.spans[0].msg || d.Request.Messages[1] != l1.spans[1].msg || c.taken != 2 {
		t.Fatalf("the second body did not take the first's two messages from its layout (%d taken): %+v", c.taken, d.Request.Messages)
	}
	// The second body's layout replaced the first's, which it extends.
	if len(c.layouts) != 1 || c.layouts[0].key != "2" {
		t.Fatalf("layouts after the second body: %+v", c.layouts)
	}
	if got := c.layouts[0].spans; len(got) != 3 || got[2].msg != d.Request.Messages[2] {
		t.Errorf("second layout %+v", got)
	}
	// A prefix that stops inside an element takes none of that element.
	s1 := l1.spans[1]
	at, short, whole := prior{l: l1, n: s1.end}, prior{l: l1, n: s1.end - 1}, prior{l: l1, n: len(first)}
	if _, ok := at.span(s1.start); !ok {
		t.Error("an element that ends where the common bytes do is not taken")
	}
	if _, ok := short.span(s1.start); ok {
		t.Error("an element that ends past the common bytes is taken")
	}
	if _, ok := whole.span(s1.start + 1); ok {
		t.Error("a place where no element starts gives one")
	}
	// Asked out of order, the cursor still finds each.
	for _, k := range []int{1, 0, 1, 1, 0} {
		if s, ok := whole.span(l1.spans[k].start); !ok || s.start != l1.spans[k].start {
			t.Errorf("span %d not found after the cursor moved", k)
		}
	}
}

// TestSeek finds every span and no other place, whatever the order of the
// questions.
func TestSeek(t *testing.T) {
	var spans []span
	for i := 0; i < 50; i++ {
		spans = append(spans, span{start: i * 10, end: i*10 + 5})
	}
	at := 0
	for _, q := range []int{0, 10, 10, 490, 20, 5, 250, 240, 500, -1, 0} {
		k, ok := seek(spans, q, &at)
		want := q >= 0 && q%10 == 0 && q < 500
		if ok != want || (ok && spans[k].start != q) {
			t.Errorf("seek(%d) = %d, %v", q, k, ok)
		}
	}
}

// BenchmarkDecodeStored decodes a generated 300-turn session read back
// from a capture with Parts, the request bodies named by the store (the
// layouts at work) and not.
func BenchmarkDecodeStored(b *testing.B) {
	db, err := store.OpenReadOnly(storedSession(b, 300))
	if err != nil {
		b.Fatal(err)
	}
	exs, err := db.Exchanges(context.Background())
	db.Close()
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, ex := range exs {
		size += int64(len(ex.ReqBody) + len(ex.RespBody))
	}
	for _, named := range []bool{true, false} {
		name := "named"
		if !named {
			name = "unnamed"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				c := NewParts()
				for i := range exs {
					ex := exs[i]
					if !named {
						ex.ReqRef = exchange.BodyRef{}
					}
					DecodeWith(&ex, c)
				}
			}
		})
	}
}

// commonPrefix is the length of the longest common prefix of a and b, as
// the store computes the bytes a splice shares with its base.
func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// samePair decodes first, then second as the store names it (its first
// bytes shared with first), and fails unless second decodes as it does
// alone.
func samePair(t *testing.T, c *Parts, first, second []byte) {
	t.Helper()
	ex1 := &exchange.Exchange{Method: "POST", URL: "/v1/messages", ReqBody: first, ReqRef: exchange.BodyRef{Key: string(first)}}
	DecodeWith(ex1, c)
	ref := exchange.BodyRef{Key: string(second), Base: string(first), Prefix: commonPrefix(first, second)}
	got, _ := json.Marshal(DecodeWith(&exchange.Exchange{Method: "POST", URL: "/v1/messages", ReqBody: bytes.Clone(second), ReqRef: ref}, c))
	want, _ := json.Marshal(Decode(&exchange.Exchange{Method: "POST", URL: "/v1/messages", ReqBody: second}))
	if !bytes.Equal(got, want) {
		t.Fatalf("decoded through the layout of\n%s\nthe body\n%s\ngives\n%s\nwant\n%s", first, second, got, want)
	}
}

// TestLayoutNumberAtCommonEnd: an element that is a number and ends where
// the shared bytes do is read again, not taken: "2" may be the start of
// "23".
func TestLayoutNumberAtCommonEnd(t *testing.T) {
	msg := `{"role":"user","content":[{"type":"text","text":"hi"}]}`
	samePair(t, NewParts(), []byte(`{"model":"m","x":[1,2],"messages":[`+msg+`]}`), []byte(`{"model":"m","x":[1,23],"messages":[`+msg+`]}`))
	samePair(t, NewParts(), []byte(`{"model":"m","messages":[`+msg+`,2]}`), []byte(`{"model":"m","messages":[`+msg+`,29]}`))
	samePair(t, NewParts(), []byte(`{"model":"m","messages":[`+msg+`,tru]}`), []byte(`{"model":"m","messages":[`+msg+`,true]}`))
}

// TestLayoutRandomPairs: bodies that grow, get edited and whose numbers and
// strings change, each decoded through the layout of the one before, as
// the store names them, decode as each does alone.
func TestLayoutRandomPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	message := func() string {
		role := pick("user", "assistant")
		switch rng.IntN(5) {
		case 0:
			return `{"role":"` + role + `","content":"` + pick("a", "ab", "b c") + `"}`
		case 1:
			return `{"role":"` + role + `","content":[{"type":"text","text":7}]}` // a problem
		case 2:
			return pick("1", "12", "true", "null", `"s"`, "[1,2]")
		case 3:
			return `{"role":"assistant","content":[{"type":"tool_use","id":"t` + pick("1", "2") + `","name":"ToolSearch","input":{"query":"select:` + pick("A", "B") + `"}}]}`
		default:
			return `{"role":"` + role + `","content":[{"type":"text","text":"` + pick("x", "xy", "x\\ny") + `"` + pick("", `,"cache_control":{"type":"ephemeral"}`) + `}]}`
		}
	}
	render := func(msgs []string, x string, ws string) []byte {
		return []byte(ws + `{"model":"m","x":[` + x + `],"messages":[` + strings.Join(msgs, ","+ws) + `],"tools":[{"name":"T","input_schema":{}}]}` + ws)
	}
	for round := 0; round < 400; round++ {
		c := NewParts()
		var msgs []string
		for i := rng.IntN(4); i >= 0; i-- {
			msgs = append(msgs, message())
		}
		x, ws := pick("1", "1,2", "3,45"), pick("", " ", "\n")
		prev := render(msgs, x, ws)
		for step := 0; step < 6; step++ {
			switch rng.IntN(4) {
			case 0:
				x += pick("", "0", "1")
			case 1:
				if len(msgs) > 0 {
					msgs[len(msgs)-1] = message()
				}
			default:
				msgs = append(msgs, message())
			}
			next := render(msgs, x, ws)
			samePair(t, c, prev, next)
			prev = next
		}
	}
}

// TestLayoutOutlivesInterleaving: a conversation's next body finds its
// last one's layout however many bodies of other conversations came in
// between, as the store's base does.
func TestLayoutOutlivesInterleaving(t *testing.T) {
	msg := func(s string) string { return `{"role":"user","content":[{"type":"text","text":"` + s + `"}]}` }
	body := func(conv string, n int) []byte {
		var ms []string
		for i := 0; i <= n; i++ {
			ms = append(ms, msg(fmt.Sprintf("%s %d with some words", conv, i)))
		}
		return []byte(`{"model":"m","messages":[` + strings.Join(ms, ",") + `]}`)
	}
	c := NewParts()
	decodeNamed := func(b, base []byte) {
		ref := exchange.BodyRef{Key: string(b)}
		if base != nil {
			ref.Base, ref.Prefix = string(base), commonPrefix(base, b)
		}
		DecodeWith(&exchange.Exchange{Method: "POST", URL: "/v1/messages", ReqBody: b, ReqRef: ref}, c)
	}
	decodeNamed(body("main", 3), nil)
	var prev []byte
	for i := 0; i < 3*layoutBodies; i++ { // a long subagent
		b := body("sub", i)
		decodeNamed(b, prev)
		prev = b
	}
	before := c.taken
	decodeNamed(body("main", 4), body("main", 3))
	if c.taken-before != 4 {
		t.Errorf("the main conversation's next body took %d messages from its last one's layout, want 4", c.taken-before)
	}
}

// FuzzLayoutPair: any body decoded through the layout of any other, named
// as the store names it (sharing their longest common prefix), decodes as
// it does alone.
func FuzzLayoutPair(f *testing.F) {
	msg := `{"role":"user","content":[{"type":"text","text":"hi"}]}`
	f.Add([]byte(`{"model":"m","x":[1,2],"messages":[`+msg+`]}`), []byte(`{"model":"m","x":[1,23],"messages":[`+msg+`]}`))
	f.Add([]byte(`{"model":"m","messages":[`+msg+`]}`), []byte(`{"model":"m","messages":[`+msg+`,`+msg+`]}`))
	f.Add([]byte(` {"messages":[`+msg+`, "s"]} `), []byte(` {"messages":[`+msg+`, "st"]}`))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		samePair(t, NewParts(), first, second)
	})
}
