package toolsearch

import (
	"fmt"
	"strings"
)

// Text renders the result for a person: the query and mode, what it
// returns, one line per candidate (score, name, what the score is made
// of) and where the cut fell. Lines are indented by indent.
func (r Result) Text(indent string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s query %q, max_results %d\n", indent, r.Mode, r.Query, r.MaxResults)
	if len(r.Names) == 0 {
		fmt.Fprintf(&b, "%sreturns nothing\n", indent)
	} else {
		fmt.Fprintf(&b, "%sreturns %s\n", indent, strings.Join(r.Names, ", "))
	}
	width := 0
	for _, c := range r.Candidates {
		width = max(width, len(c.Name))
	}
	shown := 0
	for i, c := range r.Candidates {
		if !c.Returned {
			if shown == maxShownOut {
				rest := r.Candidates[i:]
				fmt.Fprintf(&b, "%s   … %d more: %s\n", indent, len(rest), restText(rest))
				break
			}
			shown++
		}
		mark := " "
		if c.Returned {
			mark = "+"
		}
		s := fmtScore(c.Score)
		if r.Mode == ModeSelect || r.Mode == ModeExact || r.Mode == ModePrefix || r.Mode == ModeRegex {
			s = ""
		}
		why := strings.Join(c.Why, "; ")
		if c.Excluded != "" {
			s, why = "-", c.Excluded
		}
		if c.DescriptionUnknown && (r.Mode == ModeKeyword || r.Mode == ModeRequired || r.Mode == ModeRegex || r.Mode == ModeBM25) {
			why += " (description unknown)"
		}
		fmt.Fprintf(&b, "%s %s %6s  %-*s  %s\n", indent, mark, s, width, c.Name, why)
	}
	fmt.Fprintf(&b, "%s%s\n", indent, r.Cut)
	return b.String()
}

func fmtScore(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%.2f", f)
}

// maxShownOut is how many candidates left out by the cut Text lists one
// by one.
const maxShownOut = 5

// restText sums up candidates not listed: their score range, or that a
// required term excluded them.
func restText(rest []Candidate) string {
	lo, hi, scored, excluded := 0.0, 0.0, 0, 0
	for _, c := range rest {
		if c.Excluded != "" {
			excluded++
			continue
		}
		if scored == 0 || c.Score < lo {
			lo = c.Score
		}
		if scored == 0 || c.Score > hi {
			hi = c.Score
		}
		scored++
	}
	var parts []string
	if scored > 0 {
		sc := "score " + fmtScore(hi)
		if lo != hi {
			sc = "scores " + fmtScore(lo) + " to " + fmtScore(hi)
		}
		parts = append(parts, fmt.Sprintf("%d with %s", scored, sc))
	}
	if excluded > 0 {
		parts = append(parts, fmt.Sprintf("%d lacking a required term", excluded))
	}
	return strings.Join(parts, ", ")
}
