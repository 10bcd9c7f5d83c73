package decode

import (
	"slices"

	"github.com/tsinspect/tsinspect/internal/jsonvalid"

	"github.com/tsinspect/tsinspect/exchange"
)

// A layout is what decoding one request body with Parts found at fixed
// places in it: where validation may resume, and the extent of each
// element of its top-level arrays, with the message decoded from it. The
// store says of most request bodies that they begin with the bytes of an
// earlier one (exchange.BodyRef); a body decoded after that one then takes
// all of this that lies within those bytes instead of reading them again,
// so that a turn costs what is new in it, not the length of its history.
type layout struct {
	key   string     // exchange.BodyRef.Key of the body
	size  int        // the body's length
	base  string     // the key of the body it was stored against, if any
	share int        // how many leading bytes it has of that body
	marks []jsonMark // in order of n
	spans []span     // in order of start
}

// span is the extent of an element of a top-level array of a body, and
// the message decoded from it when it is a cached one.
type span struct {
	start, end int
	msg        *Message
}

// prior is the part of an earlier body's layout that holds for the body
// being decoded: the two have their first n bytes in common.
type prior struct {
	l  *layout
	n  int
	at int // cursor into l.spans (seek)
}

// layoutBodies is how many bodies' layouts Parts keeps. Like the store's
// memory of bases (its last eight conversations' latest requests), a body's
// layout replaces that of the body it extends, so these are the latest
// bodies of as many conversations, however long each one ran in between.
const layoutBodies = 16

// priorFor returns what the layout of the body keyed base says of a body
// that begins with its first n bytes, if the Parts has that layout.
func (c *Parts) priorFor(base string, n int) prior {
	if c == nil || base == "" || n <= 0 {
		return prior{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.layouts) - 1; i >= 0; i-- {
		if l := c.layouts[i]; l.key == base {
			return prior{l: l, n: n}
		}
	}
	return prior{}
}

// keep adds l to the layouts later bodies may take from; l must not
// change after. It replaces the layout of the same body, and that of the
// body l extends (shares three quarters of, as the store judges it): the
// store no longer stores anything against that one.
func (c *Parts) keep(l *layout) {
	if c == nil || l == nil || (len(l.marks) == 0 && len(l.spans) == 0) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.layouts[:0]
	for _, o := range c.layouts {
		if l.key != "" && o.key == l.key {
			continue
		}
		if l.base != "" && o.key == l.base && l.share*4 >= o.size*3 {
			continue
		}
		kept = append(kept, o)
	}
	clear(c.layouts[len(kept):])
	c.layouts = append(kept, l)
	if len(c.layouts) > layoutBodies {
		c.layouts[0] = nil
		c.layouts = c.layouts[1:]
	}
}

// mark returns the last mark of the prior body that lies within the
// common bytes.
func (p prior) mark() (jsonMark, int, bool) {
	if p.l == nil {
		return jsonMark{}, 0, false
	}
	k, _ := slices.BinarySearchFunc(p.l.marks, p.n+1, func(m jsonMark, n int) int { return m.n - n })
	if k == 0 {
		return jsonMark{}, 0, false
	}
	return p.l.marks[k-1], k, true
}

// span returns the prior body's element that starts at start, if it ends
// within the common bytes.
func (p *prior) span(start int) (span, bool) {
	if p.l == nil || start >= p.n {
		return span{}, false
	}
	k, ok := seek(p.l.spans, start, &p.at)
	if !ok || p.l.spans[k].end > p.n {
		return span{}, false
	}
	return p.l.spans[k], true
}

// seek finds the span of spans that starts at start. Decoding asks for
// spans in the order of the body, so it looks on from the cursor at,
// which it leaves at the place found: a walk over a body's elements costs
// a step each, not a search.
func seek(spans []span, start int, at *int) (int, bool) {
	k := *at
	if k > len(spans) || (k > 0 && spans[k-1].start >= start) {
		k, _ = slices.BinarySearchFunc(spans, start, func(s span, start int) int { return s.start - start })
	}
	for k < len(spans) && spans[k].start < start {
		k++
	}
	*at = k
	return k, k < len(spans) && spans[k].start == start
}

// startLayout readies t to record the layout of body and to take from an
// earlier one's, when decoding with Parts a body the store named. body
// must be the exchange's own bytes (not decoded from a content coding).
func (t *Turn) startLayout(ref exchange.BodyRef, body []byte) {
	if t.cache == nil || ref.Key == "" {
		return
	}
	t.body = body
	t.layout = &layout{key: ref.Key, size: len(body)}
	if ref.Prefix <= len(body) {
		t.layout.base, t.layout.share = ref.Base, ref.Prefix
		t.prior = t.cache.priorFor(ref.Base, ref.Prefix)
	}
}

// endLayout hands the layout recorded to the Parts.
func (t *Turn) endLayout() {
	t.cache.keep(t.layout)
	t.body, t.layout, t.prior, t.known, t.recorded = nil, nil, prior{}, 0, 0
}

// offset is where sub, a slice of the body being decoded, lies in it.
func (t *Turn) offset(sub []byte) int { return cap(t.body) - cap(sub) }

// topEnd is valueEnd for the members of the body's top-level object: the
// elements of an array are found through elemEnd, and recorded.
func (t *Turn) topEnd(b []byte, i int) int {
	if t.layout == nil || i >= len(b) || b[i] != '[' {
		return jsonvalid.ValueEnd(b, i)
	}
	_, end, _ := scanArray(b, i, t.elemEnd)
	return end
}

// elemEnd is valueEnd for an element of a top-level array: taken from the
// prior body when it has the same element at the same place, and recorded
// for the next body. Only an object, array or string is taken: each ends
// with its own closing byte, where a number's end depends on the byte
// after it, which may be past the bytes the two bodies share.
func (t *Turn) elemEnd(b []byte, i int) int {
	at := t.offset(b) + i
	if i < len(b) && (b[i] == '{' || b[i] == '[' || b[i] == '"') {
		if s, ok := t.prior.span(at); ok {
			t.layout.spans = append(t.layout.spans, s) // its message too
			return s.end - t.offset(b)
		}
	}
	e := jsonvalid.ValueEnd(b, i)
	if e >= 0 {
		t.layout.spans = append(t.layout.spans, span{start: at, end: at + e - i})
	}
	return e
}

// knownEnd is valueEnd for an element whose extent topEnd recorded.
func (t *Turn) knownEnd(b []byte, i int) int {
	if t.layout == nil {
		return jsonvalid.ValueEnd(b, i)
	}
	at := t.offset(b) + i
	if k, ok := seek(t.layout.spans, at, &t.known); ok {
		return t.layout.spans[k].end - t.offset(b)
	}
	return jsonvalid.ValueEnd(b, i)
}

// messageSpan returns the recorded span of item, an element of the
// messages array. Its msg, when decodeMessages comes to item, is the
// cached message the prior body has in the same bytes; decodeMessages
// sets it to the cached message item turns out to be, for the next body.
func (t *Turn) messageSpan(item []byte) *span {
	if t.layout == nil {
		return nil
	}
	at := t.offset(item)
	if k, ok := seek(t.layout.spans, at, &t.recorded); ok && t.layout.spans[k].end == at+len(item) {
		return &t.layout.spans[k]
	}
	return nil
}
