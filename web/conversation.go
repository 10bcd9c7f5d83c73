package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strings"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// foldLines is the length past which a part of a message starts folded.
const foldLines = 12

// conversationHTML writes the Conversation tab with each message and each
// part of it collapsible: what the turn's request added to its thread
// (every message of the request with all), then its response, as
// timeline.Session.Conversation gives them; q keeps the messages that hold
// it.
func conversationHTML(s *timeline.Session, t *timeline.Turn, q string, all bool) string {
	added, resp := s.Conversation(t, all)
	var b strings.Builder
	head := fmt.Sprintf("Conversation of #%d (%s): %s added %s, then the response", t.Index, t.Thread, numfmt.Count(len(added), "message", "messages"), since(t))
	if all {
		head = fmt.Sprintf("Conversation of #%d (%s): the request's %s, then the response", t.Index, t.Thread, numfmt.Count(len(added), "message", "messages"))
	}
	fmt.Fprintf(&b, `<p class="tabhead">%s</p>`, html.EscapeString(head))
	shown := 0
	for _, m := range append(added, resp) {
		if q != "" && !holds(m, q) {
			continue
		}
		shown++
		role := "user"
		if m.Role == "assistant" {
			role = "assistant"
		}
		fmt.Fprintf(&b, `<details class="msg %s" open><summary>%s <span class="dim">%s</span></summary>`, role, html.EscapeString(m.Role), numfmt.Count(len(m.Parts), "part", "parts"))
		if len(m.Parts) == 0 {
			b.WriteString(`<p class="dim">(empty)</p>`)
		}
		for _, p := range m.Parts {
			writePart(&b, p)
		}
		b.WriteString(`</details>`)
	}
	if shown == 0 {
		b.WriteString(`<p class="dim">Nothing to show.</p>`)
	}
	return b.String()
}

// since says what a turn's new messages are counted from.
func since(t *timeline.Turn) string {
	if t.Prev == 0 {
		return "as the first turn of " + t.Thread
	}
	return fmt.Sprintf("since #%d", t.Prev)
}

// holds reports whether a message holds q, case-insensitively.
func holds(m timeline.Said, q string) bool {
	q = strings.ToLower(q)
	for _, p := range m.Parts {
		if strings.Contains(strings.ToLower(p.Name+" "+p.Text), q) {
			return true
		}
	}
	return false
}

// writePart writes one part of a message, folded when long.
func writePart(b *strings.Builder, p timeline.Part) {
	text, class, title := p.Text, "text", p.Kind
	switch p.Kind {
	case "text":
		title = "text"
	case "thinking":
		class = "thinking"
	case "tool_use":
		class, title, text = "call", "→ call "+p.Name, indentJSON(p.Text)
	case "tool_result":
		class, title = "result", "← result"
		if p.Name != "" {
			title += " of " + p.Name
		}
		if p.IsError {
			class, title = "result error", title+" (error)"
		}
	default:
		if p.Name != "" {
			title += " " + p.Name
		}
	}
	lines := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	open := " open"
	if lines > foldLines {
		open = ""
	}
	fmt.Fprintf(b, `<details class="part %s"%s><summary>%s <span class="dim">%s</span></summary><pre>%s</pre></details>`,
		class, open, html.EscapeString(title), numfmt.Count(lines, "line", "lines"), html.EscapeString(text))
}

// indentJSON indents a tool's input for reading; other text is kept.
func indentJSON(s string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "  ") != nil {
		return s
	}
	return b.String()
}

// rawWidth is the width long strings of the Raw tab are cut to.
const rawWidth = 160

// rawHTML writes the Raw tab: the request and response as the terminal's
// foldable tree (view.Raw), the parts the query opens (open=PATH) or
// closes (close=PATH) set so, or every part open with expand=1. Each line
// that folds carries its path for the page to ask again.
func rawHTML(t *timeline.Turn, q url.Values) string {
	r := view.NewRaw()
	r.SetTurn(t)
	if q.Get("expand") == "1" {
		r.ExpandAll()
	}
	for _, p := range q["open"] {
		r.SetOpen(p, true)
	}
	for _, p := range q["close"] {
		r.SetOpen(p, false)
	}
	var b strings.Builder
	b.WriteString(`<div class="raw">`)
	for _, l := range r.Lines(rawWidth) {
		if l.Foldable {
			state := "closed"
			if l.Open {
				state = "open"
			}
			fmt.Fprintf(&b, `<div class="rl fold %s" data-path="%s">`, state, html.EscapeString(l.Path))
		} else {
			b.WriteString(`<div class="rl">`)
		}
		writeLine(&b, l.Text)
		b.WriteString("</div>")
	}
	b.WriteString(`</div>`)
	return b.String()
}
