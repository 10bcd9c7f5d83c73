package redact

import (
	"regexp"
	"strings"

	"github.com/tsinspect/tsinspect/advice"
)

// mcpServerRe finds the server of an MCP tool name in text, whole: letters,
// digits, '-', '.' and single '_' up to the "__" before the tool's name
// (or the end of the name); see serverOf for the dots and dashes that end
// a sentence.
var mcpServerRe = regexp.MustCompile(`mcp__([A-Za-z0-9](?:[A-Za-z0-9.\-]|_[A-Za-z0-9.\-])*)`)

// serverOf is the server a match of mcpServerRe names, without the dots
// and dashes after it that end a sentence or a phrase.
func serverOf(m string) string { return strings.TrimRight(m, ".-") }

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
	text := func(t string) string {
		if p == Strict {
			// "mcp__SERVER" alone (as a subject names a server) and in
			// tool names, each server whole.
			t = mcpServerRe.ReplaceAllStringFunc(t, func(m string) string {
				srv := serverOf(m[len("mcp__"):])
				return "mcp__" + s.addServer(srv) + m[len("mcp__")+len(srv):]
			})
		}
		return s.text(t)
	}
	if p == Strict {
		s.servers = map[string]string{}
		reg := func(t string) {
			for _, m := range mcpServerRe.FindAllStringSubmatch(t, -1) {
				s.addServer(serverOf(m[1]))
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
	// The tables of costs by tool and by server: their names as the
	// texts are (a server's name as mcp__NAME would be).
	out.Tools = make([]advice.ToolCost, len(r.Tools))
	for i, c := range r.Tools {
		c.Name = text(c.Name)
		out.Tools[i] = c
	}
	out.Servers = make([]advice.ToolCost, len(r.Servers))
	for i, c := range r.Servers {
		if c.Name != advice.OwnTools {
			c.Name = strings.TrimPrefix(text("mcp__"+c.Name), "mcp__")
		}
		out.Servers[i] = c
	}
	out.LeftOut = make([]advice.LeftOut, len(r.LeftOut))
	for i, l := range r.LeftOut {
		out.LeftOut[i] = advice.LeftOut{Kind: l.Kind, Subject: text(l.Subject), Sessions: l.Sessions, Reason: text(l.Reason)}
	}
	return &out
}
