// Package termsafe makes text read from files safe to print: every
// control character a terminal would act on, rather than show, is written
// as a visible escape. Session files, captures and imports hold whatever
// a model, a tool or a user wrote; printed raw, an ESC sequence in a tool
// name or a release string can move the cursor, retitle the window, or
// (OSC 52) write the clipboard, and a bidirectional override can make a
// line read other than it is.
//
// What is escaped, as \uXXXX (which is also how JSON escapes a character,
// so JSON passed through stays valid and means the same), or as \xNN for
// a byte that is not UTF-8:
//
//   - the C0 controls (U+0000 to U+001F; Text and Writer keep newline and
//     tab) and DEL (U+007F);
//   - the C1 controls (U+0080 to U+009F), which some terminals obey;
//   - the bidirectional controls (U+061C, U+200E, U+200F, U+202A to
//     U+202E, U+2066 to U+2069) and the line and paragraph separators
//     (U+2028, U+2029);
//   - bytes that are not UTF-8 (a lone 0x9B is CSI to an 8-bit terminal).
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Line is s for one line of output: every control escaped, newline and
// tab too.
func Line(s string) string { return clean(s, false) }

// Text is s for output that may span lines: every control escaped but
// newline and tab.
func Text(s string) string { return clean(s, true) }

// Writer writes what it is given to w as Text does: whole lines and
// tables pass as they are, controls within them escaped. A character cut
// between two writes (a buffered writer flushes where its buffer ends) is
// held back until the next write brings the rest of it, so that it passes
// whole; bytes that begin no character are escaped.
func Writer(w io.Writer) io.Writer {
	if tw, ok := w.(*writer); ok {
		return tw
	}
	return &writer{w: w}
}

type writer struct {
	w io.Writer
	// held is the start of a character the last write ended in.
	held []byte
}

func (t *writer) Write(p []byte) (int, error) {
	n := len(p)
	if len(t.held) > 0 {
		p = append(t.held, p...)
		t.held = nil
	}
	// Hold back the last character when it is cut short.
	if cut := incompleteTail(p); cut > 0 {
		t.held = append([]byte(nil), p[len(p)-cut:]...)
		p = p[:len(p)-cut]
	}
	if safe(p, true) {
		if _, err := t.w.Write(p); err != nil {
			return 0, err
		}
		return n, nil
	}
	if _, err := io.WriteString(t.w, clean(string(p), true)); err != nil {
		return 0, err
	}
	return n, nil
}

// incompleteTail is how many bytes at the end of p begin a UTF-8
// character that p cuts short (0 when p ends whole, or in bytes that
// begin no character).
func incompleteTail(p []byte) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(p); k++ {
		c := p[len(p)-k]
		if c < 0x80 {
			return 0 // ASCII: whole
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(p[len(p)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}

// safe reports whether b needs no escape: printable ASCII (and newline
// and tab, when kept) only.
func safe[T string | []byte](b T, keep bool) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 0x20 && c < 0x7f || keep && (c == '\n' || c == '\t') {
			continue
		}
		return false
	}
	return true
}

func clean(s string, keep bool) string {
	if safe(s, keep) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keep && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case Unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Unsafe reports whether printing r could make a terminal do something
// other than show a character (see the package's list).
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}
