package advice

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// Headline is a piece of advice's figure in a few words: "saves $0.0123
// over 3 sessions", "cost $1.20 over 5 sessions", or both: "cost $1.20,
// saves $0.80 over 5 sessions".
func (a Advice) Headline() string {
	approx := ""
	if a.Estimated {
		approx = "≈"
	}
	var figs []string
	if a.CostUSD > 0 || Costs(a.Kind) && a.SavesUSD == 0 {
		figs = append(figs, "cost "+usd(a.CostUSD))
	}
	switch {
	case a.SavesUSD > 0:
		figs = append(figs, "saves "+approx+usd(a.SavesUSD))
	case a.SavesUSD < 0:
		figs = append(figs, "costs "+approx+usd(-a.SavesUSD))
	}
	s := strings.Join(figs, ", ") + " over " + numfmt.Count(a.Sessions, "session", "sessions")
	if a.Of > a.Sessions {
		s += fmt.Sprintf(" of %d", a.Of)
	}
	return s
}

// MonthText says what the advice saves over the 30 days up to the newest
// session read, and over how many of its sessions.
func (a Advice) MonthText() string {
	if a.PerMonthUSD == nil {
		return ""
	}
	if a.PerMonthSessions == 0 {
		return "none of its sessions in the 30 days up to the newest session read"
	}
	return fmt.Sprintf("%s in the 30 days up to the newest session read (%s)", usd(*a.PerMonthUSD), numfmt.Count(a.PerMonthSessions, "session", "sessions"))
}

// ShortID shortens a session ID for a person, as the session listing
// does: the first 8 characters of a UUID; a capture's path is kept.
func ShortID(id string) string {
	if len(id) == 36 && strings.Count(id, "-") == 4 {
		return id[:8]
	}
	return id
}

// turnsText writes a list of turns: "turn 3", "turns 2, 5, 9".
func turnsText(ts []int) string {
	if len(ts) == 0 {
		return ""
	}
	parts := make([]string, 0, len(ts))
	for i, t := range ts {
		if i == 6 {
			parts = append(parts, fmt.Sprintf("%d more", len(ts)-6))
			break
		}
		parts = append(parts, fmt.Sprint(t))
	}
	return numfmt.Plural(len(ts), "turn ", "turns ") + strings.Join(parts, ", ")
}

// Place names an evidence's session and turns: "5ac86603 (turns 2,
// 14)".
func (e Evidence) Place() string {
	id := e.Open
	if id == "" {
		id = ShortID(e.Session)
	}
	if t := turnsText(e.Turns); t != "" {
		id += " (" + t + ")"
	}
	return id
}

// OpenCommand is the command that opens an evidence's session, with the
// turns to look at: "tsinspect open 5ac86603 (turns 2, 14)".
func (e Evidence) OpenCommand() string {
	return "tsinspect open " + e.Place()
}

// TextOptions tune WriteText.
type TextOptions struct {
	// Evidence is how many sessions each piece of advice names (0: 3).
	Evidence int
	// Top is how many pieces of advice are written, the largest amounts
	// first, whatever their kind (0: all).
	Top int
}

// WriteText writes the advice for a terminal: the totals of each kind
// in one line, then every piece of advice by its amount, the largest
// first; what --top leaves out is smaller than everything shown.
func (r *Result) WriteText(w io.Writer, o TextOptions) error {
	if o.Evidence <= 0 {
		o.Evidence = 3
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s\n", r.Summary())
	if t := r.TotalsText(); t != "" {
		fmt.Fprintf(bw, "%s\n", t)
	}
	fmt.Fprintf(bw, "A piece of advice rests on at least %s (--min-sessions); each says what it saves or what the pattern cost, the largest first.\n",
		numfmt.Count(r.MinSessions, "session", "sessions"))
	for _, n := range r.Notes {
		fmt.Fprintf(bw, "Note: %s.\n", n)
	}
	if len(r.Advice) == 0 {
		fmt.Fprintf(bw, "\nNo advice: no pattern shows in %s or more.\n", numfmt.Count(r.MinSessions, "session", "sessions"))
	}
	for i, a := range r.Advice {
		if o.Top > 0 && i == o.Top {
			fmt.Fprintf(bw, "\n… and %d more, each %s or less (--top 0 lists them all)\n", len(r.Advice)-i, usd(r.Advice[i].Amount()))
			break
		}
		fmt.Fprintf(bw, "\n%d. [%s] %s — %s\n", i+1, KindTitle(a.Kind), a.Title, a.Headline())
		fmt.Fprintf(bw, "   Seen: %s\n", a.Why)
		fmt.Fprintf(bw, "   Do: %s\n", a.Do)
		for _, f := range a.Figures {
			fmt.Fprintf(bw, "   Figures: %s\n", f)
		}
		if a.PerMonthUSD != nil {
			fmt.Fprintf(bw, "   Per session %s; %s\n", usd(a.PerSessionUSD), a.MonthText())
		}
		fmt.Fprintf(bw, "   Assumes: %s\n", a.Assumes)
		for i, e := range a.Evidence {
			if i == o.Evidence {
				fmt.Fprintf(bw, "   … and %s more (--json lists them all)\n", numfmt.Count(len(a.Evidence)-i, "session", "sessions"))
				break
			}
			line := "   Evidence: " + e.OpenCommand()
			if e.Note != "" {
				line += ": " + e.Note
			}
			fmt.Fprintln(bw, line)
		}
	}
	if len(r.LeftOut) > 0 {
		fmt.Fprintf(bw, "\nLeft out (%d):\n", len(r.LeftOut))
		for i, l := range r.LeftOut {
			if i == 10 {
				fmt.Fprintf(bw, "  … and %d more (--json lists them all)\n", len(r.LeftOut)-i)
				break
			}
			fmt.Fprintf(bw, "  %s %s: %s\n", KindTitle(l.Kind), l.Subject, l.Reason)
		}
	}
	return bw.Flush()
}

// Summary says in one line what the advice was read from.
func (r *Result) Summary() string {
	s := fmt.Sprintf("Advice from %s", numfmt.Count(r.Sessions, "session", "sessions"))
	if !r.From.IsZero() {
		s += fmt.Sprintf(", %s to %s", r.From.Local().Format("2006-01-02"), r.To.Local().Format("2006-01-02"))
	}
	s += fmt.Sprintf(" (%s turns, %s", numfmt.Thousands(int64(r.Turns)), usd(r.USD))
	if r.Prices != "" {
		s += " at " + r.Prices
	}
	return s + ")."
}

// WriteJSON writes the result as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("advice: write json: %w", err)
	}
	return nil
}

// WriteMarkdown writes the advice as a section of a Markdown report.
func (r *Result) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "## Advice\n\n%s A piece of advice rests on at least %s.\n\n", r.Summary(), numfmt.Count(r.MinSessions, "session", "sessions"))
	for _, n := range r.Notes {
		fmt.Fprintf(bw, "> %s.\n\n", n)
	}
	if len(r.Advice) == 0 {
		fmt.Fprintf(bw, "No pattern shows in %s or more.\n", numfmt.Count(r.MinSessions, "session", "sessions"))
	}
	if t := r.TotalsText(); t != "" {
		fmt.Fprintf(bw, "%s\n\n", t)
	}
	for i, a := range r.Advice {
		fmt.Fprintf(bw, "%d. **%s** (%s) — %s\n\n", i+1, mdEscape(a.Title), KindTitle(a.Kind), a.Headline())
		fmt.Fprintf(bw, "   - Seen: %s\n   - Do: %s\n", a.Why, a.Do)
		for _, f := range a.Figures {
			fmt.Fprintf(bw, "   - Figures: %s\n", f)
		}
		fmt.Fprintf(bw, "   - Assumes: %s\n", a.Assumes)
		var ev []string
		for i, e := range a.Evidence {
			if i == 5 {
				ev = append(ev, fmt.Sprintf("and %d more", len(a.Evidence)-i))
				break
			}
			ev = append(ev, "`"+e.OpenCommand()+"`")
		}
		fmt.Fprintf(bw, "   - Evidence: %s\n\n", strings.Join(ev, ", "))
	}
	if len(r.LeftOut) > 0 {
		fmt.Fprintf(bw, "Left out: %s (too few sessions, or not paying).\n", numfmt.Count(len(r.LeftOut), "piece of advice", "pieces of advice"))
	}
	return bw.Flush()
}

func mdEscape(s string) string {
	return strings.NewReplacer("*", `\*`, "_", `\_`).Replace(s)
}

// htmlPage is the advice as one self-contained page; its "body" is the
// advice alone, for a page of another's (the web view's).
var htmlPage = template.Must(template.New("advice").Funcs(template.FuncMap{"inc": func(i int) int { return i + 1 }, "usd": usd}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Advice from {{.R.Sessions}} sessions</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;max-width:72em;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
.advice{margin:1em 0;padding:.6em .9em;border-left:4px solid #4a7;background:#f7faf8}
.advice.cost{border-color:#c84}.head{font-weight:600}.fig{color:#444}.ev code{background:#eee;padding:0 .2em}
.note{color:#666}.kind{font-weight:400;color:#666;font-size:.9em}.costs{border-collapse:collapse;margin:.8em 0}.costs td,.costs th{padding:.1em .6em;text-align:right}.costs td:first-child,.costs th:first-child{text-align:left}
</style></head><body>
{{template "body" .}}</body></html>
{{define "body"}}<h1>Advice</h1>
<p>{{.R.Summary}} A piece of advice rests on at least {{.R.MinSessions}} sessions; the largest amounts first.{{if .Redaction}} {{.Redaction}}{{end}}</p>
{{with .R.TotalsText}}<p class="totals">{{.}}</p>{{end}}
{{range .R.Notes}}<p class="note">{{.}}.</p>{{end}}
{{if not .R.Advice}}<p>No pattern shows in {{.R.MinSessions}} sessions or more.</p>{{end}}
{{range $n, $it := .Items}}<div class="advice{{if $it.Costs}} cost{{end}}">
<div class="head">{{inc $n}}. {{$it.A.Title}} — {{$it.A.Headline}} <span class="kind">{{$it.Kind}}</span></div>
<div>Seen: {{$it.A.Why}}</div><div>Do: {{$it.A.Do}}</div>
{{range $it.A.Figures}}<div class="fig">Figures: {{.}}</div>{{end}}
<div class="fig">Assumes: {{$it.A.Assumes}}</div>
<div class="ev">Evidence: {{range $i, $e := $it.A.Evidence}}{{if $i}}, {{end}}{{if $e.Link}}<a href="{{$e.Link}}">{{$e.Place}}</a>{{else}}<code>{{$e.OpenCommand}}</code>{{end}}{{end}}</div>
</div>{{end}}
{{if .R.Servers}}<h2 id="costs">What each MCP server and tool cost</h2>
<p class="note">Each result once, at the rate its request wrote new tokens; the searches before first calls; schemas sent whole without a search; refused blind calls; the share of cache rewrites right after a search loaded it. Result tokens are estimates; ? where no schema size is known.</p>
{{template "costs" .R.Servers}}{{template "costs" .R.Tools}}{{end}}
{{if .R.LeftOut}}<h2>Left out</h2><ul>{{range .R.LeftOut}}<li>{{.Subject}} ({{.Kind}}): {{.Reason}}</li>{{end}}</ul>{{end}}
{{end}}
{{define "costs"}}<table class="costs"><tr><th>name</th><th>sessions</th><th>calls</th><th>failed</th><th>result tokens</th><th>schema tokens</th><th>searches</th><th>blind</th><th>cost</th></tr>
{{range .}}<tr><td>{{.Name}}</td><td>{{.Sessions}}</td><td>{{.Calls}}</td><td>{{.Errors}}</td><td>{{.ResultTokens}}</td><td>{{if .SchemaTokens}}{{.SchemaTokens}}{{else}}?{{end}}</td><td>{{.Searches}}</td><td>{{.Blind}}</td><td>{{usd .CostUSD}}</td></tr>
{{end}}</table>{{end}}`))

// WriteHTML writes the advice as one self-contained HTML page; redaction,
// when not "", says how it was redacted.
func (r *Result) WriteHTML(w io.Writer, redaction string) error {
	return r.writeHTML(w, "advice", redaction)
}

// WriteHTMLBody writes the advice as WriteHTML does, without the page
// around it: for a page of another's, which says how it was redacted.
func (r *Result) WriteHTMLBody(w io.Writer) error {
	return r.writeHTML(w, "body", "")
}

// writeHTML executes the template name of htmlPage over r.
func (r *Result) writeHTML(w io.Writer, name, redaction string) error {
	type item struct {
		A     Advice
		Kind  string
		Costs bool
	}
	items := make([]item, 0, len(r.Advice))
	for _, a := range r.Advice {
		items = append(items, item{A: a, Kind: KindTitle(a.Kind), Costs: a.CostUSD > 0 && a.SavesUSD <= 0})
	}
	if err := htmlPage.ExecuteTemplate(w, name, map[string]any{"R": r, "Items": items, "Redaction": redaction}); err != nil {
		return fmt.Errorf("advice: write html: %w", err)
	}
	return nil
}

// Write writes r in format: "json", "markdown", else HTML (redaction:
// what the page says of it).
func (r *Result) Write(w io.Writer, format, redaction string) error {
	switch format {
	case "json":
		return r.WriteJSON(w)
	case "markdown":
		return r.WriteMarkdown(w)
	}
	return r.WriteHTML(w, redaction)
}

// CheckFlags checks advise's --min-sessions, --top and --evidence.
func CheckFlags(minSessions, top, evidence int) error {
	switch {
	case minSessions < 1:
		return fmt.Errorf("--min-sessions %d: want 1 or more", minSessions)
	case top < 0:
		return fmt.Errorf("--top %d: want 0 or more", top)
	case evidence < 1:
		return fmt.Errorf("--evidence %d: want 1 or more", evidence)
	}
	return nil
}
