// Package canonjson writes JSON in one canonical form: object keys
// sorted, no insignificant white space, numbers as written; strings
// escaped as encoding/json escapes them (HTML escaping off) or as
// JavaScript's JSON.stringify does; and, where asked, every cache_control
// key or every null-valued key left out. The timeline names contents by
// the digest of this form; sessionfiles rebuilds Claude Code's requests,
// and the digests its files keep of them, in it.
package canonjson

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"unicode/utf8"
)

// Options say how Write writes.
type Options struct {
	// OmitMarks leaves out every "cache_control" key, at any depth.
	OmitMarks bool
	// OmitNulls leaves out every key whose value is null, at any depth.
	OmitNulls bool
	// JS escapes strings as JSON.stringify does: only the quote, the
	// backslash and control characters, invalid UTF-8 written as it is.
	// Otherwise as encoding/json does with HTML escaping off: invalid
	// UTF-8 becomes U+FFFD, and U+2028 and U+2029 are escaped.
	JS bool
}

// Decode parses the JSON value raw begins with, keeping numbers as
// written (json.Number).
func Decode(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Write writes v in the canonical form: v as Decode returns it, with
// strings, ints and float64s, json.RawMessage (written as it is) and
// anything else as encoding/json marshals it.
func Write(buf *bytes.Buffer, v any, o Options) {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(x))
	case json.Number:
		buf.WriteString(string(x))
	case float64:
		buf.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case int:
		buf.WriteString(strconv.Itoa(x))
	case string:
		WriteString(buf, x, o)
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			Write(buf, e, o)
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k, val := range x {
			if o.OmitMarks && k == "cache_control" || o.OmitNulls && val == nil {
				continue
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			WriteString(buf, k, o)
			buf.WriteByte(':')
			Write(buf, x[k], o)
		}
		buf.WriteByte('}')
	case json.RawMessage:
		buf.Write(x)
	default:
		b, _ := json.Marshal(x)
		buf.Write(b)
	}
}

// WriteString writes s as a JSON string, escaped as o.JS says.
func WriteString(buf *bytes.Buffer, s string, o Options) {
	if o.JS {
		writeJS(buf, s)
	} else {
		writeGo(buf, s)
	}
}

// writeGo writes s as a JSON string the way encoding/json does with
// HTML escaping off: invalid UTF-8 becomes U+FFFD.
func writeGo(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf.WriteString(s[start:i])
			writeEscaped(buf, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf.WriteString(s[start:i])
			buf.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			buf.WriteString(s[start:i])
			buf.WriteString(`\u202`)
			buf.WriteByte(hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}

// writeJS writes s as JSON.stringify does: only the quote, the
// backslash and control characters are escaped.
func writeJS(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c < utf8.RuneSelf {
				i++
				continue
			}
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			continue
		}
		buf.WriteString(s[start:i])
		writeEscaped(buf, c)
		i++
		start = i
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}

// hex is the digits of a \u escape.
const hex = "0123456789abcdef"

// writeEscaped writes the escape of c, the quote, the backslash or a
// control character, as both escapings write it.
func writeEscaped(buf *bytes.Buffer, c byte) {
	switch c {
	case '"', '\\':
		buf.WriteByte('\\')
		buf.WriteByte(c)
	case '\n':
		buf.WriteString(`\n`)
	case '\r':
		buf.WriteString(`\r`)
	case '\t':
		buf.WriteString(`\t`)
	case '\b':
		buf.WriteString(`\b`)
	case '\f':
		buf.WriteString(`\f`)
	default:
		buf.WriteString(`\u00`)
		buf.WriteByte(hex[c>>4])
		buf.WriteByte(hex[c&0xf])
	}
}
