package advice

import (
	"sort"

	"github.com/tsinspect/tsinspect/timeline"
)

// Parts of a request's context (Part.Name), besides "results: TOOL".
const (
	PartSystem     = "system prompt"
	PartTools      = "tool definitions"
	PartUser       = "user text"
	PartAssistant  = "assistant text"
	PartCalls      = "tool calls"
	PartThinking   = "thinking"
	PartOther      = "other blocks"
	PartNotInFiles = "not in the files (system prompt, tools)"
	// PartResults prefixes a tool's results: "results: Bash".
	PartResults = "results: "
)

// Part is one part of a request's context: its bytes as the request (or
// the transcript) holds them, and its tokens.
type Part struct {
	Name   string `json:"name"`
	Bytes  int    `json:"bytes"`
	Tokens int64  `json:"tokens"`
}

// Composition is what filled one request's context.
type Composition struct {
	// Tokens is the prompt as billed (input, cache writes and reads), 0
	// when the response carried no usage.
	Tokens int64 `json:"tokens"`
	// Parts are its parts, the largest first.
	Parts []Part `json:"parts"`
	// Scaled: the parts' tokens share the billed prompt by their bytes
	// (the request is whole); else each is its bytes at 2.5 a token and
	// what the files do not hold is the rest of the billed prompt
	// (PartNotInFiles).
	Scaled bool `json:"scaled"`
}

// ContextOf works out what filled turn t's request: the system prompt
// and tool definitions when the request was recorded, the messages' text,
// tool calls and thinking, and the tool results by tool (the tool named
// by the call each answers, found in the messages before it).
func ContextOf(t *timeline.Turn) Composition {
	if t == nil || t.Decoded == nil {
		return Composition{Parts: []Part{}}
	}
	d := t.Decoded
	bytes := map[string]int{}
	transcript := d.Request.Transcript != nil
	if !transcript {
		for _, b := range d.Request.System {
			bytes[PartSystem] += len(b.Text)
		}
		for _, tl := range d.Request.Tools {
			if tl.DeferLoading {
				continue // not in the prompt until loaded
			}
			bytes[PartTools] += len(tl.Raw)
		}
	}
	names := map[string]string{} // tool_use id: tool
	for _, m := range d.Request.Messages {
		if m.StringContent {
			bytes[textPart(m.Role)] += len(m.Text)
			continue
		}
		for _, b := range m.Blocks {
			switch b.Type {
			case "text":
				bytes[textPart(m.Role)] += len(b.Text)
			case "thinking", "redacted_thinking":
				bytes[PartThinking] += max(len(b.Thinking), len(b.Raw))
			case "tool_use", "server_tool_use":
				names[b.ID] = b.Name
				bytes[PartCalls] += len(b.Name) + len(b.Input)
			case "tool_result":
				name := names[b.ToolUseID]
				if name == "" {
					name = "unknown tool"
				}
				bytes[PartResults+name] += len(b.Raw)
			default:
				bytes[PartOther] += len(b.Raw)
			}
		}
	}
	c := Composition{Tokens: d.Response.Usage.TotalInput(), Parts: []Part{}, Scaled: !transcript}
	sum := 0
	for _, n := range bytes {
		sum += n
	}
	var counted int64
	for name, n := range bytes {
		if n == 0 {
			continue
		}
		p := Part{Name: name, Bytes: n}
		if c.Scaled && c.Tokens > 0 {
			p.Tokens = int64(float64(c.Tokens) * float64(n) / float64(sum))
		} else {
			p.Tokens = timeline.Tokens(n, 1/timeline.CharsPerToken)
		}
		counted += p.Tokens
		c.Parts = append(c.Parts, p)
	}
	switch {
	case !c.Scaled && c.Tokens > counted:
		c.Parts = append(c.Parts, Part{Name: PartNotInFiles, Tokens: c.Tokens - counted})
	case !c.Scaled && c.Tokens > 0 && counted > c.Tokens:
		// Estimated from bytes, the parts would come to more than the
		// prompt billed: they share the billed prompt by their bytes
		// instead, never more than was recorded.
		c.Scaled = true
		for i := range c.Parts {
			c.Parts[i].Tokens = int64(float64(c.Tokens) * float64(c.Parts[i].Bytes) / float64(sum))
		}
	}
	sort.Slice(c.Parts, func(i, j int) bool {
		if c.Parts[i].Tokens != c.Parts[j].Tokens {
			return c.Parts[i].Tokens > c.Parts[j].Tokens
		}
		return c.Parts[i].Name < c.Parts[j].Name
	})
	return c
}

// textPart is the part a message's text counts in.
func textPart(role string) string {
	if role == "assistant" {
		return PartAssistant
	}
	return PartUser
}
