package sessionfiles

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strconv"

	"github.com/tsinspect/tsinspect/internal/canonjson"
)

// built is a rebuilt request body and what rebuilding the next request
// of its lineage can reuse of it.
type built struct {
	id   string
	body []byte
	// prefix is the digest's input before the first message; marks the
	// smallest index of a marked message (len(msgs) for none); cks the
	// digest's state after every ckEvery messages.
	prefix []byte
	marks  int
	cks    []checkpoint
	digest string
}

// checkpoint is the digest's state after its first n messages.
type checkpoint struct {
	n     int
	state []byte
}

// ckEvery is how many messages apart the digest's state is kept.
const ckEvery = 32

// requestBody rebuilds the request as canonical JSON (keys sorted) into
// buf (reused when large enough), with the SHA-256 of the form the files'
// digest is taken of (the same with the betas in it). base, when set, is
// the request this one begins with: the digest resumes from its state
// where their messages are the same bytes.
func (s *Session) requestBody(q *request, buf []byte, base *built) built {
	params := map[string]json.RawMessage{}
	if len(q.rec.Params) > 0 {
		_ = json.Unmarshal(q.rec.Params, &params)
	}
	sh := s.shapes[q.rec.ShapeHash]
	sysb, toolsb := []byte("[]"), []byte("[]")
	if sh != nil {
		sysb, toolsb = sh.system, sh.tools
	}
	marked := map[int][]mark{}
	firstMark := len(q.msgs)
	var sysMarks, toolMarks []mark
	for _, m := range q.rec.CacheControl {
		if len(m.Path) == 0 {
			continue
		}
		switch m.Path[0] {
		case "system":
			sysMarks = append(sysMarks, m)
		case "tools":
			toolMarks = append(toolMarks, m)
		case "messages":
			if len(m.Path) >= 2 {
				if i, ok := pathIndex(m.Path[1]); ok {
					marked[i] = append(marked[i], m)
					if i >= 0 {
						firstMark = min(firstMark, i)
					}
				}
			}
		}
	}
	if len(sysMarks) > 0 {
		sysb = applyMarks(sysb, sysMarks, 1)
	}
	if len(toolMarks) > 0 {
		toolsb = applyMarks(toolsb, toolMarks, 1)
	}
	members := map[string][]byte{"system": sysb, "tools": toolsb, "messages": nil}
	for k, v := range params {
		if _, ok := members[k]; ok {
			continue
		}
		c, err := canonValue(v, false)
		if err != nil {
			continue
		}
		members[k] = c
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	size := len(sysb) + len(toolsb) + 1024
	for _, mi := range q.msgs {
		size += len(s.msgs[mi]) + 1
	}
	body := buf[:0]
	if cap(body) < size {
		body = make([]byte, 0, size+size/8)
	}
	out := built{id: q.rec.ID, marks: firstMark}
	// Members before the messages (betas, context_management, max_tokens
	// sort first) go into the digest's prefix; the body leaves the betas
	// out (they are a header).
	var key bytes.Buffer
	first, firstBody := true, true
	prefix := []byte{'{'}
	body = append(body, '{')
	msgStart, msgEnd := 0, 0
	var ends []int
	afterMessages := false
	for _, k := range keys {
		key.Reset()
		writeJSString(&key, k)
		key.WriteByte(':')
		if !afterMessages {
			if !first {
				prefix = append(prefix, ',')
			}
			prefix = append(prefix, key.Bytes()...)
		}
		first = false
		if k != "betas" {
			if !firstBody {
				body = append(body, ',')
			}
			firstBody = false
			body = append(body, key.Bytes()...)
		}
		if k != "messages" {
			if !afterMessages {
				prefix = append(prefix, members[k]...)
			}
			if k != "betas" {
				body = append(body, members[k]...)
			}
			continue
		}
		prefix = append(prefix, '[')
		body = append(body, '[')
		msgStart = len(body)
		ends = make([]int, len(q.msgs))
		for i, mi := range q.msgs {
			if i > 0 {
				body = append(body, ',')
			}
			m := s.msgs[mi]
			if ms := marked[i]; len(ms) > 0 {
				m = applyMarks(m, ms, 2)
			}
			body = append(body, m...)
			ends[i] = len(body)
		}
		msgEnd = len(body)
		body = append(body, ']')
		afterMessages = true
	}
	body = append(body, '}')
	out.body, out.prefix = body, prefix
	// The digest: the prefix, each message (with the comma before it),
	// then what follows the messages, which is the body's own bytes.
	h := sha256.New()
	start := 0
	if base != nil && bytes.Equal(base.prefix, prefix) {
		same := min(q.rec.Keep, base.marks, firstMark)
		for _, ck := range base.cks {
			if ck.n <= same && ck.n > start {
				if um, ok := h.(interface{ UnmarshalBinary([]byte) error }); ok && um.UnmarshalBinary(ck.state) == nil {
					start = ck.n
				}
			}
		}
	}
	if start == 0 {
		h.Reset()
		h.Write(prefix)
	}
	for i := start; i < len(ends); i++ {
		from := msgStart
		if i > 0 {
			from = ends[i-1]
		}
		h.Write(body[from:ends[i]])
		if (i+1)%ckEvery == 0 {
			if m, ok := h.(interface{ MarshalBinary() ([]byte, error) }); ok {
				if st, err := m.MarshalBinary(); err == nil {
					out.cks = append(out.cks, checkpoint{n: i + 1, state: st})
				}
			}
		}
	}
	h.Write(body[msgEnd:])
	out.digest = hex.EncodeToString(h.Sum(nil))
	return out
}

// applyMarks sets cache_control marks in canonical JSON: skip is how many
// elements of each mark's path lead to the value (1 for ["system", i],
// 2 for ["messages", i, "content", j]).
func applyMarks(canon []byte, marks []mark, skip int) []byte {
	v, err := canonjson.Decode(canon)
	if err != nil {
		return canon
	}
	for _, m := range marks {
		path := m.Path[skip:]
		if skip == 1 {
			path = m.Path[1:]
		}
		val, err := canonjson.Decode(m.Value)
		if err != nil {
			continue
		}
		target := v
		for _, p := range path {
			switch t := target.(type) {
			case []any:
				i, ok := pathIndex(p)
				if !ok || i < 0 || i >= len(t) {
					target = nil
				} else {
					target = t[i]
				}
			case map[string]any:
				k, _ := p.(string)
				target = t[k]
			default:
				target = nil
			}
		}
		if obj, ok := target.(map[string]any); ok {
			obj["cache_control"] = val
		}
	}
	var buf bytes.Buffer
	writeCanon(&buf, v, false)
	return buf.Bytes()
}

func pathIndex(p any) (int, bool) {
	switch x := p.(type) {
	case float64:
		return int(x), true
	case json.Number:
		i, err := strconv.Atoi(string(x))
		return i, err == nil
	}
	return 0, false
}
