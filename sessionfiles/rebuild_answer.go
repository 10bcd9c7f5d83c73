package sessionfiles

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/tsinspect/tsinspect/exchange"
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

// answerParts is what an answer's body is made of (the answer as the API's
// final message: the last record's message, its usage the final one, with
// every record's content): the last record's message members sorted by
// key, the last of equal keys kept, its "content" (with no value) every
// record's content elements.
type answerParts exchange.MadeAnswer

// answerOf reads the parts of an answer's body from the records' bytes
// (each record's line was validated whole). ok is false for what it
// leaves to encoding/json: a key that is escaped or not ASCII, a message
// or content that is not what it should be.
func answerOf(rs []*record) (a answerParts, ok bool) {
	for j, r := range rs {
		// One walk of each record's message: its content (the last member
		// named so in any case, as encoding/json reads it), and the last
		// record's other members.
		msg, last := r.Message, j == len(rs)-1
		var content []byte
		plain := true
		if eachMember(msg, jsonvalid.SkipSpace(msg, 0), func(key []byte, at int) int {
			e := jsonvalid.ValueEnd(msg, at)
			for _, c := range key {
				if c == '\\' || c >= 0x80 {
					plain = false
				}
			}
			if e < 0 {
				return e
			}
			if len(key) == len("content") && strings.EqualFold(string(key), "content") {
				content = msg[at:e]
			}
			if last && string(key) != "content" {
				a.Members = append(a.Members, exchange.MadeMember{Key: string(key), Value: msg[at:e]})
			}
			return e
		}) < 0 || !plain {
			return answerParts{}, false
		}
		switch v := bytes.TrimSpace(content); {
		case v == nil, string(v) == "null":
			continue
		case len(v) == 0 || v[0] != '[':
			// Not a list of elements: encoding/json says so.
			return answerParts{}, false
		default:
			if eachElement(v, 0, func(at int) int {
				e := jsonvalid.ValueEnd(v, at)
				if e >= 0 {
					a.Content = append(a.Content, v[at:e])
				}
				return e
			}) < 0 {
				return answerParts{}, false
			}
		}
	}
	a.Members = append(a.Members, exchange.MadeMember{Key: "content"})
	slices.SortStableFunc(a.Members, func(x, y exchange.MadeMember) int { return strings.Compare(x.Key, y.Key) })
	kept := a.Members[:0]
	for i, m := range a.Members {
		if i+1 < len(a.Members) && a.Members[i+1].Key == m.Key {
			continue // the last of equal keys
		}
		kept = append(kept, m)
	}
	a.Members = kept
	a.Size = a.write(nil)
	return a, true
}

// model is the model the answer names, as messageModel reads it from the
// last record's message; ok is false when a key other than "model" could
// name it too (messageModel, which reads keys in any case, in their
// order, then tells).
func (a answerParts) model() (model string, ok bool) {
	var v []byte
	for _, m := range a.Members {
		if len(m.Key) == len("model") && strings.EqualFold(m.Key, "model") {
			if m.Key != "model" {
				return "", false
			}
			v = m.Value
		}
	}
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &model) != nil || model == syntheticModel {
		return "", true
	}
	return model, true
}

// message reports whether the answer is a message ("type":"message"),
// which a reader of its parts decodes as one; another is handed as a body.
func (a answerParts) message() bool {
	for _, m := range a.Members {
		if m.Key == "type" {
			return string(m.Value) == `"message"`
		}
	}
	return false
}

// body writes the answer's body.
func (a answerParts) body() []byte {
	var out bytes.Buffer
	out.Grow(a.Size)
	a.write(&out)
	return out.Bytes()
}

// write writes the body to out, each value compacted, and returns its
// length; a nil out counts the length alone.
func (a answerParts) write(out *bytes.Buffer) int {
	n := 0
	put := func(s string) {
		n += len(s)
		if out != nil {
			out.WriteString(s)
		}
	}
	put("{")
	for i, m := range a.Members {
		if i > 0 {
			put(",")
		}
		put(`"`)
		put(m.Key)
		put(`":`)
		if m.Key != "content" {
			n += compactTo(out, m.Value)
			continue
		}
		put("[")
		for j, c := range a.Content {
			if j > 0 {
				put(",")
			}
			n += compactTo(out, c)
		}
		put("]")
	}
	put("}")
	return n
}

// compactTo writes the valid JSON v to out without white space outside
// its strings, and returns the length written; a nil out counts it alone.
func compactTo(out *bytes.Buffer, v []byte) int {
	n := 0
	start := 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			if e := jsonvalid.StringEnd(v, i); e > i {
				i = e - 1
			}
		case ' ', '\t', '\n', '\r':
			n += i - start
			if out != nil {
				out.Write(v[start:i])
			}
			start = i + 1
		}
	}
	n += len(v) - start
	if out != nil {
		out.Write(v[start:])
	}
	return n
}

// answerBodySlow is an answer's body (answerParts.body) through encoding/json,
// for records whose parts answerOf leaves to it.
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
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(content) != nil {
		return []byte{}
	}
	m["content"] = bytes.Clone(bytes.TrimRight(buf.Bytes(), "\n"))
	buf.Reset()
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
