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

// CompareVersions orders dotted release numbers ("2.1.328") numerically:
// -1, 0 or 1 as a is before, the same as or after b. Each part counts by
// its leading digits ("328-beta" as 328; none as 0).
func CompareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x = leadingInt(pa[i])
		}
		if i < len(pb) {
			y = leadingInt(pb[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// leadingInt is the number s starts with, 0 when it starts with none.
func leadingInt(s string) int {
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}
