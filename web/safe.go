package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/internal/termsafe"
)

// Text from session files and captures reaches a page as the terminal
// shows it (internal/termsafe): a bidirectional override, a C1 or C0
// control (newline and tab aside) is shown as a visible \uXXXX, never
// acted on, so that a tool name or a query cannot read other than it is.
// Every page and every answer a page reads passes through one of these
// two on its way out.

// safeHTML is an HTML page or fragment with every unsafe character shown
// as its escape (termsafe.Text: newlines and tabs kept).
func safeHTML(s string) string { return termsafe.Text(s) }

// safeJSON is a JSON document whose strings, once decoded, hold the
// escape of every unsafe character rather than the character: a raw one
// (a bidirectional override: encoding/json leaves it as it is) and one
// written as a \u escape (a C0 control, U+2028) alike become the text
// \uXXXX. Newline and tab, written \n and \t, are kept.
func safeJSON(b []byte) []byte {
	if termsafeASCII(b) {
		return b
	}
	var out bytes.Buffer
	out.Grow(len(b) + 16)
	for i := 0; i < len(b); {
		c := b[i]
		if c == '\\' && i+1 < len(b) {
			if b[i+1] == 'u' && i+6 <= len(b) {
				if r, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 32); err == nil && termsafe.Unsafe(rune(r)) && r != '\n' && r != '\t' {
					fmt.Fprintf(&out, `\\u%04x`, r)
					i += 6
					continue
				}
			}
			out.Write(b[i : i+2])
			i += 2
			continue
		}
		if c < utf8.RuneSelf {
			out.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if termsafe.Unsafe(r) || r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&out, `\\u%04x`, r)
		} else {
			out.Write(b[i : i+n])
		}
		i += n
	}
	return out.Bytes()
}

// marshalSafe is json.Marshal through safeJSON.
func marshalSafe(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return safeJSON(b), nil
}

// termsafeASCII reports whether b is printable ASCII with no escape in
// it: nothing to do.
func termsafeASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}
