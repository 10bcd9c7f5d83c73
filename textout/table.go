// Package textout writes the command line's listings: the tables of
// turns, threads, searches, tools, exchanges and probed MCP tools for a
// terminal, and the JSON Lines of --json. It lays out what other packages
// computed and reads no capture itself: a change here is a change of what
// the user sees, nothing else.
package textout

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/internal/termsafe"
	"github.com/tsinspect/tsinspect/report"
)

// column is one column of a table written by writeTable.
type column struct {
	head  string
	right bool // right-aligned (numbers)
}

// header is the heads of cols, the first row of a table.
func header(cols []column) []string {
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.head
	}
	return head
}

// writeTable writes rows (the first is the header) in aligned columns.
func writeTable(w io.Writer, cols []column, rows [][]string) error {
	widths := make([]int, len(cols))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(termsafe.Line(cell)))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		b.Reset()
		for i, cell := range row {
			// What the files hold is shown, never obeyed: a control
			// character in a name is written as its escape.
			cell = termsafe.Line(cell)
			pad := widths[i] - utf8.RuneCountInString(cell)
			switch {
			case i == 0:
			case cols[i].right && cols[i-1].right:
				b.WriteString(" ") // numbers stay apart by their alignment
			default:
				b.WriteString("  ")
			}
			switch {
			case cols[i].right:
				b.WriteString(strings.Repeat(" ", pad))
				b.WriteString(cell)
			case i == len(row)-1:
				b.WriteString(cell)
			default:
				b.WriteString(cell)
				b.WriteString(strings.Repeat(" ", pad))
			}
		}
		line := strings.TrimRight(b.String(), " ") + "\n"
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	return nil
}

// sizeDelta formats a size with its change: "41", "13 +1", "12 -2",
// "13 +2 -1".
func sizeDelta(n, added, removed int) string {
	s := strconv.Itoa(n)
	if added > 0 {
		s += " +" + strconv.Itoa(added)
	}
	if removed > 0 {
		s += " -" + strconv.Itoa(removed)
	}
	return s
}

// flagKinds lists the kinds of fs in order, "kind(N)" when repeated.
func flagKinds(fs []report.Flag) string {
	var kinds []string
	count := map[string]int{}
	for _, f := range fs {
		if count[f.Kind] == 0 {
			kinds = append(kinds, f.Kind)
		}
		count[f.Kind]++
	}
	for i, k := range kinds {
		if count[k] > 1 {
			kinds[i] = fmt.Sprintf("%s(%d)", k, count[k])
		}
	}
	return strings.Join(kinds, ",")
}

// orDash is s, or "-" for an empty s.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cell makes s fit a table cell: control characters become spaces and
// it is cut to limit runes with an ellipsis.
func cell(s string, limit int) string {
	// Line breaks and tabs read as spaces; any other control is shown
	// as its escape.
	s = termsafe.Line(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s))
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit-1]) + "…"
	}
	if s == "" {
		return "-"
	}
	return s
}

// WrapList joins items with ", " into lines of at most width columns,
// each starting with indent.
func WrapList(items []string, indent string, width int) string {
	var lines []string
	line := indent
	for i, it := range items {
		if i < len(items)-1 {
			it += ","
		}
		if line != indent && len(line)+1+len(it) > width {
			lines = append(lines, line)
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += it
	}
	return strings.Join(append(lines, line), "\n")
}
