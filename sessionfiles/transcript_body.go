package sessionfiles

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/sharing"
)

// transcriptNote says what a made-up request lacks.
const transcriptNote = "made by tsinspect from Claude Code's transcript: the messages as the transcript holds them (deferred-tool announcements written as Claude Code sends them); the system prompt, the tools and the other parameters were not recorded"

// madeBody is the body of a request made from the transcript: its model,
// its messages, and the TranscriptMember.
func (s *Session) madeBody(q *request, buf []byte) []byte {
	body := bytes.NewBuffer(buf[:0])
	body.WriteString(`{"messages":[`)
	for i, mi := range q.msgs {
		if i > 0 {
			body.WriteByte(',')
		}
		body.Write(s.msgs[mi])
	}
	body.WriteString(`]`)
	s.madeTail(body, q.model(), s.madeMember(q))
	return body.Bytes()
}

// made is madeBody as the parts it is made of (exchange.Made): the
// messages as the session keeps them, each under its index; model is
// q.model().
func (s *Session) made(q *request, model string) *exchange.Made {
	m := &exchange.Made{Model: model, Member: s.parts.member(s, q), Messages: s.parts.of(q.msgs, s.msgs)}
	size := len(`{"messages":[]`) + max(len(q.msgs)-1, 0)
	for _, p := range m.Messages {
		size += len(p.JSON)
	}
	var tail bytes.Buffer
	s.madeTail(&tail, m.Model, m.Member)
	m.Size = size + tail.Len()
	return m
}

// madeTail writes what follows a made body's messages: its model and its
// TranscriptMember.
func (s *Session) madeTail(body *bytes.Buffer, model string, member []byte) {
	if model != "" {
		body.WriteString(`,"model":`)
		writeJSString(body, model)
	}
	body.WriteString(`,"` + exchange.TranscriptMember + `":`)
	body.Write(member)
	body.WriteByte('}')
}

// madeMember is a made body's TranscriptMember.
func (s *Session) madeMember(q *request) []byte {
	member := map[string]any{"note": transcriptNote, "catalog_recorded": s.tr.catalogSeen}
	if q.from != nil && len(q.from.restored) > 0 {
		restored := make([]any, len(q.from.restored))
		for i, n := range q.from.restored {
			restored[i] = n
		}
		member["loaded_before_compaction"] = restored
	}
	var b bytes.Buffer
	writeCanon(&b, member, false)
	return b.Bytes()
}

// model is the model that answered the request, or the one the answer
// before it in its conversation came from.
func (q *request) model() string { return q.modelWith(nil) }

// modelWith is model with the answer's parts already read (nil: not read).
func (q *request) modelWith(a *answerParts) string {
	if len(q.answer) > 0 {
		m, ok := "", false
		if a != nil {
			m, ok = a.model()
		}
		if !ok {
			m = messageModel(q.answer[len(q.answer)-1].Message)
		}
		if m != "" {
			return m
		}
	}
	if q.hint != "" {
		return q.hint
	}
	if q.rec != nil && len(q.rec.Params) > 0 {
		var p struct {
			Model string `json:"model"`
		}
		if json.Unmarshal(q.rec.Params, &p) == nil && p.Model != "" {
			return p.Model
		}
	}
	if q.from != nil && q.from.prev != nil && q.from.prev != q {
		return q.from.prev.model()
	}
	return ""
}

func messageModel(raw json.RawMessage) string {
	var m struct {
		Model string `json:"model"`
	}
	switch v, ok := member(raw, "model"); {
	case ok && v == nil:
	case ok && len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &m.Model) == nil:
	default:
		_ = json.Unmarshal(raw, &m)
	}
	if m.Model == syntheticModel {
		return ""
	}
	return m.Model
}

// syntheticError is what Claude Code's own error message says: the HTTP
// status and the API's error body when its text holds them ("API Error:
// 400 {...}"), else the text.
func syntheticError(r *record) (status int, body []byte, msg string) {
	var m struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(r.Message, &m)
	var parts []string
	for _, c := range m.Content {
		if c.Type == "text" && strings.TrimSpace(c.Text) != "" {
			parts = append(parts, strings.TrimSpace(c.Text))
		}
	}
	text := strings.Join(parts, " ")
	if rest, ok := strings.CutPrefix(text, "API Error: "); ok {
		code, tail, _ := strings.Cut(rest, " ")
		if n, err := strconv.Atoi(code); err == nil && n >= 400 && n < 600 {
			if tail = strings.TrimSpace(tail); json.Valid([]byte(tail)) {
				return n, []byte(tail), ""
			}
			b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": "api_error", "message": tail}})
			return n, b, ""
		}
	}
	if text == "" {
		text = "a request that failed"
	}
	return 0, nil, "Claude Code wrote: " + text + " (the files hold no answer from the API for this request)"
}

// madeParts are the parts (exchange.MadePart) of the recent arrays of
// requests' messages (Session.msgLists shares them): the requests of a
// conversation hand out one array of parts, as their lists of messages
// are one array, so that a reader may tell the parts two requests share
// by their place, and no request makes a list of its own.
type madeParts struct {
	lists sharing.Recent[*int32, *[]exchange.MadePart]
	// made is the last TranscriptMember made, for what it was made of:
	// the requests of a conversation share one.
	made struct {
		seen, ok bool
		restored []string
		body     []byte
	}
}

// member is s.madeMember(q), the last one made again when it is the same.
func (mp *madeParts) member(s *Session, q *request) []byte {
	var restored []string
	if q.from != nil {
		restored = q.from.restored
	}
	m := &mp.made
	if m.ok && m.seen == s.tr.catalogSeen && len(m.restored) == len(restored) && (len(restored) == 0 || &m.restored[0] == &restored[0]) {
		return m.body
	}
	m.ok, m.seen, m.restored, m.body = true, s.tr.catalogSeen, restored, s.madeMember(q)
	return m.body
}

// of returns the parts of msgs, an array Session.msgLists handed out (two
// lists that begin one array agree as far as the shorter goes).
func (mp *madeParts) of(msgs []int32, all [][]byte) []exchange.MadePart {
	if len(msgs) == 0 {
		return nil
	}
	parts := mp.lists.Get(&msgs[0], func() *[]exchange.MadePart { return new([]exchange.MadePart) })
	for i := len(*parts); i < len(msgs); i++ {
		*parts = append(*parts, exchange.MadePart{Key: int64(msgs[i]), JSON: all[msgs[i]]})
	}
	n := len(msgs)
	return (*parts)[:n:n]
}
