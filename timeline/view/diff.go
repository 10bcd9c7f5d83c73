package view

import (
	"fmt"
	"strings"

	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// DiffLine is one line of a diff: Op is ' ' (same), '-' (only in the old
// text), '+' (only in the new one) or '~' (a note: lines left out).
type DiffLine struct {
	Op   byte
	Text string
}

// maxDiffCells bounds the LCS table; past it the changed middle is shown
// as all removed then all added.
const maxDiffCells = 1 << 20

// cropWidth is how much of a long changed line is shown around its first
// difference.
const cropWidth = 160

// Diff compares two texts line by line and returns the changes with
// context lines of context around each, at most maxLines lines in all.
func Diff(a, b string, context, maxLines int) []DiffLine {
	al, bl := splitLines(a), splitLines(b)
	// Common prefix and suffix first: most changes are small.
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	var ops []DiffLine
	for _, s := range al[:pre] {
		ops = append(ops, DiffLine{' ', s})
	}
	ops = append(ops, diffMiddle(al[pre:len(al)-suf], bl[pre:len(bl)-suf])...)
	for _, s := range al[len(al)-suf:] {
		ops = append(ops, DiffLine{' ', s})
	}
	cropPairs(ops)
	return hunks(ops, context, maxLines)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffMiddle diffs two line lists with a longest-common-subsequence table.
func diffMiddle(a, b []string) []DiffLine {
	var out []DiffLine
	if len(a)*len(b) > maxDiffCells || len(a) == 0 || len(b) == 0 {
		for _, s := range a {
			out = append(out, DiffLine{'-', s})
		}
		for _, s := range b {
			out = append(out, DiffLine{'+', s})
		}
		return out
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			out = append(out, DiffLine{' ', a[i]})
			i, j = i+1, j+1
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			out = append(out, DiffLine{'-', a[i]})
			i++
		default:
			out = append(out, DiffLine{'+', b[j]})
			j++
		}
	}
	for ; i < len(a); i++ {
		out = append(out, DiffLine{'-', a[i]})
	}
	for ; j < len(b); j++ {
		out = append(out, DiffLine{'+', b[j]})
	}
	return out
}

// cropPairs shortens a long line replaced by one other long line to the
// stretch around their first difference; other long lines to their start.
func cropPairs(ops []DiffLine) {
	for i := 0; i < len(ops); i++ {
		pair := i+1 < len(ops) && ops[i].Op == '-' && ops[i+1].Op == '+' &&
			(i == 0 || ops[i-1].Op != '-') && (i+2 == len(ops) || ops[i+2].Op != '+')
		if !pair {
			ops[i].Text = crop(ops[i].Text, 0)
			continue
		}
		x, y := ops[i].Text, ops[i+1].Text
		p := 0
		for p < len(x) && p < len(y) && x[p] == y[p] {
			p++
		}
		from := 0
		if p > cropWidth/2 {
			from = p - cropWidth/4
		}
		ops[i].Text, ops[i+1].Text = crop(x, from), crop(y, from)
		i++
	}
}

// crop returns cropWidth bytes of s from byte from (moved back to a rune
// start), with ellipses where text was cut.
func crop(s string, from int) string {
	if len(s) <= cropWidth && from == 0 {
		return s
	}
	for from > 0 && from < len(s) && s[from]&0xC0 == 0x80 {
		from--
	}
	from = min(from, len(s))
	to := min(len(s), from+cropWidth)
	for to < len(s) && s[to]&0xC0 == 0x80 {
		to--
	}
	out := s[from:to]
	if from > 0 {
		out = "…" + out
	}
	if to < len(s) {
		out += fmt.Sprintf("… (+%s)", numfmt.Bytes(int64(len(s)-to)))
	}
	return out
}

// hunks keeps the changed lines with context around them, noting what is
// left out.
func hunks(ops []DiffLine, context, maxLines int) []DiffLine {
	keep := make([]bool, len(ops))
	for i, op := range ops {
		if op.Op != ' ' {
			for k := max(0, i-context); k <= min(len(ops)-1, i+context); k++ {
				keep[k] = true
			}
		}
	}
	var out []DiffLine
	skipped := 0
	flush := func() {
		if skipped > 0 {
			out = append(out, DiffLine{'~', fmt.Sprintf("… %s unchanged", numfmt.Count(skipped, "line", "lines"))})
			skipped = 0
		}
	}
	for i, op := range ops {
		if !keep[i] {
			skipped++
			continue
		}
		flush()
		if maxLines > 0 && len(out) >= maxLines {
			rest := 0
			for k := i; k < len(ops); k++ {
				if keep[k] {
					rest++
				}
			}
			out = append(out, DiffLine{'~', fmt.Sprintf("… %s more", numfmt.Count(rest, "line", "lines"))})
			return out
		}
		out = append(out, op)
	}
	if len(out) > 0 {
		flush()
	}
	return out
}
