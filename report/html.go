package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/internal/svgchart"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
)

// WriteHTML writes r as one self-contained HTML page: inline CSS and SVG,
// no script, no external asset (a Content-Security-Policy forbids any), so
// that it opens offline and can be attached as it is. Per thread it draws
// the catalog and working-set sizes, the prompt tokens and the
// tool-definition tokens per turn, with flagged turns marked and the
// flags explained, above the turn table.
func (r *Report) WriteHTML(w io.Writer, opts RenderOptions) error {
	r.fillNil()
	tmpl, err := template.New("report").Funcs(template.FuncMap{
		"thousands":   numfmt.Thousands,
		"marked":      TokensText,
		"usd":         func(v float64) string { return pricing.Format(v, true) },
		"cost":        costText,
		"timing":      timingText,
		"threadCost":  threadCostText,
		"savedUSD":    func(r *Report, t ThreadTokens) string { return savedUSDText(r, t) },
		"short":       ShortHash,
		"model":       func(m string) string { return orDash(decode.ShortModel(m)) },
		"stop":        (*Turn).StopText,
		"change":      sizeChange,
		"result":      searchResult,
		"callNote":    callNote,
		"sevClass":    func(s string) string { return "sev-" + s },
		"kindSev":     timeline.Severity,
		"kinds":       flagKindsOf,
		"join":        strings.Join,
		"plural":      numfmt.Plural,
		"breakEven":   breakEven,
		"add":         func(a, b int) int { return a + b },
		"nameparts":   nameParts,
		"indentJSON":  indentJSON,
		"convSummary": convSummary,
		"list":        func(ls ...cardList) []cardList { return ls },
		"firstItems":  func(items []flagItem) []flagItem { return items[:min(len(items), shownFlags)] },
		"moreItems":   func(items []flagItem) []flagItem { return items[min(len(items), shownFlags):] },
	}).Parse(htmlTemplate + svgchart.Template)
	if err != nil {
		return fmt.Errorf("report: html template: %w", err)
	}
	bw := bufio.NewWriter(w)
	if err := tmpl.Execute(bw, r.htmlView(opts)); err != nil {
		return fmt.Errorf("report: write html: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: write html: %w", err)
	}
	return nil
}

// shownFlags is how many flags of a kind are listed open; the rest are
// folded, so that hundreds of them leave the page readable.
const shownFlags = 12

// indentJSON indents a tool call's input for reading; other text is kept.
func indentJSON(s string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "  ") != nil {
		return s
	}
	return b.String()
}

// convSummary says in a line what a turn's conversation holds: "1 message
// added (a result of mcp__demo__echo); the response calls ToolSearch".
func convSummary(c *Conversation) string {
	var results, calls []string
	texts := 0
	for _, m := range c.Added {
		for _, p := range m.Parts {
			switch p.Kind {
			case "tool_result":
				n := p.Name
				if n == "" {
					n = "a call"
				}
				results = append(results, n)
			case "text":
				texts++
			}
		}
	}
	s := numfmt.Count(len(c.Added), "message", "messages") + " added"
	var what []string
	if len(results) > 0 {
		what = append(what, numfmt.Plural(len(results), "the result of ", "the results of ")+strings.Join(results, ", "))
	}
	if texts > 0 {
		what = append(what, numfmt.Count(texts, "text", "texts"))
	}
	if len(what) > 0 {
		s += " (" + strings.Join(what, "; ") + ")"
	}
	for _, p := range c.Response.Parts {
		if p.Kind == "tool_use" {
			calls = append(calls, p.Name)
		}
	}
	switch {
	case len(calls) > 0:
		s += "; the response calls " + strings.Join(calls, ", ")
	case len(c.Response.Parts) > 0:
		s += "; the response answers in text"
	default:
		s += "; no response"
	}
	return s
}

// nameParts splits a tool name at each "__", where the "wbr" template
// lets the browser break it, so that long MCP names wrap in narrow table
// cells.
func nameParts(name string) []string { return strings.Split(name, "__") }

// htmlView is what the template shows.
type htmlView struct {
	R           *Report
	Redaction   string
	Unredacted  bool
	Capture     string
	Models      []string
	Searches    int
	EmptySearch int
	Loaded      []string
	Errs, Warns int
	Infos       int
	Usage       Usage
	Groups      []flagGroup
	Threads     []htmlThread
	Unknown     []string
	Estimated   []string
	// NeverSeen explains the catalog tools of unknown or estimated size.
	NeverSeen    string
	FlagNumbers  map[int][]int
	TokenThreads []ThreadTokens
	// CostNotes are the cost sentences after the first (the total is on
	// its card).
	CostNotes []string
	// Timing sums up the turns' timing.
	Timing string
	// The lists the summary cards name: the threads, the models, the
	// tools searches loaded, the betas.
	ThreadList, ModelList, LoadedList, BetaList cardList
	// BetasNotRecorded: every turn was made from a transcript, which does
	// not hold the betas nor the tools sent.
	BetasNotRecorded bool
}

// cardItems is how many names a summary card lists; past it, the card
// names the first ones and links to the whole list under the cards, so
// that a card stays a card however long the session.
const cardItems = 4

// cardList is a list a summary card names.
type cardList struct {
	ID    string // the id of the whole list under the cards
	What  string // what the list is, after its count: "tools searches loaded"
	Items []string
}

// Long reports whether the card names only the first items.
func (c cardList) Long() bool { return len(c.Items) > cardItems }

// First is what the card names of a long list.
func (c cardList) First() []string { return c.Items[:min(len(c.Items), cardItems-1)] }

// More is how many items the card leaves to the whole list.
func (c cardList) More() int { return len(c.Items) - len(c.First()) }

type htmlThread struct {
	threadView
	Groups       []flagGroup
	Charts       []*chart
	Usage        Usage
	Unreferenced []string
	Last         *Turn
	Nums         map[int][]int
	Searches     []htmlSearch
	// HasConversation is set when a turn of the thread carries its
	// conversation (an unredacted report).
	HasConversation bool
}

type htmlSearch struct {
	Turn int
	Search
}

func (r *Report) htmlView(opts RenderOptions) htmlView {
	v := htmlView{R: r, Redaction: opts.Redaction, Unredacted: opts.Unredacted, Capture: r.captureSentence(), Models: r.models(),
		Loaded: r.loadedTools(), Usage: usageTotals(r.allTurns()), Groups: r.flagGroups(),
		FlagNumbers: r.flagNumbers(), TokenThreads: r.TokenSummary.Threads}
	if cs := r.costSentences(); len(cs) > 0 {
		v.CostNotes = cs
	}
	v.Timing = r.timingSummary()
	v.ModelList = cardList{ID: "all-models", What: "models", Items: v.Models}
	v.LoadedList = cardList{ID: "all-loaded", What: "tools searches loaded", Items: v.Loaded}
	v.BetaList = cardList{ID: "all-betas", What: "betas", Items: r.Capture.Betas}
	v.BetasNotRecorded = len(r.Turns) > 0 && !slices.ContainsFunc(r.Turns, func(t Turn) bool { return !t.WorkingSet.DeferredOnly })
	v.ThreadList = cardList{ID: "all-threads", What: "threads"}
	v.Searches, v.EmptySearch = r.searchCounts()
	v.Errs, v.Warns, v.Infos = r.severityCounts()
	for _, t := range r.TokenSummary.Threads {
		v.Unknown = appendNew(v.Unknown, t.Unknown)
		v.Estimated = appendNew(v.Estimated, t.Estimated)
	}
	v.NeverSeen = neverSeenText(v.Unknown, v.Estimated)
	for k, tv := range r.threadViews() {
		ht := htmlThread{threadView: tv, Usage: usageTotals(tv.Turns), Unreferenced: tv.Unreferenced(), Nums: v.FlagNumbers}
		for _, g := range v.Groups {
			var items []flagItem
			for _, it := range g.Items {
				if it.Thread == tv.ID {
					items = append(items, it)
				}
			}
			if len(items) > 0 {
				g.Items = items
				ht.Groups = append(ht.Groups, g)
			}
		}
		if len(tv.Turns) > 0 {
			ht.Last = tv.Turns[len(tv.Turns)-1]
			id := fmt.Sprintf("t%d", k+1)
			ht.Charts = []*chart{
				toolsChart(id+"-tools", tv.Turns, v.FlagNumbers),
				cacheChart(id+"-cache", tv.Turns, v.FlagNumbers),
			}
			// Turns made from a transcript hold no tools to measure.
			if slices.ContainsFunc(tv.Turns, func(t *Turn) bool { return !t.ToolTokens.NotRecorded }) {
				ht.Charts = append(ht.Charts, defsChart(id+"-defs", tv.Turns, v.FlagNumbers))
			}
		}
		for _, t := range tv.Turns {
			for _, s := range t.ToolSearches {
				ht.Searches = append(ht.Searches, htmlSearch{Turn: t.Index, Search: s})
			}
			ht.HasConversation = ht.HasConversation || t.Conversation != nil
		}
		v.Threads = append(v.Threads, ht)
		v.ThreadList.Items = append(v.ThreadList.Items, fmt.Sprintf("%s (%s, %s, %s)", tv.ID, tv.Label, tv.Client, numfmt.Count(len(tv.Turns), "turn", "turns")))
	}
	return v
}

const htmlTemplate = `{{define "wbr"}}{{range $i, $p := nameparts .}}{{if $i}}__<wbr>{{end}}{{$p}}{{end}}{{end}}{{define "cardlist"}}{{if .Long}}{{join .First ", "}} <a href="#{{.ID}}">and {{.More}} more</a>{{else}}{{join .Items ", "}}{{end}}{{end}}{{define "msg"}}<div class="msg {{.Role}}"><div class="who">{{.Role}}</div>
{{range .Parts}}{{if eq .Kind "text"}}<pre>{{.Text}}</pre>
{{else if eq .Kind "thinking"}}<details><summary>thinking</summary><pre>{{.Text}}</pre></details>
{{else if eq .Kind "tool_use"}}<div class="call">→ call <code>{{.Name}}</code></div><pre>{{indentJSON .Text}}</pre>
{{else if eq .Kind "tool_result"}}<div class="result{{if .IsError}} bad{{end}}">← result{{if .Name}} of <code>{{.Name}}</code>{{end}}{{if .IsError}} (an error){{end}}</div><pre>{{.Text}}</pre>
{{else}}<div class="muted">{{.Kind}} {{.Name}}</div><pre>{{.Text}}</pre>
{{end}}{{else}}<p class="muted">(empty)</p>{{end}}</div>{{end}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Tool search report</title>
<style>
:root { --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg:#fff; --soft:#f6f8fa;
  --err:#c62828; --warn:#d9730d; --info:#1f6feb;
  --catalog:#1f6feb; --working:#d9730d; --read:#2da44e; --write:#d9730d; --input:#8c959f; --sent:#8250df; --inlined:#1f6feb; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "Liberation Sans", Arial, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 1360px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 18px 0 6px; }
p { margin: 6px 0; }
.muted, figcaption { color: var(--muted); }
.note { background: var(--soft); border-left: 4px solid var(--info); padding: 6px 10px; margin: 10px 0; }
.note.off { border-left-color: var(--err); }
code { font: 12.5px/1.3 ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", "Liberation Mono", monospace; background: var(--soft); padding: 1px 4px; border-radius: 4px; overflow-wrap: break-word; }
td.nw { white-space: nowrap; }
.scroll { overflow-x: auto; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(210px, 1fr)); gap: 8px; margin: 12px 0; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; }
.card b { display: block; font-size: 18px; }
.card span { color: var(--muted); font-size: 12px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; font-size: 12px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 5px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; white-space: nowrap; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.flagged td:first-child { box-shadow: inset 3px 0 0 var(--warn); }
tr.flagged-error td:first-child { box-shadow: inset 3px 0 0 var(--err); }
tfoot td { font-weight: 600; }
.badge { display: inline-block; border-radius: 10px; padding: 0 7px; font-size: 11.5px; color: #fff; white-space: nowrap; }
.sev-error { background: var(--err); } .sev-warning { background: var(--warn); } .sev-info { background: var(--info); }
.flag { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; margin: 10px 0; }
.flag ol { margin: 6px 0; padding-left: 0; list-style: none; }
.flag li { margin: 4px 0; }
.flag .num { display: inline-block; min-width: 2.2em; font-weight: 600; color: var(--muted); }
.why, .todo { margin: 6px 0 0; }
.bad { color: var(--err); }
figure { margin: 10px 0 4px; }
figure h3 { margin: 0; }
svg.chart { width: 100%; height: auto; display: block; }
svg .grid { stroke: #e6eaef; stroke-width: 1; }
svg .axis { stroke: #8c959f; stroke-width: 1; }
svg text { font: 11px system-ui, "Liberation Sans", Arial, sans-serif; fill: var(--muted); }
svg .lbl-y { text-anchor: end; } svg .lbl-x { text-anchor: middle; }
svg polyline { fill: none; stroke-width: 2.2; }
svg .s-catalog { stroke: var(--catalog); fill: var(--catalog); }
svg .s-working { stroke: var(--working); fill: var(--working); }
svg .s-sent { stroke: var(--sent); fill: var(--sent); }
svg .s-inlined { stroke: var(--inlined); fill: var(--inlined); }
svg polyline.s-catalog, svg polyline.s-working, svg polyline.s-sent, svg polyline.s-inlined { fill: none; }
svg polyline.s-inlined { stroke-dasharray: 6 4; }
svg .b-read { fill: var(--read); } svg .b-write { fill: var(--write); } svg .b-input { fill: var(--input); }
svg .m-error { stroke: var(--err); } svg .m-warning { stroke: var(--warn); } svg .m-info { stroke: var(--info); }
svg line.mk { stroke-width: 1.5; stroke-dasharray: 3 3; }
svg text.mk { font-weight: 700; text-anchor: middle; }
svg text.m-error { fill: var(--err); stroke: none; } svg text.m-warning { fill: var(--warn); stroke: none; } svg text.m-info { fill: var(--info); stroke: none; }
.legend { display: flex; gap: 14px; font-size: 12px; color: var(--muted); margin: 2px 0 0; flex-wrap: wrap; }
.legend i { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 4px; vertical-align: -2px; }
.legend .s-catalog { background: var(--catalog); } .legend .s-working { background: var(--working); }
.legend .s-sent { background: var(--sent); } .legend .s-inlined { background: var(--inlined); }
.legend .b-read { background: var(--read); } .legend .b-write { background: var(--write); } .legend .b-input { background: var(--input); }
details { margin: 8px 0; } summary { cursor: pointer; color: var(--muted); }
details.conv { border: 1px solid var(--line); border-radius: 6px; padding: 4px 10px; }
details.conv[open] summary { margin-bottom: 6px; }
.msg { margin: 6px 0; padding: 4px 0 4px 10px; border-left: 3px solid var(--input); }
.msg.assistant { border-left-color: var(--sent); } .msg.system { border-left-color: var(--warn); }
.msg .who { font-weight: 600; font-size: 12px; color: var(--muted); text-transform: uppercase; }
.msg pre { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 24em; overflow: auto; margin: 2px 0 6px; font: 12.5px/1.4 ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; background: var(--soft); padding: 6px 8px; border-radius: 4px; }
.msg .call, .msg .result { font-size: 12.5px; margin-top: 4px; }
</style>
</head>
<body>
<main>
<h1>Tool search report</h1>
<p class="muted">{{.Capture}} Written by {{.R.Generator}}.</p>
{{if .Redaction}}<p class="note{{if .Unredacted}} off{{end}}">{{.Redaction}}</p>{{end}}

<h2 id="summary">Summary</h2>
<div class="cards">
<div class="card"><b>{{len .R.Threads}} {{plural (len .R.Threads) "thread" "threads"}}</b><span>{{template "cardlist" .ThreadList}}</span></div>
<div class="card"><b>{{.R.Capture.Turns}} {{plural .R.Capture.Turns "turn" "turns"}}</b><span>{{template "cardlist" .ModelList}}</span></div>
<div class="card"><b>{{.Searches}} tool {{plural .Searches "search" "searches"}}</b><span>{{.EmptySearch}} loaded nothing; loaded: {{if .Loaded}}{{template "cardlist" .LoadedList}}{{else}}none{{end}}</span></div>
<div class="card"><b class="{{if .Errs}}bad{{end}}">{{add (add .Errs .Warns) .Infos}} {{plural (add (add .Errs .Warns) .Infos) "flag" "flags"}}</b><span>{{.Errs}} {{plural .Errs "error" "errors"}}, {{.Warns}} {{plural .Warns "warning" "warnings"}}, {{.Infos}} info</span></div>
<div class="card"><b>{{thousands .Usage.CacheReadInputTokens}}</b><span>cache read tokens; {{thousands .Usage.CacheCreationInputTokens}} written, {{thousands .Usage.InputTokens}} uncached input, {{thousands .Usage.OutputTokens}} output</span></div>
{{with .Timing}}<div class="card"><b>{{$.R.Capture.Turns}} {{plural $.R.Capture.Turns "turn" "turns"}} timed</b><span>{{.}}</span></div>{{end}}
{{with .R.Capture.Clients}}<div class="card"><b>{{join . ", "}}</b><span>client; betas: {{if $.R.Capture.Betas}}{{template "cardlist" $.BetaList}}{{else if $.BetasNotRecorded}}not recorded{{else}}none{{end}}</span></div>{{end}}
{{with .R.Costs}}<div class="card"><b>{{usd .TotalUSD}}</b><span>US dollars{{if .CacheBreaks}}; cache breaks {{usd .CacheBreaksUSD}}{{end}}{{if .BlindCalls}}; blind calls {{usd .BlindCallsUSD}}{{end}}; {{.DeferralText}}</span></div>{{end}}
</div>
{{range $l := list .ThreadList .ModelList .LoadedList .BetaList}}{{if .Long}}<details class="list"><summary>The {{len .Items}} {{.What}}</summary><p id="{{.ID}}">{{join .Items ", "}}</p></details>
{{end}}{{end}}{{with .CostNotes}}<p class="muted">{{join . " "}}</p>{{end}}

{{range .Threads}}{{$th := .}}
<h2 id="thread-{{.ID}}">Thread {{.ID}} <span class="muted">({{.Label}}, {{.Client}}, {{len .Turns}} {{plural (len .Turns) "turn" "turns"}}{{if .Models}}, {{join .Models ", "}}{{end}})</span></h2>
{{range .Charts}}<figure>
<h3>{{.Title}}</h3>
{{template "svgchart" .}}
<div class="legend">{{range .Legend}}<span><i class="{{.Class}}"></i>{{.Label}}</span>{{end}}{{if .Grouped}}<span>numbers above: flags in each stretch of turns (hover for which; click for the first)</span>{{else if .Markers}}<span>⚑ flagged turn (number of the flag above)</span>{{end}}</div>
<figcaption>{{.Caption}}</figcaption>
</figure>{{end}}
{{if .Groups}}<h3>Flags</h3>{{end}}
{{range .Groups}}<section class="flag">
<h3><span class="badge {{sevClass .Severity}}">{{.Severity}}</span> {{.Kind}} <span class="muted">× {{len .Items}}</span></h3>
<ol>{{range firstItems .Items}}<li id="flag-{{.N}}"><span class="num">⚑{{.N}}</span> <b>Turn {{.Turn}}</b>: {{.Detail}}{{.Cost}}</li>{{end}}</ol>
{{with moreItems .Items}}<details><summary>{{len .}} more {{plural (len .) "flag" "flags"}} of this kind</summary><ol>{{range .}}<li id="flag-{{.N}}"><span class="num">⚑{{.N}}</span> <b>Turn {{.Turn}}</b>: {{.Detail}}{{.Cost}}</li>{{end}}</ol></details>{{end}}
{{if .Why}}<p class="why"><b>Why it matters.</b> {{.Why}}</p>{{end}}
{{if .Todo}}<p class="todo"><b>What to do.</b> {{.Todo}}</p>{{end}}
</section>{{end}}
{{if .Searches}}<h3>Tool searches</h3>
<table><thead><tr><th class="n">Turn</th><th>Tool</th><th>Query</th><th>Mode</th><th class="n">Max</th><th>Result</th></tr></thead>
<tbody>{{range .Searches}}<tr><td class="n">{{.Turn}}</td><td><code>{{.Tool}}</code></td><td><code>{{.Query}}</code></td><td>{{.Mode}}</td><td class="n">{{if .MaxResults}}{{.MaxResults}}{{end}}</td><td>{{if .Results}}loaded {{range $i, $n := .Results}}{{if $i}}, {{end}}<code>{{$n}}</code>{{end}}{{else}}<span class="bad">{{result .Search}}</span>{{end}}</td></tr>{{end}}</tbody></table>{{end}}
{{if .Unreferenced}}<p>Deferred tools sent without a reference left in the history (restored after compaction): {{range $i, $n := .Unreferenced}}{{if $i}}, {{end}}<code>{{$n}}</code>{{end}}.</p>{{end}}
<h3>Turns</h3>
<div class="scroll"><table>
<thead><tr><th class="n">Turn</th><th>Model</th><th>Stop</th><th class="n">Catalog</th><th>Working set</th><th class="n">Searches</th><th>Calls</th><th class="n">Input</th><th class="n">Cache read</th><th class="n">Cache write</th><th class="n">Output</th><th class="n" title="US dollars">Cost</th><th class="nw" title="time to first token, duration, output tokens per second">Time</th><th class="n" title="tool-definition tokens sent">Defs sent</th><th class="n" title="tool-definition tokens with every deferred tool inlined">Inlined</th><th>Flags</th></tr></thead>
<tbody>{{range .Turns}}<tr class="{{if .Flags}}flagged{{range .Flags}}{{if eq .Severity "error"}} flagged-error{{end}}{{end}}{{end}}">
<td class="n">{{if .Conversation}}<a href="#conv-{{.Index}}">{{.Index}}</a>{{else}}{{.Index}}{{end}}</td><td class="nw">{{model .Model}}</td><td class="nw">{{stop .}}</td>
<td class="n">{{change .Catalog.Count (len .Catalog.Added) (len .Catalog.Removed)}}</td>
<td>{{change .WorkingSet.Count (len .WorkingSet.Added) (len .WorkingSet.Removed)}}{{range .WorkingSet.Added}} <code>+{{template "wbr" .}}</code>{{end}}{{range .WorkingSet.Removed}} <code>−{{template "wbr" .}}</code>{{end}}</td>
<td class="n">{{len .ToolSearches}}</td>
<td>{{range $i, $c := .ToolCalls}}{{if $i}}, {{end}}<code>{{template "wbr" $c.Name}}</code>{{with callNote $c}} <span class="bad">({{.}})</span>{{end}}{{end}}</td>
<td class="n">{{thousands .Usage.InputTokens}}</td><td class="n">{{thousands .Usage.CacheReadInputTokens}}</td><td class="n">{{thousands .Usage.CacheCreationInputTokens}}</td><td class="n">{{thousands .Usage.OutputTokens}}</td><td class="n">{{cost .Cost}}</td><td class="nw">{{timing .Timing}}</td>
{{if .ToolTokens.NotRecorded}}<td class="n">-</td><td class="n">-</td>{{else}}<td class="n">{{thousands .ToolTokens.Sent}}</td><td class="n">{{marked .ToolTokens.Inlined .ToolTokens.Unknown .ToolTokens.Estimated}}</td>{{end}}
<td>{{range $i, $n := index $th.Nums .Index}}{{if $i}} {{end}}<a href="#flag-{{$n}}">⚑{{$n}}</a>{{end}} {{range kinds .}}<span class="badge {{sevClass (kindSev .)}}">{{.}}</span> {{end}}</td>
</tr>{{end}}</tbody>
<tfoot><tr><td></td><td>total</td><td></td><td></td><td></td><td></td><td></td><td class="n">{{thousands .Usage.InputTokens}}</td><td class="n">{{thousands .Usage.CacheReadInputTokens}}</td><td class="n">{{thousands .Usage.CacheCreationInputTokens}}</td><td class="n">{{thousands .Usage.OutputTokens}}</td><td class="n">{{threadCost .Turns}}</td><td></td><td class="n">{{thousands .Tokens.Sent}}</td><td class="n">{{marked .Tokens.Inlined (len .Tokens.Unknown) (len .Tokens.Estimated)}}</td><td></td></tr></tfoot>
</table></div>
{{if .HasConversation}}<h3>Conversation</h3>
<p class="muted">What each request added to the thread (the prompt, tool results, reminders), then the response. Unredacted: shown because the report was written with --redact off.</p>
{{range .Turns}}{{$t := .}}{{with .Conversation}}<details class="conv" id="conv-{{$t.Index}}"><summary>Turn {{$t.Index}}: {{convSummary .}}</summary>
{{range .Added}}{{template "msg" .}}{{end}}{{template "msg" .Response}}</details>
{{end}}{{end}}{{end}}
{{with .Last}}<details><summary>Tool definitions of turn {{.Index}}: name, deferred, loaded, SHA-256 of the definition, tokens</summary>
<table><thead><tr><th>Tool</th><th>Deferred</th><th>Loaded</th><th>SHA-256</th><th class="n">Tokens</th></tr></thead>
<tbody>{{range .ToolDefinitions}}<tr><td><code>{{.Name}}</code></td><td>{{if .Deferred}}yes{{else}}no{{end}}</td><td>{{if .Loaded}}yes{{else}}no{{end}}</td><td><code title="{{.SHA256}}">{{short .SHA256}}</code></td><td class="n">{{thousands .Tokens}}{{if eq .TokensFrom "count_tokens"}} (count_tokens){{end}}</td></tr>{{end}}</tbody></table>
<p class="muted">{{if $th.DefChanges}}Definitions that changed within the thread: {{join $th.DefChanges "; "}}.{{else}}No definition changed within the thread.{{end}}</p>
</details>{{end}}
{{end}}
<h2 id="tokens">Tool-definition tokens</h2>
{{if .BetasNotRecorded}}<p>Not known: every turn was made from Claude Code's transcript, which does not hold the tools sent.</p>
{{else}}<p>What the tool definitions cost, summed over each thread's requests (per request in the turn tables), what the same requests would have carried with every deferred tool inlined, and what deferral saved and cost.</p>
<table>
<thead><tr><th>Thread</th><th class="n">Requests</th><th class="n">Sent</th><th class="n">All inlined</th><th class="n">Saved by deferral</th><th class="n">Saved (USD)</th><th class="n">Loaded schemas</th><th class="n">Search tool</th><th class="n">Catalog announcement</th><th class="n">Searches</th><th class="n">Catalog tools never seen</th></tr></thead>
<tbody>{{range .TokenThreads}}<tr><td>{{.Thread}}</td><td class="n">{{.Turns}}</td><td class="n">{{thousands .Sent}}</td><td class="n">{{marked .Inlined (len .Unknown) (len .Estimated)}}</td><td class="n">{{marked .Saved (len .Unknown) (len .Estimated)}}</td><td class="n">{{savedUSD $.R .}}</td><td class="n">{{thousands .Loaded}}</td><td class="n">{{thousands .SearchTool}}</td><td class="n">{{thousands .Announcement}}</td><td class="n">{{.Searches}}</td><td class="n">{{add (len .Unknown) (len .Estimated)}}</td></tr>{{end}}</tbody>
</table>
<p>Loading cost is what tool search adds to each request: the schemas of the deferred tools loaded so far, the search tool's own definition and the announcement listing the deferred tools; each search is also a round trip of its own.{{with .NeverSeen}} {{.}}{{end}}{{if .Unknown}}{{range .TokenThreads}}{{with breakEven .}} {{.}}{{end}}{{end}}{{end}}</p>
<p class="muted">{{.R.TokenSummary.Method}}{{if .R.TokenSummary.CountTokensUsed}} {{.R.TokenSummary.CountTokensUsed}} definition sizes come from recorded count_tokens answers.{{end}}</p>
{{if .Unknown}}<details><summary>The {{len .Unknown}} {{plural (len .Unknown) "tool" "tools"}} of unknown size</summary><p>{{range $i, $n := .Unknown}}{{if $i}}, {{end}}<code>{{$n}}</code>{{end}}</p></details>{{end}}
{{if .Estimated}}<details><summary>The {{len .Estimated}} {{plural (len .Estimated) "tool" "tools"}} counted at an estimated size</summary><p>{{range $i, $n := .Estimated}}{{if $i}}, {{end}}<code>{{$n}}</code>{{end}}</p></details>{{end}}
{{end}}
</main>
</body>
</html>
`
