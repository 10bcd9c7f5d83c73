package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
)

// Exchanges redacts whole exchanges for an export (a HAR): the same
// allow-list as reports, applied to the bodies. What a Messages request
// or answer says about tool search stays, so that the export still decodes
// to the same turns: every JSON object's keys, numbers and booleans, the
// block and message types, roles, models, stop reasons, IDs, tool names
// (under Strict with their MCP server pseudonymised) and ToolSearch
// queries and stop sequences (scrubbed as in reports). Every other string
// (message text, thinking, tool inputs and results, the system prompt,
// tool descriptions, images, metadata) becomes "[N bytes removed]". A
// body that is not JSON or an event stream of JSON is removed whole.
// Header values other than a few known-safe ones, the URL's query and
// error texts go through the scrubber. One Exchanges gives one value the
// same pseudonym throughout an export.
type Exchanges struct {
	a *applier
}

// NewExchanges redacts exchanges under p, which must not be Off.
func NewExchanges(p Policy) *Exchanges {
	a := &applier{s: newScrubber(nil), strict: p == Strict, toolMemo: map[string]string{}}
	if a.strict {
		a.s.servers = map[string]string{}
	}
	return &Exchanges{a: a}
}

// Exchange returns a redacted copy of ex. Its response body is the decoded
// one (Content-Encoding dropped) and arrives as one chunk at the time the
// first arrived: the bodies' lengths changed.
func (r *Exchanges) Exchange(ex *exchange.Exchange) *exchange.Exchange {
	out := *ex
	out.ReqRef = exchange.BodyRef{}
	out.URL = r.url(ex.URL)
	out.Error = r.a.s.text(ex.Error)
	out.ReqHeaders = r.headers(ex.ReqHeaders)
	out.RespHeaders = r.headers(withoutEncoding(ex.RespHeaders, ex.RespBodyDecoded != nil))
	out.ReqBody = r.body(ex.ReqBody)
	out.RespBody = r.body(ex.Body())
	out.RespBodyDecoded = nil
	out.Chunks = nil
	if len(out.RespBody) > 0 && len(ex.Chunks) > 0 {
		out.Chunks = []exchange.Chunk{{Offset: 0, Size: len(out.RespBody), At: ex.Chunks[0].At}}
	}
	return &out
}

// safeHeaders are the headers whose values say nothing private: kept as
// they are. Credentials are fingerprints already (the capture keeps no
// more); the rest is scrubbed.
var safeHeaders = map[string]bool{
	"content-type": true, "content-length": true, "anthropic-version": true, "anthropic-beta": true,
	"accept": true, "accept-encoding": true, "content-encoding": true, "transfer-encoding": true,
	"cache-control": true, "connection": true, "date": true, "x-stainless-lang": true,
	"x-stainless-os": true, "x-stainless-arch": true, "x-stainless-runtime": true,
	"x-stainless-runtime-version": true, "x-stainless-package-version": true, "x-stainless-retry-count": true,
	"x-stainless-timeout": true, "x-app": true, "x-claude-code-query-source": true,
}

func (r *Exchanges) headers(hs []exchange.Header) []exchange.Header {
	if hs == nil {
		return nil
	}
	out := make([]exchange.Header, 0, len(hs))
	for _, h := range hs {
		switch name := strings.ToLower(h.Name); {
		case safeHeaders[name], exchange.IsCredential(h.Name):
		case strings.HasPrefix(name, "anthropic-ratelimit-"):
		default:
			h.Value = r.a.s.text(h.Value)
		}
		out = append(out, h)
	}
	return out
}

// withoutEncoding drops the Content-Encoding header of a response whose
// body is given decoded.
func withoutEncoding(hs []exchange.Header, decoded bool) []exchange.Header {
	if !decoded {
		return hs
	}
	var out []exchange.Header
	for _, h := range hs {
		if !strings.EqualFold(h.Name, "Content-Encoding") {
			out = append(out, h)
		}
	}
	return out
}

// url keeps the API's URLs and scrubs any other, and any query.
func (r *Exchanges) url(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return r.a.s.text(raw)
	}
	if u.RawQuery != "" && u.RawQuery != "beta=true" {
		u.RawQuery = url.PathEscape(r.a.s.text(u.RawQuery))
	}
	if u.Host != apiHost {
		return r.a.s.text(u.String())
	}
	return u.String()
}

// body redacts a JSON body, or each JSON event of an event stream.
func (r *Exchanges) body(b []byte) []byte {
	if len(bytes.TrimSpace(b)) == 0 {
		return b
	}
	var v any
	if err := json.Unmarshal(b, &v); err == nil {
		return r.marshal(r.value(v, "", false))
	}
	if bytes.Contains(b, []byte("data:")) {
		return r.events(b)
	}
	return []byte(removed(len(b)))
}

// events redacts an event stream: each data line that holds JSON is
// redacted, event and blank lines stay, any other line is removed.
func (r *Exchanges) events(b []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		body := bytes.TrimRight(line, "\r\n")
		end := line[len(body):]
		switch {
		case len(body) == 0, bytes.HasPrefix(body, []byte("event:")), bytes.HasPrefix(body, []byte(":")) && len(body) == 1:
			out.Write(line)
		case bytes.HasPrefix(body, []byte("data:")):
			var v any
			if err := json.Unmarshal(bytes.TrimSpace(body[5:]), &v); err != nil {
				fmt.Fprintf(&out, "data: %q%s", removed(len(body)-5), end)
				continue
			}
			out.WriteString("data: ")
			out.Write(r.marshal(r.value(v, "", false)))
			out.Write(end)
		default:
			fmt.Fprintf(&out, ": %s%s", removed(len(body)), end)
		}
	}
	return out.Bytes()
}

func (r *Exchanges) marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return []byte(`"` + removed(0) + `"`)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// removed is what stands for a string of n bytes taken out.
func removed(n int) string { return fmt.Sprintf("[%d bytes removed]", n) }

// keptKeys are the keys whose string values stay (after a check of their
// shape): they name things rather than say them.
var keptKeys = map[string]bool{
	"type": true, "role": true, "model": true, "stop_reason": true, "id": true, "tool_use_id": true,
	"media_type": true, "ttl": true, "event": true, "service_tier": true, "scope": true,
}

// toolKeys hold tool names.
var toolKeys = map[string]bool{"name": true, "tool_name": true}

// value redacts one JSON value under key (of its parent object). Within a
// tool's input (data) nothing is kept but a ToolSearch query.
func (r *Exchanges) value(v any, key string, data bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		name, _ := x["name"].(string)
		for k, c := range x {
			switch {
			case data:
				out[k] = r.value(c, k, true)
			case k == "input" && (name == "ToolSearch" || strings.HasSuffix(name, "tool_search_tool_regex") || strings.HasSuffix(name, "tool_search_tool_bm25")):
				out[k] = r.search(c)
			case k == "input", k == "metadata":
				out[k] = r.value(c, k, true)
			default:
				out[k] = r.value(c, k, false)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = r.value(c, key, data)
		}
		return out
	case string:
		switch {
		case x == "":
			return x
		case data:
		case keptKeys[key] && idish(x):
			return x
		case toolKeys[key]:
			return r.a.tool(x)
		case key == "stop_sequence":
			return r.a.s.text(x)
		case key == "text" || key == "content":
			if kept := r.catalog(x); kept != "" {
				return kept
			}
		}
		return removed(len(x))
	}
	return v
}

// search keeps a tool search's query, scrubbed, and removes the rest.
func (r *Exchanges) search(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return r.value(v, "input", true)
	}
	out := make(map[string]any, len(m))
	for k, c := range m {
		if q, ok := c.(string); ok && (k == "query" || k == "pattern") {
			out[k] = r.a.s.serverText(r.a.s.text(q))
			continue
		}
		out[k] = r.value(c, k, k != "max_results" && k != "limit")
	}
	return out
}

// idish reports whether s reads as a name or an identifier, not as text.
func idish(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-.:@", c)) {
			return false
		}
	}
	return true
}

// catalog keeps, of a message text, the deferred-tool announcements the
// catalog is read from (Claude Code's fixed header lines and the tool
// names, under Strict with their servers pseudonymised) and says how much
// else was removed; "" for a text without any.
func (r *Exchanges) catalog(text string) string {
	parts := decode.CatalogTexts(text)
	if len(parts) == 0 {
		return ""
	}
	var b strings.Builder
	kept := 0
	for _, p := range parts {
		kept += len(p)
		for i, line := range strings.Split(p, "\n") {
			if i > 0 {
				b.WriteByte('\n')
			}
			switch name := strings.TrimSpace(line); {
			case name == "<available-deferred-tools>" || name == "</available-deferred-tools>":
				b.WriteString(line)
			case name != "" && toolNameRe.MatchString(name):
				b.WriteString(strings.Replace(line, name, r.a.tool(name), 1))
			default:
				b.WriteString(r.a.s.serverText(r.a.s.text(line)))
			}
		}
		b.WriteByte('\n')
	}
	b.WriteString(removed(len(text) - kept))
	return b.String()
}
