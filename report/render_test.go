package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/timeline"
)

// flagged is a synthetic report whose flags hold text that must be
// escaped.
func flagged() *Report {
	r := Build(synthetic(60), "1")
	t := &r.Turns[4]
	t.Flags = append(t.Flags, Flag{Kind: timeline.FlagEmptySearch, Severity: timeline.SeverityWarning,
		Detail: `ToolSearch "<script>alert(1)</script> | *bold* _x_ @someone #12" loaded nothing.`})
	return r
}

func TestMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := flagged().WriteMarkdown(&buf, RenderOptions{Redaction: "Redacted (default)."}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	order := []string{"# Tool search report", "> Redacted (default).", "## Summary", "## Flags", "### 🟠 cache_break (warning)",
		"**Why it matters.**", "**What to do.**", "## Tool-definition tokens", "## Thread main (main agent)", "## Thread side1 (side query)"}
	at := 0
	for _, want := range order {
		i := strings.Index(md[at:], want)
		if i < 0 {
			t.Fatalf("markdown lacks %q after byte %d:\n%s", want, at, md)
		}
		at += i
	}
	why, _ := timeline.Explain(timeline.FlagCacheBreak)
	if !strings.Contains(md, mdText(why)) {
		t.Error("markdown lacks the cache_break explanation")
	}
	for _, bad := range []string{"<script>", "| *bold*", "@someone", "#12"} {
		if strings.Contains(md, bad) {
			t.Errorf("markdown holds unescaped %q", bad)
		}
	}
	if !strings.Contains(md, `\<script\>`) || !strings.Contains(md, `\| \*bold\* \_x\_`) {
		t.Errorf("escaping: %s", md[strings.Index(md, "ToolSearch"):][:200])
	}
	// One table row per turn of the main thread, with the columns of the
	// header.
	head := "| Turn | Model | Stop | Catalog | Working set | Searches | Calls | Input | Cache read | Cache write | Output | Cost | Time | Tool defs sent | All inlined | Flags |"
	if strings.Count(md, head) != 2 {
		t.Errorf("want 2 thread tables:\n%s", md)
	}
	row := regexp.MustCompile(`(?m)^\| 41 \| sonnet-4-5 \| tool_use \|.*\|$`)
	if m := row.FindString(md); m == "" || strings.Count(strings.ReplaceAll(m, `\|`, ""), "|") != strings.Count(head, "|") {
		t.Errorf("row of turn 41: %q", m)
	}
}

func TestCode(t *testing.T) {
	for in, want := range map[string]string{
		"select:a":  "`select:a`",
		"a`b":       "``a`b``",
		"`x":        "`` `x ``",
		"a|b":       "`a|b`",
		"two\nline": "`two line`",
	} {
		if got := code(in, false); got != want {
			t.Errorf("code(%q) = %q, want %q", in, got, want)
		}
	}
	if got := code("a|b", true); got != "`a\\|b`" {
		t.Errorf("code in table = %q", got)
	}
	if got := mdText("mcp__demo__echo and __init__ and _x_"); got != `mcp__demo__echo and \_\_init\_\_ and \_x\_` {
		t.Errorf("mdText underscores: %q", got)
	}
}

func TestHTML(t *testing.T) {
	var buf bytes.Buffer
	if err := flagged().WriteHTML(&buf, RenderOptions{Redaction: "Redacted (default)."}); err != nil {
		t.Fatal(err)
	}
	h := buf.String()
	if !strings.HasPrefix(h, "<!DOCTYPE html>") || !strings.Contains(h, `http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;`) &&
		!strings.Contains(h, `http-equiv="Content-Security-Policy" content="default-src 'none'`) {
		t.Errorf("no doctype or CSP:\n%.600s", h)
	}
	if strings.Contains(h, "<script") || strings.Contains(h, "<script>alert") {
		t.Error("HTML holds a script")
	}
	if !strings.Contains(h, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("flag detail not escaped")
	}
	for _, attr := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(h, -1) {
		if !strings.HasPrefix(attr[1], "#") {
			t.Errorf("external reference %q", attr[0])
		}
	}
	// Three charts per thread, each an SVG; flagged turns marked.
	if n := strings.Count(h, `<svg class="chart"`); n != 6 || strings.Count(h, "</svg>") != 6 {
		t.Errorf("%d charts, want 6", n)
	}
	if !strings.Contains(h, `<a href="#flag-1">`) || !strings.Contains(h, `id="flag-1"`) || !strings.Contains(h, "⚑2") {
		t.Error("flag markers or anchors missing")
	}
	for _, want := range []string{"Catalog and working set", "Prompt tokens", "Tool-definition tokens", "Why it matters.", "What to do.", "<h3>Turns</h3>"} {
		if !strings.Contains(h, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

func TestEmptyReportsRender(t *testing.T) {
	for _, r := range []*Report{Build(nil, "1"), Build(&timeline.Session{}, "1")} {
		var md, h bytes.Buffer
		if err := r.WriteMarkdown(&md, RenderOptions{}); err != nil || !strings.Contains(md.String(), "No flags") {
			t.Errorf("markdown of an empty report: %v\n%s", err, md.String())
		}
		if err := r.WriteHTML(&h, RenderOptions{}); err != nil || !strings.Contains(h.String(), "</html>") {
			t.Errorf("html of an empty report: %v", err)
		}
	}
}

func TestNiceScale(t *testing.T) {
	for in, want := range map[float64]float64{0: 1, 3: 4, 56: 80, 22616: 40000, 100: 100, 101: 200} {
		if got := niceCeil(in); got != want {
			t.Errorf("niceCeil(%v) = %v, want %v", in, got, want)
		}
	}
	if shortNumber(22500) != "22.5k" || shortNumber(40000) != "40k" || shortNumber(1.5e6) != "1.5M" || shortNumber(20) != "20" {
		t.Error("shortNumber")
	}
}

// Every format names each thread's client and version.
func TestClientShown(t *testing.T) {
	r := flagged()
	r.Threads[1].Client = timeline.Client{Family: timeline.ClientSDK, Name: "Anthropic TypeScript SDK", Version: "0.71.0"}
	var md, h, js bytes.Buffer
	if err := r.WriteMarkdown(&md, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(&h, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ format, out string }{{"markdown", md.String()}, {"html", h.String()}, {"json", js.String()}} {
		for _, want := range []string{"2.1.328", "Anthropic TypeScript SDK", "0.71.0"} {
			if !strings.Contains(c.out, want) {
				t.Errorf("%s lacks %q", c.format, want)
			}
		}
	}
	if !strings.Contains(md.String(), "main (main agent, Claude Code 2.1.328, ") || !strings.Contains(md.String(), "client Anthropic TypeScript SDK 0.71.0.") {
		t.Errorf("markdown threads:\n%s", md.String())
	}
	var back struct {
		Threads []struct {
			Client timeline.Client `json:"client"`
		} `json:"threads"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Threads) != 2 || back.Threads[0].Client.Family != timeline.ClientClaudeCode || back.Threads[1].Client.Version != "0.71.0" {
		t.Errorf("json threads: %+v", back.Threads)
	}
}

// TestHTMLManyFlags: with hundreds of flagged turns the charts mark the
// flagged turns in at most maxMarkers groups, each saying how many flags
// it holds, instead of a line per turn over the whole plot; each kind
// lists shownFlags flags open and folds the rest; every flag keeps its
// anchor.
func TestHTMLManyFlags(t *testing.T) {
	r := &Report{Threads: []Thread{{ID: "main", Kind: "main"}}}
	for i := 1; i <= 400; i++ {
		r.Threads[0].Turns = append(r.Threads[0].Turns, i)
		r.Turns = append(r.Turns, Turn{Index: i, Thread: "main", Model: "claude-sonnet-4-5",
			Usage: Usage{CacheReadInputTokens: int64(1000 * i)},
			Flags: []Flag{{Kind: "call_before_load", Severity: "error", Detail: fmt.Sprintf("blind call %d", i)}}})
	}
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	h := buf.String()
	charts := strings.Count(h, `<svg class="chart"`)
	if marks := strings.Count(h, `<line class="mk `); charts == 0 || marks > charts*maxMarkers {
		t.Errorf("%d markers on %d charts, want at most %d each", marks, charts, maxMarkers)
	}
	if !strings.Contains(h, "flags in each stretch of turns") || !strings.Contains(h, `>10</text>`) {
		t.Error("grouped markers neither explained nor counted")
	}
	open := strings.Index(h, "more flags of this kind</summary>")
	if open < 0 || strings.Count(h[:open], `<li id="flag-`) != shownFlags || !strings.Contains(h, "388 more flags of this kind") {
		t.Errorf("flags not folded after %d", shownFlags)
	}
	for _, n := range []int{1, 200, 400} {
		if !strings.Contains(h, fmt.Sprintf(`id="flag-%d"`, n)) {
			t.Errorf("no anchor for flag %d", n)
		}
	}
}

// TestHTMLCardsBounded: a session that loaded 41 tools through searches and
// ran 20 threads keeps its summary cards short: a few names, a count and a
// link to the whole list under the cards, which holds every name.
func TestHTMLCardsBounded(t *testing.T) {
	s := synthetic(420)
	for i := 0; i < 18; i++ {
		s.Threads = append(s.Threads, &timeline.Thread{ID: fmt.Sprintf("sub%d", i+1), Kind: timeline.KindSubagent})
	}
	r := Build(s, "1")
	loaded := r.loadedTools()
	if len(loaded) < 40 {
		t.Fatalf("%d tools loaded, want 40 or more", len(loaded))
	}
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	h := buf.String()
	start := strings.Index(h, `<div class="cards">`)
	end := strings.Index(h[start:], "\n</div>\n") + start
	cards := h[start:end]
	for _, c := range strings.Split(cards, "\n")[1:] {
		if n := strings.Count(c, ", "); n > 2*cardItems {
			t.Errorf("a card lists %d items: %s", n, c)
		}
	}
	for _, want := range []string{fmt.Sprintf(`<a href="#all-loaded">and %d more</a>`, len(loaded)-cardItems+1), fmt.Sprintf(`<a href="#all-threads">and %d more</a>`, 20-cardItems+1)} {
		if !strings.Contains(cards, want) {
			t.Errorf("cards lack %q:\n%s", want, cards)
		}
	}
	all := regexp.MustCompile(`<details class="list"><summary>The (\d+) tools searches loaded</summary><p id="all-loaded">([^<]*)</p></details>`).FindStringSubmatch(h)
	if all == nil || all[1] != fmt.Sprint(len(loaded)) || strings.Count(all[2], ", ")+1 != len(loaded) || !strings.Contains(all[2], loaded[len(loaded)-1]) {
		t.Errorf("the whole list of loaded tools: %q", all)
	}
	// A short list stays on its card, with no list under the cards.
	buf.Reset()
	if err := Build(synthetic(30), "1").WriteHTML(&buf, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `<details class="list">`) || strings.Contains(buf.String(), "#all-") {
		t.Error("a short session's cards link to a list")
	}
}
