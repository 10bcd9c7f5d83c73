package redact

import (
	"encoding/json"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
)

// Known holds private values found in the capture itself: session and
// account identifiers from headers and metadata.user_id, host names the
// client talked to other than the API's, the home directory, working
// directory and user name the system prompt mentions. The scrubber replaces
// them wherever they appear in a report's free text, even where no pattern
// would recognise them. The zero Known (or nil) holds nothing.
type Known struct {
	literals []literal
	seen     map[string]bool
	// scanned holds the prompt texts already searched: every turn sends
	// the same system prompt and first message again.
	scanned map[string]bool
}

// literal is one known private value.
type literal struct {
	value string
	class string
	// word: replace only as a whole word (user names).
	word bool
}

// Minimum lengths of known values: shorter ones are too likely to be
// ordinary words or numbers.
const (
	minLiteral = 6
	minWord    = 3
)

// add records a value.
func (k *Known) add(class, value string, word bool) {
	value = strings.TrimSpace(value)
	if len(value) < minLiteral && !(word && len(value) >= minWord) {
		return
	}
	if k.seen == nil {
		k.seen = map[string]bool{}
	}
	if k.seen[value] {
		return
	}
	k.seen[value] = true
	k.literals = append(k.literals, literal{value: value, class: class, word: word})
}

// safeRequestHeaders carry nothing private; every other request header's
// value is a known private value (session ids, credentials' fingerprints,
// gateway tokens, forwarded addresses).
var safeRequestHeaders = map[string]bool{
	"accept": true, "accept-encoding": true, "accept-language": true, "anthropic-beta": true,
	"anthropic-version": true, "anthropic-dangerous-direct-browser-access": true, "connection": true,
	"content-length": true, "content-type": true, "content-encoding": true, "host": true,
	"user-agent": true, "x-app": true, "te": true, "keep-alive": true, "transfer-encoding": true,
}

// privateResponseHeaders are the response headers whose values identify
// the account or the request.
func privateResponseHeader(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "organization") || strings.Contains(n, "request-id") ||
		strings.Contains(n, "cookie") || n == "cf-ray" || strings.Contains(n, "account")
}

// homeRe finds home directories and their user names.
var homeRe = regexp.MustCompile(`(?:/home/|/Users/|[A-Za-z]:\\Users\\|/var/home/)([^/\\\s"'<>:;,]+)`)

// Collect gathers the known private values of a capture's exchanges.
func Collect(exs []exchange.Exchange) *Known {
	ptrs := make([]*exchange.Exchange, len(exs))
	for i := range exs {
		ptrs[i] = &exs[i]
	}
	// Requests repeat their predecessors: decode each part once.
	cache := decode.NewParts()
	return CollectDecoded(ptrs, func(ex *exchange.Exchange) *decode.Turn { return decode.DecodeWith(ex, cache) })
}

// CollectDecoded is Collect for exchanges already decoded: decoded returns
// an exchange's decoded turn (it is asked only for Messages requests), so
// their bodies need not be at hand.
func CollectDecoded(exs []*exchange.Exchange, decoded func(ex *exchange.Exchange) *decode.Turn) *Known {
	k := &Known{}
	for _, ex := range exs {
		for _, h := range ex.ReqHeaders {
			n := strings.ToLower(h.Name)
			if safeRequestHeaders[n] || strings.HasPrefix(n, "x-stainless-") {
				continue
			}
			k.identifiers(h.Value)
		}
		for _, h := range ex.RespHeaders {
			if privateResponseHeader(h.Name) {
				k.identifiers(h.Value)
			}
		}
		k.host(ex.Host)
		if u, err := url.Parse(ex.URL); err == nil {
			k.host(u.Host)
		}
		if !strings.Contains(ex.URL, "/v1/messages") {
			continue
		}
		d := decoded(ex)
		if d == nil {
			continue
		}
		k.metadata(d.Request.Metadata)
		for _, s := range d.Request.System {
			k.prompt(s.Text)
		}
		// The environment Claude Code describes sits in the first user
		// message's reminders.
		if len(d.Request.Messages) > 0 {
			m := d.Request.Messages[0]
			k.prompt(m.Text)
			for _, b := range m.Blocks {
				k.prompt(b.Text)
				k.prompt(b.ResultText())
			}
		}
	}
	sort.SliceStable(k.literals, func(i, j int) bool { return len(k.literals[i].value) > len(k.literals[j].value) })
	return k
}

// host records a host name other than the API's (and its address).
func (k *Known) host(h string) {
	if h == "" {
		return
	}
	name := h
	if hn, _, err := net.SplitHostPort(h); err == nil {
		name = hn
	}
	if strings.EqualFold(name, apiHost) {
		return
	}
	k.add(classHost, h, false)
	k.add(classHost, name, false)
}

// metadata records the identifiers of metadata.user_id, which Claude Code
// sends as a JSON string holding device_id, account_uuid and session_id.
func (k *Known) metadata(raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	var md map[string]any
	if json.Unmarshal(raw, &md) != nil {
		return
	}
	for _, v := range md {
		s, ok := v.(string)
		if !ok {
			continue
		}
		var inner map[string]any
		if json.Unmarshal([]byte(s), &inner) == nil {
			for _, iv := range inner {
				if is, ok := iv.(string); ok {
					k.identifiers(is)
				}
			}
			continue
		}
		// The older form: user_<hash>_account_<uuid>_session_<uuid>.
		k.identifiers(s)
		for _, part := range strings.Split(s, "_") {
			k.identifiers(part)
		}
	}
}

// idTokenRe is a token that may be an identifier: no spaces or quotes.
var idTokenRe = regexp.MustCompile(`[A-Za-z0-9][A-Za-z0-9._:+/\-]{7,}`)

// identifiers records the identifier-like tokens of a header value or an
// id: eight characters or more, with a digit in them, not an MCP tool name
// (so that words and tool names are not taken for identifiers).
func (k *Known) identifiers(v string) {
	for _, tok := range idTokenRe.FindAllString(v, -1) {
		tok = strings.TrimRight(tok, ".:")
		if strings.ContainsAny(tok, "0123456789") && len(tok) >= 8 && !strings.Contains(tok, "__") {
			k.add(classID, tok, false)
		}
	}
}

// prompt records the user names of the home directories a prompt text
// mentions.
func (k *Known) prompt(text string) {
	if text == "" || k.scanned[text] {
		return
	}
	if k.scanned == nil {
		k.scanned = map[string]bool{}
	}
	k.scanned[text] = true
	// Paths themselves are found by their shape; the user name is worth
	// knowing on its own.
	for _, m := range homeRe.FindAllStringSubmatch(text, -1) {
		k.add(classUser, m[1], true)
	}
}
