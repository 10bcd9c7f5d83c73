package sessionfiles

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tsinspect/tsinspect/internal/canonjson"
)

// The files name each message by the SHA-256 of its JSON as Claude Code
// writes it for hashing: keys sorted, no spaces, strings escaped as
// JavaScript's JSON.stringify escapes them, cache_control marks left out,
// and a message whose content is a string given as one text block. A
// request's digest is the same encoding of the whole request (marks kept).
// The helpers here write that encoding, which is also the form the rebuilt
// request bodies take.

// canonMessage is a message in the files' hashing form: every field of
// it, content as blocks, cache_control left out.
func canonMessage(raw json.RawMessage) ([]byte, error) {
	v, err := canonjson.Decode(raw)
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
	var buf bytes.Buffer
	if canonjson.Canonical(&buf, raw, canonjson.Options{OmitMarks: omitMarks, JS: true}) {
		return buf.Bytes(), nil
	}
	v, err := canonjson.Decode(raw)
	if err != nil {
		return nil, err
	}
	writeCanon(&buf, v, omitMarks)
	return buf.Bytes(), nil
}

// writeCanon writes v with sorted keys and JavaScript's escaping.
func writeCanon(buf *bytes.Buffer, v any, omitMarks bool) {
	canonjson.Write(buf, v, canonjson.Options{OmitMarks: omitMarks, JS: true})
}

// writeJSString writes s as JSON.stringify does: only the quote, the
// backslash and control characters are escaped.
func writeJSString(buf *bytes.Buffer, s string) {
	canonjson.WriteString(buf, s, canonjson.Options{JS: true})
}
