package compare

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds of a line diff: how many changed lines it shows, how wide each
// is, and the largest stretch of differing lines it aligns line by line
// (beyond it, the stretch shows as removed, then added).
const (
	diffLines   = 8
	diffWidth   = 72
	diffAligned = 400
)

// lineDiff lists the lines that differ between a and b, in order: "- " a
// line of a only, "+ " one of b only, at most diffLines of them and then
// how many more. A line is cut to diffWidth runes around where it differs
// from the line it replaces. Nil when the texts are equal.
func lineDiff(a, b string) []string {
	if a == b {
		return nil
	}
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	pre := 0
	for pre < len(la) && pre < len(lb) && la[pre] == lb[pre] {
		pre++
	}
	suf := 0
	for suf < len(la)-pre && suf < len(lb)-pre && la[len(la)-1-suf] == lb[len(lb)-1-suf] {
		suf++
	}
	ma, mb := la[pre:len(la)-suf], lb[pre:len(lb)-suf]
	var ops []lineOp
	if len(ma) <= diffAligned && len(mb) <= diffAligned {
		ops = alignLines(ma, mb)
	} else {
		for _, l := range ma {
			ops = append(ops, lineOp{del: true, text: l})
		}
		for _, l := range mb {
			ops = append(ops, lineOp{text: l})
		}
	}
	var out []string
	for i, op := range ops {
		if len(out) == diffLines {
			out = append(out, fmt.Sprintf("… %d more changed lines", len(ops)-i))
			break
		}
		// A removed line followed by an added one: the same line changed;
		// both are cut around where they first differ.
		from := 0
		switch {
		case op.del && i+1 < len(ops) && !ops[i+1].del:
			from = firstDiff(op.text, ops[i+1].text)
		case !op.del && i > 0 && ops[i-1].del:
			from = firstDiff(ops[i-1].text, op.text)
		}
		mark := "+ "
		if op.del {
			mark = "- "
		}
		out = append(out, mark+window(op.text, from))
	}
	return out
}

// lineOp is a line of one side only.
type lineOp struct {
	del  bool // of a (removed), else of b (added)
	text string
}

// alignLines returns the lines of a and b outside their longest common
// subsequence, in order, a removed line before the added line that
// takes its place.
func alignLines(a, b []string) []lineOp {
	// lcs[i][j] is the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []lineOp
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			i++
			j++
		case j == len(b) || i < len(a) && lcs[i+1][j] >= lcs[i][j+1]:
			ops = append(ops, lineOp{del: true, text: a[i]})
			i++
		default:
			ops = append(ops, lineOp{text: b[j]})
			j++
		}
	}
	return ops
}

// firstDiff is the rune offset where a and b first differ.
func firstDiff(a, b string) int {
	n := 0
	for a != "" && b != "" {
		ra, sa := utf8.DecodeRuneInString(a)
		rb, sb := utf8.DecodeRuneInString(b)
		if ra != rb {
			break
		}
		a, b, n = a[sa:], b[sb:], n+1
	}
	return n
}

// window is line cut to diffWidth runes, starting a little before rune
// from, with "…" where it was cut.
func window(line string, from int) string {
	r := []rune(line)
	if len(r) <= diffWidth {
		return line
	}
	start := max(0, min(from-diffWidth/4, len(r)-diffWidth))
	end := min(len(r), start+diffWidth)
	s := string(r[start:end])
	if start > 0 {
		s = "…" + string(r[start+1:end])
	}
	if end < len(r) {
		s = strings.TrimSuffix(s, string(r[end-1])) + "…"
	}
	return s
}
