package timeline

import (
	"strings"

	"github.com/tsinspect/tsinspect/decode"
)

// NewMessages returns the messages t's request added to its thread: those
// after the ones it shares with the request of its previous turn (Prev),
// assistant messages left out (they were that turn's response). A
// thread's first turn added all of its messages.
func (s *Session) NewMessages(t *Turn) []*decode.Message {
	if t == nil || t.Decoded == nil {
		return nil
	}
	ms := t.Decoded.Request.Messages
	from := 0
	if p := s.Turn(t.Prev); p != nil && p.Decoded != nil {
		pm := p.Decoded.Request.Messages
		for from < len(ms) && from < len(pm) && (ms[from] == pm[from] || sameMessage(ms[from], pm[from])) {
			from++
		}
	}
	var out []*decode.Message
	for _, m := range ms[from:] {
		if m.Role != "assistant" {
			out = append(out, m)
		}
	}
	return out
}

// sameMessage reports whether two messages hold the same content, their
// cache_control markers aside (Claude Code moves its one marker to the
// newest message).
func sameMessage(a, b *decode.Message) bool {
	if a.Role != b.Role || a.StringContent != b.StringContent || a.Text != b.Text || len(a.Blocks) != len(b.Blocks) {
		return false
	}
	for i := range a.Blocks {
		x, y := a.Blocks[i].Raw, b.Blocks[i].Raw
		if string(x) != string(y) && (a.Blocks[i].CacheControl == nil && b.Blocks[i].CacheControl == nil || string(CanonicalJSON(x)) != string(CanonicalJSON(y))) {
			return false
		}
	}
	return true
}

// Content returns, in lower case, the text of what t's request added to
// its thread (NewMessages: prompts, tool results, reminders) and of its
// response (text, thinking, and each tool call's name and input), for
// searching in them.
func (s *Session) Content(t *Turn) (request, response string) {
	var b strings.Builder
	for _, m := range s.NewMessages(t) {
		if m.StringContent {
			b.WriteString(m.Text)
			b.WriteByte('\n')
			continue
		}
		for i := range m.Blocks {
			writeBlock(&b, &m.Blocks[i])
		}
	}
	request = strings.ToLower(b.String())
	b.Reset()
	if t != nil && t.Decoded != nil {
		for i := range t.Decoded.Response.Content {
			writeBlock(&b, &t.Decoded.Response.Content[i])
		}
	}
	return request, strings.ToLower(b.String())
}

// writeBlock writes the readable text of a content block: its text or
// thinking, a tool call's name and input, a tool result's text, else its
// raw JSON (images aside).
func writeBlock(b *strings.Builder, bl *decode.Block) {
	switch bl.Type {
	case "text":
		b.WriteString(bl.Text)
	case "thinking":
		b.WriteString(bl.Thinking)
	case "tool_use", "server_tool_use":
		b.WriteString(bl.Name)
		b.WriteByte(' ')
		b.Write(bl.Input)
		b.WriteString(bl.PartialInput)
	case "tool_result":
		b.WriteString(bl.ResultText())
		for _, r := range bl.References {
			b.WriteString(" " + r)
		}
	case "image", "document", "redacted_thinking":
		return
	default:
		b.Write(bl.Raw)
	}
	b.WriteByte('\n')
}

// Part is a readable piece of a message: its text, thinking, a tool call
// (Name, ID, Text its input as JSON), a tool result (ID of the call, Name
// of the tool called, Text, IsError), or another block as JSON.
type Part struct {
	Kind    string // text, thinking, tool_use, tool_result, image, other
	Name    string
	ID      string
	Text    string
	IsError bool
}

// Said is one message of a conversation, readable.
type Said struct {
	Role  string
	Parts []Part
}

// Conversation returns what t's request added to its thread (see
// NewMessages) and its response, readable; all, when set, gives every
// message of the request instead of the new ones.
func (s *Session) Conversation(t *Turn, all bool) (added []Said, response Said) {
	if t == nil || t.Decoded == nil {
		return nil, Said{Role: "assistant"}
	}
	r := &t.Decoded.Request
	names := map[string]string{} // tool_use id -> tool name
	for _, m := range r.Messages {
		for i := range m.Blocks {
			if b := &m.Blocks[i]; b.Type == "tool_use" || b.Type == "server_tool_use" {
				names[b.ID] = b.Name
			}
		}
	}
	ms := s.NewMessages(t)
	if all {
		ms = r.Messages
	}
	for _, m := range ms {
		added = append(added, Said{Role: m.Role, Parts: messageParts(m, names)})
	}
	response = Said{Role: "assistant"}
	for i := range t.Decoded.Response.Content {
		response.Parts = append(response.Parts, blockPart(&t.Decoded.Response.Content[i], names))
	}
	return added, response
}

func messageParts(m *decode.Message, names map[string]string) []Part {
	if m.StringContent {
		return []Part{{Kind: "text", Text: m.Text}}
	}
	out := make([]Part, 0, len(m.Blocks))
	for i := range m.Blocks {
		out = append(out, blockPart(&m.Blocks[i], names))
	}
	return out
}

func blockPart(b *decode.Block, names map[string]string) Part {
	switch b.Type {
	case "text":
		return Part{Kind: "text", Text: b.Text}
	case "thinking":
		return Part{Kind: "thinking", Text: b.Thinking}
	case "redacted_thinking":
		return Part{Kind: "thinking", Text: "(redacted)"}
	case "tool_use", "server_tool_use":
		in := string(b.Input)
		if in == "" {
			in = b.PartialInput
		}
		return Part{Kind: "tool_use", Name: b.Name, ID: b.ID, Text: in}
	case "tool_result":
		text := b.ResultText()
		for _, r := range b.References {
			text += "\n→ tool_reference " + r
		}
		return Part{Kind: "tool_result", Name: names[b.ToolUseID], ID: b.ToolUseID, Text: strings.TrimPrefix(text, "\n"), IsError: b.IsError}
	case "image", "document":
		return Part{Kind: b.Type, Text: "(" + b.Type + ")"}
	}
	return Part{Kind: "other", Name: b.Type, Text: string(b.Raw)}
}
