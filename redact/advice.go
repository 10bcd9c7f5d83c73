package redact

import (
	"regexp"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/advice"
)

// mcpServerRe finds the server of an MCP tool name in text.
var mcpServerRe = regexp.MustCompile(`mcp__([A-Za-z0-9_.\-]+?)(?:__|\b)`)

// Advice makes advice across sessions fit to share under policy p. The
// advice is made of fixed phrases, tool names, search queries and figures;
// what could be private is the sessions' IDs (replaced by pseudonyms),
// their projects (left out: a project is a working directory's path), and
// anything a query or a tool name carries (every text goes through the
// scrubber: paths, e-mail addresses, secrets, UUIDs; under Strict, MCP
// server names too). Off returns r as it is.
func Advice(r *advice.Result, p Policy) *advice.Result {
	if p == Off || r == nil {
		return r
	}
	s := newScrubber(nil)
	var bare *regexp.Regexp // strict: "mcp__SERVER" alone, as a subject names a server
	text := func(t string) string {
		if bare != nil {
			t = bare.ReplaceAllStringFunc(t, func(m string) string {
				sm := bare.FindStringSubmatch(m)
				return "mcp__" + s.addServer(sm[1]) + sm[2]
			})
		}
		return s.text(t)
	}
	if p == Strict {
		s.servers = map[string]string{}
		reg := func(t string) {
			for _, m := range mcpServerRe.FindAllStringSubmatch(t, -1) {
				s.addServer(m[1])
			}
		}
		for _, a := range r.Advice {
			for _, t := range append([]string{a.Subject, a.Title, a.Why, a.Do}, a.Figures...) {
				reg(t)
			}
		}
		for _, l := range r.LeftOut {
			reg(l.Subject)
		}
		if len(s.servers) > 0 {
			var names []string
			for n := range s.servers {
				names = append(names, regexp.QuoteMeta(n))
			}
			sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
			bare = regexp.MustCompile(`mcp__(` + strings.Join(names, "|") + `)($|[^A-Za-z0-9_])`)
		}
	}
	out := *r
	out.Notes = make([]string, len(r.Notes))
	for i, n := range r.Notes {
		out.Notes[i] = text(n)
	}
	out.Advice = make([]advice.Advice, len(r.Advice))
	for i, a := range r.Advice {
		b := a
		b.Subject, b.Title, b.Why, b.Do, b.Assumes = text(a.Subject), text(a.Title), text(a.Why), text(a.Do), text(a.Assumes)
		b.Figures = make([]string, len(a.Figures))
		for j, f := range a.Figures {
			b.Figures[j] = text(f)
		}
		b.Evidence = make([]advice.Evidence, len(a.Evidence))
		for j, e := range a.Evidence {
			id := s.pseudonym("session", e.Session)
			b.Evidence[j] = advice.Evidence{Session: id, Open: id, Turns: e.Turns, Note: text(e.Note), USD: e.USD}
		}
		out.Advice[i] = b
	}
	out.LeftOut = make([]advice.LeftOut, len(r.LeftOut))
	for i, l := range r.LeftOut {
		out.LeftOut[i] = advice.LeftOut{Kind: l.Kind, Subject: text(l.Subject), Sessions: l.Sessions, Reason: text(l.Reason)}
	}
	return &out
}
