package toolsearch

import (
	"strconv"
	"strings"
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
}

// Found reports whether some query found the tool.
func (f Finding) Found() bool { return f.Query != "" }

// Findable tries, for each tool of the pool, the queries made of its own
// name: each word of the action (for mcp__server__action_words, the
// action's words), all of them, and the server with them; the tool is
// findable when one of them returns it within maxResults.
func Findable(alg Algorithm, pool []Tool, maxResults int) []Finding {
	var out []Finding
	for _, t := range pool {
		f := Finding{Name: t.Name}
		parts, _ := NameParts(t.Name)
		action := parts
		server := ""
		if t.IsMCP() {
			if rest := strings.TrimPrefix(t.Name, "mcp__"); strings.Contains(rest, "__") {
				srv, act, _ := strings.Cut(rest, "__")
				server = strings.ToLower(srv)
				action, _ = NameParts("mcp__" + act)
			}
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
		// and env.
		var ws []string
		hyphen := false
		for _, p := range action {
			pw := words(p)
			hyphen = hyphen || len(pw) > 1
			ws = append(ws, pw...)
		}
		for _, w := range ws {
			add(w)
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
