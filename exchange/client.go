package exchange

import "strings"

// ClientVersion returns the Claude Code version named in the exchange's
// User-Agent ("claude-cli/2.1.328 (external, cli)" gives "2.1.328"), or ""
// when the request came from another client.
func (e *Exchange) ClientVersion() string {
	ua := e.ReqHeader("User-Agent")
	rest, ok := strings.CutPrefix(ua, "claude-cli/")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, " ")
	return v
}
