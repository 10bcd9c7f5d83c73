package diffreport

import (
	"bufio"
	"fmt"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tsinspect/tsinspect/timeline/compare"
)

// Width is the terminal width WriteText fits by default.
const Width = 80

// WriteText writes the result for a terminal of width columns (at least
// 60): the summary side by side, the request shape, the turns aligned per
// thread with identical stretches folded, and the tools of --tools.
func (r *Result) WriteText(w io.Writer, width int) error {
	width = max(width, 60)
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	verdict := "differ"
	if r.Same {
		verdict = "are the same in what tsinspect compares"
	}
	// The names as they are, however long: they are to be copied.
	p("A: %s\nB: %s\n", r.A, r.B)
	for _, l := range wrap(fmt.Sprintf("The sessions %s.", verdict), width, "") {
		p("%s\n", l)
	}

	nameW := width - 46
	p("\n%-*s %14s %14s %14s\n", nameW+1, "Summary", "A", "B", "B − A")
	for _, f := range r.Summary {
		if f.Unit == compare.UnitList {
			if !f.Differs {
				for i, l := range wrap(f.AText, width-nameW-2, "") {
					name := ""
					if i == 0 {
						name = f.Name
					}
					p("  %-*s%s\n", nameW, name, l)
				}
				continue
			}
			for i, side := range []string{f.AText, f.BText} {
				label := [2]string{"A: ", "B: "}[i]
				for j, l := range wrap(label+side, width-nameW-2, "   ") {
					name := ""
					if i == 0 && j == 0 {
						name = f.Name
					}
					p("  %-*s%s\n", nameW, name, l)
				}
			}
			continue
		}
		delta := ""
		if f.Differs {
			delta = signed(f.B-f.A, f.Unit)
		}
		p("%s\n", strings.TrimRight(fmt.Sprintf("  %-*s %14s %14s %14s", nameW-1, cut(f.Name, nameW-1), value(f.A, f.Unit), value(f.B, f.Unit), delta), " "))
	}

	p("\nRequest shape\n")
	if len(r.Shape) == 0 {
		p("  the same\n")
	}
	for _, sl := range r.shapeLines() {
		for _, l := range wrap(shapeLineText(sl), width-2, "    ") {
			p("  %s\n", l)
		}
		for _, l := range sl.lines {
			p("      %s\n", cut(l, width-6))
		}
	}

	p("\nTurns, aligned per thread\n")
	for _, t := range r.Threads {
		name := t.A
		switch {
		case t.A == "":
			name = t.B + " (B only)"
		case t.B == "":
			name = t.A + " (A only)"
		case t.A != t.B:
			name = t.A + " / " + t.B
		}
		p("  thread %s (%s)\n", name, t.Kind)
		fields := r.briefRows(t)
		for i, row := range t.Rows {
			for _, l := range wrap(rowLine(row), width-4, "    ") {
				p("    %s\n", l)
			}
			for _, f := range fields[i] {
				lw := 14
				for i, side := range []string{f.A, f.B} {
					label := ""
					if i == 0 {
						label = f.Name
					}
					for j, l := range wrap([2]string{"A: ", "B: "}[i]+side, width-8-lw, "   ") {
						if j > 0 {
							label = ""
						}
						p("      %-*s%s\n", lw, cut(label, lw-1), l)
					}
				}
			}
		}
	}

	if r.ToolsPrefix != "" {
		p("\nTools starting %q: how each was searched for and found\n", r.ToolsPrefix)
		if len(r.Tools) == 0 {
			p("  none in either session\n")
		}
		for _, td := range r.Tools {
			mark := "="
			if td.Differs {
				mark = "~"
			}
			p("  %s %s\n", mark, td.Name)
			for i, s := range []compare.ToolSide{td.A, td.B} {
				for _, l := range wrap([2]string{"A: ", "B: "}[i]+toolText(s), width-4, "   ") {
					p("    %s\n", l)
				}
			}
		}
	}
	return bw.Flush()
}

// rowLine is the head line of an aligned row.
func rowLine(r compare.Row) string {
	switch r.Op {
	case compare.OpSame:
		if r.Count == 1 {
			return fmt.Sprintf("= turn %s the same", turnPair(r))
		}
		return fmt.Sprintf("= turns %s the same (%d turns)", turnPair(r), r.Count)
	case compare.OpChanged:
		return fmt.Sprintf("~ turn %s differs", turnPair(r))
	case compare.OpInserted:
		if r.What == "" {
			return fmt.Sprintf("+ B turns %s: %d turns only in B", span(r.BFirst, r.BLast), r.Count)
		}
		return fmt.Sprintf("+ B turn %d only in B: %s", r.BFirst, r.What)
	default:
		if r.What == "" {
			return fmt.Sprintf("- A turns %s: %d turns only in A", span(r.AFirst, r.ALast), r.Count)
		}
		return fmt.Sprintf("- A turn %d only in A: %s", r.AFirst, r.What)
	}
}

// turnPair is "3" when both sides number the turns alike, else "3 / 4"
// (A's, then B's).
func turnPair(r compare.Row) string {
	a, b := span(r.AFirst, r.ALast), span(r.BFirst, r.BLast)
	if a == b {
		return a
	}
	return a + " / " + b
}

func span(first, last int) string {
	if first == 0 {
		return "–" // none on this side
	}
	if first == last {
		return strconv.Itoa(first)
	}
	return fmt.Sprintf("%d–%d", first, last)
}

// changeLine is one request-shape change.
func changeLine(c compare.Change) string {
	var b strings.Builder
	b.WriteString(c.Area)
	if len(c.Threads) > 0 && !(len(c.Threads) == 1 && c.Threads[0] == "main") {
		b.WriteString(" [" + strings.Join(c.Threads, ", ") + "]")
	}
	b.WriteString(": ")
	switch c.Op {
	case "added":
		b.WriteString("+ " + c.Item)
		if c.B != "" {
			b.WriteString(" = " + c.B)
		}
	case "removed":
		b.WriteString("− " + c.Item)
		if c.A != "" {
			b.WriteString(" = " + c.A)
		}
	default:
		if c.Item != c.Area {
			b.WriteString(c.Item + " ")
		}
		if c.A != "" || c.B != "" {
			b.WriteString(c.A + " → " + c.B)
		} else {
			b.WriteString("changed")
		}
	}
	if c.Detail != "" {
		b.WriteString(" (" + c.Detail + ")")
	}
	return b.String()
}

// toolText is what happened to a tool on one side.
func toolText(s compare.ToolSide) string {
	if !s.Present {
		return "not in the session"
	}
	var parts []string
	if len(s.FoundBy) > 0 {
		parts = append(parts, "found by "+quoteAll(s.FoundBy))
	} else if s.Deferred {
		parts = append(parts, "never found")
	} else {
		parts = append(parts, "always loaded")
	}
	if len(s.MissedBy) > 0 {
		parts = append(parts, "missed by "+quoteAll(s.MissedBy))
	}
	if s.Deferred {
		if s.Loaded {
			parts = append(parts, "loaded")
		} else {
			parts = append(parts, "never loaded")
		}
	}
	calls := fmt.Sprintf("%d %s", s.Calls, plural(s.Calls, "call", "calls"))
	if s.Blind > 0 {
		calls += fmt.Sprintf(" (%d blind)", s.Blind)
	}
	return strings.Join(append(parts, calls), "; ")
}

func quoteAll(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// value formats a figure.
func value(v float64, unit string) string {
	if unit == compare.UnitUSD {
		return fmt.Sprintf("$%.4f", v)
	}
	return thousands(int64(v))
}

// signed formats a difference with its sign.
func signed(v float64, unit string) string {
	if unit == compare.UnitUSD {
		digits := 4
		if v != 0 && math.Abs(v) < 0.00005 {
			digits = 6 // a difference that four digits would round away
		}
		if v < 0 {
			return fmt.Sprintf("−$%.*f", digits, -v)
		}
		return fmt.Sprintf("+$%.*f", digits, v)
	}
	if v < 0 {
		return "−" + thousands(int64(-v))
	}
	return "+" + thousands(int64(v))
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string { return numfmt.Thousands(n) }

// cut shortens s to n runes, with an ellipsis.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 1 {
		return s
	}
	return string(r[:n-1]) + "…"
}

// wrap breaks text (which may hold newlines) into lines of at most width
// runes at spaces; continuation lines start with indent. A word longer
// than a line is cut.
func wrap(text string, width int, indent string) []string {
	var out []string
	for _, para := range strings.Split(text, "\n") {
		line := ""
		first := true
		limit := func() int {
			if first {
				return width
			}
			return width - len([]rune(indent))
		}
		flush := func() {
			if first {
				out = append(out, line)
			} else {
				out = append(out, indent+line)
			}
			line, first = "", false
		}
		for _, word := range strings.Split(para, " ") {
			for len([]rune(word)) > limit() {
				if line != "" {
					flush()
				}
				r := []rune(word)
				line = string(r[:limit()])
				word = string(r[limit():])
				flush()
			}
			switch {
			case line == "":
				line = word
			case len([]rune(line))+1+len([]rune(word)) <= limit():
				line += " " + word
			default:
				flush()
				line = word
			}
		}
		flush()
	}
	return out
}

// Write writes r in format: "json", "markdown", "html", else text of
// width columns.
func (r *Result) Write(w io.Writer, format string, width int) error {
	switch format {
	case "json":
		return r.WriteJSON(w)
	case "markdown":
		return r.WriteMarkdown(w)
	case "html":
		return r.WriteHTML(w)
	}
	return r.WriteText(w, width)
}
