// Package diffreport writes the comparison of two sessions (package
// timeline/compare) for a terminal (80 columns), as JSON, and as Markdown
// or HTML for a bug report, redacted as reports are.
package diffreport

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/report"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/compare"
)

// Input is one of the two sessions.
type Input struct {
	// Name is what the user called it (the file name).
	Name    string
	Session *timeline.Session
	// Exchanges are the session's exchanges, for the private values
	// redaction looks for; may be nil.
	Exchanges []*exchange.Exchange
}

// DefaultPolicy is the redaction of a comparison written in format when
// none is asked for: Default for markdown and html, which are shared, Off
// for text and json, which are for one's own terminal.
func DefaultPolicy(format string) redact.Policy {
	if format == "markdown" || format == "html" {
		return redact.Default
	}
	return redact.Off
}

// Load reads the two sessions a and b at once (source.LoadAll, warnings
// to log): a diff takes about as long as reading the longer one. The
// error of each that cannot be read is made by notRead, and both are
// joined.
func Load(a, b string, log io.Writer, notRead func(path string, err error) error) (in [2]Input, err error) {
	paths := []string{a, b}
	bs, errs := source.LoadAll(paths, log)
	for i, path := range paths {
		if errs[i] != nil {
			errs[i] = notRead(path, errs[i])
			continue
		}
		in[i] = Input{Name: path, Session: bs[i].Session(), Exchanges: bs[i].Exchanges()}
	}
	return in, errors.Join(errs...)
}

// Options tune Build.
type Options struct {
	// Prices prices both sessions; nil leaves them unpriced.
	Prices *pricing.Table
	// Policy redacts what is written (redact.Off: nothing).
	Policy redact.Policy
	// Tools, when set, compares the searches of the tools whose names
	// start with it.
	Tools string
	// Version is the tsinspect release, written in "generator".
	Version string
}

// Result is the comparison as written.
type Result struct {
	Generator string `json:"generator"`
	A         string `json:"a"`
	B         string `json:"b"`
	// Prices names the price table; Redaction says what was removed.
	Prices    string `json:"prices,omitempty"`
	Redaction string `json:"redaction,omitempty"`
	// ToolsPrefix is --tools, when given.
	ToolsPrefix string `json:"tools_prefix,omitempty"`
	*compare.Diff
}

// Build compares a and b.
func Build(a, b Input, opts Options) *Result {
	side := func(in Input) compare.Side {
		s := compare.Side{Session: in.Session}
		if opts.Prices == nil {
			return s
		}
		r := report.Build(in.Session, opts.Version)
		r.Price(opts.Prices)
		cost := make(map[int]*report.Cost, len(r.Turns))
		for i := range r.Turns {
			cost[r.Turns[i].Index] = r.Turns[i].Cost
		}
		s.Cost = func(t *timeline.Turn) (float64, bool) {
			if c := cost[t.Index]; c != nil {
				return c.USD, true
			}
			return 0, false
		}
		if r.Costs != nil {
			s.CacheBreaksUSD, s.BlindCallsUSD = r.Costs.CacheBreaksUSD, r.Costs.BlindCallsUSD
		}
		return s
	}
	var co compare.Options
	if opts.Tools != "" {
		co.Tools = func(name string) bool { return strings.HasPrefix(name, opts.Tools) }
	}
	res := &Result{Generator: "tsinspect " + opts.Version, A: a.Name, B: b.Name, ToolsPrefix: opts.Tools,
		Diff: compare.Compare(side(a), side(b), co)}
	if opts.Prices != nil {
		res.Prices = opts.Prices.Describe()
	}
	if opts.Policy != "" && opts.Policy != redact.Off {
		res.Redaction = redact.Describe(opts.Policy)
		res.redact(redactor(a, b, opts.Policy))
	}
	return res
}

// redactor collects the private values of both sessions and the tool
// names whose servers the strict policy numbers.
func redactor(a, b Input, p redact.Policy) *redact.Values {
	exs := append(append([]*exchange.Exchange(nil), a.Exchanges...), b.Exchanges...)
	return redact.ValuesFor(p, exs, a.Session, b.Session)
}

// redact passes every string of the result through v: names and values
// are tool names, queries, models and clients, scrubbed like a report's.
func (r *Result) redact(v *redact.Values) {
	t := v.Text
	r.A, r.B, r.ToolsPrefix = t(r.A), t(r.B), t(r.ToolsPrefix)
	for i := range r.Summary {
		f := &r.Summary[i]
		f.AText, f.BText = t(f.AText), t(f.BText)
	}
	for i := range r.Shape {
		c := &r.Shape[i]
		if c.Area == compare.AreaTools {
			c.Item = v.Tool(c.Item)
		} else {
			c.Item = t(c.Item)
		}
		c.A, c.B, c.Detail = t(c.A), t(c.B), t(c.Detail)
		// A system prompt's or a description's own lines are text a
		// redacted export never carries.
		if len(c.Lines) > 0 {
			c.Detail += "; the lines that changed are left out: --redact off shows them"
			c.Lines = nil
		}
		c.Added, c.Removed = toolNames(v, c.Added), toolNames(v, c.Removed)
	}
	for i := range r.Threads {
		for j := range r.Threads[i].Rows {
			row := &r.Threads[i].Rows[j]
			row.What = t(row.What)
			for k := range row.Fields {
				f := &row.Fields[k]
				f.A, f.B = t(f.A), t(f.B)
				f.Added, f.Removed = toolNames(v, f.Added), toolNames(v, f.Removed)
			}
		}
	}
	for i := range r.Tools {
		td := &r.Tools[i]
		td.Name = v.Tool(td.Name)
		for _, s := range []*compare.ToolSide{&td.A, &td.B} {
			for k := range s.FoundBy {
				s.FoundBy[k] = t(s.FoundBy[k])
			}
			for k := range s.MissedBy {
				s.MissedBy[k] = t(s.MissedBy[k])
			}
		}
	}
}

// toolNames passes tool names through v.
func toolNames(v *redact.Values, names []string) []string {
	for i, n := range names {
		names[i] = v.Tool(n)
	}
	return names
}

// WriteJSON writes the result as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("diffreport: write json: %w", err)
	}
	return bw.Flush()
}
