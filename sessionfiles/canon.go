package sessionfiles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"
)

// The files name each message by the SHA-256 of its JSON as Claude Code
// writes it for hashing: keys sorted, no spaces, strings escaped as
// JavaScript's JSON.stringify escapes them, cache_control marks left out,
// and a message whose content is a string given as one text block. A
// request's digest is the same encoding of the whole request (marks kept).
// The helpers here write that encoding, which is also the form the rebuilt
// request bodies take.

// decodeValue parses JSON keeping numbers as written.
func decodeValue(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// canonMessage is a message in the files' hashing form: every field of
// it, content as blocks, cache_control left out.
func canonMessage(raw json.RawMessage) ([]byte, error) {
	v, err := decodeValue(raw)
	if err != nil {
		return nil, fmt.Errorf("message: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("message: not an object")
	}
	if s, ok := m["content"].(string); ok {
		m["content"] = []any{map[string]any{"type": "text", "text": s}}
	}
	var buf bytes.Buffer
	writeCanon(&buf, m, true)
	return buf.Bytes(), nil
}

// canonValue re-encodes raw JSON in the hashing form; omitMarks leaves
// cache_control out.
func canonValue(raw []byte, omitMarks bool) ([]byte, error) {
	v, err := decodeValue(raw)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	writeCanon(&buf, v, omitMarks)
	return buf.Bytes(), nil
}

// writeCanon writes v with sorted keys and JavaScript's escaping.
func writeCanon(buf *bytes.Buffer, v any, omitMarks bool) {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case json.Number:
		buf.WriteString(string(x))
	case float64:
		buf.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case int:
		buf.WriteString(strconv.Itoa(x))
	case string:
		writeJSString(buf, x)
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeCanon(buf, e, omitMarks)
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			if omitMarks && k == "cache_control" {
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
			writeJSString(buf, k)
			buf.WriteByte(':')
			writeCanon(buf, x[k], omitMarks)
		}
		buf.WriteByte('}')
	case json.RawMessage:
		buf.Write(x)
	default:
		b, _ := json.Marshal(x)
		buf.Write(b)
	}
}

// writeJSString writes s as JSON.stringify does: only the quote, the
// backslash and control characters are escaped.
func writeJSString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
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
		switch c {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			buf.WriteString(`\u00`)
			buf.WriteByte(hex[c>>4])
			buf.WriteByte(hex[c&0xf])
		}
		i++
		start = i
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}
