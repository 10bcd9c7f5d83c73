// Package decode turns a recorded exchange into a Turn: the parsed Messages
// API request, the response rebuilt from its SSE events (or JSON body), the
// usage, and what tool search looked like from this request alone: the
// deferred-tool catalog, the working set of callable tools, the searches
// and their results, and the tool calls of the response.
//
// Everything here is a pure function of the exchange: no I/O, no state.
// Decode never panics; whatever is malformed becomes an entry of
// Turn.Problems and the rest is decoded as far as it goes.
//
// The json.RawMessage fields of a Turn (Raw, Input, Metadata, ...) are
// byte-exact slices of the exchange's bodies, sharing their memory: treat
// both as read-only. Blocks rebuilt from a stream are the exception: their
// Raw is written by the decoder.
package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tsinspect/tsinspect/contentcoding"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/jsonvalid"
	"github.com/tsinspect/tsinspect/internal/sharing"
)

// maxProblems bounds Turn.Problems, so that a hostile body cannot make the
// list grow with its size.
const maxProblems = 100

// Decode decodes one exchange. It always returns a Turn, never nil.
func Decode(ex *exchange.Exchange) (t *Turn) {
	return decode(ex, nil)
}

func decode(ex *exchange.Exchange, c *Parts) (t *Turn) {
	t = &Turn{DecoderVersion: Version, LastUser: LastUser{Message: -1}, cache: c}
	defer func() { t.cache, t.cached, t.body, t.layout, t.prior = nil, nil, nil, nil, prior{} }()
	if ex == nil {
		t.problem("no exchange")
		return t
	}
	defer func() {
		if r := recover(); r != nil {
			t.problem("internal error: %v", r)
		}
	}()
	t.ExchangeID = ex.ID
	decodeRequest(t, ex)
	decodeResponse(t, ex)
	analyze(t)
	return t
}

// DecodeRequest decodes a request body alone (as if POSTed to
// /v1/messages) and computes the catalog, working set and searches of its
// history. It is Decode without a response.
func DecodeRequest(body []byte) *Turn {
	return Decode(&exchange.Exchange{Method: "POST", URL: "/v1/messages", ReqBody: body})
}

func (t *Turn) problem(format string, args ...any) {
	if len(t.Problems) >= maxProblems {
		return
	}
	if len(t.Problems) == maxProblems-1 {
		t.Problems = append(t.Problems, "too many problems; the rest are not listed")
		return
	}
	t.Problems = append(t.Problems, fmt.Sprintf(format, args...))
}

// requestKind classifies a request by method and path. An exchange with no
// URL is taken for a Messages request.
func requestKind(method, path string) string {
	p := strings.TrimRight(path, "/")
	switch {
	case strings.HasSuffix(p, "/messages/count_tokens"):
		return KindCountTokens
	case strings.HasSuffix(p, "/v1/messages") || p == "/messages":
		if method == "" || strings.EqualFold(method, "POST") {
			return KindMessages
		}
	}
	return KindOther
}

// knownRequestField reports whether Request has a place for a top-level
// field; the others go to Request.Other.
func knownRequestField(k string) bool {
	switch k {
	case "model", "max_tokens", "stream", "system", "tools", "messages",
		"stop_sequences", "metadata", "diagnostics", "betas", "cache_control", exchange.TranscriptMember:
		return true
	}
	return false
}

func decodeRequest(t *Turn, ex *exchange.Exchange) {
	r := &t.Request
	r.Method = ex.Method
	r.Path = ex.URL
	if u, err := url.Parse(ex.URL); err == nil {
		r.Path = u.Path
	}
	r.Kind = requestKind(ex.Method, r.Path)
	if ex.URL == "" {
		r.Kind = KindMessages
	}
	for _, h := range ex.ReqHeaders {
		if strings.EqualFold(h.Name, "anthropic-beta") {
			r.Betas = append(r.Betas, splitList(h.Value)...)
		}
	}

	if ex.ReqMade != nil {
		decodeMade(t, ex.ReqMade)
		return
	}
	body := ex.ReqBody
	if ce := ex.ReqHeader("Content-Encoding"); isEncoded(ce) {
		dec, err := contentcoding.Decode(ce, body)
		if err != nil {
			t.problem("request body: %v", err)
			return
		}
		body = dec
	} else {
		t.startLayout(ex.ReqRef, body)
		defer t.endLayout()
	}
	r.Size = len(body)
	if len(bytes.TrimSpace(body)) == 0 {
		if r.Kind != KindOther {
			t.problem("request body is empty")
		}
		return
	}
	if err := t.validJSON(body); err != nil {
		if r.Kind != KindOther {
			t.problem("request body is not JSON: %v", err)
		}
		return
	}
	w, ok := parseObjectWith(body, t.topEnd)
	if !ok {
		if r.Kind != KindOther {
			t.problem("request body is not a JSON object")
		}
		return
	}

	getString(t, w.get("model"), "request model", &r.Model)
	getInt(t, w.get("max_tokens"), "request max_tokens", &r.MaxTokens)
	getBool(t, w.get("stream"), "request stream", &r.Stream)
	getStrings(t, w.get("stop_sequences"), "request stop_sequences", &r.StopSequences)
	getStrings(t, w.get("betas"), "request betas", &r.BodyBetas)
	if raw := w.get("metadata"); !isNull(raw) {
		r.Metadata = raw
	}
	if raw := w.get("diagnostics"); !isNull(raw) {
		r.Diagnostics = raw
	}
	if raw := w.get("cache_control"); !isNull(raw) {
		if cc := parseCacheControl(t, raw, "request cache_control"); cc != nil {
			r.CacheMarkers = append(r.CacheMarkers, CacheMarker{Where: "request", Index: -1, Block: -1, Type: cc.Type, TTL: cc.TTL})
		}
	}
	if raw := w.get(exchange.TranscriptMember); !isNull(raw) {
		tr := &Transcript{}
		if err := json.Unmarshal(raw, tr); err != nil {
			t.problem("request %s: %v", exchange.TranscriptMember, err)
		}
		r.Transcript = tr
	}
	for _, f := range w {
		if !knownRequestField(f.key) {
			if r.Other == nil {
				r.Other = map[string]json.RawMessage{}
			}
			r.Other[f.key] = f.val
		}
	}
	if t.cache != nil {
		// Decoding for a session: keep nothing that points into the body,
		// which the caller may then drop.
		r.Metadata, r.Diagnostics = bytes.Clone(r.Metadata), bytes.Clone(r.Diagnostics)
		for k, v := range r.Other {
			r.Other[k] = bytes.Clone(v)
		}
	}

	decodeTools(t, w.get("tools"))
	decodeSystem(t, w.get("system"))
	decodeMessages(t, w.get("messages"))
}

// validJSON returns the syntax error of a body that is not JSON.
func validJSON(b []byte) error {
	return (*Turn)(nil).validJSON(b)
}

// validJSON is validJSON, through the turn's cache when it has one.
func (t *Turn) validJSON(b []byte) error {
	var c *Parts
	if t != nil {
		c = t.cache
	}
	if t != nil && t.layout != nil {
		if c.validate(b, t.prior, t.layout) {
			return nil
		}
	} else if c.isJSON(b) {
		return nil
	}
	var v struct{}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return fmt.Errorf("invalid JSON")
}

func decodeTools(t *Turn, raw json.RawMessage) {
	if isNull(raw) {
		return
	}
	items, ok := parseArray(raw)
	if !ok {
		t.problem("request tools is not an array")
		return
	}
	r := &t.Request
	r.Tools = make([]Tool, 0, len(items))
	if t.cache != nil {
		defer func() { r.Tools = share(t.cache, &t.cache.tools, r.Tools, sameTool) }()
	}
	for i, item := range items {
		if p, ok := t.cache.get(partTool, item); ok {
			r.Tools = append(r.Tools, p.tool)
			if cc := p.tool.CacheControl; cc != nil {
				r.CacheMarkers = append(r.CacheMarkers, CacheMarker{Where: "tool", Index: i, Block: -1, Type: cc.Type, TTL: cc.TTL})
			}
			continue
		}
		problems := len(t.Problems)
		w, ok := parseObject(item)
		if !ok {
			t.problem("tool %d is not an object", i)
			r.Tools = append(r.Tools, Tool{Raw: t.own(item)})
			continue
		}
		tool := Tool{Raw: item}
		what := "tool " + strconv.Itoa(i)
		getString(t, w.get("name"), what+" name", &tool.Name)
		getString(t, w.get("type"), what+" type", &tool.Type)
		getBool(t, w.get("defer_loading"), what+" defer_loading", &tool.DeferLoading)
		tool.ServerSearch = isServerSearchType(tool.Type)
		tool.Placeholder = tool.Name == PlaceholderTool
		if cc := w.get("cache_control"); !isNull(cc) {
			tool.CacheControl = parseCacheControl(t, cc, what+" cache_control")
			if tool.CacheControl != nil {
				r.CacheMarkers = append(r.CacheMarkers, CacheMarker{Where: "tool", Index: i, Block: -1, Type: tool.CacheControl.Type, TTL: tool.CacheControl.TTL})
			}
		}
		tool.Raw = t.own(item)
		if t.cache != nil && len(t.Problems) == problems {
			t.cache.put(cachedPart{kind: partTool, raw: tool.Raw, tool: tool})
		}
		r.Tools = append(r.Tools, tool)
	}
}

// isServerSearchType reports whether a tool type is one of the server
// tool-search tools.
func isServerSearchType(typ string) bool {
	return strings.HasPrefix(typ, "tool_search_tool_regex") || strings.HasPrefix(typ, "tool_search_tool_bm25")
}

func decodeSystem(t *Turn, raw json.RawMessage) {
	if isNull(raw) {
		return
	}
	r := &t.Request
	if s, ok := unquote(raw); ok {
		r.SystemIsString = true
		r.System = []SystemBlock{{Type: "text", Text: s, Raw: t.own(raw)}}
		return
	}
	items, ok := parseArray(raw)
	if !ok {
		t.problem("request system is neither a string nor an array")
		return
	}
	for i, item := range items {
		if p, ok := t.cache.get(partSystem, item); ok {
			r.System = append(r.System, p.sys)
			if cc := p.sys.CacheControl; cc != nil {
				r.CacheMarkers = append(r.CacheMarkers, CacheMarker{Where: "system", Index: i, Block: -1, Type: cc.Type, TTL: cc.TTL})
			}
			continue
		}
		problems := len(t.Problems)
		b := parseBlock(t, item, "system block "+strconv.Itoa(i))
		sb := SystemBlock{Type: b.Type, Text: b.Text, CacheControl: b.CacheControl, Raw: t.own(item)}
		if t.cache != nil && len(t.Problems) == problems {
			t.cache.put(cachedPart{kind: partSystem, raw: sb.Raw, sys: sb})
		}
		r.System = append(r.System, sb)
		if b.CacheControl != nil {
			r.CacheMarkers = append(r.CacheMarkers, CacheMarker{Where: "system", Index: i, Block: -1, Type: b.CacheControl.Type, TTL: b.CacheControl.TTL})
		}
	}
}

func decodeMessages(t *Turn, raw json.RawMessage) {
	if isNull(raw) {
		if t.Request.Kind != KindOther {
			t.problem("request has no messages")
		}
		return
	}
	items, ok := parseArrayWith(raw, t.knownEnd)
	if !ok {
		t.problem("request messages is not an array")
		return
	}
	r := &t.Request
	r.Messages = make([]*Message, 0, len(items))
	if t.cache != nil {
		t.cached = make([]bool, len(items))
	}
	for i, item := range items {
		sp := t.messageSpan(item)
		var known *Message
		if sp != nil && sp.msg != nil {
			known = sp.msg // taken from the prior body's layout
			t.cache.tookMessage()
		} else if p, hit := t.cache.get(partMessage, item); hit {
			known = p.msg
		}
		if known != nil {
			t.cached[i] = true
			if sp != nil {
				sp.msg = known
			}
			for j, b := range known.Blocks {
				if cc := b.CacheControl; cc != nil {
					r.CacheMarkers = append(r.CacheMarkers, CacheMarker{Where: "message", Index: i, Block: j, Type: cc.Type, TTL: cc.TTL})
				}
			}
			r.Messages = append(r.Messages, known)
			continue
		}
		m, ok := decodeMessage(t, i, item)
		if t.cache != nil {
			own := bytes.Clone(item)
			for j := range m.Blocks {
				detachBlock(&m.Blocks[j], item, own)
			}
			if ok {
				t.cache.put(cachedPart{kind: partMessage, raw: own, msg: m})
				t.cached[i] = true
				if sp != nil {
					sp.msg = m
				}
			}
		}
		r.Messages = append(r.Messages, m)
	}
	// Each request repeats the history of the one before: the list of its
	// messages shares an array with the earlier lists it extends.
	if t.cache != nil {
		r.Messages = share(t.cache, &t.cache.messages, r.Messages, sharing.Equal[*Message])
	}
}

// decodeMade decodes a request body handed as the parts it was made of:
// what decoding the body would give, each message decoded once for every
// request that holds it (with Parts).
func decodeMade(t *Turn, made *exchange.Made) {
	r := &t.Request
	r.Size = made.Size
	r.Model = made.Model
	r.Transcript = t.cache.transcript(made.Member, func() (*Transcript, bool) {
		tr := &Transcript{}
		if err := json.Unmarshal(made.Member, tr); err != nil {
			t.problem("request %s: %v", exchange.TranscriptMember, err)
			return tr, false
		}
		return tr, true
	})
	if t.cache != nil {
		t.cached = make([]bool, len(made.Messages))
	}
	// What an earlier request began with too is taken whole.
	known, markers, extended := t.cache.madePrefix(made.Messages)
	r.CacheMarkers = append(r.CacheMarkers, markers...)
	fresh := make([]*Message, 0, len(made.Messages)-len(known))
	for i := range known {
		t.cached[i] = true
	}
	for i := len(known); i < len(made.Messages); i++ {
		p := made.Messages[i]
		if m, ok := t.cache.madePart(p); ok {
			t.cached[i] = true
			for j, b := range m.Blocks {
				if cc := b.CacheControl; cc != nil {
					r.CacheMarkers = append(r.CacheMarkers, CacheMarker{Where: "message", Index: i, Block: j, Type: cc.Type, TTL: cc.TTL})
				}
			}
			fresh = append(fresh, m)
			continue
		}
		m, ok := decodeMessage(t, i, p.JSON)
		if ok && t.cache != nil {
			t.cache.keepMadePart(p, m)
			t.cached[i] = true
		}
		fresh = append(fresh, m)
	}
	if t.cache == nil {
		r.Messages = append(known, fresh...)
	} else {
		// The list the earlier request's extends is its array's, the
		// new messages appended.
		t.cache.mu.Lock()
		r.Messages = t.cache.messages.Extend(known, fresh, sharing.Equal[*Message])
		t.cache.mu.Unlock()
		if !slices.Contains(t.cached, false) {
			t.cache.keepMadeList(&madeList{parts: made.Messages, msgs: r.Messages, markers: slices.Clip(r.CacheMarkers)}, extended)
		}
	}
}

// decodeMessage decodes message i of a request from item, its JSON; ok
// reports that it decoded without a problem (what may be cached). The
// message's parts point into item.
func decodeMessage(t *Turn, i int, item []byte) (m *Message, ok bool) {
	r := &t.Request
	problems := len(t.Problems)
	m = &Message{}
	var members [8]field
	w, isObject := parseObjectInto(members[:0], item, jsonvalid.ValueEnd)
	if !isObject {
		t.problem("message %d is not an object", i)
		return m, false
	}
	what := "message " + strconv.Itoa(i)
	getString(t, w.get("role"), what+" role", &m.Role)
	content := w.get("content")
	if text, ok := unquote(content); ok {
		m.Text, m.StringContent = text, true
		return m, len(t.Problems) == problems
	}
	switch blocks, ok := parseArray(content); {
	case isNull(content):
		t.problem("%s has no content", what)
	case !ok:
		t.problem("%s content is neither a string nor an array", what)
	default:
		m.Blocks = make([]Block, 0, len(blocks))
		for j, braw := range blocks {
			b := parseBlock(t, braw, what+" block "+strconv.Itoa(j))
			if b.CacheControl != nil {
				r.CacheMarkers = append(r.CacheMarkers, CacheMarker{Where: "message", Index: i, Block: j, Type: b.CacheControl.Type, TTL: b.CacheControl.TTL})
			}
			m.Blocks = append(m.Blocks, b)
		}
	}
	return m, len(t.Problems) == problems
}

// parseBlock decodes one content block. what names it in problems.
func parseBlock(t *Turn, raw json.RawMessage, what string) Block {
	b := Block{Raw: raw}
	var members [8]field
	w, ok := parseObjectInto(members[:0], raw, jsonvalid.ValueEnd)
	if !ok {
		t.problem("%s is not an object", what)
		return b
	}
	getString(t, w.get("type"), what+" type", &b.Type)
	if b.Type == "" {
		t.problem("%s has no type", what)
	}
	switch b.Type {
	case "text":
		getString(t, w.get("text"), what+" text", &b.Text)
	case "thinking":
		getString(t, w.get("thinking"), what+" thinking", &b.Thinking)
		getString(t, w.get("signature"), what+" signature", &b.Signature)
	case "tool_use", "server_tool_use", "mcp_tool_use":
		getString(t, w.get("id"), what+" id", &b.ID)
		getString(t, w.get("name"), what+" name", &b.Name)
		if in := w.get("input"); !isNull(in) {
			b.Input = in
		}
	case "tool_result":
		getString(t, w.get("tool_use_id"), what+" tool_use_id", &b.ToolUseID)
		getBool(t, w.get("is_error"), what+" is_error", &b.IsError)
		b.References = toolResultContent(t, w.get("content"), what)
	case "tool_search_tool_result":
		getString(t, w.get("tool_use_id"), what+" tool_use_id", &b.ToolUseID)
		b.References, b.ErrorCode = toolSearchResultContent(t, w.get("content"), what)
		b.IsError = b.ErrorCode != ""
	case "tool_reference":
		getString(t, w.get("tool_name"), what+" tool_name", &b.ToolName)
	case "tool_addition", "tool_removal":
		tool, ok := parseObject(w.get("tool"))
		if !ok {
			t.problem("%s has no tool object", what)
		} else {
			getString(t, tool.get("name"), what+" tool name", &b.ToolName)
		}
	default:
		// Result blocks of other server tools keep their tool_use_id.
		if id := w.get("tool_use_id"); !isNull(id) {
			getString(t, id, what+" tool_use_id", &b.ToolUseID)
		}
	}
	if cc := w.get("cache_control"); !isNull(cc) {
		b.CacheControl = parseCacheControl(t, cc, what+" cache_control")
	}
	return b
}

// toolResultContent checks a client tool_result's content (a string or
// an array of blocks) and returns the names of its tool_reference blocks.
// Its text is not kept: Block.ResultText reads it from the block when
// asked (a session's tool results, whole files and command outputs, would
// otherwise be held twice, here and in the bytes they came from).
func toolResultContent(t *Turn, raw json.RawMessage, what string) []string {
	if isNull(raw) {
		return nil
	}
	if isString(raw) {
		return nil
	}
	items, ok := parseArray(raw)
	if !ok {
		t.problem("%s content is neither a string nor an array of blocks", what)
		return nil
	}
	var refs []string
	for k, item := range items {
		it, ok := parseObject(item)
		if !ok {
			t.problem("%s content %d is not an object", what, k)
			continue
		}
		var typ string
		getString(t, it.get("type"), what+" content type", &typ)
		switch typ {
		case "text":
			if v := it.get("text"); !isNull(v) && !isString(v) {
				t.problem("%s content text is not a string", what)
			}
		case "tool_reference":
			var name string
			getString(t, it.get("tool_name"), what+" content tool_name", &name)
			if name == "" {
				t.problem("%s content %d: tool_reference without tool_name", what, k)
				continue
			}
			refs = append(refs, name)
		}
	}
	return refs
}

// resultText is the text of a client tool_result block raw, as
// toolResultContent reads its content: a string, or the text blocks of an
// array joined by newlines.
func resultText(raw json.RawMessage) string {
	w, ok := parseObject(raw)
	if !ok {
		return ""
	}
	content := w.get("content")
	if isNull(content) {
		return ""
	}
	if s, ok := unquote(bytes.TrimSpace(content)); ok {
		return s
	}
	items, ok := parseArray(content)
	if !ok {
		return ""
	}
	var texts []string
	for _, item := range items {
		it, ok := parseObject(item)
		if !ok {
			continue
		}
		typ, _ := unquote(bytes.TrimSpace(it.get("type")))
		if typ != "text" {
			continue
		}
		s, _ := unquote(bytes.TrimSpace(it.get("text")))
		texts = append(texts, s)
	}
	return strings.Join(texts, "\n")
}

// toolSearchResultContent returns the referenced tool names, or the error
// code, of a server tool_search_tool_result's content.
func toolSearchResultContent(t *Turn, raw json.RawMessage, what string) ([]string, string) {
	c, ok := parseObject(raw)
	if !ok {
		t.problem("%s content is not an object", what)
		return nil, ""
	}
	var code, typ string
	getString(t, c.get("error_code"), what+" error_code", &code)
	getString(t, c.get("type"), what+" content type", &typ)
	if code == "" && strings.HasSuffix(typ, "_error") {
		code = "unknown"
	}
	var refs []string
	if raw := c.get("tool_references"); !isNull(raw) {
		items, ok := parseArray(raw)
		if !ok {
			t.problem("%s tool_references is not an array", what)
		}
		for k, item := range items {
			r, ok := parseObject(item)
			if !ok {
				t.problem("%s reference %d is not an object", what, k)
				continue
			}
			var name string
			getString(t, r.get("tool_name"), what+" reference tool_name", &name)
			if name != "" {
				refs = append(refs, name)
			}
		}
	}
	return refs, code
}

func parseCacheControl(t *Turn, raw json.RawMessage, what string) *CacheControl {
	w, ok := parseObject(raw)
	if !ok {
		t.problem("%s is not an object", what)
		return nil
	}
	cc := &CacheControl{}
	getString(t, w.get("type"), what+" type", &cc.Type)
	getString(t, w.get("ttl"), what+" ttl", &cc.TTL)
	return cc
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// getString sets *dst from a JSON string; absent or null leaves it alone,
// anything else is a problem.
func getString(t *Turn, raw json.RawMessage, what string, dst *string) {
	if isNull(raw) {
		return
	}
	s, ok := unquote(bytes.TrimSpace(raw))
	if !ok {
		t.problem("%s is not a string", what)
		return
	}
	*dst = s
}

func getBool(t *Turn, raw json.RawMessage, what string, dst *bool) {
	if isNull(raw) {
		return
	}
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		t.problem("%s is not a boolean", what)
	}
}

// getInt sets *dst from a JSON integer (integral floats such as 1e3
// included).
func getInt(t *Turn, raw json.RawMessage, what string, dst *int64) {
	if isNull(raw) {
		return
	}
	n, ok := parseInt(raw)
	if !ok {
		t.problem("%s is not an integer", what)
		return
	}
	*dst = n
}

func getStrings(t *Turn, raw json.RawMessage, what string, dst *[]string) {
	if isNull(raw) {
		return
	}
	items, ok := parseArray(raw)
	if !ok {
		t.problem("%s is not an array of strings", what)
		return
	}
	out := make([]string, 0, len(items))
	for _, item := range items {
		s, ok := unquote(item)
		if !ok {
			t.problem("%s is not an array of strings", what)
			return
		}
		out = append(out, s)
	}
	*dst = out
}

// splitList splits a comma-separated header value, trimming blanks.
func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// isEncoded reports whether a Content-Encoding value names a coding.
func isEncoded(ce string) bool {
	for _, c := range strings.Split(ce, ",") {
		c = strings.ToLower(strings.TrimSpace(c))
		if c != "" && c != "identity" {
			return true
		}
	}
	return false
}

// Bill is what a Messages exchange costs to look at as it is recorded:
// the request's model and the response's usage, decoded without the rest
// of the request (whose history a long session makes large).
type Bill struct {
	Model string
	// Messages is set for a POST /v1/messages (not count_tokens).
	Messages bool
	Response Response
}

// DecodeBill reads the model of ex's request and decodes its response.
func DecodeBill(ex *exchange.Exchange) (b Bill) {
	t := &Turn{DecoderVersion: Version, LastUser: LastUser{Message: -1}}
	defer func() {
		if recover() != nil {
			b = Bill{}
		}
	}()
	if ex == nil {
		return Bill{}
	}
	path := ex.URL
	if u, err := url.Parse(ex.URL); err == nil {
		path = u.Path
	}
	t.Request.Kind = requestKind(ex.Method, path)
	if ex.URL == "" {
		t.Request.Kind = KindMessages
	}
	if t.Request.Kind != KindMessages {
		return Bill{}
	}
	if o, ok := parseObject(ex.ReqBody); ok {
		getString(t, o.get("model"), "model", &t.Request.Model)
	}
	decodeResponse(t, ex)
	return Bill{Model: t.Request.Model, Messages: t.Request.Kind == KindMessages, Response: t.Response}
}
