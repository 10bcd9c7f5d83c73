package textout

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tsinspect/tsinspect/coverage"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/internal/termsafe"
	"github.com/tsinspect/tsinspect/toolsearch"
)

// Searches writes the searches table of the searches command, a line per
// search, and a line counting them, those that loaded nothing and those
// that left out tools they named.
func Searches(w io.Writer, searches []*coverage.Search) error {
	w = termsafe.Writer(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TURN\tTHREAD\tSEARCH\tMODE\tQUERY\tRESULT")
	empty, partial := 0, 0
	for _, sr := range searches {
		var result string
		switch sr.Outcome {
		case coverage.OutcomeLoaded:
			var parts []string
			for _, name := range sr.Results {
				if at := sr.CalledAt[name]; at > 0 {
					parts = append(parts, fmt.Sprintf("%s (called #%d)", name, at))
				} else {
					parts = append(parts, name+" (never called)")
				}
			}
			result = "loaded " + strings.Join(parts, ", ")
			if len(sr.Missing) > 0 {
				result += "; left out " + strings.Join(sr.Missing, ", ")
				partial++
			}
		case coverage.OutcomeNoMatch:
			result, empty = "no match", empty+1
		case coverage.OutcomeError:
			result, empty = "error "+cell(sr.Detail, 60), empty+1
		default:
			result = "no result"
		}
		tool := sr.Tool
		if sr.Server {
			tool += " (server)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", sr.Turn, sr.Thread, tool, sr.Mode, cell(sr.Query, 48), result)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	line := fmt.Sprintf("%s, %d of them loaded nothing", numfmt.Count(len(searches), "search", "searches"), empty)
	if partial > 0 {
		line += fmt.Sprintf(", %d left out tools they named", partial)
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// Tools writes the tools table of 'searches --tools', a line per tool,
// and a line counting those found, loaded, called, called blind and
// untouched.
func Tools(w io.Writer, tools []*coverage.Tool) error {
	w = termsafe.Writer(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tDEFERRED\tTURNS\tFOUND BY\tLOADED\tCALLS\tBLIND")
	var found, loaded, called, blind, untouched int
	for _, t := range tools {
		deferred := "no"
		if t.Deferred {
			deferred = "yes"
		}
		foundBy := "-"
		if n := len(t.FoundBy); n > 0 {
			foundBy = fmt.Sprintf("#%d %s", t.FoundBy[0].Turn, cell(t.FoundBy[0].Query, 40))
			if n > 1 {
				foundBy += fmt.Sprintf(" (+%d more)", n-1)
			}
			found++
		} else if n := len(t.MissedBy); n > 0 {
			foundBy = fmt.Sprintf("missed by #%d %s", t.MissedBy[0].Turn, cell(t.MissedBy[0].Query, 40))
		}
		loadedAt := "-"
		if t.FirstLoaded > 0 {
			loadedAt = fmt.Sprintf("#%d", t.FirstLoaded)
			loaded++
		} else if !t.Deferred {
			loadedAt = "always"
		}
		if t.Calls > 0 {
			called++
		}
		if t.Blind > 0 {
			blind++
		}
		if len(t.FoundBy) == 0 && t.Calls == 0 {
			untouched++
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\t%d\n", t.Name, deferred, t.Turns, foundBy, loadedAt, t.Calls, t.Blind)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s: %d found by a search, %d loaded, %d called, %d called blind; %d never found nor called\n",
		numfmt.Count(len(tools), "tool", "tools"), found, loaded, called, blind, untouched)
	return err
}

// Explained writes the searches re-run by 'searches --explain': a line
// naming the keyword scoring alg and how it was chosen, each search with
// its candidates, then a summary line.
func Explained(w io.Writer, alg toolsearch.Algorithm, how string, es []toolsearch.Explained) error {
	w = termsafe.Writer(w)
	if _, err := fmt.Fprintf(w, "\nKeyword scoring %q: %s.\n", alg, how); err != nil {
		return err
	}
	for _, e := range es {
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
		if _, err := io.WriteString(w, e.Text()); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", toolsearch.Summary(es))
	return err
}
