package decode

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/sharing"
)

// Parts lets decoding reuse what it decoded of earlier requests (it has
// nothing to do with the API's prompt cache). Each
// request of a conversation repeats the previous one's messages, tools and
// system blocks; with Parts, a part already decoded byte for byte the
// same is taken from it rather than parsed again, so decoding a session
// costs what is new in each turn, and the turns share one copy of their
// common parts instead of each holding its own.
//
// What is taken from Parts is shared between Turns: it must not be
// changed. Nothing of the request decoded with Parts points into its
// body (the response's parts may); the messages of a request handed as
// its parts (exchange.Made) point into those parts, which nobody
// changes. Parts that gave a decoding problem are never cached, so every
// Turn reports its own problems. Parts is safe for concurrent use; it
// holds a copy of every distinct part, not the bodies they came from.
type Parts struct {
	mu    sync.Mutex
	seed  maphash.Seed
	parts map[uint64][]cachedPart
	// searches holds what clientSearch read of a cached block's input:
	// every later turn lists the same search again.
	searches map[*Block]Search
	// texts are the texts of the results of those searches.
	texts map[*Block]string
	// What the lists of successive Turns share (share.go).
	tools         sharing.Ring[Tool]
	catalogEvents sharing.Ring[CatalogEvent]
	searchLists   [][]*Search
	catalogs      sharing.Ring[string] // sorted catalog names
	messages      sharing.Ring[*Message]
	// made holds the messages decoded from the parts of made bodies
	// (exchange.Made), by key, with the bytes each was decoded from.
	made map[int64]madeMessage
	// madeLists are the recent made requests' messages as decoded (most
	// recent first): a request whose parts begin with one's takes those
	// messages without looking each up.
	madeLists sharing.Recent[*madeList, *madeList]
	// histories are what recent arrays of messages hold (historyOf);
	// catalog the last catalog made of a history's events alone.
	histories sharing.Recent[**Message, *history]
	catalog   catalogMemo
	// member and its transcript are the last TranscriptMember decoded
	// (most requests of a session carry the same).
	member     []byte
	memberRead Transcript
	// layouts are what decoding recent request bodies found (layout.go):
	// a request repeats most of the previous one of its thread, and only
	// what follows the part it shares is read again.
	layouts []*layout
	resumes int // validations resumed from a mark, for tests
	taken   int // messages taken from an earlier body's layout, for tests
}

// jsonMark is a point of a validated body: validFrom may resume at n, with
// stack, in any body that has the same first n bytes: one the store says
// begins with them, or, when hashed, one whose first n bytes hash to h.
type jsonMark struct {
	n      int
	h      uint64
	hashed bool
	stack  []byte
}

// markEvery spaces the marks of one body.
const markEvery = 64 << 10

// part kinds, part of the cache key.
const (
	partMessage byte = iota + 1
	partTool
	partSystem
)

type cachedPart struct {
	kind byte
	raw  []byte
	msg  *Message
	tool Tool
	sys  SystemBlock
}

// NewParts returns an empty Parts.
func NewParts() *Parts {
	return &Parts{seed: maphash.MakeSeed(), parts: map[uint64][]cachedPart{}, searches: map[*Block]Search{}, texts: map[*Block]string{}}
}

// DecodeWith is Decode, reusing and filling c; a nil c is Decode.
func DecodeWith(ex *exchange.Exchange, c *Parts) *Turn {
	return decode(ex, c)
}

// keyWindow and keySamples bound what key hashes of a part: its length,
// both ends and evenly spaced windows between them. A part repeated on
// every turn is then looked up without hashing it whole (equal parts are
// still told apart by comparing their bytes), so looking up a turn's
// history costs far less than a pass over it.
const (
	keyWindow  = 64
	keySamples = 16
)

func (c *Parts) key(kind byte, raw []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteByte(kind)
	n := len(raw)
	if n <= 2*keyWindow*(keySamples+2) {
		h.Write(raw)
		return h.Sum64()
	}
	var size [8]byte
	binary.LittleEndian.PutUint64(size[:], uint64(n))
	h.Write(size[:])
	h.Write(raw[:keyWindow])
	h.Write(raw[n-keyWindow:])
	step := (n - keyWindow) / (keySamples + 1)
	for i := 1; i <= keySamples; i++ {
		h.Write(raw[i*step : i*step+keyWindow])
	}
	return h.Sum64()
}

// get returns the part of that kind decoded from raw, if cached.
func (c *Parts) get(kind byte, raw []byte) (cachedPart, bool) {
	if c == nil {
		return cachedPart{}, false
	}
	k := c.key(kind, raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.parts[k] {
		if p.kind == kind && bytes.Equal(p.raw, raw) {
			return p, true
		}
	}
	return cachedPart{}, false
}

// put caches p, decoded from p.raw.
func (c *Parts) put(p cachedPart) {
	k := c.key(p.kind, p.raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range c.parts[k] {
		if o.kind == p.kind && bytes.Equal(o.raw, p.raw) {
			return
		}
	}
	c.parts[k] = append(c.parts[k], p)
}

// madeMessage is a message decoded from a part of a made body.
type madeMessage struct {
	raw []byte
	msg *Message
}

// madeList is the messages decoded from a made request's parts, with the
// cache markers they hold.
type madeList struct {
	parts   []exchange.MadePart
	msgs    []*Message
	markers []CacheMarker
}

// madePrefix returns the longest run of first parts that a recent made
// request began with too, as the messages decoded from them and their
// cache markers, and that request's list when parts begin with all of it
// (the one the new list replaces).
func (c *Parts) madePrefix(parts []exchange.MadePart) ([]*Message, []CacheMarker, *madeList) {
	if c == nil {
		return nil, nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	best, bestN := (*madeList)(nil), 0
	c.madeLists.Values(func(l *madeList) bool {
		n := min(len(l.parts), len(parts))
		if n <= bestN {
			return true
		}
		k := 0
		if &l.parts[0] == &parts[0] {
			k = n // one array of parts: the same as far as the shorter goes
		}
		for k < n && samePart(l.parts[k], parts[k]) {
			k++
		}
		if k > bestN {
			best, bestN = l, k
		}
		return k < len(parts) // else none can give more
	})
	if best == nil {
		return nil, nil, nil
	}
	cut, _ := slices.BinarySearchFunc(best.markers, bestN, func(m CacheMarker, n int) int { return m.Index - n })
	var extended *madeList
	if bestN == len(best.parts) {
		extended = best
	}
	return best.msgs[:bestN:bestN], best.markers[:cut:cut], extended
}

// keepMadeList offers a made request's decoded messages to later ones,
// in place of those of the request it extends (old, if any): a list of
// each conversation is kept, however long each ran in between.
func (c *Parts) keepMadeList(l, old *madeList) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old != nil {
		c.madeLists.Delete(old)
	}
	c.madeLists.Put(l, l)
}

// samePart reports whether two parts are one: the same key and the very
// same bytes.
func samePart(a, b exchange.MadePart) bool {
	return a.Key == b.Key && len(a.JSON) == len(b.JSON) && (len(a.JSON) == 0 || &a.JSON[0] == &b.JSON[0])
}

// madePart returns the message decoded from p before, if any: one under
// its key decoded from the very same bytes (not a copy: parts are not
// changed), so a key that came to name other bytes is never trusted.
func (c *Parts) madePart(p exchange.MadePart) (*Message, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.made[p.Key]
	if !ok || len(e.raw) != len(p.JSON) || (len(p.JSON) > 0 && &e.raw[0] != &p.JSON[0]) {
		return nil, false
	}
	return e.msg, true
}

// transcript returns what read makes of a made body's TranscriptMember,
// read once for the requests that carry the same one in a row (a member
// that could not be read is read again each time, to say so).
func (c *Parts) transcript(member []byte, read func() (*Transcript, bool)) *Transcript {
	if c == nil {
		tr, _ := read()
		return tr
	}
	c.mu.Lock()
	if c.member != nil && bytes.Equal(c.member, member) {
		tr := c.memberRead
		c.mu.Unlock()
		return &tr
	}
	c.mu.Unlock()
	tr, ok := read()
	if ok {
		c.mu.Lock()
		c.member, c.memberRead = bytes.Clone(member), *tr
		c.mu.Unlock()
	}
	return tr
}

// keepMadePart keeps m, decoded from p; m points into p's bytes.
func (c *Parts) keepMadePart(p exchange.MadePart, m *Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.made == nil {
		c.made = map[int64]madeMessage{}
	}
	c.made[p.Key] = madeMessage{raw: p.JSON, msg: m}
}

// own returns raw, or, when decoding with Parts, a copy of it: nothing
// decoded with Parts points into the request body, which the caller
// may then drop or reuse.
func (t *Turn) own(raw []byte) []byte {
	if t.cache == nil {
		return raw
	}
	return bytes.Clone(raw)
}

// detachBlock makes b refer to bytes of own, a copy of the message item
// it was decoded from, rather than into the request body, so that caching
// it does not keep the body alive.
func detachBlock(b *Block, item, own []byte) {
	b.Raw = rehome(b.Raw, item, own)
	b.Input = rehome(b.Input, item, own)
}

// rehome returns the bytes of own at the place sub has in item, when sub
// is a part of item (as every part of a decoded message is), or a copy of
// sub.
func rehome(sub, item, own []byte) []byte {
	if len(sub) == 0 {
		return sub
	}
	// Both are slices of one body, running to the end of its array.
	off := cap(item) - cap(sub)
	if off >= 0 && off+len(sub) <= len(item) && len(own) == len(item) && bytes.Equal(own[off:off+len(sub)], sub) {
		return own[off : off+len(sub) : off+len(sub)]
	}
	return bytes.Clone(sub)
}

// clientSearch is clientSearch(b), read once per cached block.
func (c *Parts) clientSearch(b *Block, cached bool) Search {
	if c == nil || !cached {
		return clientSearch(b)
	}
	return readOnce(&c.mu, c.searches, b, clientSearch)
}

// resultText is b.ResultText(), read once per cached block (a search's
// result, which every later turn of its thread carries).
func (c *Parts) resultText(b *Block, cached bool) string {
	if c == nil || !cached {
		return b.ResultText()
	}
	return readOnce(&c.mu, c.texts, b, (*Block).ResultText)
}

// readOnce is read(b), kept in m (under mu) for the turns to come: a
// cached block is the same block in every turn that carries its message.
func readOnce[V any](mu *sync.Mutex, m map[*Block]V, b *Block, read func(*Block) V) V {
	mu.Lock()
	v, ok := m[b]
	mu.Unlock()
	if ok {
		return v
	}
	v = read(b)
	mu.Lock()
	m[b] = v
	mu.Unlock()
	return v
}

// tookMessage counts a message taken from a prior body's layout.
func (c *Parts) tookMessage() {
	c.mu.Lock()
	c.taken++
	c.mu.Unlock()
}

// isJSON is isJSON(b), resuming from a mark of an earlier body that b
// begins with when there is one. Its verdict is isJSON's: a mark records
// the validator's whole state after a container closed, which depends on
// the bytes before it only.
func (c *Parts) isJSON(b []byte) bool {
	l := &layout{}
	ok := c.validate(b, prior{}, l)
	if ok {
		c.keep(l)
	}
	return ok
}

// validate is isJSON(b) for the body whose layout l records: it resumes at
// the last mark of pr, the part of an earlier body's layout that holds for
// b, or when pr has none at a mark of a kept layout that b's first bytes
// hash to, and records b's marks in l. The marks are hashed only when
// validation did not resume from pr's: a body the store names is found by
// its name.
func (c *Parts) validate(b []byte, pr prior, l *layout) bool {
	if c == nil || len(b) < 2*markEvery {
		return isJSON(b)
	}
	var h maphash.Hash
	h.SetSeed(c.seed)
	hashing, hashed := true, 0
	var mine []jsonMark
	start, resume := 0, false
	var stack []byte
	if m, k, ok := pr.mark(); ok {
		start, stack, resume = m.n, m.stack, true
		mine = slices.Clip(pr.l.marks[:k]) // marks never change: shared
		hashing = false
	} else if m, at, ok := c.hashedMark(b); ok {
		start, stack, resume = m.n, m.stack, true
		h, hashed = at, m.n
		mine = append(mine, m)
	}
	if resume {
		c.mu.Lock()
		c.resumes++
		c.mu.Unlock()
	}
	last := start
	ok := validFrom(b, start, stack, resume, func(i int, st []byte) {
		if i-last < markEvery {
			return
		}
		last = i
		m := jsonMark{n: i, stack: bytes.Clone(st)}
		if hashing {
			h.Write(b[hashed:i])
			hashed = i
			m.h, m.hashed = h.Sum64(), true
		}
		mine = append(mine, m)
	})
	if !ok {
		return resume && isJSON(b) // never trust a failure found past a mark
	}
	l.marks = mine
	return true
}

// hashedMark finds the furthest hashed mark of the kept layouts that b's
// first bytes hash to, and returns it with the hash of those bytes.
func (c *Parts) hashedMark(b []byte) (jsonMark, maphash.Hash, bool) {
	c.mu.Lock()
	var cands []jsonMark
	for _, l := range c.layouts {
		for _, m := range l.marks {
			if m.hashed && m.n <= len(b) {
				cands = append(cands, m)
			}
		}
	}
	c.mu.Unlock()
	slices.SortFunc(cands, func(a, b jsonMark) int { return a.n - b.n })
	var h, at maphash.Hash
	h.SetSeed(c.seed)
	hashed := 0
	best := -1
	for k, m := range cands {
		if m.n != hashed || k == 0 {
			h.Write(b[hashed:m.n])
			hashed = m.n
		}
		if h.Sum64() == m.h {
			best, at = k, h // a copy of the state
		}
	}
	if best < 0 {
		return jsonMark{}, at, false
	}
	return cands[best], at, true
}
