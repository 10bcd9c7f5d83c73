package toolsearch

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// The server-side searches run on the API, whose ranking is not published.
// Regex and BM25 here read what the API documents they read (the tool's
// name, description, argument names and argument descriptions); what they
// return is the tools that match, in catalog order (regex) or by BM25
// score (bm25), at most limit of them. A difference from the recorded
// result says as much about the unpublished ranking as about the tools.

// BM25 parameters (the usual defaults).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Regex runs a tool_search_tool_regex pattern over the deferred tools.
// The pattern is Python re syntax; Go's RE2 takes most of it (not
// look-around or back-references), and an error says when it does not.
// limit 0 means DefaultMaxResults.
func Regex(pattern string, limit int, deferred []Tool) (Result, error) {
	if limit <= 0 {
		limit = DefaultMaxResults
	}
	r := Result{Mode: ModeRegex, Query: pattern, MaxResults: limit}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return r, fmt.Errorf("toolsearch: regex %q: %w", pattern, err)
	}
	var match []Candidate
	for _, t := range deferred {
		c := Candidate{Name: t.Name, DescriptionUnknown: t.DescriptionUnknown}
		switch {
		case re.MatchString(t.Name):
			c.Why = []string{"matches the name"}
		case re.MatchString(t.Description):
			c.Why = []string{"matches the description"}
		case re.MatchString(strings.Join(t.Params, "\n")):
			c.Why = []string{"matches an argument name or description"}
		default:
			r.Zero++
			continue
		}
		c.Score = 1
		match = append(match, c)
	}
	for i := range match {
		if i < limit {
			match[i].Returned = true
			r.Names = append(r.Names, match[i].Name)
		}
	}
	r.Candidates = match
	switch {
	case len(match) == 0:
		r.Cut = "No tool matches the pattern."
	case len(match) <= limit:
		r.Cut = fmt.Sprintf("%d %s the pattern, all within the limit of %d.", len(match), plural(len(match), "tool matches", "tools match"), limit)
	default:
		r.Cut = fmt.Sprintf("%d tools match the pattern; the limit of %d keeps the first in catalog order (the API's own order is not published).", len(match), limit)
	}
	return r, nil
}

// BM25 runs a tool_search_tool_bm25 query over the deferred tools: Okapi
// BM25 over the words of each tool's name parts, description and
// arguments. limit 0 means DefaultMaxResults.
func BM25(query string, limit int, deferred []Tool) Result {
	if limit <= 0 {
		limit = DefaultMaxResults
	}
	r := Result{Mode: ModeBM25, Query: query, MaxResults: limit}
	docs := make([][]string, len(deferred))
	df := map[string]int{}
	total := 0
	for i, t := range deferred {
		parts, _ := NameParts(t.Name)
		docs[i] = append(parts, words(t.Description+"\n"+strings.Join(t.Params, "\n"))...)
		total += len(docs[i])
		seen := map[string]bool{}
		for _, w := range docs[i] {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
	}
	if len(deferred) == 0 {
		r.Cut = "The request carries no deferred tool to search."
		return r
	}
	avg := float64(total) / float64(len(deferred))
	terms := words(query)
	var scored []Candidate
	for i, t := range deferred {
		tf := map[string]int{}
		for _, w := range docs[i] {
			tf[w]++
		}
		c := Candidate{Name: t.Name, DescriptionUnknown: t.DescriptionUnknown}
		for _, term := range terms {
			f := float64(tf[term])
			if f == 0 {
				continue
			}
			n := float64(df[term])
			idf := math.Log(1 + (float64(len(deferred))-n+0.5)/(n+0.5))
			s := idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(len(docs[i]))/avg))
			c.Score += s
			c.Why = append(c.Why, fmt.Sprintf("%q ×%d +%.2f", term, tf[term], s))
		}
		if c.Score == 0 {
			r.Zero++
			continue
		}
		scored = append(scored, c)
	}
	sort.SliceStable(scored, func(a, b int) bool { return scored[a].Score > scored[b].Score })
	for i := range scored {
		if i < limit {
			scored[i].Returned = true
			r.Names = append(r.Names, scored[i].Name)
		}
	}
	r.Candidates = scored
	r.Cut = cutText(scored, limit, r.Zero, 0)
	return r
}

// words splits text into lower-case words of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Diff compares a simulated result with a recorded one: "" when they
// load the same tools in the same order, else a sentence saying how they
// differ.
func Diff(simulated, recorded []string) string {
	if strings.Join(simulated, "\x00") == strings.Join(recorded, "\x00") {
		return ""
	}
	in := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	var only, missing []string
	for _, n := range simulated {
		if !in(recorded, n) {
			only = append(only, n)
		}
	}
	for _, n := range recorded {
		if !in(simulated, n) {
			missing = append(missing, n)
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "recorded but not simulated: "+strings.Join(missing, ", "))
	}
	if len(only) > 0 {
		parts = append(parts, "simulated but not recorded: "+strings.Join(only, ", "))
	}
	if len(parts) == 0 {
		return "same tools in another order: recorded " + strings.Join(recorded, ", ")
	}
	return strings.Join(parts, "; ")
}
