package decode

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
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
// bodies named by the store and decoded with a Cache that takes what each
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
	c := NewCache()
	n, fromPrior, resumed := 0, 0, 0
	err = db.Stream(context.Background(), 0, func(ex *exchange.Exchange) error {
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
	c := NewCache()
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
	d := DecodeWith(&exchange.Exchange{Method: "POST", URL: "/v1/messages", ReqBody: second, ReqRef: exchange.BodyRef{Key: "2", Base: "1", Prefix: common}}, c)
	if len(d.Request.Messages) != 3 || d.Request.Messages[0] != c.layouts[0].spans[0].msg || d.Request.Messages[1] != c.layouts[0].spans[1].msg || c.taken != 2 {
		t.Fatalf("the second body did not take the first's two messages from its layout (%d taken): %+v", c.taken, d.Request.Messages)
	}
	if got := c.layouts[1].spans; len(got) != 3 || got[2].msg != d.Request.Messages[2] {
		t.Errorf("second layout %+v", got)
	}
	// A prefix that stops inside an element takes none of that element.
	s1 := c.layouts[0].spans[1]
	at, short, whole := prior{l: c.layouts[0], n: s1.end}, prior{l: c.layouts[0], n: s1.end - 1}, prior{l: c.layouts[0], n: len(first)}
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
		if s, ok := whole.span(c.layouts[0].spans[k].start); !ok || s.start != c.layouts[0].spans[k].start {
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
// from a capture with a Cache, the request bodies named by the store (the
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
				c := NewCache()
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
