package report

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/internal/termsafe"
	"github.com/tsinspect/tsinspect/timeline"
)

// WriteMarkdown writes r as GitHub-flavoured Markdown sized for an issue:
// a summary, the flags with what they mean and what to do, the
// tool-definition token summary, then a table per thread.
func (r *Report) WriteMarkdown(w io.Writer, opts RenderOptions) error {
	r.fillNil()
	bw := bufio.NewWriter(w)
	m := &mdWriter{w: bw}
	m.report(r, opts)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: write markdown: %w", err)
	}
	return nil
}

type mdWriter struct {
	w *bufio.Writer
}

// p writes a line. Every line of the report passes here: what the
// capture holds is shown, never obeyed (control characters, bidirectional
// overrides and bytes that are not UTF-8 are written as escapes).
func (m *mdWriter) p(format string, args ...any) {
	m.w.WriteString(termsafe.Text(fmt.Sprintf(format, args...)))
	m.w.WriteByte('\n')
}

func (m *mdWriter) report(r *Report, opts RenderOptions) {
	m.p("# Tool search report")
	m.p("")
	m.p("%s", mdText(r.captureSentence()+" Written by "+r.Generator+"."))
	if opts.Redaction != "" {
		m.p("")
		m.p("> %s", mdText(opts.Redaction))
	}
	m.p("")
	m.summary(r)
	m.flags(r)
	m.tokens(r)
	for _, v := range r.threadViews() {
		m.thread(r, v)
	}
}

func (m *mdWriter) summary(r *Report) {
	m.p("## Summary")
	m.p("")
	m.p("| | |")
	m.p("|---|---|")
	var ths []string
	for _, v := range r.threadViews() {
		ths = append(ths, fmt.Sprintf("%s (%s, %s, %d %s)", v.ID, v.Label, v.Client, len(v.Turns), numfmt.Plural(len(v.Turns), "turn", "turns")))
	}
	m.p("| Threads | %s |", mdText(orDash(strings.Join(ths, ", "))))
	m.p("| Client | %s |", codeList(r.Capture.Clients, true))
	m.p("| Betas | %s |", codeList(r.Capture.Betas, true))
	m.p("| Models | %s |", codeList(r.models(), true))
	all, empty := r.searchCounts()
	m.p("| Tool searches | %d, %d of them loaded nothing |", all, empty)
	m.p("| Deferred tools loaded | %s |", codeList(r.loadedTools(), true))
	errs, warns, infos := r.severityCounts()
	flags := "none"
	if errs+warns+infos > 0 {
		var kinds []string
		for _, g := range r.flagGroups() {
			kinds = append(kinds, fmt.Sprintf("%s ×%d", g.Kind, len(g.Items)))
		}
		flags = fmt.Sprintf("%d %s, %d %s, %d info: %s", errs, numfmt.Plural(errs, "error", "errors"), warns,
			numfmt.Plural(warns, "warning", "warnings"), infos, strings.Join(kinds, ", "))
	}
	m.p("| Flags | %s |", mdText(flags))
	u := usageTotals(r.allTurns())
	m.p("| Tokens | %s input, %s cache read, %s cache write, %s output |", numfmt.Thousands(u.InputTokens),
		numfmt.Thousands(u.CacheReadInputTokens), numfmt.Thousands(u.CacheCreationInputTokens), numfmt.Thousands(u.OutputTokens))
	if ts := r.timingSummary(); ts != "" {
		m.p("| Timing | %s |", mdText(ts))
	}
	if cs := r.costSentences(); len(cs) > 0 {
		m.p("| Cost (USD) | %s |", mdText(strings.Join(cs, " ")))
	}
	m.p("")
}

func (m *mdWriter) flags(r *Report) {
	groups := r.flagGroups()
	m.p("## Flags")
	m.p("")
	if len(groups) == 0 {
		m.p("No flags: nothing went wrong that tsinspect knows how to see.")
		m.p("")
		return
	}
	for _, g := range groups {
		m.p("### %s %s (%s)", severityMark(g.Severity), mdText(g.Kind), mdText(g.Severity))
		m.p("")
		for _, it := range g.Items {
			m.p("- **Turn %d** (%s) — %s", it.Turn, mdText(it.Thread), mdText(it.Detail+it.Cost))
		}
		m.p("")
		if g.Why != "" {
			m.p("**Why it matters.** %s", mdText(g.Why))
			m.p("")
		}
		if g.Todo != "" {
			m.p("**What to do.** %s", mdText(g.Todo))
			m.p("")
		}
	}
}

// defsText is a turn's tool-definition figure, "-" when the turn's tools
// are not recorded.
func defsText(tt ToolTokens, s string) string {
	if tt.NotRecorded {
		return "-"
	}
	return s
}

func (m *mdWriter) tokens(r *Report) {
	m.p("## Tool-definition tokens")
	m.p("")
	if len(r.Turns) > 0 && !slices.ContainsFunc(r.Turns, func(t Turn) bool { return !t.ToolTokens.NotRecorded }) {
		m.p("Not known: every turn was made from Claude Code's transcript, which does not hold the tools sent.")
		m.p("")
		return
	}
	m.p("What the tool definitions cost, summed over each thread's requests (per request in the thread tables below), what the same requests would have carried with every deferred tool inlined, and what deferral saved and cost.")
	m.p("")
	m.p("| Thread | Requests | Sent | All inlined | Saved by deferral | Saved (USD) | Loaded schemas | Search tool | Catalog announcement | Searches | Catalog tools never seen |")
	m.p("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	var unknown, estimated []string
	for _, t := range r.TokenSummary.Threads {
		m.p("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %d | %d |", mdText(t.Thread), t.Turns, numfmt.Thousands(t.Sent),
			TokensText(t.Inlined, len(t.Unknown), len(t.Estimated)), TokensText(t.Saved, len(t.Unknown), len(t.Estimated)), savedUSDText(r, t), numfmt.Thousands(t.Loaded),
			numfmt.Thousands(t.SearchTool), numfmt.Thousands(t.Announcement), t.Searches, len(t.Unknown)+len(t.Estimated))
		unknown = appendNew(unknown, t.Unknown)
		estimated = appendNew(estimated, t.Estimated)
	}
	m.p("")
	m.p("Loading cost is what tool search adds to each request: the schemas of the deferred tools loaded so far, the search tool's own definition and the announcement listing the deferred tools; each search is also a round trip of its own.")
	if text := neverSeenText(unknown, estimated); text != "" {
		m.p("%s", mdText(text))
	}
	if len(unknown) > 0 {
		for _, t := range r.TokenSummary.Threads {
			if b := breakEven(t); b != "" {
				m.p("%s", mdText(b))
			}
		}
	}
	m.p("")
	m.p("%s", mdText(r.TokenSummary.Method))
	if r.TokenSummary.CountTokensUsed > 0 {
		m.p("")
		m.p("%d definition sizes come from recorded count_tokens answers.", r.TokenSummary.CountTokensUsed)
	}
	for _, list := range []struct {
		what  string
		names []string
	}{{"of unknown size", unknown}, {"counted at an estimated size", estimated}} {
		if len(list.names) == 0 {
			continue
		}
		m.p("")
		m.p("<details><summary>The %d %s %s</summary>", len(list.names), numfmt.Plural(len(list.names), "tool", "tools"), list.what)
		m.p("")
		m.p("%s", codeList(list.names, false))
		m.p("")
		m.p("</details>")
	}
	m.p("")
}

func (m *mdWriter) thread(r *Report, v threadView) {
	m.p("## Thread %s (%s)", mdText(v.ID), mdText(v.Label))
	m.p("")
	m.p("%d %s, %s, client %s.", len(v.Turns), numfmt.Plural(len(v.Turns), "turn", "turns"), "models "+codeList(v.Models, false), mdText(v.Client.String()))
	m.p("")
	m.p("| Turn | Model | Stop | Catalog | Working set | Searches | Calls | Input | Cache read | Cache write | Output | Cost | Time | Tool defs sent | All inlined | Flags |")
	m.p("|--:|---|---|--:|--:|--:|---|--:|--:|--:|--:|--:|---|--:|--:|---|")
	for _, t := range v.Turns {
		var calls []string
		for _, c := range t.ToolCalls {
			s := code(c.Name, true)
			if n := callNote(c); n != "" {
				s += " (" + n + ")"
			}
			calls = append(calls, s)
		}
		var flags []string
		for _, k := range flagKindsOf(t) {
			flags = append(flags, severityMark(timeline.Severity(k))+" "+mdText(k))
		}
		ws := sizeChange(t.WorkingSet.Count, len(t.WorkingSet.Added), len(t.WorkingSet.Removed))
		if len(t.WorkingSet.Added) > 0 {
			ws += " " + codeList(prefixAll("+", t.WorkingSet.Added), true)
		}
		if len(t.WorkingSet.Removed) > 0 {
			ws += " " + codeList(prefixAll("−", t.WorkingSet.Removed), true)
		}
		m.p("| %d | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
			t.Index, mdText(orDash(decode.ShortModel(t.Model))), mdText(t.StopText()),
			sizeChange(t.Catalog.Count, len(t.Catalog.Added), len(t.Catalog.Removed)), ws,
			len(t.ToolSearches), orDash(strings.Join(calls, ", ")),
			numfmt.Thousands(t.Usage.InputTokens), numfmt.Thousands(t.Usage.CacheReadInputTokens),
			numfmt.Thousands(t.Usage.CacheCreationInputTokens), numfmt.Thousands(t.Usage.OutputTokens), costText(t.Cost), mdText(timingText(t.Timing)),
			defsText(t.ToolTokens, numfmt.Thousands(t.ToolTokens.Sent)), defsText(t.ToolTokens, TokensText(t.ToolTokens.Inlined, t.ToolTokens.Unknown, t.ToolTokens.Estimated)),
			orDash(strings.Join(flags, ", ")))
	}
	u := usageTotals(v.Turns)
	m.p("| | **total** | | | | | | %s | %s | %s | %s | %s | | %s | %s | |", numfmt.Thousands(u.InputTokens), numfmt.Thousands(u.CacheReadInputTokens),
		numfmt.Thousands(u.CacheCreationInputTokens), numfmt.Thousands(u.OutputTokens), threadCostText(v.Turns), numfmt.Thousands(v.Tokens.Sent), TokensText(v.Tokens.Inlined, len(v.Tokens.Unknown), len(v.Tokens.Estimated)))
	m.p("")
	var searches []string
	for _, t := range v.Turns {
		for _, s := range t.ToolSearches {
			q := fmt.Sprintf("- Turn %d: %s %s (%s", t.Index, code(s.Tool, false), code(s.Query, false), mdText(s.Mode))
			if s.MaxResults > 0 {
				q += fmt.Sprintf(", max %d", s.MaxResults)
			}
			q += ") → " + searchResultMD(s)
			searches = append(searches, q)
		}
	}
	if len(searches) > 0 {
		m.p("Tool searches:")
		m.p("")
		for _, s := range searches {
			m.p("%s", s)
		}
		m.p("")
	}
	if len(v.Unreferenced()) > 0 {
		m.p("Deferred tools sent without a reference left in the history (restored after compaction): %s.", codeList(v.Unreferenced(), false))
		m.p("")
	}
	if len(v.Turns) > 0 {
		last := v.Turns[len(v.Turns)-1]
		m.p("<details><summary>Tool definitions of turn %d (name, deferred, loaded, sha256, tokens)</summary>", last.Index)
		m.p("")
		m.p("| Tool | Deferred | Loaded | sha256 | Tokens |")
		m.p("|---|---|---|---|--:|")
		for _, d := range last.ToolDefinitions {
			tokens := numfmt.Thousands(d.Tokens)
			if d.TokensFrom == FromCountTokens {
				tokens += " (count_tokens)"
			}
			m.p("| %s | %s | %s | %s | %s |", code(d.Name, true), yesNo(d.Deferred), yesNo(d.Loaded), code(ShortHash(d.SHA256), true), tokens)
		}
		m.p("")
		if len(v.DefChanges) > 0 {
			m.p("Definitions that changed within the thread: %s.", mdText(strings.Join(v.DefChanges, "; ")))
		} else {
			m.p("No definition changed within the thread.")
		}
		m.p("")
		m.p("</details>")
		m.p("")
	}
}

// Unreferenced lists the thread's unreferenced deferred tools, in order of
// first appearance.
func (v threadView) Unreferenced() []string {
	var out []string
	for _, t := range v.Turns {
		for _, n := range t.Unreferenced {
			if !contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

func searchResultMD(s Search) string {
	if len(s.Results) > 0 {
		return "loaded " + codeList(s.Results, false)
	}
	return mdText(searchResult(s))
}

func prefixAll(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// severityMark is a marker that reads without colour too.
func severityMark(sev string) string {
	switch sev {
	case timeline.SeverityError:
		return "🔴"
	case timeline.SeverityWarning:
		return "🟠"
	}
	return "🔵"
}

// codeList writes names as code spans separated by commas, "-" for none.
func codeList(xs []string, inTable bool) string {
	if len(xs) == 0 {
		return "-"
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = code(x, inTable)
	}
	return strings.Join(out, ", ")
}

// code writes s as a code span whose fence is longer than any backtick run
// in s. In a table cell, pipes are escaped (GFM splits cells on them even
// in code spans).
func code(s string, inTable bool) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r", " "), "\n", " ")
	if s == "" {
		return "` `"
	}
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") {
		s = " " + s + " "
	}
	if inTable {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	return fence + s + fence
}

var (
	// mdSpecial are the characters escaped in prose: those that start
	// emphasis, links, HTML, code, tables.
	mdSpecial = regexp.MustCompile("[\\\\`*\\[\\]<>|~]")
	// mdUnderscore is a run of underscores not inside a word (GFM ignores
	// intraword underscores).
	mdUnderscore = regexp.MustCompile(`(^|[^A-Za-z0-9_])(_+)|(_+)([^A-Za-z0-9_]|$)`)
	// mdPing is an @mention or #123 reference GitHub would link.
	mdPing = regexp.MustCompile(`([@#])([A-Za-z0-9])`)
)

// mdText escapes prose: Markdown syntax characters are backslash-escaped,
// newlines become spaces, and @name and #123 get a word joiner so that
// GitHub neither mentions anyone nor links an issue.
func mdText(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r", " "), "\n", " ")
	s = mdSpecial.ReplaceAllStringFunc(s, func(c string) string { return `\` + c })
	s = mdUnderscore.ReplaceAllStringFunc(s, func(u string) string { return strings.ReplaceAll(u, "_", `\_`) })
	s = strings.ReplaceAll(s, "&", "&amp;")
	return mdPing.ReplaceAllString(s, "$1\u2060$2")
}
