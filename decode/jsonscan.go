package decode

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/internal/jsonvalid"
)

// A small structural reader over JSON text that has already passed
// json.Valid: it finds the extent of values without decoding them, so that
// a body is validated once and each piece is then sliced out of it rather
// than decoded level by level (encoding/json re-validates every nested
// RawMessage it is handed). Values returned are sub-slices of the input.

// field is one member of a JSON object.
type field struct {
	key string
	val []byte
}

// object is a JSON object's members, in order.
type object []field

// get returns the raw value of key (the last one, as encoding/json does),
// or nil.
func (o object) get(key string) []byte {
	var v []byte
	for i := range o {
		if o[i].key == key {
			v = o[i].val
		}
	}
	return v
}

// parseObject splits a JSON object into its members. ok is false when raw
// is not an object.
func parseObject(raw []byte) (o object, ok bool) { return parseObjectWith(raw, jsonvalid.ValueEnd) }

// parseObjectWith is parseObject, finding the end of each member's value
// with end (valueEnd or one that knows some extents already).
func parseObjectWith(raw []byte, end func(b []byte, i int) int) (o object, ok bool) {
	return parseObjectInto(nil, raw, end)
}

// parseObjectInto is parseObjectWith appending the members to dst (its
// array the caller's: one on the stack spares an allocation per object).
func parseObjectInto(dst object, raw []byte, end func(b []byte, i int) int) (o object, ok bool) {
	b := bytes.TrimSpace(raw)
	if len(b) < 2 || b[0] != '{' {
		return nil, false
	}
	i := jsonvalid.SkipSpace(b, 1)
	if i < len(b) && b[i] == '}' {
		if dst == nil {
			return object{}, true
		}
		return dst[:0], true
	}
	o = dst[:0]
	if o == nil {
		o = make(object, 0, 8) // most objects of the API have fewer members
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return o, false
		}
		ke := jsonvalid.StringEnd(b, i)
		if ke < 0 {
			return o, false
		}
		key, kok := knownKey(b[i+1 : ke-1])
		if !kok {
			if key, kok = unquote(b[i:ke]); !kok {
				return o, false
			}
		}
		i = jsonvalid.SkipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return o, false
		}
		i = jsonvalid.SkipSpace(b, i+1)
		ve := end(b, i)
		if ve < 0 {
			return o, false
		}
		o = append(o, field{key: key, val: b[i:ve]})
		i = jsonvalid.SkipSpace(b, ve)
		if i < len(b) && b[i] == ',' {
			i = jsonvalid.SkipSpace(b, i+1)
			continue
		}
		return o, i < len(b) && b[i] == '}'
	}
}

// parseArray splits a JSON array into its elements. ok is false when raw
// is not an array.
func parseArray(raw []byte) (elems [][]byte, ok bool) { return parseArrayWith(raw, jsonvalid.ValueEnd) }

// parseArrayWith is parseArray, finding the end of each element with end.
func parseArrayWith(raw []byte, end func(b []byte, i int) int) (elems [][]byte, ok bool) {
	b := bytes.TrimSpace(raw)
	if len(b) < 2 || b[0] != '[' {
		return nil, false
	}
	elems, _, ok = scanArray(b, 0, end)
	return elems, ok
}

// scanArray splits the array starting at b[i] into its elements, finding
// the end of each with end, and returns the index just past it, or -1
// and false.
func scanArray(b []byte, i int, end func(b []byte, i int) int) (elems [][]byte, next int, ok bool) {
	i = jsonvalid.SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return [][]byte{}, i + 1, true
	}
	for {
		ve := end(b, i)
		if ve < 0 {
			return elems, -1, false
		}
		elems = append(elems, b[i:ve])
		i = jsonvalid.SkipSpace(b, ve)
		if i < len(b) && b[i] == ',' {
			i = jsonvalid.SkipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == ']' {
			return elems, i + 1, true
		}
		return elems, -1, false
	}
}

// unquote decodes a JSON string literal.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) && !hasControl(inner) {
		return string(inner), true
	}
	return unescape(inner)
}

// isString reports whether raw is a JSON string that unquote reads,
// without making it.
func isString(raw []byte) bool {
	b := bytes.TrimSpace(raw)
	return len(b) >= 2 && jsonvalid.StringEndValid(b, 0) == len(b)
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// unescape decodes the inside of a JSON string as encoding/json does:
// escapes resolved, invalid UTF-8 and lone surrogates replaced by U+FFFD.
func unescape(in []byte) (string, bool) {
	var b strings.Builder
	b.Grow(len(in))
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c == '\\':
			if i+1 >= len(in) {
				return "", false
			}
			switch e := in[i+1]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := hex4(in[i+2:])
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if i+1 < len(in) && in[i] == '\\' && in[i+1] == 'u' {
						if r2, ok := hex4(in[i+2:]); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								b.WriteRune(dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
				continue
			default:
				return "", false
			}
			i += 2
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(in[i : i+size])
			}
			i += size
		}
	}
	return b.String(), true
}

// hex4 decodes the four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// parseInt decodes a JSON number holding an integer (1e3 included).
func parseInt(raw []byte) (int64, bool) {
	b := bytes.TrimSpace(raw)
	if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return n, true
	}
	if len(b) == 0 || !(b[0] == '-' || (b[0] >= '0' && b[0] <= '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

// set returns o with key's value replaced (every occurrence), or appended.
func (o object) set(key string, val []byte) object {
	found := false
	for i := range o {
		if o[i].key == key {
			o[i].val = val
			found = true
		}
	}
	if !found {
		o = append(o, field{key: key, val: val})
	}
	return o
}

// del returns o without key.
func (o object) del(key string) object {
	out := o[:0]
	for _, f := range o {
		if f.key != key {
			out = append(out, f)
		}
	}
	return out
}

// marshal writes o as a JSON object, members in order. The values must be
// valid JSON.
func (o object) marshal() []byte {
	n := 2
	for _, f := range o {
		n += len(f.key) + len(f.val) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, f := range o {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, quote(f.key)...)
		b = append(b, ':')
		b = append(b, f.val...)
	}
	return append(b, '}')
}

// joinArray writes values as a JSON array.
func joinArray(vals [][]byte) []byte {
	b := []byte{'['}
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, v...)
	}
	return append(b, ']')
}

// quote encodes s as a JSON string.
func quote(s string) []byte {
	b, err := json.Marshal(s)
	if err != nil { // cannot happen for a string
		return []byte(`""`)
	}
	return b
}

// knownKey returns the key the bytes of a key literal spell when it is
// one the API's objects use (read without allocating a string for it).
func knownKey(b []byte) (string, bool) {
	switch string(b) {
	case "type":
		return "type", true
	case "text":
		return "text", true
	case "id":
		return "id", true
	case "name":
		return "name", true
	case "input":
		return "input", true
	case "content":
		return "content", true
	case "role":
		return "role", true
	case "tool_use_id":
		return "tool_use_id", true
	case "is_error":
		return "is_error", true
	case "cache_control":
		return "cache_control", true
	case "model":
		return "model", true
	case "usage":
		return "usage", true
	case "stop_reason":
		return "stop_reason", true
	case "stop_sequence":
		return "stop_sequence", true
	case "input_tokens":
		return "input_tokens", true
	case "output_tokens":
		return "output_tokens", true
	case "cache_read_input_tokens":
		return "cache_read_input_tokens", true
	case "cache_creation_input_tokens":
		return "cache_creation_input_tokens", true
	case "cache_creation":
		return "cache_creation", true
	case "ephemeral_5m_input_tokens":
		return "ephemeral_5m_input_tokens", true
	case "ephemeral_1h_input_tokens":
		return "ephemeral_1h_input_tokens", true
	case "service_tier":
		return "service_tier", true
	case "server_tool_use":
		return "server_tool_use", true
	case "thinking":
		return "thinking", true
	case "signature":
		return "signature", true
	case "citations":
		return "citations", true
	case "tool_name":
		return "tool_name", true
	case "messages":
		return "messages", true
	}
	return "", false
}
