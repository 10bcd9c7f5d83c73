package canonjson

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// Canonical is Write(Decode(raw)) for raw that is one valid JSON value,
// written from raw's bytes without building the value first; ok is false
// (and nothing written) when raw is not one valid JSON value.
func Canonical(buf *bytes.Buffer, raw []byte, o Options) (ok bool) {
	if !json.Valid(raw) {
		return false
	}
	c := canonWriter{buf: buf, o: o}
	c.value(raw, skipWS(raw, 0))
	return true
}

// canonWriter writes the canonical form of valid JSON.
type canonWriter struct {
	buf     *bytes.Buffer
	o       Options
	members [][]member // one list per depth, reused
	depth   int
}

type member struct {
	key        string
	start, end int // the value
}

// value writes the value at b[i] and returns the index after it.
func (c *canonWriter) value(b []byte, i int) int {
	switch b[i] {
	case '{':
		return c.object(b, i)
	case '[':
		c.buf.WriteByte('[')
		i = skipWS(b, i+1)
		if b[i] == ']' {
			c.buf.WriteByte(']')
			return i + 1
		}
		for n := 0; ; n++ {
			if n > 0 {
				c.buf.WriteByte(',')
			}
			i = skipWS(b, c.value(b, i))
			if b[i] == ']' {
				c.buf.WriteByte(']')
				return i + 1
			}
			i = skipWS(b, i+1) // past the comma
		}
	case '"':
		e := strEnd(b, i)
		WriteString(c.buf, decodeString(b[i:e]), c.o)
		return e
	default: // number, true, false, null: as written
		e := i
		for e < len(b) && !isDelim(b[e]) {
			e++
		}
		c.buf.Write(b[i:e])
		return e
	}
}

// object writes the object at b[i], its members sorted by key, the last
// of equal keys kept, and returns the index after it.
func (c *canonWriter) object(b []byte, i int) int {
	if len(c.members) <= c.depth {
		c.members = append(c.members, nil)
	}
	ms := c.members[c.depth][:0]
	i = skipWS(b, i+1)
	for b[i] != '}' {
		ke := strEnd(b, i)
		key := decodeString(b[i:ke])
		vs := skipWS(b, skipWS(b, ke)+1)
		ve := valueEnd(b, vs)
		ms = append(ms, member{key: key, start: vs, end: ve})
		i = skipWS(b, ve)
		if b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
	// The last of equal keys wins, as decoding into a map keeps it.
	slices.SortStableFunc(ms, func(x, y member) int { return strings.Compare(x.key, y.key) })
	c.buf.WriteByte('{')
	n := 0
	for k, m := range ms {
		if k+1 < len(ms) && ms[k+1].key == m.key {
			continue
		}
		if c.o.OmitMarks && m.key == "cache_control" || c.o.OmitNulls && string(b[m.start:m.end]) == "null" {
			continue
		}
		if n > 0 {
			c.buf.WriteByte(',')
		}
		n++
		WriteString(c.buf, m.key, c.o)
		c.buf.WriteByte(':')
		c.depth++
		c.value(b, m.start)
		c.depth--
	}
	c.buf.WriteByte('}')
	c.members[c.depth] = ms[:0]
	return i + 1
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// strEnd is the index after the string literal at b[i].
func strEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd is the index after the valid value at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return strEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = strEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) && !isDelim(b[i]) {
		i++
	}
	return i
}

// decodeString is the string a valid literal decodes to, as encoding/json
// decodes it (invalid UTF-8 becomes U+FFFD).
func decodeString(lit []byte) string {
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(lit, &s)
	return s
}
