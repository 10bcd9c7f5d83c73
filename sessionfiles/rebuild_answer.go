package sessionfiles

import (
	"bytes"
	"encoding/json"
	"strings"
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
	eachMember(raw, skipSpace(raw, 0), func(key []byte, v int) int {
		e := valueEnd(raw, v)
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
