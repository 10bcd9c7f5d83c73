package stats

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
)

// WriteJSON writes the table as indented JSON. Call Finish first.
func (t *Table) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(t); err != nil {
		return fmt.Errorf("stats: write json: %w", err)
	}
	return nil
}

// WriteText writes the table for a terminal. Call Finish first.
func (t *Table) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s, %s, %s\n\n", numfmt.Count(t.Captures, "capture", "captures"),
		numfmt.Count(t.Turns, "Messages turn", "Messages turns"), numfmt.Count(t.Exchanges, "exchange", "exchanges"))

	fmt.Fprintln(tw, "MCP SERVER / TOOL\tOFFERED\tFOUND\tLOADED\tCALLED\tBLIND")
	if len(t.Servers) == 0 {
		fmt.Fprintln(tw, "(no MCP tool offered)")
	}
	for _, s := range t.Servers {
		row(tw, "mcp__"+s.Name+" (server)", s.Counts)
		for _, tool := range s.Tools {
			row(tw, "  "+strings.TrimPrefix(tool.Name, "mcp__"+s.Name+"__"), tool.Counts)
		}
	}
	fmt.Fprintln(tw, "(offered, loaded: in how many captures; found: by how many searches; called, blind: calls)")
	fmt.Fprintln(tw)

	fmt.Fprintln(tw, "FLAG\tCOUNT\tPER 100 TURNS\tCAPTURES")
	if len(t.Flags) == 0 {
		fmt.Fprintln(tw, "(no flags)")
	}
	for _, f := range t.Flags {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%s\n", f.Kind, f.Count, f.Per100Turns, nameList(f.Captures, 3))
	}
	fmt.Fprintln(tw)

	cb := t.CacheBreaks
	fmt.Fprintf(tw, "CACHE BREAKS: %s, %s tokens written to the cache again", numfmt.Count(cb.Count, "break", "breaks"), numfmt.Thousands(cb.TokensLost))
	if t.Priced {
		fmt.Fprintf(tw, ", %s", approx(cb.Estimated > 0)+pricing.Format(cb.USD, true))
		if cb.Unpriced > 0 {
			fmt.Fprintf(tw, " (%d on models without a price left out)", cb.Unpriced)
		}
	}
	if len(cb.ByCause) > 0 {
		var causes []string
		for c := range cb.ByCause {
			causes = append(causes, c)
		}
		sort.Strings(causes)
		var parts []string
		for _, c := range causes {
			name := c
			if name == "" {
				name = "unknown"
			}
			parts = append(parts, fmt.Sprintf("%s ×%d", name, cb.ByCause[c]))
		}
		fmt.Fprintf(tw, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprint(tw, "\n\n")

	for _, sec := range []struct {
		title string
		gs    []Group
	}{{"CLIENT VERSION", t.Clients}, {"MODEL", t.Models}} {
		head := sec.title + "\tCAPTURES\tTURNS\tFLAGS\tCACHE BREAKS\tTOKENS LOST\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE"
		if t.Priced {
			head += "\tCOST\tBREAK COST"
		}
		fmt.Fprintln(tw, head)
		for _, g := range sec.gs {
			name := g.Name
			if name == "" {
				name = "(unknown)"
			}
			line := fmt.Sprintf("%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s", name, g.Captures, g.Turns, g.Flags, g.CacheBreaks,
				numfmt.Thousands(g.TokensLost), numfmt.Thousands(g.InputTokens), numfmt.Thousands(g.OutputTokens),
				numfmt.Thousands(g.CacheRead), numfmt.Thousands(g.CacheWrite))
			if t.Priced {
				priced := g.Unpriced < g.Turns
				mark := approx(priced && g.Estimated > 0)
				line += "\t" + mark + pricing.Format(g.USD, priced) + "\t" + mark + pricing.Format(g.BreakUSD, priced)
			}
			fmt.Fprintln(tw, line)
		}
		fmt.Fprintln(tw)
	}
	if t.Priced {
		fmt.Fprintf(tw, "Dollars: %s; input, output, cache reads and writes at list prices; a break costs its lost tokens billed again instead of read.\n", t.Prices)
		if len(t.Estimated) > 0 {
			fmt.Fprintf(tw, "≈ Not in the price table, priced as a neighbour: %s.\n", strings.Join(t.Estimated, ", "))
		}
		var unpriced []string
		for _, g := range t.Models {
			if g.Unpriced > 0 {
				unpriced = append(unpriced, orUnknown(g.Name))
			}
		}
		if len(unpriced) > 0 {
			fmt.Fprintf(tw, "No price for %s: left out of the dollars (add it with --prices FILE).\n", strings.Join(unpriced, ", "))
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("stats: write: %w", err)
	}
	return nil
}

// approx is "≈" when a figure priced a model as a neighbour in the table.
func approx(b bool) string {
	if b {
		return "≈"
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

func row(w io.Writer, name string, c Counts) {
	fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\n", name, c.Offered, c.Found, c.Loaded, c.Called, c.Blind)
}

// nameList joins up to n names and says how many more there are.
func nameList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s (+%d more)", strings.Join(names[:n], ", "), len(names)-n)
}
