package canonjson

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/internal/jsonvalid"
)

// Canonical is Write(Decode(raw)) for raw that is one valid JSON value,
// written from raw's bytes without building the value first; ok is false
// (and nothing written) when raw is not one valid JSON value.
func Canonical(buf *bytes.Buffer, raw []byte, o Options) (ok bool) {
	if !jsonvalid.Valid(raw) {
		return false
	}
	c := canonWriter{buf: buf, o: o}
	c.value(raw, jsonvalid.SkipSpace(raw, 0))
	return true
}

// CanonicalValid is Canonical for raw its caller knows to be one valid
// JSON value (a decoded block's raw JSON): it does not check. What it
// writes of anything else is not the canonical form, but it never panics
// (ok is then false when it noticed).
func CanonicalValid(buf *bytes.Buffer, raw []byte, o Options) (ok bool) {
	var w Writer
	return w.CanonicalValid(buf, raw, o)
}

// A Writer is CanonicalValid for a caller that writes many values: it
// keeps its lists of an object's members from one value to the next. The
// zero Writer is ready to use; it is not safe for concurrent use.
type Writer struct {
	members [][]member
}

// CanonicalValid is the package's CanonicalValid.
func (w *Writer) CanonicalValid(buf *bytes.Buffer, raw []byte, o Options) (ok bool) {
	c := canonWriter{buf: buf, o: o, members: w.members}
	defer func() {
		w.members = c.members
		if recover() != nil {
			ok = false
		}
	}()
	i := jsonvalid.SkipSpace(raw, 0)
	if i >= len(raw) {
		return false
	}
	c.value(raw, i)
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
	key              []byte // decoded (the literal's own bytes when it needs no decoding)
	keyStart, keyEnd int    // the key's literal
	start, end       int    // the value
}

// value writes the value at b[i] and returns the index after it.
func (c *canonWriter) value(b []byte, i int) int {
	switch b[i] {
	case '{':
		return c.object(b, i)
	case '[':
		c.buf.WriteByte('[')
		i = jsonvalid.SkipSpace(b, i+1)
		if b[i] == ']' {
			c.buf.WriteByte(']')
			return i + 1
		}
		for n := 0; ; n++ {
			if n > 0 {
				c.buf.WriteByte(',')
			}
			i = jsonvalid.SkipSpace(b, c.value(b, i))
			if b[i] == ']' {
				c.buf.WriteByte(']')
				return i + 1
			}
			i = jsonvalid.SkipSpace(b, i+1) // past the comma
		}
	case '"':
		e := jsonvalid.StringEnd(b, i)
		writeLiteral(c.buf, b[i:e], c.o)
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
	i = jsonvalid.SkipSpace(b, i+1)
	for b[i] != '}' {
		ke := jsonvalid.StringEnd(b, i)
		key := keyOf(b[i:ke])
		vs := jsonvalid.SkipSpace(b, jsonvalid.SkipSpace(b, ke)+1)
		ve := jsonvalid.ValueEnd(b, vs)
		ms = append(ms, member{key: key, keyStart: i, keyEnd: ke, start: vs, end: ve})
		i = jsonvalid.SkipSpace(b, ve)
		if b[i] == ',' {
			i = jsonvalid.SkipSpace(b, i+1)
		}
	}
	// The last of equal keys wins, as decoding into a map keeps it.
	slices.SortStableFunc(ms, func(x, y member) int { return bytes.Compare(x.key, y.key) })
	c.buf.WriteByte('{')
	n := 0
	for k, m := range ms {
		if k+1 < len(ms) && bytes.Equal(ms[k+1].key, m.key) {
			continue
		}
		if c.o.OmitMarks && string(m.key) == "cache_control" || c.o.OmitNulls && string(b[m.start:m.end]) == "null" {
			continue
		}
		if n > 0 {
			c.buf.WriteByte(',')
		}
		n++
		writeLiteral(c.buf, b[m.keyStart:m.keyEnd], c.o)
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

// decodeString is the string a valid literal decodes to, as encoding/json
// decodes it (invalid UTF-8 becomes U+FFFD).
// plain reports whether a string literal's inner bytes decode to
// themselves: no escape, valid UTF-8.
func plain(inner []byte) bool { return bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) }

// keyOf is decodeString's bytes: the literal's own when they need no
// decoding (no copy for an object's keys, which are sorted and dropped).
func keyOf(lit []byte) []byte {
	inner := lit[1 : len(lit)-1]
	if plain(inner) {
		return inner
	}
	return []byte(decodeString(lit))
}

func decodeString(lit []byte) string {
	inner := lit[1 : len(lit)-1]
	if plain(inner) {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(lit, &s)
	return s
}

// writeLiteral writes the valid string literal lit as WriteString writes
// the string it decodes to, without decoding it first.
func writeLiteral(buf *bytes.Buffer, lit []byte, o Options) {
	inner := lit[1 : len(lit)-1]
	if plain(inner) && (o.JS || !hasSeparator(inner)) {
		buf.Write(lit) // decodes to itself, written as it is
		return
	}
	buf.WriteByte('"')
	for i := 0; i < len(inner); {
		c := inner[i]
		switch {
		case c == '\\':
			e := inner[i+1]
			i += 2
			switch e {
			case 'u':
				r := rune(hex4(inner[i:]))
				i += 4
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 <= len(inner) && inner[i] == '\\' && inner[i+1] == 'u' {
						r2 = rune(hex4(inner[i+2:]))
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						i += 6
						r = d
					} else {
						r = utf8.RuneError
					}
				}
				writeRune(buf, r, o)
			case 'b':
				writeRune(buf, '\b', o)
			case 'f':
				writeRune(buf, '\f', o)
			case 'n':
				writeRune(buf, '\n', o)
			case 'r':
				writeRune(buf, '\r', o)
			case 't':
				writeRune(buf, '\t', o)
			default: // " \ /
				writeRune(buf, rune(e), o)
			}
		case c < utf8.RuneSelf:
			// A run of plain bytes, written at once (valid JSON: no
			// control character or bare quote among them).
			j := i + 1
			for j < len(inner) && inner[j] != '\\' && inner[j] < utf8.RuneSelf {
				j++
			}
			buf.Write(inner[i:j])
			i = j
		default:
			r, size := utf8.DecodeRune(inner[i:])
			i += size
			writeRune(buf, r, o) // invalid UTF-8 decodes to U+FFFD
		}
	}
	buf.WriteByte('"')
}

// hasSeparator reports whether b holds U+2028 or U+2029 (which Go's
// escaping escapes).
func hasSeparator(b []byte) bool {
	for {
		i := bytes.IndexByte(b, 0xe2)
		if i < 0 || i+2 >= len(b) {
			return false
		}
		if b[i+1] == 0x80 && (b[i+2] == 0xa8 || b[i+2] == 0xa9) {
			return true
		}
		b = b[i+1:]
	}
}

// writeRune writes r, a rune of a decoded string, as WriteString would.
func writeRune(buf *bytes.Buffer, r rune, o Options) {
	switch {
	case r < utf8.RuneSelf:
		if c := byte(r); c >= 0x20 && c != '"' && c != '\\' {
			buf.WriteByte(c)
		} else {
			writeEscaped(buf, c)
		}
	case !o.JS && (r == '\u2028' || r == '\u2029'):
		buf.WriteString(`\u202`)
		buf.WriteByte(hex[r&0xf])
	default:
		buf.WriteRune(r)
	}
}

// hex4 is the value of four hex digits.
func hex4(b []byte) int {
	n := 0
	for _, c := range b[:4] {
		n <<= 4
		switch {
		case c >= '0' && c <= '9':
			n |= int(c - '0')
		case c >= 'a' && c <= 'f':
			n |= int(c - 'a' + 10)
		default:
			n |= int(c - 'A' + 10)
		}
	}
	return n
}
