package diffreport

import (
	"bufio"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/tsinspect/tsinspect/timeline/compare"
)

// Section is one part of the result as rows of cells, the form Markdown
// and HTML write (and tsinspect serve's Compare page).
type Section struct {
	Title string
	Head  []string
	Rows  []Row
	Empty string // said when there are no rows
	// Blocks are written after the rows: the changed lines of a system
	// block or a tool description.
	Blocks []CodeBlock
}

// Row is one row of a section: its cells, under the section's Head, and
// for a row of the aligned turns that differs, how (compare.OpChanged,
// OpInserted or OpDeleted; "" for the rest), which the HTML marks.
type Row struct {
	Cells []string
	Op    string
}

// marked is the op of a row of the aligned turns as a Row marks it.
func marked(op string) string {
	switch op {
	case compare.OpChanged, compare.OpInserted, compare.OpDeleted:
		return op
	}
	return ""
}

// CodeBlock is lines written as they are, under a title: a diff's lines,
// each starting "-", "+" or " ", or a line saying what was left out.
type CodeBlock struct {
	Title string
	Lines []string
}

// Sections lays the result out as tables: the summary side by side, the
// request shape, the turns aligned per thread, and with --tools the tools.
func (r *Result) Sections() []Section {
	sum := Section{Title: "Summary", Head: []string{"", "A", "B", "B − A"}}
	for _, f := range r.Summary {
		if f.Unit == compare.UnitList {
			d := ""
			if f.Differs {
				d = "differs"
			}
			sum.Rows = append(sum.Rows, Row{Cells: []string{strings.TrimSpace(f.Name), f.AText, f.BText, d}})
			continue
		}
		d := ""
		if f.Differs {
			d = signed(f.B-f.A, f.Unit)
		}
		sum.Rows = append(sum.Rows, Row{Cells: []string{strings.TrimSpace(f.Name), value(f.A, f.Unit), value(f.B, f.Unit), d}})
	}
	shape := Section{Title: "Request shape", Head: []string{"threads", "area", "change"}, Empty: "The same."}
	for _, sl := range r.shapeLines() {
		shape.Rows = append(shape.Rows, Row{Cells: []string{strings.Join(sl.threads, ", "), sl.area, sl.text}})
		if len(sl.lines) > 0 {
			shape.Blocks = append(shape.Blocks, CodeBlock{Title: sl.area + ": " + sl.text, Lines: sl.lines})
		}
	}
	turns := Section{Title: "Turns, aligned per thread", Head: []string{"thread", "turns (A / B)", "", "what differs"}}
	for _, t := range r.Threads {
		name := t.A
		if name == "" {
			name = t.B
		} else if t.B != "" && t.B != t.A {
			name += " / " + t.B
		}
		fields := r.briefRows(t)
		for i, row := range t.Rows {
			var what []string
			for _, f := range fields[i] {
				what = append(what, fmt.Sprintf("%s: A %s, B %s", f.Name, f.A, f.B))
			}
			if row.What != "" {
				what = append(what, row.What)
			}
			if row.Op == compare.OpSame && row.Count > 1 {
				what = append(what, fmt.Sprintf("%d turns the same", row.Count))
			}
			turns.Rows = append(turns.Rows, Row{Cells: []string{name, turnPair(row), row.Op, strings.Join(what, "; ")}, Op: marked(row.Op)})
		}
	}
	out := []Section{sum, shape, turns}
	if r.ToolsPrefix != "" {
		tools := Section{Title: fmt.Sprintf("Tools starting %q", r.ToolsPrefix), Head: []string{"tool", "A", "B", ""}, Empty: "None in either session."}
		for _, td := range r.Tools {
			d := ""
			if td.Differs {
				d = "differs"
			}
			tools.Rows = append(tools.Rows, Row{Cells: []string{td.Name, toolText(td.A), toolText(td.B), d}})
		}
		out = append(out, tools)
	}
	return out
}

// Verdict says in a sentence whether the sessions differ.
func (r *Result) Verdict() string {
	if r.Same {
		return "The sessions are the same in what tsinspect compares."
	}
	return "The sessions differ."
}

// WriteMarkdown writes the result for a GitHub issue.
func (r *Result) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	cell := func(s string) string {
		s = strings.ReplaceAll(s, "|", "\\|")
		return strings.ReplaceAll(s, "\n", " ")
	}
	fmt.Fprintf(bw, "# tsinspect diff\n\nA: `%s`  \nB: `%s`\n\n%s\n", r.A, r.B, r.Verdict())
	if r.Prices != "" {
		fmt.Fprintf(bw, "\nPrices: %s\n", r.Prices)
	}
	if r.Redaction != "" {
		fmt.Fprintf(bw, "\n%s\n", r.Redaction)
	}
	for _, s := range r.Sections() {
		fmt.Fprintf(bw, "\n## %s\n\n", s.Title)
		if len(s.Rows) == 0 {
			fmt.Fprintf(bw, "%s\n", s.Empty)
			continue
		}
		fmt.Fprintf(bw, "| %s |\n|%s\n", strings.Join(s.Head, " | "), strings.Repeat(" --- |", len(s.Head)))
		for _, row := range s.Rows {
			cs := make([]string, len(row.Cells))
			for i, c := range row.Cells {
				cs[i] = cell(c)
			}
			fmt.Fprintf(bw, "| %s |\n", strings.Join(cs, " | "))
		}
		for _, b := range s.Blocks {
			fmt.Fprintf(bw, "\n%s:\n\n~~~diff\n%s\n~~~\n", b.Title, strings.ReplaceAll(strings.Join(b.Lines, "\n"), "~~~", "~ ~ ~"))
		}
	}
	return bw.Flush()
}

// htmlPage is the result as one self-contained page.
var htmlPage = template.Must(template.New("diff").Funcs(template.FuncMap{"join": func(l []string) string { return strings.Join(l, "\n") }}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tsinspect diff</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}tr.changed,tr.inserted,tr.deleted{background:#fff4e0}tr.inserted{background:#e6ffe6}tr.deleted{background:#ffe6e6}</style>
</head><body>
<h1>tsinspect diff</h1>
<p>A: <code>{{.R.A}}</code><br>B: <code>{{.R.B}}</code></p>
<p><strong>{{.R.Verdict}}</strong></p>
{{with .R.Prices}}<p>Prices: {{.}}</p>
{{end}}{{with .R.Redaction}}<p>{{.}}</p>
{{end}}{{range .Sections}}<h2>{{.Title}}</h2>
{{if not .Rows}}<p>{{.Empty}}</p>
{{else}}<table><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr{{with .Op}} class="{{.}}"{{end}}>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{range .Blocks}}<p>{{.Title}}:</p>
<pre>{{join .Lines}}</pre>
{{end}}{{end}}{{end}}</body></html>
`))

// WriteHTML writes the result as one self-contained page.
func (r *Result) WriteHTML(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if err := htmlPage.Execute(bw, map[string]any{"R": r, "Sections": r.Sections()}); err != nil {
		return fmt.Errorf("diff: write html: %w", err)
	}
	return bw.Flush()
}
