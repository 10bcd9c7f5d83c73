package web

import (
	"net/http"
	"strings"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// withheld is said where a redacted page leaves out what was said.
const withheld = "Left out of a redacted view, as a report leaves it out: start tsinspect serve with --redact off to see it."

// redactor applies the server's redaction policy to what a page shows,
// as 'tsinspect report' redacts: under redact.Off nothing; otherwise every
// text a page shows goes through the report's scrubber (paths, e-mail
// addresses, secrets, the session's own identifiers become pseudonyms; a
// flag's detail loses its quotes as a report's does), and what was said
// (the conversation, the raw exchange, the text of a changed prompt
// prefix) is not shown at all. A redactor is not safe for concurrent use:
// its pseudonyms are numbered as they are first needed.
type redactor struct {
	policy redact.Policy
	v      *redact.Values
}

// newRedactor returns the redactor of policy p for session s (nil for a
// listing): the private values redaction looks for are s's own, and the
// strict policy numbers the MCP servers of s's tools.
func newRedactor(p redact.Policy, s *timeline.Session) *redactor {
	if p == redact.Off || p == "" {
		return &redactor{policy: redact.Off}
	}
	if s == nil {
		return &redactor{policy: p, v: redact.NewValues(p, nil, nil)}
	}
	var exs []*exchange.Exchange
	var queries []string
	for _, t := range s.Turns {
		if t.Exchange == nil || t.Decoded == nil {
			continue
		}
		exs = append(exs, t.Exchange)
		for _, q := range t.NewSearches {
			if q.Query != "" {
				queries = append(queries, q.Query)
			}
		}
	}
	v := redact.ValuesFor(p, exs, s)
	v.KeepQueries(queries)
	return &redactor{policy: p, v: v}
}

// on reports whether the redactor removes anything.
func (r *redactor) on() bool { return r.policy != redact.Off }

// text scrubs one text.
func (r *redactor) text(s string) string {
	if !r.on() {
		return s
	}
	return r.v.Text(s)
}

// all scrubs each of ts (a copy; ts is not changed).
func (r *redactor) all(ts []string) []string {
	if !r.on() {
		return ts
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = r.text(t)
	}
	return out
}

// model passes a model ID as a report does (redact.Values.Model).
func (r *redactor) model(m string) string {
	if !r.on() {
		return m
	}
	return r.v.Model(m)
}

// modelLine passes the model cell of a turn: each span's words as model
// IDs (a copy; l is not changed).
func (r *redactor) modelLine(l view.Line) view.Line {
	if !r.on() {
		return l
	}
	out := make(view.Line, len(l))
	for i, sp := range l {
		words := strings.Fields(sp.Text)
		for j, w := range words {
			words[j] = r.model(w)
		}
		text := strings.Join(words, " ")
		if len(words) > 0 {
			// The spaces around the words are the cell's.
			lead := sp.Text[:len(sp.Text)-len(strings.TrimLeft(sp.Text, " "))]
			trail := sp.Text[len(strings.TrimRight(sp.Text, " ")):]
			text = lead + text + trail
		}
		out[i] = view.Span{Text: text, Role: sp.Role}
	}
	return out
}

// modelPhrase redacts the phrases the listing says of models: "MODEL",
// "MODEL (fast mode)", "MODEL as NEIGHBOUR" (the neighbour is the price
// table's).
func (r *redactor) modelPhrase(s string) string {
	if !r.on() {
		return s
	}
	if m, ok := strings.CutSuffix(s, " (fast mode)"); ok {
		return r.model(m) + " (fast mode)"
	}
	if m, as, ok := strings.Cut(s, " as "); ok {
		return r.model(m) + " as " + r.text(as)
	}
	return r.model(s)
}

// lines scrubs the text of every span of ls (a copy; ls is not changed).
func (r *redactor) lines(ls []view.Line) []view.Line {
	if !r.on() {
		return ls
	}
	out := make([]view.Line, len(ls))
	for i, l := range ls {
		nl := make(view.Line, len(l))
		for j, sp := range l {
			nl[j] = view.Span{Text: r.v.Text(sp.Text), Role: sp.Role}
		}
		out[i] = nl
	}
	return out
}

// line scrubs one line.
func (r *redactor) line(l view.Line) view.Line {
	if !r.on() {
		return l
	}
	return r.lines([]view.Line{l})[0]
}

// flagged returns t with its flags' details scrubbed as a report's are
// (quotes replaced by their length): a copy, t is not changed.
func (r *redactor) flagged(t *timeline.Turn) *timeline.Turn {
	if !r.on() || len(t.Flags) == 0 {
		return t
	}
	c := *t
	c.Flags = make([]timeline.Flag, len(t.Flags))
	for i, f := range t.Flags {
		f.Detail = r.v.FreeText(f.Detail)
		c.Flags[i] = f
	}
	return &c
}

// scrub redacts a message the server says outside any session (an error
// naming a directory or a file) under the policy pages start with.
func (s *Server) scrub(msg string) string {
	return newRedactor(s.opts.Policy, nil).text(msg)
}

// scrubFor redacts such a message for the page r asked for.
func (s *Server) scrubFor(r *http.Request, msg string) string {
	return newRedactor(s.policyOf(r), nil).text(msg)
}
