package view

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Role says what a piece of text is, so that the UI can style it (a
// colour, or an attribute when colour is off).
type Role uint8

// The roles of text.
const (
	RoleText     Role = iota // plain
	RoleDim                  // secondary: notes, units, empty states
	RoleTitle                // a heading
	RoleKey                  // a label or JSON key
	RoleString               // a JSON string
	RoleAdded                // added since the previous turn
	RoleRemoved              // removed since the previous turn
	RoleError                // an error, or an error flag
	RoleWarning              // a warning flag, an odd stop reason
	RoleInfo                 // an info flag
	RoleRead                 // cache-read tokens
	RoleCreated              // cache-creation tokens
	RoleInput                // uncached input tokens
	RoleAlways               // an always-loaded tool
	RoleSearch               // a tool loaded by search
	RoleRestored             // a tool restored after compaction
	RoleMatch                // text matching the filter
)

// Span is a run of text with one role.
type Span struct {
	Text string
	Role Role
}

// Line is one line of styled text.
type Line []Span

// String returns the line's text without roles.
func (l Line) String() string {
	var b strings.Builder
	for _, s := range l {
		b.WriteString(s.Text)
	}
	return b.String()
}

// Width returns the line's width in runes.
func (l Line) Width() int {
	n := 0
	for _, s := range l {
		n += len([]rune(s.Text))
	}
	return n
}

// add appends a span (merging it into the last one of the same role).
func (l *Line) add(role Role, text string) *Line {
	if text == "" {
		return l
	}
	if n := len(*l); n > 0 && (*l)[n-1].Role == role {
		(*l)[n-1].Text += text
		return l
	}
	*l = append(*l, Span{Text: text, Role: role})
	return l
}

// addf appends a formatted span.
func (l *Line) addf(role Role, format string, args ...any) *Line {
	return l.add(role, fmt.Sprintf(format, args...))
}

// Text renders lines as plain text, one per line: what a test compares.
func Text(lines []Line) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// doc accumulates lines.
type doc struct{ lines []Line }

// line starts a new line and returns it for appending.
func (d *doc) line() *Line {
	d.lines = append(d.lines, nil)
	return &d.lines[len(d.lines)-1]
}

// text adds a line holding one span.
func (d *doc) text(role Role, format string, args ...any) {
	d.line().addf(role, format, args...)
}

// blank adds an empty line, unless the last one is empty already.
func (d *doc) blank() {
	if n := len(d.lines); n > 0 && len(d.lines[n-1]) > 0 {
		d.lines = append(d.lines, nil)
	}
}

// Tokens renders a token count compactly: 950, 12.3k, 1.2M.
func Tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 100_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", (n+500)/1000)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
}

// matches reports whether s holds q, case-insensitively ("" matches).
func matches(s, q string) bool {
	return q == "" || strings.Contains(strings.ToLower(s), strings.ToLower(q))
}

// Wrap breaks the lines wider than width at spaces (or anywhere, for a
// word wider than the line), indenting the continuation lines as far as
// the line itself is indented.
func Wrap(lines []Line, width int) []Line {
	out := make([]Line, 0, len(lines))
	for _, l := range lines {
		if width <= 0 || l.Width() <= width {
			out = append(out, l)
			continue
		}
		s := l.String()
		indent := len(s) - len(strings.TrimLeft(s, " "))
		if indent > width/2 {
			indent = 0
		}
		var cur Line
		w := 0
		fresh := false // at the start of a continuation line
		newLine := func() {
			out = append(out, cur)
			cur = Line{{Text: strings.Repeat(" ", indent)}}
			w, fresh = indent, true
		}
		for _, sp := range l {
			for _, word := range words(sp.Text) {
				n := utf8.RuneCountInString(strings.TrimRight(word, " "))
				if w+n > width && w > indent && n > 0 {
					newLine()
				}
				if fresh {
					word = strings.TrimLeft(word, " ")
				}
				for r := []rune(word); len(r) > 0; {
					room := width - w
					if room <= 0 {
						newLine()
						room = width - w
					}
					take := min(len(r), room)
					cur.add(sp.Role, string(r[:take]))
					w += take
					r = r[take:]
					if strings.TrimSpace(string(r)) == "" {
						r = nil // spaces at the end of a line are dropped
					}
					fresh = false
				}
			}
		}
		out = append(out, cur)
	}
	return out
}

// words splits s after each run of spaces: "a b  c" is "a ", "b  ", "c".
func words(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		j := i
		for j < len(s) && s[j] == ' ' {
			j++
		}
		out = append(out, s[:j])
		s = s[j:]
	}
	return out
}
