// Package toolsearch re-runs tool searches offline: Claude Code's
// client-side ToolSearch, following its published algorithm (select:
// lookup, the mcp__ prefix fast path, keyword scoring with +required
// terms and max_results), and an approximation of the API's server-side
// tool_search_tool_regex and tool_search_tool_bm25. Every result says, per
// candidate, what its score is made of, and where and why the cut fell, so
// that a person can see why a search loaded what it did, and a simulated
// result can be compared with a recorded one.
//
// It does no I/O.
package toolsearch

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
)

// Modes of a search (Result.Mode). They extend decode's query modes with
// the fast paths the algorithm takes.
const (
	ModeSelect   = "select"   // "select:A,B": a lookup by name
	ModeExact    = "exact"    // the query is a tool's name
	ModePrefix   = "prefix"   // mcp__ prefix fast path
	ModeKeyword  = "keyword"  // keyword scoring
	ModeRequired = "required" // keyword scoring with +required terms
	ModeRegex    = "regex"    // server tool_search_tool_regex
	ModeBM25     = "bm25"     // server tool_search_tool_bm25
)

// DefaultMaxResults is ToolSearch's max_results when the call sets none.
const DefaultMaxResults = 5

// Algorithm names a variant of the keyword scoring.
type Algorithm string

// The keyword scorings a search can be re-run with.
const (
	// Published is the algorithm as published for Claude Code 2.1.x
	// (name parts, substrings, full name, search hint, description).
	Published Algorithm = "published"
	// Observed is what Claude Code 2.1.328 runs: the published scoring
	// plus the server and tool names scored whole ("coarse parts": +12
	// MCP / +10 otherwise for an equal term, else +4 / +3 for a name
	// containing it, also counting for +required), and MCP name parts
	// split on '.' and blanks as well as '_'.
	Observed Algorithm = "2.1.328"
)

// Auto asks for the algorithm of the Claude Code release that made the
// capture ([ForVersion]); the command line's default.
const Auto = "auto"

// measured lists the Claude Code releases whose ToolSearch results were
// recorded and compared with each scoring, oldest first, with the scoring
// that agreed with every recorded search.
var measured = []struct {
	version string
	alg     Algorithm
}{
	{"2.1.328", Observed},
	{"2.1.331", Observed},
}

// ForVersion returns the scoring Claude Code version v runs, and a phrase
// saying how that is known: the release was measured, or it is taken from
// the newest measured release before it (a newer release, or one between
// two measured), or, for a release older than any measured or no version,
// the published algorithm.
func ForVersion(v string) (Algorithm, string) {
	if v == "" {
		return Published, "the published scoring (no Claude Code release to follow)"
	}
	best := -1
	for i, m := range measured {
		switch c := exchange.CompareVersions(m.version, v); {
		case c == 0:
			return m.alg, fmt.Sprintf("the scoring Claude Code %s runs, as measured", v)
		case c < 0:
			best = i
		}
	}
	if best < 0 {
		return Published, fmt.Sprintf("the published scoring: Claude Code %s is older than any release measured (%s)", v, measured[0].version)
	}
	m := measured[best]
	return m.alg, fmt.Sprintf("the scoring of Claude Code %s, the newest release measured before %s", m.version, v)
}

// Versions lists the measured Claude Code releases, oldest first.
func Versions() []string {
	out := make([]string, len(measured))
	for i, m := range measured {
		out[i] = m.version
	}
	return out
}

// ParseAlgorithm reads an --algorithm value: "published", a scoring's name
// ("2.1.328"), or any Claude Code version ("2.1.331": the scoring that
// release runs, see [ForVersion]). Auto is for the caller to resolve.
func ParseAlgorithm(s string) (Algorithm, error) {
	switch a := Algorithm(s); a {
	case Published, Observed:
		return a, nil
	}
	if isVersion(s) {
		a, _ := ForVersion(s)
		return a, nil
	}
	return "", fmt.Errorf("toolsearch: algorithm %q: want %s, %s or a Claude Code version (%s measured)", s, Published, Auto, strings.Join(Versions(), ", "))
}

// Resolve reads an --algorithm value for a capture made by Claude Code
// version (or "" when unknown): Auto resolves to that version's scoring.
// how says in a phrase which scoring it is and how that is known.
func Resolve(value, version string) (alg Algorithm, how string, err error) {
	switch {
	case value == Auto:
		alg, how = ForVersion(version)
		return alg, how, nil
	case Algorithm(value) == Published:
		return Published, "the published algorithm", nil
	case isVersion(value):
		alg, how = ForVersion(value)
		return alg, how, nil
	}
	alg, err = ParseAlgorithm(value)
	return alg, "as --algorithm asks", err
}

// isVersion reports whether s is a dotted version such as 2.1.331.
func isVersion(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// Points of the coarse-part scoring (Observed only).
const (
	PointsCoarseMCP          = 12 // a term equals an MCP tool's server or tool name
	PointsCoarse             = 10 // ... a built-in tool's name
	PointsCoarseSubstringMCP = 4  // the server or tool name contains the term
	PointsCoarseSubstring    = 3  // ... a built-in tool's name
)

// Points of the keyword scoring, as published.
const (
	PointsPartMCP      = 12 // a term equals a name part of an MCP tool
	PointsPart         = 10 // ... of any other tool
	PointsSubstringMCP = 6  // a term is a substring of a name part, MCP tool
	PointsSubstring    = 5  // ... any other tool
	PointsFullName     = 3  // the term occurs in the full name, score still 0
	PointsHint         = 4  // the term matches the search hint at word boundaries
	PointsDescription  = 2  // the term matches the description at word boundaries
)

// Tool is a tool a search can return.
type Tool struct {
	Name        string
	Description string
	// SearchHint is an MCP tool's _meta["anthropic/searchHint"].
	SearchHint string
	// DescriptionUnknown is set when the description is not known (a
	// capture announces deferred tools by name only; the description is
	// known once some request sends the tool's schema). Scores then lack
	// the description's points.
	DescriptionUnknown bool
	// Params are the input schema's property names and descriptions,
	// which the server-side searches also read.
	Params []string
}

// IsMCP reports whether the tool is an MCP tool (weighted higher).
func (t Tool) IsMCP() bool { return decode.IsMCP(t.Name) }

// Candidate is one tool a search considered.
type Candidate struct {
	Name  string
	Score float64
	// Why lists what the score is made of, one entry per contribution:
	// `"slack" = name part +12`.
	Why []string
	// Returned is set when the search returns the tool.
	Returned bool
	// Excluded says why the tool was not scored at all (a +required term
	// it lacks); empty otherwise.
	Excluded string
	// DescriptionUnknown is copied from the tool.
	DescriptionUnknown bool
}

// Result is what a search returns and why.
type Result struct {
	Mode       string
	Query      string
	MaxResults int
	// Names are the tools the search returns (its tool_reference blocks),
	// in order.
	Names []string
	// Candidates are the tools that scored (or matched), best first, then
	// the tools a +required term excluded. Tools that scored 0 are left
	// out, except in Zero.
	Candidates []Candidate
	// Zero counts the tools of the pool that scored 0.
	Zero int
	// Cut says where the list was cut and why, in a sentence.
	Cut string
	// Unknown lists the select: names found nowhere.
	Unknown []string
	// AlreadyLoaded lists the select: names found only among the loaded
	// (not deferred) tools: returned as a no-op.
	AlreadyLoaded []string
}

// Client runs Claude Code's ToolSearch, as published, over the deferred
// tools (the pool a search can load) and all the tools of the request
// (for select:'s fall-back to loaded tools). maxResults 0 means
// DefaultMaxResults.
func Client(query string, maxResults int, deferred, all []Tool) Result {
	return ClientAs(Published, query, maxResults, deferred, all)
}

// ClientAs is Client with the keyword scoring of alg.
func ClientAs(alg Algorithm, query string, maxResults int, deferred, all []Tool) Result {
	if maxResults <= 0 {
		maxResults = DefaultMaxResults
	}
	r := Result{Query: query, MaxResults: maxResults}
	q := strings.TrimSpace(query)
	if rest, ok := cutPrefixFold(q, "select:"); ok {
		return selectTools(r, rest, deferred, all)
	}
	lq := strings.ToLower(q)
	if t, ok := findFold(deferred, lq); ok {
		r.Mode, r.Names = ModeExact, []string{t.Name}
		r.Candidates = []Candidate{{Name: t.Name, Returned: true, Why: []string{"the query is the tool's name"}}}
		r.Cut = "The query is a deferred tool's exact name: that tool alone is returned, without scoring."
		return r
	}
	if t, ok := findFold(all, lq); ok {
		r.Mode, r.Names = ModeExact, []string{t.Name}
		r.Candidates = []Candidate{{Name: t.Name, Returned: true, Why: []string{"the query is the tool's name (already loaded)"}}}
		r.Cut = "The query is the exact name of a tool already loaded: it is returned as is, without scoring."
		return r
	}
	if strings.HasPrefix(lq, "mcp__") && len(lq) > len("mcp__") {
		var match []string
		for _, t := range deferred {
			if strings.HasPrefix(strings.ToLower(t.Name), lq) {
				match = append(match, t.Name)
			}
		}
		if len(match) > 0 {
			r.Mode = ModePrefix
			for i, n := range match {
				r.Candidates = append(r.Candidates, Candidate{Name: n, Returned: i < maxResults, Why: []string{"name starts with " + lq}})
			}
			r.Names = match[:min(len(match), maxResults)]
			r.Cut = fmt.Sprintf("mcp__ prefix fast path: %d deferred %s start with %q", len(match), plural(len(match), "tool", "tools"), lq)
			if len(match) > maxResults {
				r.Cut += fmt.Sprintf("; the first %d in catalog order are returned (max_results %d), %s left out.", maxResults, maxResults, strings.Join(match[maxResults:], ", "))
			} else {
				r.Cut += "; all are returned."
			}
			return r
		}
	}
	return keyword(r, alg, lq, deferred)
}

// selectTools looks each name up in the deferred pool, then among all
// tools.
func selectTools(r Result, list string, deferred, all []Tool) Result {
	r.Mode = ModeSelect
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if t, ok := find(deferred, n); ok {
			r.Names = append(r.Names, t.Name)
			r.Candidates = append(r.Candidates, Candidate{Name: t.Name, Returned: true, Why: []string{"named, in the deferred pool"}})
			continue
		}
		if t, ok := find(all, n); ok {
			r.Names = append(r.Names, t.Name)
			r.AlreadyLoaded = append(r.AlreadyLoaded, t.Name)
			r.Candidates = append(r.Candidates, Candidate{Name: t.Name, Returned: true, Why: []string{"named, already loaded (a no-op)"}})
			continue
		}
		r.Unknown = append(r.Unknown, n)
	}
	r.Cut = fmt.Sprintf("select: is a lookup, not a search: %d of %d %s found", len(r.Names), len(r.Names)+len(r.Unknown), plural(len(r.Names)+len(r.Unknown), "name", "names"))
	if len(r.Unknown) > 0 {
		r.Cut += "; not in the deferred pool nor among the tools: " + strings.Join(r.Unknown, ", ")
	}
	r.Cut += "."
	return r
}

// keyword scores every deferred tool against the query's terms.
func keyword(r Result, alg Algorithm, lq string, deferred []Tool) Result {
	r.Mode = ModeKeyword
	var required, optional []string
	terms := strings.Fields(lq)
	for _, t := range terms {
		if len(t) > 1 && strings.HasPrefix(t, "+") {
			required = append(required, t[1:])
		} else {
			optional = append(optional, t)
		}
	}
	scoring := terms
	if len(required) > 0 {
		r.Mode = ModeRequired
		scoring = append(append([]string{}, required...), optional...)
	}
	var scored, excluded []Candidate
	for _, t := range deferred {
		c := Candidate{Name: t.Name, DescriptionUnknown: t.DescriptionUnknown}
		parts, full := NameParts(t.Name)
		var coarse []string
		if alg == Observed {
			parts, coarse, full = observedParts(t.Name)
		}
		if missing := missingRequired(required, append(append([]string{}, parts...), coarse...), t); len(missing) > 0 {
			c.Excluded = "lacks required " + plural(len(missing), "term ", "terms ") + strings.Join(missing, ", ")
			excluded = append(excluded, c)
			continue
		}
		score := 0
		for _, term := range scoring {
			switch {
			case contains(parts, term):
				p := pick(t.IsMCP(), PointsPartMCP, PointsPart)
				score += p
				c.Why = append(c.Why, fmt.Sprintf("%q = name part +%d", term, p))
			case anyContains(parts, term):
				p := pick(t.IsMCP(), PointsSubstringMCP, PointsSubstring)
				score += p
				c.Why = append(c.Why, fmt.Sprintf("%q in a name part +%d", term, p))
			}
			switch {
			case alg != Observed:
			case contains(coarse, term):
				p := pick(t.IsMCP(), PointsCoarseMCP, PointsCoarse)
				score += p
				c.Why = append(c.Why, fmt.Sprintf("%q = whole name +%d", term, p))
			case anyContains(coarse, term):
				p := pick(t.IsMCP(), PointsCoarseSubstringMCP, PointsCoarseSubstring)
				score += p
				c.Why = append(c.Why, fmt.Sprintf("%q in a whole name +%d", term, p))
			}
			if score == 0 && strings.Contains(full, term) {
				score += PointsFullName
				c.Why = append(c.Why, fmt.Sprintf("%q in the full name +%d", term, PointsFullName))
			}
			if t.SearchHint != "" && wordMatch(term, t.SearchHint) {
				score += PointsHint
				c.Why = append(c.Why, fmt.Sprintf("%q in the search hint +%d", term, PointsHint))
			}
			if wordMatch(term, t.Description) {
				score += PointsDescription
				c.Why = append(c.Why, fmt.Sprintf("%q in the description +%d", term, PointsDescription))
			}
		}
		c.Score = float64(score)
		if score == 0 {
			r.Zero++
			continue
		}
		scored = append(scored, c)
	}
	sort.SliceStable(scored, func(a, b int) bool { return scored[a].Score > scored[b].Score })
	for i := range scored {
		if i < r.MaxResults {
			scored[i].Returned = true
			r.Names = append(r.Names, scored[i].Name)
		}
	}
	r.Candidates = append(scored, excluded...)
	r.Cut = cutText(scored, r.MaxResults, r.Zero, len(excluded))
	return r
}

// cutText says where the ranked list was cut and why.
func cutText(scored []Candidate, max, zero, excluded int) string {
	var s string
	switch {
	case len(scored) == 0:
		s = "No tool scored: the search returns nothing (\"No matching deferred tools found\")."
	case len(scored) <= max:
		s = fmt.Sprintf("All %d scoring %s returned (max_results %d); the cut is the score of 0.", len(scored), plural(len(scored), "tool is", "tools are"), max)
	default:
		last, next := scored[max-1], scored[max]
		s = fmt.Sprintf("%d tools scored; max_results %d cut the list after %s (%s)", len(scored), max, last.Name, score(last.Score))
		if last.Score == next.Score {
			s += fmt.Sprintf(", in a tie with %s (%s) that catalog order broke", next.Name, score(next.Score))
		} else {
			s += fmt.Sprintf("; the best left out is %s (%s)", next.Name, score(next.Score))
		}
		s += "."
	}
	if zero > 0 {
		s += fmt.Sprintf(" %d %s scored 0.", zero, plural(zero, "tool", "tools"))
	}
	if excluded > 0 {
		s += fmt.Sprintf(" %d %s lacked a required term.", excluded, plural(excluded, "tool", "tools"))
	}
	return s
}

func score(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("score %d", int64(f))
	}
	return fmt.Sprintf("score %.2f", f)
}

// missingRequired lists the required terms that match neither a name
// part, the description nor the search hint.
func missingRequired(required, parts []string, t Tool) []string {
	var out []string
	for _, term := range required {
		if anyContains(parts, term) || wordMatch(term, t.Description) || (t.SearchHint != "" && wordMatch(term, t.SearchHint)) {
			continue
		}
		out = append(out, term)
	}
	return out
}

// NameParts splits a tool name into the lower-case parts the keyword
// scoring compares terms with, and the full name as the scoring reads it:
// mcp__slack__send_message gives slack, send, message and "slack send
// message"; NotebookEdit gives notebook, edit and "notebook edit".
func NameParts(name string) (parts []string, full string) {
	if rest, ok := strings.CutPrefix(name, decode.MCPPrefix); ok {
		rest = strings.ToLower(rest)
		parts = append(parts, strings.FieldsFunc(rest, func(r rune) bool { return r == '_' })...)
		full = strings.ReplaceAll(strings.ReplaceAll(rest, "__", " "), "_", " ")
		return parts, full
	}
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) && unicode.IsLower(rs[i-1]) {
			b.WriteByte(' ')
		}
		if r == '_' {
			r = ' '
		}
		b.WriteRune(r)
	}
	parts = strings.Fields(strings.ToLower(b.String()))
	return parts, strings.Join(parts, " ")
}

// observedParts is how Claude Code 2.1.328 reads a name: for an MCP
// tool the server and tool names (the coarse parts) each split on '_',
// '.' and blanks; for another tool the CamelCase parts, and the whole
// name as its coarse part.
func observedParts(name string) (parts, coarse []string, full string) {
	if !decode.IsMCP(name) {
		parts, full = NameParts(name)
		return parts, []string{strings.ToLower(name)}, full
	}
	server, tool, _ := decode.SplitMCP(name)
	for _, n := range []string{server, tool} {
		if n = strings.ToLower(n); n != "" {
			coarse = append(coarse, n)
			parts = append(parts, strings.FieldsFunc(n, func(r rune) bool { return r == '_' || r == '.' || unicode.IsSpace(r) })...)
		}
	}
	return parts, coarse, strings.Join(parts, " ")
}

// wordMatch reports whether term occurs in text at word boundaries, case
// folded (\bterm\b).
func wordMatch(term, text string) bool {
	if term == "" || text == "" {
		return false
	}
	re, err := regexp.Compile(`(?i)\b` + regexp.QuoteMeta(term) + `\b`)
	if err != nil {
		return false
	}
	return re.MatchString(text)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func anyContains(list []string, s string) bool {
	for _, x := range list {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

func find(tools []Tool, name string) (Tool, bool) {
	for _, t := range tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

func findFold(tools []Tool, lname string) (Tool, bool) {
	for _, t := range tools {
		if strings.ToLower(t.Name) == lname {
			return t, true
		}
	}
	return Tool{}, false
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func pick(mcp bool, a, b int) int {
	if mcp {
		return a
	}
	return b
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
