package decode

import (
	"bytes"
	"strings"
)

// ResultText is a client tool_result block's text: its content when that
// is a string, else the text blocks of its content joined by newlines; ""
// for a block of another type. It is read from Raw on each call, not held.
func (b *Block) ResultText() string {
	if b.Type != "tool_result" {
		return ""
	}
	return resultText(b.Raw)
}

// ResultContains reports whether ResultText holds s, reading the text only
// when Raw could hold it (s written as it is, or Raw with an escape that
// could stand for part of it).
func (b *Block) ResultContains(s string) bool {
	return b.Type == "tool_result" && rawTextContains(b.Raw, s)
}

// Text is the tool result's text, as Block.ResultText reads it.
func (r ToolResult) Text() string { return resultText(r.raw) }

// rawTextContains reports whether the text of the tool_result raw holds s.
// Raw lacking s as it is cannot hold it unless an escape in Raw could write
// part of it: \u for any character, \/ for a slash; s with a character JSON
// always escapes is looked for in the text.
func rawTextContains(raw []byte, s string) bool {
	if !bytes.Contains(raw, []byte(s)) && !mayBeEscaped(raw, s) {
		return false
	}
	return strings.Contains(resultText(raw), s)
}

// mayBeEscaped reports whether raw could write s with escapes.
func mayBeEscaped(raw []byte, s string) bool {
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == '"' || r == '\\' }) {
		return true
	}
	return bytes.Contains(raw, []byte(`\u`)) || strings.Contains(s, "/") && bytes.Contains(raw, []byte(`\/`))
}
