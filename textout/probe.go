package textout

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/internal/termsafe"
	"github.com/tsinspect/tsinspect/report"
	"github.com/tsinspect/tsinspect/toolsearch"
	"github.com/tsinspect/tsinspect/toolsearch/claudetools"
)

// Probe writes what the probe command found of the tools in pool (sizes:
// the characters of each definition as Claude Code sends it; findings:
// toolsearch.Findable's, a finding per tool of pool): a line per tool with
// its tokens, the query that finds it and its problems; what deferring
// saves and whether ENABLE_TOOL_SEARCH=auto defers them in a context
// window of window tokens; which tools no name query finds; and the tools
// that only a number tells apart, of which a search returns maxResults
// at most.
func Probe(w io.Writer, pool []toolsearch.Tool, sizes map[string]int, findings []toolsearch.Finding, window, maxResults int) error {
	w = termsafe.Writer(w)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tTOKENS\tFOUND BY\tPROBLEMS")
	var defs, names int64
	var lost []string
	for i, t := range pool {
		f := findings[i]
		n := tokens(sizes[t.Name])
		defs += n
		names += tokens(len(t.Name) + 1)
		found := "-"
		if f.Found() {
			found = fmt.Sprintf("%q", f.Query)
		} else {
			lost = append(lost, t.Name)
		}
		problems := "-"
		if len(f.Problems) > 0 {
			problems = strings.Join(f.Problems, "; ")
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", t.Name, n, found, problems)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s: ≈%s tokens of definitions in every request when sent inline; deferred, the catalog lists their names for ≈%s tokens: deferring saves ≈%s tokens per request (the ToolSearch tool's own definition aside).\n",
		numfmt.Count(len(pool), "tool", "tools"), numfmt.Thousands(defs), numfmt.Thousands(names), numfmt.Thousands(defs-names))
	limit := int64(window) / 10
	verdict := "sent inline (below the threshold)"
	if defs > limit {
		verdict = "deferred (above the threshold)"
	}
	fmt.Fprintf(w, "ENABLE_TOOL_SEARCH=auto defers only when the deferred tools exceed 10 %% of the context window (%s of %s tokens): these tools would be %s; unset or true defers them always.\n",
		numfmt.Thousands(limit), numfmt.Thousands(int64(window)), verdict)
	if len(lost) > 0 {
		fmt.Fprintf(w, "%s no query of %s own name's words finds: %s\n", numfmt.Count(len(lost), "tool", "tools"), numfmt.Plural(len(lost), "its", "their"), strings.Join(lost, ", "))
	} else {
		fmt.Fprintln(w, "Every tool is found by a query of its own name's words.")
	}
	// Tools told apart by a number alone, or not at all, once per group.
	seen := map[string]bool{}
	for _, f := range findings {
		sh := f.Shared
		key := strings.Join(sh.Words, " ")
		if sh.Tools == 0 || seen[key] {
			continue
		}
		seen[key] = true
		n := 0
		for _, g := range findings {
			if strings.Join(g.Shared.Words, " ") == key {
				n++
			}
		}
		fmt.Fprintf(w, "Problem: %d of these tools have only %s in their names, as %d tools of the pool do: a search for what they do returns %d of them at most, and nothing in their names tells them apart but a number. Give each a name and description that say what it does differently.\n",
			n, quoteWords(sh.Words), sh.Tools, maxResults)
	}
	return nil
}

// tokens estimates the tokens of n characters of JSON.
func tokens(n int) int64 { return int64(math.Ceil(float64(n) / report.CharsPerToken)) }

// quoteWords writes words quoted: "action", or "send" and "mail".
func quoteWords(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = fmt.Sprintf("%q", w)
	}
	return strings.Join(q, " and ")
}

// ProbeSearches writes what probe searched among (the probed tools, and
// builtin's deferred tools unless it has none) with alg (how: why that
// one), then each of queries run over all.
func ProbeSearches(w io.Writer, builtin claudetools.Release, alg toolsearch.Algorithm, how string, queries []string, maxResults int, all []toolsearch.Tool) error {
	if len(builtin.Tools) > 0 {
		fmt.Fprintf(w, "Searched among them and Claude Code %s's %s (--claude-tools none to leave them out); keyword scoring %q: %s.\n",
			builtin.Version, numfmt.Count(len(builtin.Tools), "deferred tool", "deferred tools"), alg, how)
	} else {
		fmt.Fprintf(w, "Searched among them alone, without Claude Code's own deferred tools; keyword scoring %q: %s.\n", alg, how)
	}
	for _, q := range queries {
		r := toolsearch.ClientAs(alg, q, maxResults, all, all)
		if _, err := fmt.Fprintf(w, "\n%s", r.Text("")); err != nil {
			return err
		}
	}
	return nil
}
