package decode

// A minimal YAML reader for the VCR cassettes of the corpus: block
// mappings and sequences, plain, single- and double-quoted scalars (folded
// over several lines), literal block scalars, and the empty
// flow collections {} and []. No anchors, tags or flow collections with
// content: the cassettes have none, and the module takes no YAML
// dependency.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

type yamlParser struct {
	lines []string
	i     int
}

// yamlParse parses one YAML document into map[string]any, []any, string,
// bool, json.Number and nil values.
func yamlParse(src string) (v any, err error) {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	lines := strings.Split(src, "\n")
	var body []string
	for _, l := range lines {
		if strings.HasPrefix(l, "---") && len(body) == 0 {
			continue
		}
		if l == "..." {
			break // end of the document
		}
		body = append(body, l)
	}
	p := &yamlParser{lines: body}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml line %d: %v", p.i+1, r)
		}
	}()
	p.skipBlank()
	if p.i >= len(p.lines) {
		return nil, nil
	}
	v = p.node(indentOf(p.lines[p.i]))
	p.skipBlank()
	if p.i < len(p.lines) {
		return nil, fmt.Errorf("yaml line %d: unexpected %q", p.i+1, p.lines[p.i])
	}
	return v, nil
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

func isBlankOrComment(l string) bool {
	t := strings.TrimSpace(l)
	return t == "" || strings.HasPrefix(t, "#")
}

func (p *yamlParser) skipBlank() {
	for p.i < len(p.lines) && isBlankOrComment(p.lines[p.i]) {
		p.i++
	}
}

// node parses the node starting at the current line, indented ind.
func (p *yamlParser) node(ind int) any {
	p.skipBlank()
	if p.i >= len(p.lines) {
		return nil
	}
	l := p.lines[p.i]
	content := l[indentOf(l):]
	if content == "-" || strings.HasPrefix(content, "- ") {
		return p.sequence(indentOf(l))
	}
	if _, _, ok := splitKey(content); ok {
		return p.mapping(indentOf(l))
	}
	// A scalar on its own line.
	p.i++
	return p.scalarRest(content, indentOf(l)-1)
}

func (p *yamlParser) sequence(ind int) []any {
	out := []any{}
	for {
		p.skipBlank()
		if p.i >= len(p.lines) {
			return out
		}
		l := p.lines[p.i]
		if indentOf(l) != ind {
			return out
		}
		content := l[ind:]
		if content != "-" && !strings.HasPrefix(content, "- ") {
			return out
		}
		rest := strings.TrimLeft(content[1:], " ")
		if rest == "" {
			p.i++
			out = append(out, p.childOrNull(ind))
			continue
		}
		col := len(l) - len(rest)
		// Re-read the item as if it started on its own line at col.
		p.lines[p.i] = strings.Repeat(" ", col) + rest
		out = append(out, p.node(col))
	}
}

// childOrNull parses the value on the lines after a key or dash at ind: a
// more indented node, a sequence at the same indent, or null.
func (p *yamlParser) childOrNull(ind int) any {
	p.skipBlank()
	if p.i >= len(p.lines) {
		return nil
	}
	l := p.lines[p.i]
	n := indentOf(l)
	if n > ind || (n == ind && (l[n:] == "-" || strings.HasPrefix(l[n:], "- "))) {
		return p.node(n)
	}
	return nil
}

func (p *yamlParser) mapping(ind int) map[string]any {
	out := map[string]any{}
	for {
		p.skipBlank()
		if p.i >= len(p.lines) {
			return out
		}
		l := p.lines[p.i]
		if indentOf(l) != ind {
			return out
		}
		key, rest, ok := splitKey(l[ind:])
		if !ok {
			panic(fmt.Sprintf("expected a key in %q", l))
		}
		p.i++
		rest = strings.TrimSpace(rest)
		if rest == "" || strings.HasPrefix(rest, "#") {
			out[key] = p.childOrNull(ind)
			continue
		}
		out[key] = p.scalarRest(rest, ind)
	}
}

// splitKey splits "key: rest" (or "key:"); the key may be quoted.
func splitKey(content string) (key, rest string, ok bool) {
	if content == "" || content[0] == '-' && (len(content) == 1 || content[1] == ' ') {
		return "", "", false
	}
	if content[0] == '"' || content[0] == '\'' {
		end := strings.IndexByte(content[1:], content[0])
		if end < 0 {
			return "", "", false
		}
		after := content[end+2:]
		if after == ":" || strings.HasPrefix(after, ": ") {
			return content[1 : end+1], strings.TrimPrefix(after, ":"), true
		}
		return "", "", false
	}
	if i := strings.Index(content, ": "); i >= 0 {
		return content[:i], content[i+2:], true
	}
	if strings.HasSuffix(content, ":") {
		return content[:len(content)-1], "", true
	}
	return "", "", false
}

// scalarRest parses a scalar starting with rest on the current line (the
// line before p.i), whose parent is indented ind.
func (p *yamlParser) scalarRest(rest string, ind int) any {
	switch {
	case rest == "{}":
		return map[string]any{}
	case rest == "[]":
		return []any{}
	case rest[0] == '|' || rest[0] == '>':
		return p.blockScalar(rest, ind)
	case rest[0] == '\'' || rest[0] == '"':
		return p.quoted(rest)
	}
	// Plain, possibly continued on more indented lines.
	if i := strings.Index(rest, " #"); i >= 0 {
		rest = rest[:i]
	}
	parts := []string{strings.TrimSpace(rest)}
	for p.i < len(p.lines) {
		j := p.i
		for j < len(p.lines) && strings.TrimSpace(p.lines[j]) == "" {
			j++
		}
		if j >= len(p.lines) || indentOf(p.lines[j]) <= ind {
			break
		}
		if j > p.i {
			parts = append(parts, strings.Repeat("\n", j-p.i))
		}
		t := strings.TrimSpace(p.lines[j])
		if i := strings.Index(t, " #"); i >= 0 {
			t = t[:i]
		}
		parts = append(parts, t)
		p.i = j + 1
	}
	if len(parts) > 1 {
		return joinFolded(parts)
	}
	return plainValue(parts[0])
}

// joinFolded joins folded lines: a space between text lines, and the
// newlines of blank lines in place of the space.
func joinFolded(parts []string) string {
	var b strings.Builder
	for k, part := range parts {
		if k > 0 && !strings.HasPrefix(part, "\n") && !strings.HasSuffix(parts[k-1], "\n") {
			b.WriteByte(' ')
		}
		b.WriteString(part)
	}
	return b.String()
}

var (
	yamlInt   = regexp.MustCompile(`^[-+]?[0-9]+$`)
	yamlFloat = regexp.MustCompile(`^[-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$`)
)

func plainValue(s string) any {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return nil
	case "true", "True", "TRUE":
		return true
	case "false", "False", "FALSE":
		return false
	}
	if yamlInt.MatchString(s) {
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return json.Number(strings.TrimPrefix(s, "+"))
		}
	}
	if yamlFloat.MatchString(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
		}
	}
	return s
}

// quoted reads a quoted scalar that starts with rest and may go on over
// the following lines.
func (p *yamlParser) quoted(rest string) string {
	q := rest[0]
	segs := []string{}
	cur := rest[1:]
	for {
		if end := closingQuote(cur, q); end >= 0 {
			segs = append(segs, cur[:end])
			break
		}
		segs = append(segs, cur)
		if p.i >= len(p.lines) {
			panic("unterminated quoted scalar")
		}
		cur = p.lines[p.i]
		p.i++
	}
	// Fold: leading blanks of continuation lines and trailing blanks of
	// continued lines go; a line break is a space, or the newlines of the
	// blank lines that follow it.
	var b strings.Builder
	for k := 0; k < len(segs); k++ {
		s := segs[k]
		if k > 0 {
			s = strings.TrimLeft(s, " \t")
		}
		if k == len(segs)-1 {
			b.WriteString(s)
			break
		}
		if q == '"' && escapedBreak(s) {
			b.WriteString(s[:len(s)-1])
			// An escaped break joins without a space; the next line's
			// leading blanks go.
			continue
		}
		if q == '"' {
			s = trimUnescapedRight(s)
		} else {
			s = strings.TrimRight(s, " \t")
		}
		b.WriteString(s)
		blank := 0
		for k+1 < len(segs)-1 && strings.TrimSpace(segs[k+1]) == "" {
			blank++
			k++
		}
		if blank > 0 {
			b.WriteString(strings.Repeat("\n", blank))
		} else {
			b.WriteByte(' ')
		}
	}
	if q == '\'' {
		return strings.ReplaceAll(b.String(), "''", "'")
	}
	return unescapeDouble(b.String())
}

// closingQuote returns the index of the quote ending a scalar in s, or -1.
func closingQuote(s string, q byte) int {
	for i := 0; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q:
			if q == '\'' && i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			return i
		}
	}
	return -1
}

// escapedBreak reports whether s ends with an odd run of backslashes.
func escapedBreak(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// trimUnescapedRight trims trailing blanks, keeping one escaped by "\".
func trimUnescapedRight(s string) string {
	t := strings.TrimRight(s, " \t")
	if len(t) < len(s) && escapedBreak(t) {
		return s[:len(t)+1]
	}
	return t
}

func unescapeDouble(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case '0':
			b.WriteByte(0)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 't', '\t':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'v':
			b.WriteByte('\v')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case 'e':
			b.WriteByte(0x1b)
		case ' ', '"', '/', '\\':
			b.WriteByte(e)
		case 'N':
			b.WriteString("\u0085")
		case '_':
			b.WriteString("\u00a0")
		case 'L':
			b.WriteString("\u2028")
		case 'P':
			b.WriteString("\u2029")
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+1+n > len(s) {
				panic("short escape")
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil {
				panic("bad escape " + s[i-1:i+1+n])
			}
			b.WriteRune(rune(v))
			i += n
		default:
			panic(fmt.Sprintf("unknown escape \\%c", e))
		}
	}
	return b.String()
}

// blockScalar reads a literal (|) block scalar whose header
// is rest; its parent is indented ind.
func (p *yamlParser) blockScalar(rest string, ind int) string {
	header := rest
	if i := strings.Index(header, " #"); i >= 0 {
		header = header[:i]
	}
	header = strings.TrimSpace(header)
	if header[0] == '>' {
		panic("folded block scalars are not supported")
	}
	chomp := byte(0)
	explicit := 0
	for _, c := range []byte(header[1:]) {
		switch {
		case c == '+' || c == '-':
			chomp = c
		case c >= '1' && c <= '9':
			explicit = int(c - '0')
		}
	}
	// Collect the lines: blank ones, and those indented more than ind.
	start := p.i
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if strings.TrimSpace(l) != "" && indentOf(l) <= ind {
			break
		}
		p.i++
	}
	raw := p.lines[start:p.i]
	contentInd := ind + explicit
	if explicit == 0 {
		contentInd = -1
		for _, l := range raw {
			if strings.TrimSpace(l) != "" {
				contentInd = indentOf(l)
				break
			}
		}
	}
	lines := make([]string, len(raw))
	for k, l := range raw {
		if contentInd >= 0 && len(l) >= contentInd {
			lines[k] = l[contentInd:]
		} else {
			lines[k] = ""
		}
	}
	// Trailing empty lines belong to chomping.
	end := len(lines)
	for end > 0 && lines[end-1] == "" {
		end--
	}
	trailing := len(lines) - end
	var b strings.Builder
	for k, l := range lines[:end] {
		if k > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	s := b.String()
	if end == 0 {
		s = ""
	}
	switch chomp {
	case '-':
	case '+':
		if end > 0 {
			s += "\n"
		}
		s += strings.Repeat("\n", trailing)
	default:
		if end > 0 {
			s += "\n"
		}
	}
	return s
}
