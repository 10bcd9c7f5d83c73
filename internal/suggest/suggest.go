// Package suggest finds the word a user probably meant: the nearest
// command or flag name to a mistyped one.
package suggest

import "strings"

// Closest returns the candidate nearest to word by edit distance, when it
// is near enough to be a typo (at most a third of the word's length, and
// at most 3), or a candidate word is the start of; "" otherwise.
func Closest(word string, candidates []string) string {
	word = strings.ToLower(word)
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := EditDistance(word, strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" && bestD <= min(3, max(1, len(word)/3)) {
		return best
	}
	for _, c := range candidates {
		if len(word) >= 3 && strings.HasPrefix(c, word) {
			return c
		}
	}
	return ""
}

// EditDistance is the Levenshtein distance of a and b, counting an
// exchange of two neighbouring letters as one edit.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
