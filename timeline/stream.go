package timeline

import (
	"bytes"
	"slices"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
)

// Builder builds a Session from exchanges handed to it one at a time, in
// capture order, decoding each as it comes with one decode.Parts: a
// capture can be read a row at a time (store.DB.Scan) instead of whole.
//
// Unless it keeps bodies, a Builder drops the request and response bodies
// of each Messages exchange once decoded: the Session then holds what was
// decoded (each part shared between the turns that repeat it), not every
// turn's copy of the history. Other exchanges (count_tokens, settings...)
// keep theirs. Use Build, or keep bodies, where the raw bytes are shown.
type Builder struct {
	keepBodies bool
	cache      *decode.Parts
	exs        []*exchange.Exchange
	decoded    []*decode.Turn
	load       func(id int64) (*exchange.Exchange, error)
	at         map[int64]int // exchange ID to its place in exs
	memo       *analysed     // each turn's analysis, kept between Sessions
	decodes    int           // exchanges decoded so far (tests)
}

// SetLoader gives the Builder a way to read an exchange back whole by its
// ID: Turn.Whole then returns the bodies the Builder dropped.
func (b *Builder) SetLoader(load func(id int64) (*exchange.Exchange, error)) { b.load = load }

// NewBuilder returns an empty Builder.
func NewBuilder(keepBodies bool) *Builder {
	return &Builder{keepBodies: keepBodies, cache: decode.NewParts(), at: map[int64]int{}, memo: &analysed{h: newHasher()}}
}

// Add decodes ex and keeps it; the Builder owns *ex from then on, except
// for the buffer of its request body, which the caller may reuse once Add
// returns (the Builder copies a body it keeps).
func (b *Builder) Add(ex *exchange.Exchange) {
	d := b.decode(ex)
	if ex.ID != 0 {
		b.at[ex.ID] = len(b.exs)
	}
	b.exs = append(b.exs, ex)
	b.decoded = append(b.decoded, d)
}

// Update replaces the exchange added earlier with the same ID (one that
// was in flight and has progressed), decoding it again; an exchange not
// added yet is added. Sessions already built keep the old one.
func (b *Builder) Update(ex *exchange.Exchange) {
	i, ok := b.at[ex.ID]
	if !ok || ex.ID == 0 {
		b.Add(ex)
		return
	}
	b.exs[i], b.decoded[i] = ex, b.decode(ex)
	b.memo.forget(i)
}

func (b *Builder) decode(ex *exchange.Exchange) *decode.Turn {
	d := decode.DecodeWith(ex, b.cache)
	b.decodes++
	if !b.keepBodies && d.Request.Kind == decode.KindMessages {
		ex.ReqBody, ex.RespBody, ex.RespBodyDecoded, ex.ReqRef, ex.ReqMade, ex.RespMade = nil, nil, nil, exchange.BodyRef{}, nil, nil
	} else {
		// Kept: the caller's buffer may be reused (store.ScanOptions.Stream).
		ex.ReqBody = bytes.Clone(ex.ReqBody)
	}
	return d
}

// KeepsBodies reports whether the Builder keeps every exchange's bodies.
// One that does not may be handed requests as the parts they were made of
// (exchange.Exchange.ReqMade).
func (b *Builder) KeepsBodies() bool { return b.keepBodies }

// Exchanges returns the exchanges added so far, in order (without the
// bodies dropped).
func (b *Builder) Exchanges() []*exchange.Exchange { return b.exs }

// Session analyses the exchanges added so far, as Build does. It may be
// called again after more are added: only those are decoded, and only
// those (and the ones updated) have their messages, system prompt and
// tools hashed; threads, diffs and flags are worked out again over all.
func (b *Builder) Session() *Session {
	s := build(slices.Clone(b.exs), slices.Clone(b.decoded), b.memo)
	if !b.keepBodies {
		// Every turn is a Messages exchange: its bodies were dropped.
		for _, t := range s.Turns {
			t.dropped = true
			if b.load != nil {
				id := t.Exchange.ID
				t.load = func() (*exchange.Exchange, error) { return b.load(id) }
			}
		}
	}
	return s
}
