package decode

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tsinspect/tsinspect/contentcoding"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/jsonvalid"
)

func decodeResponse(t *Turn, ex *exchange.Exchange) {
	r := &t.Response
	r.Status = ex.Status
	r.ContentType = ex.RespHeader("Content-Type")
	r.ContentEncoding = ex.RespHeader("Content-Encoding")
	r.RequestID = ex.RespHeader("request-id")
	cut := ex.State == exchange.StateInFlight || ex.State == exchange.StateClientAborted || ex.State == exchange.StateUpstreamFailed ||
		ex.State == exchange.StateInterrupted

	if ex.RespMade != nil {
		r.Size = ex.RespMade.Size
		decodeMadeAnswer(t, ex.RespMade)
		return
	}
	body := ex.Body()
	// Chunk offsets count the bytes of RespBody: they place events only
	// when the body is used as received.
	timed := ex.RespBodyDecoded == nil
	if ex.RespBodyDecoded == nil && len(ex.RespBody) > 0 && isEncoded(r.ContentEncoding) {
		dec, err := contentcoding.Decode(r.ContentEncoding, ex.RespBody)
		switch {
		case err == nil:
			body = dec
			timed = false
		case looksLikeText(ex.RespBody):
			// Recorded already decoded, whatever the header says.
		default:
			if cut {
				r.Incomplete = true
			}
			t.problem("response body: %v", err)
			return
		}
	}
	r.Size = len(body)
	if cut {
		r.Incomplete = true
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if ex.Status == 200 && strings.Contains(strings.ToLower(r.ContentType), "text/event-stream") {
			// A stream that never sent an event: it did not end with
			// message_stop, whatever the recorder said of the exchange.
			r.Streamed = true
			r.Incomplete = true
			return
		}
		if !cut && ex.Status == 200 && t.Request.Kind != KindOther {
			t.problem("response body is empty")
		}
		return
	}
	if isSSE(r.ContentType, body) {
		var chunks []exchange.Chunk
		if timed {
			chunks = ex.Chunks
		}
		decodeStream(t, body, chunks)
		if cut {
			r.Incomplete = true
		}
		return
	}
	decodeJSONBody(t, body, cut)
}

// looksLikeText reports whether a body starts like JSON or SSE.
func looksLikeText(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && (b[0] == '{' || b[0] == '[' || hasSSEPrefix(b))
}

func hasSSEPrefix(b []byte) bool {
	return bytes.HasPrefix(b, []byte("event:")) || bytes.HasPrefix(b, []byte("data:")) || bytes.HasPrefix(b, []byte(":"))
}

// isSSE reports whether a body is an event stream: it starts with an SSE
// field, or is declared text/event-stream and does not start like JSON.
func isSSE(contentType string, body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n\ufeff")
	if hasSSEPrefix(b) {
		return true
	}
	ct := strings.ToLower(contentType)
	return strings.Contains(ct, "text/event-stream") && len(b) > 0 && b[0] != '{'
}

// decodeJSONBody decodes a non-streamed body: a message, an error, or
// anything else (kept raw).
func decodeJSONBody(t *Turn, body []byte, cut bool) {
	r := &t.Response
	if err := validJSON(body); err != nil {
		if !cut { // a body that broke off is said by Incomplete
			t.problem("response body is not JSON: %v", err)
		}
		return
	}
	w, ok := parseObject(body)
	if !ok {
		r.Other = json.RawMessage(body)
		return
	}
	var typ string
	getString(t, w.get("type"), "response type", &typ)
	hasContent := w.get("content") != nil
	hasError := w.get("error") != nil
	switch {
	case typ == "error" || (typ == "" && hasError):
		r.Error = parseError(t, w.get("error"))
		getString(t, w.get("request_id"), "error request_id", &r.Error.RequestID)
	case typ == "message" || (typ == "" && hasContent):
		decodeMessageFields(t, w)
		var items [][]byte
		if raw := w.get("content"); !isNull(raw) {
			var ok bool
			if items, ok = parseArray(raw); !ok {
				t.problem("response content is not an array")
			}
		}
		decodeContentAndUsage(t, w, items)
	default:
		if raw := w.get("input_tokens"); raw != nil && t.Request.Kind == KindCountTokens {
			getInt(t, raw, "count_tokens input_tokens", &r.Usage.InputTokens)
		}
		r.Other = json.RawMessage(body)
	}
}

// decodeMadeAnswer decodes a message body handed as the parts it was made
// of (exchange.MadeAnswer): what decoding the body would give.
func decodeMadeAnswer(t *Turn, m *exchange.MadeAnswer) {
	w := make(object, 0, len(m.Members))
	for _, mm := range m.Members {
		if mm.Key != "content" {
			w = append(w, field{key: mm.Key, val: mm.Value})
		}
	}
	decodeMessageFields(t, w)
	decodeContentAndUsage(t, w, m.Content)
}

// decodeContentAndUsage sets a message body's content, from its elements,
// and its usage, from its members w.
func decodeContentAndUsage(t *Turn, w object, content [][]byte) {
	r := &t.Response
	for i, item := range content {
		r.Content = append(r.Content, parseBlock(t, item, "response block "+strconv.Itoa(i)))
	}
	if raw := w.get("usage"); !isNull(raw) {
		r.Usage = parseUsage(t, raw)
	}
}

// decodeMessageFields sets the message-level fields other than content and
// usage, from a message body or a message_start's message.
func decodeMessageFields(t *Turn, w object) {
	r := &t.Response
	getString(t, w.get("id"), "response id", &r.ID)
	getString(t, w.get("model"), "response model", &r.Model)
	getString(t, w.get("role"), "response role", &r.Role)
	setStop(t, w)
	if raw := w.get("diagnostics"); !isNull(raw) {
		setDiagnostics(t, raw)
	}
}

// setStop sets stop_reason, stop_sequence and stop_details from a message
// or a message_delta's delta, when they are not null.
func setStop(t *Turn, w object) {
	r := &t.Response
	getString(t, w.get("stop_reason"), "stop_reason", &r.StopReason)
	if raw := w.get("stop_sequence"); !isNull(raw) {
		var s string
		getString(t, raw, "stop_sequence", &s)
		r.StopSequence = &s
	}
	if raw := w.get("stop_details"); !isNull(raw) {
		r.StopDetails = raw
	}
}

func setDiagnostics(t *Turn, raw json.RawMessage) {
	r := &t.Response
	r.Diagnostics = raw
	d, ok := parseObject(raw)
	if !ok {
		t.problem("response diagnostics is not an object")
		return
	}
	cmr := d.get("cache_miss_reason")
	if isNull(cmr) {
		return
	}
	c, ok := parseObject(cmr)
	if !ok {
		t.problem("diagnostics cache_miss_reason is not an object")
		return
	}
	m := &CacheMissReason{Raw: cmr}
	getString(t, c.get("type"), "cache_miss_reason type", &m.Type)
	getInt(t, c.get("cache_missed_input_tokens"), "cache_missed_input_tokens", &m.CacheMissedInputTokens)
	r.CacheMissReason = m
}

// parseError decodes an error object; it never returns nil.
func parseError(t *Turn, raw json.RawMessage) *APIError {
	e := &APIError{}
	if isNull(raw) {
		return e
	}
	if s, ok := unquote(raw); ok {
		e.Message = s // some proxies send "error": "text"
		return e
	}
	w, ok := parseObject(raw)
	if !ok {
		t.problem("error is not an object")
		return e
	}
	getString(t, w.get("type"), "error type", &e.Type)
	getString(t, w.get("message"), "error message", &e.Message)
	return e
}

// parseUsage decodes a usage object.
func parseUsage(t *Turn, raw json.RawMessage) Usage {
	u := Usage{}
	var members [12]field
	w, ok := parseObjectInto(members[:0], raw, jsonvalid.ValueEnd)
	if !ok {
		t.problem("usage is not an object")
		return u
	}
	u.Raw = raw
	getInt(t, w.get("input_tokens"), "usage input_tokens", &u.InputTokens)
	getInt(t, w.get("output_tokens"), "usage output_tokens", &u.OutputTokens)
	getInt(t, w.get("cache_read_input_tokens"), "usage cache_read_input_tokens", &u.CacheReadInputTokens)
	getInt(t, w.get("cache_creation_input_tokens"), "usage cache_creation_input_tokens", &u.CacheCreationInputTokens)
	if cc := w.get("cache_creation"); !isNull(cc) {
		c, ok := parseObject(cc)
		if !ok {
			t.problem("usage cache_creation is not an object")
		} else {
			u.CacheCreation = &CacheCreation{}
			getInt(t, c.get("ephemeral_5m_input_tokens"), "usage ephemeral_5m_input_tokens", &u.CacheCreation.Ephemeral5m)
			getInt(t, c.get("ephemeral_1h_input_tokens"), "usage ephemeral_1h_input_tokens", &u.CacheCreation.Ephemeral1h)
		}
	}
	if v := w.get("server_tool_use"); !isNull(v) {
		u.ServerToolUse = v
		if st, ok := parseObject(v); ok {
			getInt(t, st.get("web_search_requests"), "usage web_search_requests", &u.WebSearchRequests)
		}
	}
	getString(t, w.get("speed"), "usage speed", &u.Speed)
	if v := w.get("iterations"); !isNull(v) {
		u.Iterations = v
	}
	// A negative count is no count: it would price as a refund.
	for _, f := range []struct {
		name string
		n    *int64
	}{{"input_tokens", &u.InputTokens}, {"output_tokens", &u.OutputTokens}, {"cache_read_input_tokens", &u.CacheReadInputTokens},
		{"cache_creation_input_tokens", &u.CacheCreationInputTokens}, {"web_search_requests", &u.WebSearchRequests}} {
		if *f.n < 0 {
			t.problem("usage %s is negative (%d): counted as 0", f.name, *f.n)
			*f.n = 0
		}
	}
	if cc := u.CacheCreation; cc != nil && (cc.Ephemeral5m < 0 || cc.Ephemeral1h < 0) {
		t.problem("usage cache_creation is negative: its split is left out")
		u.CacheCreation = nil
	}
	return u
}

// ParseUsage decodes a usage object as a response's is decoded: what
// could not be read is left 0 and said in problems, one line each.
func ParseUsage(raw json.RawMessage) (u Usage, problems []string) {
	t := &Turn{}
	u = parseUsage(t, raw)
	return u, t.Problems
}

// IsUsageProblem reports whether a turn's problem is about its usage (its
// token counts, and so its cost, are then not whole).
func IsUsageProblem(p string) bool { return strings.HasPrefix(p, "usage") }
