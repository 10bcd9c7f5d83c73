package sessionfiles

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/tsinspect/tsinspect/internal/jsonvalid"
)

// assistantMessage is the canonical message of an answer written as
// several records: their content blocks in order.
func assistantMessage(rs []*record) ([]byte, error) {
	var content []json.RawMessage
	for _, r := range rs {
		var m struct {
			Content []json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(r.Message, &m); err != nil {
			return nil, err
		}
		content = append(content, m.Content...)
	}
	raw, err := json.Marshal(map[string]any{"role": "assistant", "content": content})
	if err != nil {
		return nil, err
	}
	return canonMessage(raw)
}

// answerBody is the answer as the API's final message: the last record's
// message (its usage is the final one) with every record's content.
func answerBody(rs []*record) []byte {
	if b, ok := answerBodyFast(rs); ok {
		return b
	}
	return answerBodySlow(rs)
}

// answerBodyFast is answerBodySlow written from the records' bytes (each
// record's line was validated whole): the last message's members sorted
// by key, the last of equal keys kept, each value compacted, the content
// every record's content elements compacted with HTML's characters
// escaped, as encoding/json writes them there. ok is false for what it
// leaves to encoding/json: a key that is escaped or not ASCII, a message
// or content that is not what it should be.
func answerBodyFast(rs []*record) ([]byte, bool) {
	type kv struct {
		key   string
		value []byte
	}
	last := rs[len(rs)-1].Message
	var members []kv
	ok := true
	if eachMember(last, jsonvalid.SkipSpace(last, 0), func(key []byte, at int) int {
		e := jsonvalid.ValueEnd(last, at)
		for _, c := range key {
			if c == '\\' || c >= 0x80 {
				ok = false
			}
		}
		if e >= 0 {
			members = append(members, kv{string(key), last[at:e]})
		}
		return e
	}) < 0 || !ok {
		return nil, false
	}
	var out bytes.Buffer
	out.Grow(len(last))
	// The content: every record's elements.
	var content bytes.Buffer
	content.WriteByte('[')
	n := 0
	for _, r := range rs {
		c, ok := member(r.Message, "content")
		if !ok {
			return nil, false
		}
		switch v := bytes.TrimSpace(c); {
		case v == nil, string(v) == "null":
			continue
		case len(v) == 0 || v[0] != '[':
			// Not a list of elements: encoding/json says so.
			return nil, false
		default:
			if eachElement(v, 0, func(at int) int {
				e := jsonvalid.ValueEnd(v, at)
				if e < 0 {
					return -1
				}
				if n > 0 {
					content.WriteByte(',')
				}
				n++
				compactTo(&content, v[at:e], true)
				return e
			}) < 0 {
				return nil, false
			}
		}
	}
	content.WriteByte(']')
	members = append(members, kv{"content", content.Bytes()})
	slices.SortStableFunc(members, func(a, b kv) int { return strings.Compare(a.key, b.key) })
	out.WriteByte('{')
	k := 0
	for i, m := range members {
		if i+1 < len(members) && members[i+1].key == m.key {
			continue // the last of equal keys (content: the one made here)
		}
		if k > 0 {
			out.WriteByte(',')
		}
		k++
		out.WriteByte('"')
		out.WriteString(m.key)
		out.WriteString(`":`)
		compactTo(&out, m.value, false)
	}
	out.WriteByte('}')
	return out.Bytes(), true
}

// compactTo writes the valid JSON v without white space outside its
// strings; with html, <, >, & and U+2028, U+2029 in strings escaped as
// encoding/json escapes them.
func compactTo(out *bytes.Buffer, v []byte, html bool) {
	start := 0
	inString := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if inString {
			switch {
			case c == '\\':
				i++
			case c == '"':
				inString = false
			case html && (c == '<' || c == '>' || c == '&'):
				out.Write(v[start:i])
				out.WriteString(`\u00`)
				out.WriteByte("0123456789abcdef"[c>>4])
				out.WriteByte("0123456789abcdef"[c&0xf])
				start = i + 1
			case html && c == 0xe2 && i+2 < len(v) && v[i+1] == 0x80 && (v[i+2] == 0xa8 || v[i+2] == 0xa9):
				out.Write(v[start:i])
				out.WriteString(`\u202`)
				out.WriteByte("0123456789abcdef"[v[i+2]&0xf])
				i += 2
				start = i + 1
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			out.Write(v[start:i])
			start = i + 1
		}
	}
	out.Write(v[start:])
}

// answerBodySlow is answerBody through encoding/json.
func answerBodySlow(rs []*record) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(rs[len(rs)-1].Message, &m); err != nil {
		return []byte{}
	}
	var content []json.RawMessage
	for _, r := range rs {
		var c struct {
			Content []json.RawMessage `json:"content"`
		}
		if json.Unmarshal(r.Message, &c) == nil {
			content = append(content, c.Content...)
		}
	}
	if content == nil {
		content = []json.RawMessage{}
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return []byte{}
	}
	m["content"] = raw
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(m) != nil {
		return []byte{}
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// apiError reads a system api_error record's error: an HTTP status with
// the API's body, or a connection error's message.
func apiError(raw json.RawMessage) (int, []byte, string) {
	var e struct {
		Message    string `json:"message"`
		Status     int    `json:"status"`
		Formatted  string `json:"formatted"`
		Connection *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"connection"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return 0, nil, "an API error Claude Code wrote in a form tsinspect does not read"
	}
	if e.Status > 0 {
		body := []byte(nil)
		if _, rest, ok := strings.Cut(e.Message, " "); ok && json.Valid([]byte(rest)) {
			body = []byte(rest)
		} else {
			b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": "api_error", "message": e.Formatted}})
			body = b
		}
		return e.Status, body, ""
	}
	msg := e.Formatted
	if msg == "" {
		msg = e.Message
	}
	if msg == "" {
		msg = "a failure Claude Code did not describe"
	}
	if e.Connection != nil && e.Connection.Code != "" && !strings.Contains(msg, e.Connection.Code) {
		msg += " (" + e.Connection.Code + ")"
	}
	return 0, nil, msg + " (as Claude Code wrote it; what arrived before the error is not in the files)"
}

func messageID(raw json.RawMessage) string {
	// The message's own members only, by their structure: its content
	// (the answer's blocks) is not decoded for it.
	id := ""
	eachMember(raw, jsonvalid.SkipSpace(raw, 0), func(key []byte, v int) int {
		e := jsonvalid.ValueEnd(raw, v)
		if e >= 0 && string(key) == "id" && raw[v] == '"' {
			id = jsonString(raw[v:e])
		}
		return e
	})
	return id
}

// claudeCodeErrors are the texts Claude Code writes, as its own
// isApiErrorMessage message, for an error the API answered, with the
// status and error type the API answers them with: an error, not a
// broken stream. A text not here (a connection that failed) stays one.
var claudeCodeErrors = []struct {
	text   string
	status int
	typ    string
}{
	{"Not logged in", 401, "authentication_error"},
	{"Invalid API key", 401, "authentication_error"},
	{"OAuth token has expired", 401, "authentication_error"},
	{"Credit balance is too low", 400, "invalid_request_error"},
	{"overloaded", 529, "overloaded_error"},
	{"Overloaded", 529, "overloaded_error"},
}

// knownError is the status and error body of the API error Claude Code's
// text msg tells of (claudeCodeErrors), its text as the message; 0 when
// it is none of them.
func knownError(msg string) (int, []byte) {
	for _, e := range claudeCodeErrors {
		if strings.Contains(msg, e.text) {
			b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": e.typ, "message": msg}})
			return e.status, b
		}
	}
	return 0, nil
}
