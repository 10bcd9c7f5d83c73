package timeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/internal/canonjson"
	"github.com/tsinspect/tsinspect/internal/sharing"
)

// digest is a SHA-256 of canonical bytes.
type digest [sha256.Size]byte

// BillingPrefix starts the system block Claude Code uses as a billing
// header. Its value changes between the main agent and subagents and may
// carry a per-request token; it is not part of the cached prefix. Its
// cc_version names the client.
const BillingPrefix = "x-anthropic-billing-header:"

// CanonicalJSON re-encodes raw with sorted object keys, no insignificant
// whitespace and no HTML escaping, leaving out every "cache_control" key
// and every null-valued key at any depth. Claude Code moves its single
// cache_control marker to the last block on each request, and a null field
// is the same as an absent one, so neither tells two contents apart.
// Invalid JSON is returned as it is.
func CanonicalJSON(raw []byte) []byte {
	var buf bytes.Buffer
	if canonjson.Canonical(&buf, raw, canonjson.Options{OmitMarks: true, OmitNulls: true}) {
		return buf.Bytes()
	}
	// Not one valid value: what decoding its first value gives, if any.
	v, err := canonjson.Decode(raw)
	if err != nil {
		return raw
	}
	canonjson.Write(&buf, v, canonjson.Options{OmitMarks: true, OmitNulls: true})
	return buf.Bytes()
}

// writeString writes s as a JSON string as CanonicalJSON writes it.
func writeString(buf *bytes.Buffer, s string) { canonjson.WriteString(buf, s, canonjson.Options{}) }

// canonicalBlock is the canonical form of a content block.
func canonicalBlock(b decode.Block) []byte {
	var buf bytes.Buffer
	return canonicalBlockIn(&buf, nil, b)
}

// canonicalBlockIn is canonicalBlock written into buf (reset first) with
// w (nil: a new one): the hasher hashes every new block's canonical form
// and keeps none.
func canonicalBlockIn(buf *bytes.Buffer, w *canonjson.Writer, b decode.Block) []byte {
	buf.Reset()
	if len(b.Raw) > 0 {
		if w == nil {
			w = &canonjson.Writer{}
		}
		// A decoded block's JSON is valid: it is not checked again.
		if w.CanonicalValid(buf, b.Raw, canonjson.Options{OmitMarks: true, OmitNulls: true}) {
			return buf.Bytes()
		}
		return CanonicalJSON(b.Raw)
	}
	// A block whose JSON was lost: its type and text are all there is.
	raw, _ := json.Marshal(map[string]string{"type": b.Type, "text": b.Text})
	return CanonicalJSON(raw)
}

// canonicalMessage renders a message as canonical JSON,
// {"role":...,"content":[blocks]}, string content being one text block as
// the API reads it. The byte offsets in messages_changed details count
// bytes of this form.
func canonicalMessage(m *decode.Message) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"role":`)
	writeString(&buf, m.Role)
	buf.WriteString(`,"content":[`)
	for i, b := range messageBlocks(m) {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(canonicalBlock(b))
	}
	buf.WriteString(`]}`)
	return buf.Bytes()
}

// messageBlocks returns a message's blocks, string content as one text
// block.
func messageBlocks(m *decode.Message) []decode.Block {
	if m.StringContent {
		raw, _ := json.Marshal(map[string]string{"type": "text", "text": m.Text})
		return []decode.Block{{Type: "text", Text: m.Text, Raw: raw}}
	}
	return m.Blocks
}

// blockOffsets returns where each block of canonicalMessage(m) starts.
func blockOffsets(m *decode.Message) []int {
	var offs []int
	var buf bytes.Buffer
	buf.WriteString(`{"role":`)
	writeString(&buf, m.Role)
	buf.WriteString(`,"content":[`)
	for i, b := range messageBlocks(m) {
		if i > 0 {
			buf.WriteByte(',')
		}
		offs = append(offs, buf.Len())
		buf.Write(canonicalBlock(b))
	}
	return offs
}

// assistantMessage is the message a client appends to its history from a
// response: role assistant, the response's content blocks.
func assistantMessage(r decode.Response) *decode.Message {
	return &decode.Message{Role: "assistant", Blocks: r.Content}
}

func hashBytes(b []byte) digest { return sha256.Sum256(b) }

// hasher hashes messages block by block, remembering the canonical hash of
// every block it has seen: a conversation re-sends its whole history on
// each request, so most blocks come back many times.
type hasher struct {
	blocks map[digest]digest // hash of the raw block -> hash of its canonical form
	// msgs holds the hash of each message decoded from a decode.Parts,
	// by its first block: turns share those messages, and a message is
	// hashed once rather than on every turn that repeats it.
	msgs map[msgKey]digest
	// Recent lists of message hashes and prefix hashes, which the turns
	// of a conversation share (see package sharing).
	msgLists, preLists sharing.Ring[digest]
	// keys are the hashes worked out for recent arrays of messages that
	// successive turns share (decode.Parts shares them): a turn whose
	// messages extend an earlier turn's has only its new ones hashed.
	keys sharing.Recent[**decode.Message, *listKeys]
	// canon writes the canonical forms, keeping its scratch.
	canon canonjson.Writer
	// buf is where each new block's canonical form is written to be
	// hashed.
	buf bytes.Buffer
}

// listKeys are the message and prefix hashes of the messages of one
// shared array, as far as they were worked out.
type listKeys struct {
	msgHash, pres []digest
}

// messageKeys returns the hash of each message of ms and of each prefix of
// ms (see chain). When ms begins an array of messages an earlier turn's
// began too, the hashes worked out for that one are taken as far as they
// go (two lists that begin one shared array agree as far as the shorter
// goes), and the two lists share one array.
func (h *hasher) messageKeys(ms []*decode.Message) (msgHash, pre []digest) {
	if len(ms) == 0 {
		return nil, nil
	}
	// Not an array seen lately: hashed whole, and the lists of hashes
	// shared with the earlier lists they extend.
	lk := h.keys.Get(&ms[0], func() *listKeys {
		lk := &listKeys{msgHash: make([]digest, len(ms)), pres: make([]digest, len(ms))}
		prev := seed
		for i, m := range ms {
			lk.msgHash[i] = h.message(m)
			prev = chain(prev, lk.msgHash[i])
			lk.pres[i] = prev
		}
		lk.msgHash = h.msgLists.Share(lk.msgHash, sharing.Equal[digest])
		lk.pres = h.preLists.Share(lk.pres, sharing.Equal[digest])
		return lk
	})
	for i := len(lk.msgHash); i < len(ms); i++ {
		prev := seed
		if i > 0 {
			prev = lk.pres[i-1]
		}
		m := h.message(ms[i])
		lk.msgHash = append(lk.msgHash, m)
		lk.pres = append(lk.pres, chain(prev, m))
	}
	n := len(ms)
	return lk.msgHash[:n:n], lk.pres[:n:n]
}

// msgKey names a message decoded from a decode.Parts: its blocks are
// shared by every turn that repeats it.
type msgKey struct {
	first *decode.Block
	n     int
	role  string
}

func newHasher() *hasher {
	return &hasher{blocks: map[digest]digest{}, msgs: map[msgKey]digest{}}
}

// block returns the hash of a block's canonical form.
func (h *hasher) block(b decode.Block) digest {
	if len(b.Raw) == 0 {
		return hashBytes(canonicalBlockIn(&h.buf, &h.canon, b))
	}
	key := hashBytes(b.Raw)
	if d, ok := h.blocks[key]; ok {
		return d
	}
	d := hashBytes(canonicalBlockIn(&h.buf, &h.canon, b))
	h.blocks[key] = d
	return d
}

// raw returns the hash of canon(), computing it once per distinct kind,
// text and raw value: system blocks and tool definitions repeat on every
// turn.
func (h *hasher) raw(canon func() []byte, kind, text string, raw []byte) digest {
	sum := sha256.New()
	io.WriteString(sum, kind)
	sum.Write([]byte{0})
	io.WriteString(sum, text)
	sum.Write([]byte{0})
	sum.Write(raw)
	var key digest
	sum.Sum(key[:0])
	if d, ok := h.blocks[key]; ok {
		return d
	}
	d := hashBytes(canon())
	h.blocks[key] = d
	return d
}

// message returns the hash of a message: its role and the canonical
// hashes of its blocks (string content being one text block). Two
// messages hash alike exactly when their canonicalMessage forms are equal.
func (h *hasher) message(m *decode.Message) digest {
	if len(m.Blocks) > 0 {
		k := msgKey{first: &m.Blocks[0], n: len(m.Blocks), role: m.Role}
		if d, ok := h.msgs[k]; ok {
			return d
		}
		d := h.hashMessage(m)
		h.msgs[k] = d
		return d
	}
	return h.hashMessage(m)
}

func (h *hasher) hashMessage(m *decode.Message) digest {
	buf := make([]byte, 0, len(m.Role)+2+sha256.Size*max(len(m.Blocks), 1))
	buf = append(buf, m.Role...)
	buf = append(buf, 0, 0)
	for _, b := range messageBlocks(m) {
		d := h.block(b)
		buf = append(buf, d[:]...)
	}
	return hashBytes(buf)
}

// chain extends a running prefix hash by one element hash.
func chain(prev, next digest) digest {
	var buf [2 * sha256.Size]byte
	copy(buf[:], prev[:])
	copy(buf[sha256.Size:], next[:])
	return sha256.Sum256(buf[:])
}

// isBillingBlock reports whether a system block is Claude Code's billing
// header.
func isBillingBlock(b decode.SystemBlock) bool {
	return strings.HasPrefix(strings.TrimSpace(b.Text), BillingPrefix)
}

// firstDiff returns the offset of the first byte where a and b differ, or
// -1 when they are equal.
func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) == len(b) {
		return -1
	}
	return n
}
