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

// ResultContains reports whether ResultText holds s, reading it only when
// Raw could hold it: s written as it is, or escaped (\u) where Raw has an
// escape. s must need no escaping in JSON.
func (b *Block) ResultContains(s string) bool {
	return b.Type == "tool_result" && rawTextContains(b.Raw, s)
}

// Text is the tool result's text, as Block.ResultText reads it.
func (r ToolResult) Text() string { return resultText(r.raw) }

// rawTextContains reports whether the text of the tool_result raw holds s
// (which needs no escaping in JSON).
func rawTextContains(raw []byte, s string) bool {
	if !bytes.Contains(raw, []byte(s)) && !bytes.Contains(raw, []byte(`\u`)) {
		return false
	}
	return strings.Contains(resultText(raw), s)
}
