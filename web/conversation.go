package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// foldLines is the length past which a part of a message starts folded.
const foldLines = 12

// conversationView is the Conversation tab with each message and each
// part of it collapsible, for the "conversation" fragment.
type conversationView struct {
	Head     string
	Messages []messageView
}

type messageView struct {
	Role, Class, Count string
	Parts              []partView
}

type partView struct {
	Class, Title, Count, Text string
	Open                      bool
}

// conversationOf is the Conversation tab: what the turn's request added
// to its thread (every message of the request with all), then its
// response, as timeline.Session.Conversation gives them; q keeps the
// messages that hold it.
func conversationOf(s *timeline.Session, t *timeline.Turn, q string, all bool) conversationView {
	added, resp := s.Conversation(t, all)
	v := conversationView{Head: fmt.Sprintf("Conversation of #%d (%s): %s added %s, then the response", t.Index, t.Thread, numfmt.Count(len(added), "message", "messages"), since(t))}
	if all {
		v.Head = fmt.Sprintf("Conversation of #%d (%s): the request's %s, then the response", t.Index, t.Thread, numfmt.Count(len(added), "message", "messages"))
	}
	for _, m := range append(added, resp) {
		if q != "" && !holds(m, q) {
			continue
		}
		mv := messageView{Role: m.Role, Class: "user", Count: numfmt.Count(len(m.Parts), "part", "parts")}
		if m.Role == "assistant" {
			mv.Class = "assistant"
		}
		for _, p := range m.Parts {
			mv.Parts = append(mv.Parts, partOf(p))
		}
		v.Messages = append(v.Messages, mv)
	}
	return v
}

// since says what a turn's new messages are counted from.
func since(t *timeline.Turn) string {
	switch {
	case t.Link == timeline.LinkRestart:
		return "as the first turn since " + t.Thread + "'s conversation started again"
	case t.Prev == 0:
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

// partOf is one part of a message, folded when long.
func partOf(p timeline.Part) partView {
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
	return partView{Class: class, Title: title, Count: numfmt.Count(lines, "line", "lines"), Text: text, Open: lines <= foldLines}
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

// rawLine is a line of the Raw tab for the "raw" fragment: a line that
// folds carries its path, for the page to ask again.
type rawLine struct {
	Foldable, Open bool
	Path           string
	Text           []span
}

// rawOf is the Raw tab: the request and response as the terminal's
// foldable tree (view.Raw), the parts the query opens (open=PATH) or
// closes (close=PATH) set so, or every part open with expand=1.
func rawOf(t *timeline.Turn, q url.Values) []rawLine {
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
	var out []rawLine
	for _, l := range r.Lines(rawWidth) {
		out = append(out, rawLine{Foldable: l.Foldable, Open: l.Open, Path: l.Path, Text: spans(l.Text)})
	}
	return out
}
