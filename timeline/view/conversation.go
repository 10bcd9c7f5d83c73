package view

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/timeline"
)

// maxPartLines bounds the lines a part shows (a tool result of thousands
// of lines); the rest is counted. Raw holds everything.
const maxPartLines = 40

// Conversation shows the selected turn as a conversation: what its request
// added to its thread (the prompt, tool results and reminders since the
// previous turn), then its response: text, thinking, and each tool call
// with its input; with all, every message of the request instead of the
// new ones. q keeps the messages holding it.
func Conversation(s *timeline.Session, t *timeline.Turn, q string, all bool) []Line {
	var d doc
	l := heading(&d, t, "Conversation", q)
	added, resp := s.Conversation(t, all)
	if all {
		l.addf(RoleText, ": the request's %s, then the response", numfmt.Count(len(added), "message", "messages"))
		l.add(RoleDim, "  (a: only what this turn added)")
	} else {
		l.addf(RoleText, ": %s added %s, then the response", numfmt.Count(len(added), "message", "messages"), since(t))
		l.add(RoleDim, "  (a: the whole history)")
	}
	shown := 0
	for _, m := range added {
		if said(&d, m, q) {
			shown++
		}
	}
	if said(&d, resp, q) {
		shown++
	}
	if shown == 0 {
		d.blank()
		d.text(RoleDim, "  nothing to show")
	}
	return d.lines
}

// said writes one message, unless q is set and it does not hold q; it
// reports whether it wrote it.
func said(d *doc, m timeline.Said, q string) bool {
	if q != "" {
		hit := false
		for _, p := range m.Parts {
			hit = hit || matches(p.Name+" "+p.Text, q)
		}
		if !hit {
			return false
		}
	}
	d.blank()
	role := RoleKey
	if m.Role == "assistant" {
		role = RoleSearch
	}
	d.line().add(role, "── "+m.Role+" ──")
	if len(m.Parts) == 0 {
		d.text(RoleDim, "  (empty)")
	}
	for _, p := range m.Parts {
		part(d, p)
	}
	return true
}

// part writes one part of a message, indented.
func part(d *doc, p timeline.Part) {
	switch p.Kind {
	case "text":
		body(d, RoleText, p.Text)
	case "thinking":
		d.line().add(RoleDim, "  thinking:")
		body(d, RoleDim, p.Text)
	case "tool_use":
		l := d.line()
		l.add(RoleAdded, "  → call ")
		l.add(RoleTitle, p.Name)
		body(d, RoleString, indentJSON(p.Text))
	case "tool_result":
		l := d.line()
		l.add(RoleKey, "  ← result")
		if p.Name != "" {
			l.add(RoleKey, " of "+p.Name)
		}
		role := RoleText
		if p.IsError {
			l.add(RoleError, " (error)")
			role = RoleError
		}
		body(d, role, p.Text)
	default:
		l := d.line()
		l.add(RoleDim, "  "+p.Kind)
		if p.Name != "" {
			l.add(RoleDim, " "+p.Name)
		}
		body(d, RoleDim, p.Text)
	}
}

// body writes text indented, at most maxPartLines lines of it.
func body(d *doc, role Role, text string) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, ln := range lines {
		if i == maxPartLines {
			d.line().addf(RoleDim, "    … %s more (the Raw tab has it all)", numfmt.Count(len(lines)-i, "line", "lines"))
			return
		}
		d.line().add(role, "    "+ln)
	}
}

// indentJSON indents a tool input for reading; other text is kept.
func indentJSON(s string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "  ") != nil {
		return s
	}
	return b.String()
}
