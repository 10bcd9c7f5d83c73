package timeline

import (
	"regexp"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
)

// Client families (Client.Family).
const (
	// ClientClaudeCode is Claude Code: its billing-header system block, or
	// a claude-cli User-Agent. Claude Code's own rules (side queries,
	// compaction, ToolSearch, tool_search_off) apply to it only.
	ClientClaudeCode = "claude-code"
	// ClientSDK is an application on one of Anthropic's official SDKs,
	// known by their User-Agent (Anthropic/JS, Anthropic/Python, ...) or
	// x-stainless-* headers.
	ClientSDK = "sdk"
	// ClientOther is any other client, known by its User-Agent, or
	// nothing at all.
	ClientOther = "other"
)

// Client is the program that sent a request, as far as the request tells.
type Client struct {
	Family  string `json:"family"`            // ClientClaudeCode, ClientSDK or ClientOther
	Name    string `json:"name"`              // "Claude Code", "Anthropic TypeScript SDK", a User-Agent product, or "unknown"
	Version string `json:"version,omitempty"` // as the client says, "" when it does not
}

// String is the client's name and version: "Claude Code 2.1.328".
func (c Client) String() string {
	name := c.Name
	if name == "" {
		name = "unknown"
	}
	if c.Version == "" {
		return name
	}
	return name + " " + c.Version
}

// ClaudeCode reports whether the client is Claude Code.
func (c Client) ClaudeCode() bool { return c.Family == ClientClaudeCode }

// known reports whether anything identified the client.
func (c Client) known() bool { return c.Family != "" }

// ccVersion finds the version in Claude Code's billing header:
// "cc_version=2.1.328.b1f" (the last part is a hash, not a version).
var ccVersion = regexp.MustCompile(`cc_version=(\d+(?:\.\d+)*)`)

// sdkLang names an official SDK by its x-stainless-lang or User-Agent
// language.
func sdkLang(lang string) string {
	switch lang {
	case "js", "typescript", "node":
		return "TypeScript"
	case "python":
		return "Python"
	case "go":
		return "Go"
	case "java", "kotlin":
		return "Java"
	case "ruby":
		return "Ruby"
	case "php":
		return "PHP"
	case "csharp", "c#", "dotnet":
		return "C#"
	}
	return lang
}

// detectClient says which client sent an exchange, from its User-Agent,
// its x-stainless-* headers and Claude Code's billing-header system
// block. Family is "" when nothing tells.
func detectClient(ex *exchange.Exchange, r *decode.Request) Client {
	ua := strings.TrimSpace(ex.ReqHeader("User-Agent"))
	product, version := uaProduct(ua)
	if strings.EqualFold(product, "claude-cli") {
		return Client{Family: ClientClaudeCode, Name: "Claude Code", Version: version}
	}
	for _, b := range r.System {
		if isBillingBlock(b) {
			c := Client{Family: ClientClaudeCode, Name: "Claude Code"}
			if m := ccVersion.FindStringSubmatch(b.Text); m != nil {
				c.Version = trimVersion(m[1])
			}
			return c
		}
	}
	lang := strings.ToLower(ex.ReqHeader("X-Stainless-Lang"))
	if strings.EqualFold(product, "anthropic") || strings.HasPrefix(strings.ToLower(ua), "anthropic/") {
		// "Anthropic/Python 0.40.0", "Anthropic/JS 0.52.0", "Anthropic/Go 1.16.0"
		rest := strings.TrimSpace(ua[len("anthropic/"):])
		l, v, _ := strings.Cut(rest, " ")
		if lang == "" {
			lang = strings.ToLower(l)
		}
		if version == "" || version == l {
			version = strings.TrimSpace(v)
		}
		return sdkClient(lang, firstNonEmpty(ex.ReqHeader("X-Stainless-Package-Version"), version))
	}
	if lang != "" {
		return sdkClient(lang, ex.ReqHeader("X-Stainless-Package-Version"))
	}
	if product != "" {
		return Client{Family: ClientOther, Name: product, Version: version}
	}
	return Client{}
}

func sdkClient(lang, version string) Client {
	return Client{Family: ClientSDK, Name: "Anthropic " + sdkLang(lang) + " SDK", Version: strings.TrimSpace(version)}
}

// uaProduct splits the first product of a User-Agent: "claude-cli/2.1.328
// (external, cli)" is "claude-cli" and "2.1.328".
func uaProduct(ua string) (product, version string) {
	first, _, _ := strings.Cut(ua, " ")
	product, version, _ = strings.Cut(first, "/")
	return product, version
}

// trimVersion keeps the first three dotted parts of a version.
func trimVersion(v string) string {
	parts := strings.Split(v, ".")
	if len(parts) > 3 {
		parts = parts[:3]
	}
	return strings.Join(parts, ".")
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return strings.TrimSpace(x)
		}
	}
	return ""
}

// resolveClients gives every turn that nothing identified the client of
// the nearest earlier identified turn (else the first identified one): a
// capture whose headers were stripped still has Claude Code's billing
// header on most requests.
func resolveClients(infos []*info) {
	var first *Client
	for _, in := range infos {
		if in.client.known() {
			c := in.client
			first = &c
			break
		}
	}
	if first == nil {
		for _, in := range infos {
			in.client = Client{Family: ClientOther, Name: "unknown"}
		}
		return
	}
	last := *first
	for _, in := range infos {
		if in.client.known() {
			last = in.client
			continue
		}
		in.client = last
	}
}
