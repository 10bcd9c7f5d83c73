package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"

	"github.com/tsinspect/tsinspect/contentcoding"
)

// How a blob's data is stored (blob.codec; see migration 0002).
const (
	codecRaw   = 0 // as is
	codecZstd  = 1 // zstd on its own
	codecDelta = 2 // zstd with the base blob as a raw dictionary
	// codecSplice: the base's first P and last S bytes around a zstd
	// frame of what differs, compressed with the base's bytes between
	// those as a raw dictionary; data is uvarint P, uvarint S, the frame.
	// It decodes at about the speed of a copy, where codecDelta pays for
	// zstd's window over the whole base.
	codecSplice = 3
)

const (
	// maxDepth is the longest chain of bases: past it a body is compressed
	// on its own, so reading any one body decompresses at most maxDepth+1
	// blobs.
	maxDepth = 63
	// minCompressed: smaller bodies are stored as they are.
	minCompressed = 64
	// minSharedPrefix is how many leading bytes a request must share with
	// an earlier one to be compressed against it rather than against the
	// latest request.
	minSharedPrefix = 256
	// recentRequests and recentResponses are how many bodies of each kind
	// the writer keeps as candidate bases: enough for a main thread, a few
	// subagents and side queries running interleaved.
	recentRequests  = 8
	recentResponses = 2
	// dictID marks frames compressed against a base.
	dictID = 1
	// readCacheSize bounds the decompressed bodies a reader keeps to serve
	// as bases for the next ones: the last request of each conversation
	// and the last response. A base the writer will not use again (one the
	// body just read extends) is dropped at once.
	readCacheSize = 16
	// readCacheBytes bounds them too, by size: past it the oldest are
	// dropped, down to readCacheMin. Exporting a capture of 2 MB
	// responses otherwise held 32 MB of them.
	readCacheBytes = 16 << 20
	readCacheMin   = 4
)

// bodyKind tells requests from responses when choosing a base.
type bodyKind int

const (
	kindRequest bodyKind = iota
	kindResponse
)

// candidate is a body recently written that a new body may be compressed
// against.
type candidate struct {
	hash  string
	data  []byte
	depth int
}

// bases is the writer's memory of recent bodies; it lives with the DB
// handle, so a capture reopened for recording starts new chains.
type bases struct {
	mu    sync.Mutex
	reqs  []candidate // oldest first
	resps []candidate
}

// pick returns the base to compress data against, if any: for a request,
// the recent request sharing the longest prefix with it (or else the
// latest), for a response the latest response.
//
// Bodies named in avoid are never picked: they are about to be replaced
// (the partial response of an exchange being updated) and a body that is
// some other body's base cannot be deleted.
func (b *bases) pick(kind bodyKind, data []byte, avoid []string) (candidate, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var list []candidate
	all := b.reqs
	if kind == kindResponse {
		all = b.resps
	}
	for _, c := range all {
		if !slices.Contains(avoid, c.hash) {
			list = append(list, c)
		}
	}
	if len(list) == 0 {
		return candidate{}, false
	}
	best, bestLen := len(list)-1, -1
	if kind == kindRequest {
		for i, c := range list {
			if n := sharedPrefix(c.data, data); n > bestLen || n == bestLen && i > best {
				best, bestLen = i, n
			}
		}
		if bestLen < minSharedPrefix {
			best = len(list) - 1
		}
	}
	c := list[best]
	if c.depth >= maxDepth {
		return candidate{}, false
	}
	return c, true
}

// add remembers a body just stored; a request replaces any candidate it
// extends (the previous request of its conversation).
func (b *bases) add(kind bodyKind, c candidate) {
	b.mu.Lock()
	defer b.mu.Unlock()
	list, limit := &b.reqs, recentRequests
	if kind == kindResponse {
		list, limit = &b.resps, recentResponses
	}
	kept := (*list)[:0]
	for _, o := range *list {
		if o.hash == c.hash {
			continue
		}
		if kind == kindRequest && len(o.data) >= minSharedPrefix && sharedPrefix(o.data, c.data) >= len(o.data)*3/4 {
			continue // c is o grown: o is no longer the best base of anything
		}
		kept = append(kept, o)
	}
	kept = append(kept, c)
	if len(kept) > limit {
		kept = kept[len(kept)-limit:]
	}
	*list = kept
}

// forget drops a deleted blob from the candidates.
func (b *bases) forget(hash string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, list := range []*[]candidate{&b.reqs, &b.resps} {
		kept := (*list)[:0]
		for _, o := range *list {
			if o.hash != hash {
				kept = append(kept, o)
			}
		}
		*list = kept
	}
}

// sharedPrefix is the length of the longest common prefix of a and b.
func sharedPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	const step = 4096
	for i+step <= n && string(a[i:i+step]) == string(b[i:i+step]) {
		i += step
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// encoded is a body ready for its blob row.
type encoded struct {
	codec int
	base  sql.NullString
	depth int
	data  []byte
}

// compress encodes data, against base when there is one.
func (ec *encoders) compress(data []byte, base *candidate) (encoded, error) {
	if len(data) < minCompressed {
		return encoded{codec: codecRaw, data: data}, nil
	}
	if base != nil {
		p := sharedPrefix(base.data, data)
		sfx := sharedSuffix(base.data[p:], data[p:])
		if middle := data[p : len(data)-sfx]; len(middle) <= len(data)/2 {
			// What differs is compressed against what it replaced, which
			// it often repeats moved (a tool definition added in the
			// middle of the list pushes the system prompt along).
			frame, err := ec.compressWith(middle, base.data[p:len(base.data)-sfx])
			if err != nil {
				return encoded{}, err
			}
			out := binary.AppendUvarint(make([]byte, 0, len(frame)+20), uint64(p))
			out = binary.AppendUvarint(out, uint64(sfx))
			out = append(out, frame...)
			return encoded{codec: codecSplice, base: sql.NullString{String: base.hash, Valid: true}, depth: base.depth + 1, data: out}, nil
		}
	}
	e := encoded{codec: codecZstd}
	var dict []byte
	if base != nil {
		dict = base.data
		e = encoded{codec: codecDelta, base: sql.NullString{String: base.hash, Valid: true}, depth: base.depth + 1}
	}
	frame, err := ec.compressWith(data, dict)
	if err != nil {
		return encoded{}, err
	}
	if len(frame) >= len(data) {
		return encoded{codec: codecRaw, data: data}, nil
	}
	e.data = frame
	return e, nil
}

// compressWith is data as one zstd frame, with dict as a raw dictionary
// when it is not empty.
func (ec *encoders) compressWith(data, dict []byte) ([]byte, error) {
	window := windowFor(len(data) + len(dict))
	enc, err := ec.get(window, dict)
	if err != nil {
		return nil, err
	}
	out := enc.EncodeAll(data, make([]byte, 0, len(data)/3+64))
	ec.put(window, len(dict) > 0, enc)
	return out, nil
}

// encoders keeps zstd encoders for reuse. Making one allocates and clears
// megabytes of tables, far more than compressing a small body costs: an
// exchange of a few hundred bytes took 6 ms of CPU and 6 MB of garbage to
// store with a new encoder per body. An encoder's window cannot change, so
// they are kept per window size, and apart with and without a dictionary.
// Safe for concurrent use.
type encoders struct {
	mu   sync.Mutex
	idle map[encoderKey][]*contentcoding.ZstdEncoder
	n    int // encoders idle
}

type encoderKey struct {
	window int
	dict   bool
}

// maxIdleEncoders bounds the encoders kept idle, and so their memory (a
// dictionary encoder also keeps its last dictionary, a recent body).
const maxIdleEncoders = 2

// get returns an encoder for frames of that window, with dict as its raw
// dictionary (none if empty).
func (ec *encoders) get(window int, dict []byte) (*contentcoding.ZstdEncoder, error) {
	key := encoderKey{window: window, dict: len(dict) > 0}
	ec.mu.Lock()
	var enc *contentcoding.ZstdEncoder
	if list := ec.idle[key]; len(list) > 0 {
		enc = list[len(list)-1]
		ec.idle[key] = list[:len(list)-1]
		ec.n--
	}
	ec.mu.Unlock()
	if enc != nil {
		if !key.dict {
			return enc, nil
		}
		if err := enc.SetDict(dictID, dict); err != nil {
			return nil, err
		}
		return enc, nil
	}
	return contentcoding.NewZstdEncoder(window, dictID, dict)
}

// put gives an encoder back.
func (ec *encoders) put(window int, dict bool, enc *contentcoding.ZstdEncoder) {
	ec.mu.Lock()
	defer ec.mu.Unlock()
	if ec.n >= maxIdleEncoders {
		// Keep the most recent: drop every idle encoder of another key.
		for k, list := range ec.idle {
			if k != (encoderKey{window, dict}) {
				for _, old := range list {
					old.Close()
				}
				ec.n -= len(list)
				delete(ec.idle, k)
			}
		}
		if ec.n >= maxIdleEncoders {
			enc.Close()
			return
		}
	}
	if ec.idle == nil {
		ec.idle = map[encoderKey][]*contentcoding.ZstdEncoder{}
	}
	ec.idle[encoderKey{window, dict}] = append(ec.idle[encoderKey{window, dict}], enc)
	ec.n++
}

// sharedSuffix is the length of the longest common suffix of a and b.
func sharedSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	const step = 4096
	for i+step <= n && string(a[len(a)-i-step:len(a)-i]) == string(b[len(b)-i-step:len(b)-i]) {
		i += step
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// windowFor is the zstd window that lets a frame refer back over n bytes:
// a power of two, at least 64 KiB, at most 1 GiB.
func windowFor(n int) int {
	w := 1 << 16
	if n > w {
		w = 1 << bits.Len(uint(n-1))
	}
	return min(w, 1<<30)
}

// bodyReader decompresses blobs, keeping the last few decompressed bodies
// so that reading a capture in order decompresses each blob once.
type bodyReader struct {
	q interface {
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	}
	plain *contentcoding.ZstdDecoder
	cache []cachedBody // most recent last
	// reuse: request bodies handed out are the caller's only until the
	// next one is read (ScanOptions.Stream), so the buffers of bases no longer
	// needed are reused rather than left to the collector.
	reuse bool
	free  [][]byte
	limit int // bodies cached; 0 means readCacheSize
	// decoded counts the blobs decompressed (tests).
	decoded int
}

// getCacheSize is how many bodies the reader shared by DB.Get and
// the Live scans keeps: enough that the bases of the next requests of
// the conversations under way (a main thread, its subagents and side
// queries, each exchange a request and a response) are still there.
const getCacheSize = readCacheSize

// cachedBody is a decompressed body a reader keeps as a base.
type cachedBody struct {
	hash     string
	data     []byte
	reusable bool // a request body: its buffer may be reused
}

// maxFree is how many spare buffers a reusing reader keeps.
const maxFree = 4

// buffer returns an empty buffer for a body of size bytes.
func (r *bodyReader) buffer(size int64, reusable bool) []byte {
	if r.reuse && reusable {
		best := -1
		for i, b := range r.free {
			if int64(cap(b)) >= size && (best < 0 || cap(b) < cap(r.free[best])) {
				best = i
			}
		}
		if best >= 0 {
			b := r.free[best]
			r.free = append(r.free[:best], r.free[best+1:]...)
			return b[:0]
		}
		// Room for the next request of the conversation, a little longer.
		return make([]byte, 0, size+size/8)
	}
	return make([]byte, 0, size)
}

// release takes back the buffer of a body dropped from the cache.
func (r *bodyReader) release(c cachedBody) {
	if !r.reuse || !c.reusable || cap(c.data) == 0 {
		return
	}
	if len(r.free) >= maxFree {
		r.free = r.free[1:]
	}
	r.free = append(r.free, c.data[:0])
}

func newBodyReader(q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}) *bodyReader {
	return &bodyReader{q: q}
}

// close releases the decoder.
func (r *bodyReader) close() {
	if r.plain != nil {
		r.plain.Close()
	}
}

// body returns the uncompressed body of a blob row. The result is the
// caller's: it is not shared with another body.
//
// reusable marks a request body: with r.reuse, its buffer is reused once
// it is no longer needed as a base.
func (r *bodyReader) body(ctx context.Context, hash string, codec int, base sql.NullString, size int64, data []byte, reusable bool) ([]byte, error) {
	if codec == codecRaw {
		return nonNil(data), nil
	}
	if c, ok := r.cached(hash); ok {
		return append([]byte{}, c...), nil
	}
	out, err := r.decode(ctx, hash, codec, base, size, data, 0, reusable)
	if err != nil {
		return nil, err
	}
	r.remember(hash, out, reusable)
	return out, nil
}

func (r *bodyReader) cached(hash string) ([]byte, bool) {
	for i := len(r.cache) - 1; i >= 0; i-- {
		if r.cache[i].hash == hash {
			return r.cache[i].data, true
		}
	}
	return nil, false
}

func (r *bodyReader) remember(hash string, data []byte, reusable bool) {
	r.cache = append(r.cache, cachedBody{hash: hash, data: data, reusable: reusable})
	limit := r.limit
	if limit == 0 {
		limit = readCacheSize
	}
	total := 0
	for _, c := range r.cache {
		total += len(c.data)
	}
	for len(r.cache) > limit || (total > readCacheBytes && len(r.cache) > readCacheMin) {
		total -= len(r.cache[0].data)
		r.release(r.cache[0])
		r.cache[0] = cachedBody{}
		r.cache = r.cache[1:]
	}
}

// forget drops a cached body.
func (r *bodyReader) forget(hash string) {
	for i, c := range r.cache {
		if c.hash == hash {
			r.cache = append(r.cache[:i], r.cache[i+1:]...)
			r.release(c)
			return
		}
	}
}

// plainDecoder is the reader's decoder of frames without a dictionary.
func (r *bodyReader) plainDecoder() (*contentcoding.ZstdDecoder, error) {
	if r.plain == nil {
		d, err := contentcoding.NewZstdDecoder(0, nil)
		if err != nil {
			return nil, err
		}
		r.plain = d
	}
	return r.plain, nil
}

// splice rebuilds a codecSplice body from its base.
func (r *bodyReader) splice(hash string, base, data []byte, size int64, buf []byte) ([]byte, error) {
	p, n := binary.Uvarint(data)
	if n <= 0 {
		return nil, fmt.Errorf("blob %s: bad splice header", hash)
	}
	data = data[n:]
	sfx, n := binary.Uvarint(data)
	if n <= 0 || p+sfx > uint64(len(base)) || p+sfx > uint64(size) {
		return nil, fmt.Errorf("blob %s: bad splice header", hash)
	}
	out := append(buf[:0], base[:p]...)
	var err error
	if dict := base[p : uint64(len(base))-sfx]; len(dict) > 0 {
		d, derr := contentcoding.NewZstdDecoder(dictID, dict)
		if derr != nil {
			return nil, fmt.Errorf("blob %s: %w", hash, derr)
		}
		out, err = d.DecodeAll(data[n:], out)
		d.Close()
	} else {
		d, derr := r.plainDecoder()
		if derr != nil {
			return nil, fmt.Errorf("blob %s: %w", hash, derr)
		}
		out, err = d.DecodeAll(data[n:], out)
	}
	if err != nil {
		return nil, fmt.Errorf("blob %s: zstd: %w", hash, err)
	}
	return append(out, base[uint64(len(base))-sfx:]...), nil
}

// decode decompresses one blob, reading and decompressing its bases first
// when they are not cached.
func (r *bodyReader) decode(ctx context.Context, hash string, codec int, base sql.NullString, size int64, data []byte, depth int, reusable bool) ([]byte, error) {
	if depth > maxDepth+1 {
		return nil, fmt.Errorf("blob %s: chain of bases too long", hash)
	}
	r.decoded++
	var out []byte
	switch codec {
	case codecRaw:
		return nonNil(data), nil
	case codecZstd:
		d, err := r.plainDecoder()
		if err != nil {
			return nil, fmt.Errorf("blob %s: %w", hash, err)
		}
		if out, err = d.DecodeAll(data, r.buffer(size, reusable)); err != nil {
			return nil, fmt.Errorf("blob %s: zstd: %w", hash, err)
		}
	case codecDelta, codecSplice:
		if !base.Valid {
			return nil, fmt.Errorf("blob %s: compressed against a base, but none is named", hash)
		}
		dict, ok := r.cached(base.String)
		if !ok {
			var (
				bcodec int
				bbase  sql.NullString
				bsize  int64
				bdata  []byte
			)
			err := r.q.QueryRowContext(ctx, `SELECT codec, base, size, data FROM blob WHERE hash = ?`, base.String).
				Scan(&bcodec, &bbase, &bsize, &bdata)
			if errors.Is(err, sql.ErrNoRows) {
				return nil, fmt.Errorf("blob %s: its base %s is missing", hash, base.String)
			}
			if err != nil {
				return nil, fmt.Errorf("blob %s: base: %w", hash, err)
			}
			if dict, err = r.decode(ctx, base.String, bcodec, bbase, bsize, bdata, depth+1, reusable); err != nil {
				return nil, err
			}
			r.remember(base.String, dict, reusable)
		}
		if codec == codecSplice {
			var err error
			if out, err = r.splice(hash, dict, data, size, r.buffer(size, reusable)); err != nil {
				return nil, err
			}
			if p, _ := binary.Uvarint(data); len(dict) >= minSharedPrefix && p >= uint64(len(dict))*3/4 {
				// This body extends its base: the writer dropped the base
				// from its candidates (bases.add), so no later body is
				// built on it.
				r.forget(base.String)
			}
			break
		}
		d, err := contentcoding.NewZstdDecoder(dictID, dict)
		if err != nil {
			return nil, fmt.Errorf("blob %s: %w", hash, err)
		}
		out, err = d.DecodeAll(data, r.buffer(size, reusable))
		d.Close()
		if err != nil {
			return nil, fmt.Errorf("blob %s: zstd: %w", hash, err)
		}
	default:
		return nil, fmt.Errorf("blob %s: unknown codec %d", hash, codec)
	}
	if int64(len(out)) != size {
		return nil, fmt.Errorf("blob %s: %d bytes decompressed, %d expected", hash, len(out), size)
	}
	return out, nil
}
