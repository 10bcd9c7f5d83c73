package toolsearch

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/toolsearch/claudetools"
)

// Finding says whether a tool can be found by a query a model would
// plausibly write: the words of its own name.
type Finding struct {
	Name string
	// Query is the first query of its name's words that returns it; ""
	// when none does.
	Query string
	// Tried lists the queries tried, in order.
	Tried []string
	// Problems say what makes the tool hard to find: an empty
	// description, a name whose words other tools share.
	Problems []string
	// Shared, when its Tools is more than max_results, is the words of the
	// tool's name (numbers aside) and how many tools of the pool have all
	// of them in their names: a search for those words returns only some.
	Shared Shared
}

// Shared is a set of name words and the number of tools whose names hold
// them all.
type Shared struct {
	Words []string
	Tools int
}

// Found reports whether some query found the tool.
func (f Finding) Found() bool { return f.Query != "" }

// Findable tries, for each of tools, the queries a model would write of
// its own name: each word of the action (for mcp__server__action_words,
// the action's words) that is a word (not a number, three letters or
// more), all of them, and the server with them; the tool is findable when
// one of them returns it within maxResults, searching pool (tools and
// whatever else competes: Claude Code's own deferred tools). It also
// names what makes a tool hard to find: an empty description, words
// joined into one name part, and name words so many tools share that a
// search for them returns only some.
func Findable(alg Algorithm, tools, pool []Tool, maxResults int) []Finding {
	var out []Finding
	for _, t := range tools {
		f := Finding{Name: t.Name}
		parts, _ := NameParts(t.Name)
		action := parts
		server := ""
		if srv, act, ok := decode.SplitMCP(t.Name); ok {
			server = strings.ToLower(srv)
			action, _ = NameParts(decode.MCPPrefix + act)
		}
		var queries []string
		add := func(q string) {
			q = strings.TrimSpace(q)
			for _, x := range queries {
				if x == q {
					return
				}
			}
			if q != "" {
				queries = append(queries, q)
			}
		}
		// A model writes words: a part like get-env is queried as get
		// and env. A number alone ("7") is no query a model makes.
		var ws, named []string
		hyphen := false
		for _, p := range action {
			pw := words(p)
			hyphen = hyphen || len(pw) > 1
			ws = append(ws, pw...)
		}
		for _, w := range ws {
			if isWord(w) {
				named = append(named, w)
				add(w)
			}
		}
		add(strings.Join(ws, " "))
		if server != "" {
			add(strings.Join(append(words(server), ws...), " "))
		}
		if hyphen {
			f.Problems = append(f.Problems, "words joined by - or . form one name part: a query word matches it only as a substring (+6, not +12)")
		}
		f.Tried = queries
		for _, q := range queries {
			r := ClientAs(alg, q, maxResults, pool, pool)
			for _, n := range r.Names {
				if n == t.Name {
					f.Query = q
					break
				}
			}
			if f.Query != "" {
				break
			}
		}
		if strings.TrimSpace(t.Description) == "" {
			f.Problems = append(f.Problems, "empty description: only its name can match")
		}
		if shared := sharing(named, pool); len(named) > 0 && shared > maxResults {
			p := fmt.Sprintf("%s in %d names", quoteList(named), shared)
			if rest := numbers(ws); len(rest) > 0 {
				p += "; only " + quoteList(rest) + " tells it apart"
			}
			f.Problems = append(f.Problems, p)
			f.Shared = Shared{Words: named, Tools: shared}
		}
		if !f.Found() {
			q := strings.Join(ws, " ")
			r := ClientAs(alg, q, maxResults, pool, pool)
			ties := 0
			var mine float64
			for _, c := range r.Candidates {
				if c.Name == t.Name {
					mine = c.Score
				}
			}
			for _, c := range r.Candidates {
				if c.Name != t.Name && c.Score >= mine && c.Excluded == "" {
					ties++
				}
			}
			f.Problems = append(f.Problems, "no distinctive name part: "+plural(ties, "1 tool scores", strconv.Itoa(ties)+" tools score")+" as high or higher on \""+q+"\"")
		}
		out = append(out, f)
	}
	return out
}

// isWord reports whether w is a word a model would search for alone:
// three letters or more, not a number.
func isWord(w string) bool {
	if len(w) < 3 {
		return false
	}
	_, err := strconv.Atoi(w)
	return err != nil
}

// numbers lists the words of ws that are not words a model searches for
// alone (numbers, one or two letters).
func numbers(ws []string) []string {
	var out []string
	for _, w := range ws {
		if !isWord(w) {
			out = append(out, w)
		}
	}
	return out
}

// sharing counts the tools of pool whose name parts hold every word of
// named.
func sharing(named []string, pool []Tool) int {
	n := 0
	for _, t := range pool {
		parts, _ := NameParts(t.Name)
		all := true
		for _, w := range named {
			found := false
			for _, p := range parts {
				for _, pw := range words(p) {
					found = found || pw == w
				}
			}
			all = all && found
		}
		if all {
			n++
		}
	}
	return n
}

// quoteList writes words quoted and joined: "send", "slack" and "mail".
func quoteList(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = strconv.Quote(w)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// Pool is what ToolSearch searches among: tools and the deferred tools of
// a Claude Code release (builtin), sorted by name as Claude Code's catalog
// lists them, the order in which ToolSearch breaks ties.
func Pool(tools []Tool, builtin claudetools.Release) []Tool {
	all := slices.Clone(tools)
	for _, t := range builtin.Tools {
		all = append(all, Tool{Name: t.Name, Description: t.Description})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// Loads reports whether query, run with alg over all, loads tool, and
// names what it loads.
func Loads(alg Algorithm, query, tool string, maxResults int, all []Tool) (bool, []string) {
	r := ClientAs(alg, query, maxResults, all, all)
	return slices.Contains(r.Names, tool), r.Names
}

// Lost names the tools of findings that no query of their name's words
// finds.
func Lost(findings []Finding) []string {
	var lost []string
	for _, f := range findings {
		if !f.Found() {
			lost = append(lost, f.Name)
		}
	}
	return lost
}

// Expect is one --expect of 'tsinspect probe': Query must load Tool.
type Expect struct{ Query, Tool string }

// ParseExpects reads --expect values, each QUERY=TOOL.
func ParseExpects(list []string) ([]Expect, error) {
	var out []Expect
	for _, e := range list {
		q, tool, ok := strings.Cut(e, "=")
		if q, tool = strings.TrimSpace(q), strings.TrimSpace(tool); !ok || q == "" || tool == "" {
			return nil, fmt.Errorf("--expect %q: want QUERY=TOOL", e)
		}
		out = append(out, Expect{q, tool})
	}
	return out, nil
}

// Unmet says, a line each, which of expects alg does not meet over all.
func Unmet(alg Algorithm, expects []Expect, maxResults int, all []Tool) []string {
	var out []string
	for _, e := range expects {
		if ok, names := Loads(alg, e.Query, e.Tool, maxResults, all); !ok {
			got := "nothing"
			if len(names) > 0 {
				got = strings.Join(names, ", ")
			}
			out = append(out, fmt.Sprintf("--expect: %q does not load %s (it loads %s)", e.Query, e.Tool, got))
		}
	}
	return out
}
