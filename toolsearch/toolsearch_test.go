package toolsearch_test

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/golden"
	"github.com/tsinspect/tsinspect/toolsearch"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// slack is the pool of the published algorithm's worked example.
var slack = []toolsearch.Tool{
	{Name: "mcp__slack__send_message", Description: "Send a message to a Slack channel."},
	{Name: "mcp__slack__list_channels", Description: "List the channels of the workspace."},
	{Name: "mcp__email__send_email", Description: "Send an email."},
	{Name: "mcp__github__create_issue", Description: "Create an issue in a repository."},
}

// TestWorkedExample is the published worked example, by hand: "slack
// send" over four MCP tools scores 24, 12, 12, 0. The descriptions above
// add points only for a term at word boundaries: "send" in "Send a
// message" and "Send an email" (+2 each), "slack" in "Slack channel" (+2).
func TestWorkedExample(t *testing.T) {
	noDesc := make([]toolsearch.Tool, len(slack))
	for i, tl := range slack {
		noDesc[i] = toolsearch.Tool{Name: tl.Name}
	}
	r := toolsearch.Client("slack send", 0, noDesc, noDesc)
	want := map[string]float64{"mcp__slack__send_message": 24, "mcp__slack__list_channels": 12, "mcp__email__send_email": 12}
	if len(r.Candidates) != 3 || r.Zero != 1 {
		t.Fatalf("candidates %+v, zero %d: want 3 scoring and 1 at 0", r.Candidates, r.Zero)
	}
	for _, c := range r.Candidates {
		if c.Score != want[c.Name] {
			t.Errorf("%s scored %v, want %v", c.Name, c.Score, want[c.Name])
		}
	}
	if got := strings.Join(r.Names, ","); got != "mcp__slack__send_message,mcp__slack__list_channels,mcp__email__send_email" {
		t.Errorf("returns %s", got)
	}
	// With descriptions: 24+2+2, 12, 12+2, and the ranking holds.
	r = toolsearch.Client("slack send", 0, slack, slack)
	got := map[string]float64{}
	for _, c := range r.Candidates {
		got[c.Name] = c.Score
	}
	if got["mcp__slack__send_message"] != 28 || got["mcp__slack__list_channels"] != 12 || got["mcp__email__send_email"] != 14 {
		t.Errorf("with descriptions: %v, want send_message 28, list_channels 12, send_email 14", got)
	}
	if r.Names[1] != "mcp__email__send_email" {
		t.Errorf("with descriptions the second is %s, want mcp__email__send_email (14 > 12)", r.Names[1])
	}
}

// TestWorkedExampleObserved: Claude Code 2.1.328 also scores the server
// and tool names whole. "slack send": send_message 12 + 12 (slack: part
// and server name) + 12 + 4 (send: part, inside "send_message") = 40;
// list_channels 12 + 12 = 24; send_email 12 + 4 = 16; create_issue 0.
// The ranking is the published one.
func TestWorkedExampleObserved(t *testing.T) {
	var pool []toolsearch.Tool
	for _, tl := range slack {
		pool = append(pool, toolsearch.Tool{Name: tl.Name})
	}
	r := toolsearch.ClientAs(toolsearch.Observed, "slack send", 0, pool, pool)
	var got []string
	for _, c := range r.Candidates {
		got = append(got, fmt.Sprintf("%s=%v", c.Name, c.Score))
	}
	want := "mcp__slack__send_message=40 mcp__slack__list_channels=24 mcp__email__send_email=16"
	if strings.Join(got, " ") != want || r.Zero != 1 {
		t.Errorf("got %s (zero %d), want %s and one 0", strings.Join(got, " "), r.Zero, want)
	}
	// A built-in's whole name: "cron" is inside "crondelete" (+3) besides
	// the part (+10).
	r = toolsearch.ClientAs(toolsearch.Observed, "cron", 0, []toolsearch.Tool{{Name: "CronDelete"}}, nil)
	if len(r.Candidates) != 1 || r.Candidates[0].Score != 13 {
		t.Errorf("CronDelete: %+v, want 13", r.Candidates)
	}
	// MCP parts split on '.' too; the whole tool name still counts.
	r = toolsearch.ClientAs(toolsearch.Observed, "read", 0, []toolsearch.Tool{{Name: "mcp__fs__file.read"}}, nil)
	if len(r.Candidates) != 1 || r.Candidates[0].Score != 16 {
		t.Errorf("file.read: %+v, want 12 (part) + 4 (inside file.read)", r.Candidates)
	}
}

// TestAlgorithmForVersion: a Claude Code version names the scoring that
// release runs: as measured (2.1.328, 2.1.331), the newest measured
// before it (a later release), or the published one (an older release).
func TestAlgorithmForVersion(t *testing.T) {
	for _, c := range []struct {
		v    string
		want toolsearch.Algorithm
		how  string
	}{
		{"2.1.328", toolsearch.Observed, "as measured"},
		{"2.1.331", toolsearch.Observed, "as measured"},
		{"2.1.400", toolsearch.Observed, "the newest release measured before 2.1.400"},
		{"2.1.329", toolsearch.Observed, "Claude Code 2.1.328, the newest release measured before 2.1.329"},
		{"2.1.100", toolsearch.Published, "older than any release measured"},
		{"", toolsearch.Published, "no Claude Code release"},
	} {
		got, how := toolsearch.ForVersion(c.v)
		if got != c.want || !strings.Contains(how, c.how) {
			t.Errorf("ForVersion(%q) = %s, %q; want %s, %q", c.v, got, how, c.want, c.how)
		}
	}
	for s, want := range map[string]toolsearch.Algorithm{"published": toolsearch.Published, "2.1.328": toolsearch.Observed, "2.1.331": toolsearch.Observed, "2.0": toolsearch.Published} {
		if got, err := toolsearch.ParseAlgorithm(s); err != nil || got != want {
			t.Errorf("ParseAlgorithm(%q) = %s, %v; want %s", s, got, err, want)
		}
	}
	for _, bad := range []string{"nope", "2", "2.x", ""} {
		if _, err := toolsearch.ParseAlgorithm(bad); err == nil {
			t.Errorf("ParseAlgorithm accepted %q", bad)
		}
	}
}

func TestNameParts(t *testing.T) {
	for name, want := range map[string]string{
		"mcp__slack__send_message": "slack send message|slack send message",
		"NotebookEdit":             "notebook edit|notebook edit",
		"WebFetch":                 "web fetch|web fetch",
		"mcp__demo__action_12":     "demo action 12|demo action 12",
		"TaskOutput":               "task output|task output",
		"read_file":                "read file|read file",
	} {
		parts, full := toolsearch.NameParts(name)
		if got := strings.Join(parts, " ") + "|" + full; got != want {
			t.Errorf("NameParts(%s) = %s, want %s", name, got, want)
		}
	}
}

// builtin is a pool of Claude Code style deferred tools with MCP ones.
var builtin = []toolsearch.Tool{
	{Name: "NotebookEdit", Description: "Replace the contents of a cell in a Jupyter notebook."},
	{Name: "WebFetch", Description: "Fetches content from a URL and processes it."},
	{Name: "WebSearch", Description: "Search the web and use the results."},
	{Name: "mcp__github__create_issue", Description: "Create a new issue in a GitHub repository.", SearchHint: "bug ticket"},
	{Name: "mcp__github__list_issues", Description: "List issues of a repository."},
	{Name: "mcp__linear__create_issue", Description: "Create a Linear issue."},
	{Name: "mcp__demo__echo", Description: "Echo the input back."},
	{Name: "mcp__demo__action_1", Description: "Demo action number 1."},
	{Name: "mcp__demo__action_2", Description: "Demo action number 2."},
	{Name: "mcp__demo__action_3", Description: "Demo action number 3."},
	{Name: "mcp__demo__action_4", Description: "Demo action number 4."},
	{Name: "mcp__demo__action_5", Description: "Demo action number 5."},
	{Name: "mcp__demo__action_6", Description: "Demo action number 6."},
}

func TestGolden(t *testing.T) {
	loaded := append([]toolsearch.Tool{{Name: "Read"}, {Name: "Bash"}}, builtin...)
	cases := []struct {
		name, query string
		max         int
	}{
		{"worked_example", "slack send", 0},
		{"select", "select:mcp__github__create_issue,Read,NoSuchTool", 0},
		{"exact", "webfetch", 0},
		{"prefix", "mcp__demo", 0},
		{"prefix_max", "mcp__demo__action", 3},
		{"prefix_falls_through", "mcp__nothing issue", 0},
		{"keyword_tie_cut", "demo action", 5},
		{"required", "+github issue", 0},
		{"required_only", "+linear", 0},
		{"hint", "bug", 0},
		{"substring_camel", "note", 0},
		{"camel_parts", "web search", 0},
		{"description_word", "jupyter cell", 0},
		{"no_match", "kubernetes deploy", 0},
	}
	var b strings.Builder
	for _, c := range cases {
		pool := builtin
		if c.name == "worked_example" {
			pool = slack
		}
		r := toolsearch.Client(c.query, c.max, pool, loaded)
		b.WriteString("== " + c.name + "\n" + r.Text("  ") + "\n")
	}
	for _, c := range cases {
		if c.name != "worked_example" && c.name != "required" && c.name != "camel_parts" && c.name != "keyword_tie_cut" {
			continue
		}
		pool := builtin
		if c.name == "worked_example" {
			pool = slack
		}
		r := toolsearch.ClientAs(toolsearch.Observed, c.query, c.max, pool, loaded)
		b.WriteString("== " + c.name + " (2.1.328)\n" + r.Text("  ") + "\n")
	}
	re, err := toolsearch.Regex(`(?i)issue`, 2, builtin)
	if err != nil {
		t.Fatal(err)
	}
	b.WriteString("== regex\n" + re.Text("  ") + "\n")
	b.WriteString("== bm25\n" + toolsearch.BM25("create github issue", 3, builtin).Text("  ") + "\n")
	golden.Check(t, filepath.Join("testdata", "golden.txt"), b.String(), *update)
}

func TestRegexError(t *testing.T) {
	if _, err := toolsearch.Regex(`(?=x)`, 0, builtin); err == nil || !strings.Contains(err.Error(), "toolsearch: regex") {
		t.Errorf("look-ahead: err %v, want a wrapped compile error", err)
	}
}

func TestDiff(t *testing.T) {
	for _, c := range []struct {
		sim, rec []string
		want     string
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, ""},
		{[]string{"a", "b"}, []string{"b", "a"}, "same tools in another order"},
		{[]string{"a"}, []string{"a", "c"}, "recorded but not simulated: c"},
		{[]string{"a", "d"}, []string{"a"}, "simulated but not recorded: d"},
	} {
		got := toolsearch.Diff(c.sim, c.rec)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("Diff(%v, %v) = %q, want %q", c.sim, c.rec, got, c.want)
		}
	}
}

// TestFindable: a tool whose name words all occur in the names of five
// tools before it in the catalog is found by none of its own queries.
func TestFindable(t *testing.T) {
	var pool []toolsearch.Tool
	for _, s := range []string{"red", "green", "blue", "cyan", "pink", "gray"} {
		pool = append(pool, toolsearch.Tool{Name: "mcp__s__get_item_" + s, Description: "Get an item."})
	}
	pool = append(pool, toolsearch.Tool{Name: "mcp__s__get_item"})
	fs := toolsearch.Findable(toolsearch.Published, pool, pool, 5)
	if len(fs) != 7 {
		t.Fatalf("%d findings", len(fs))
	}
	if f := fs[0]; f.Query != "get" || len(f.Problems) != 0 {
		t.Errorf("get_item_red: %+v, want found by \"get\" (first of a tie)", f)
	}
	if f := fs[5]; f.Query != "gray" {
		t.Errorf("get_item_gray: %+v, want found by its colour", f)
	}
	f := fs[6]
	if f.Found() || strings.Join(f.Tried, "|") != "get|item|get item|s get item" {
		t.Errorf("get_item: %+v, want not found after get|item|get item|s get item", f)
	}
	if p := strings.Join(f.Problems, "; "); !strings.Contains(p, "empty description") || !strings.Contains(p, `6 tools score as high or higher on "get item"`) ||
		!strings.Contains(p, `"get" and "item" in 7 names`) || f.Shared.Tools != 7 {
		t.Errorf("problems %q, shared %+v", p, f.Shared)
	}
}

// TestFindableByNumberOnly: tools told apart only by a number are found
// by a query of their name's words with the number ("action 7"), never by
// the number alone, which no model writes, and say that "action" is
// shared; another tool of the pool that shares nothing is fine.
func TestFindableByNumberOnly(t *testing.T) {
	var pool []toolsearch.Tool
	for i := 0; i < 12; i++ {
		pool = append(pool, toolsearch.Tool{Name: fmt.Sprintf("mcp__demo__action_%d", i), Description: fmt.Sprintf("Perform demo action number %d on a named target.", i)})
	}
	pool = append(pool, toolsearch.Tool{Name: "mcp__demo__echo", Description: "Echo the given text back unchanged."})
	fs := toolsearch.Findable(toolsearch.Observed, pool, pool, 5)
	for i, f := range fs[:12] {
		for _, q := range f.Tried {
			if q == fmt.Sprint(i) {
				t.Errorf("%s: tried the bare number %q", f.Name, q)
			}
		}
		if !f.Found() || f.Shared.Tools != 12 || !strings.Contains(strings.Join(f.Problems, "; "), fmt.Sprintf(`"action" in 12 names; only "%d" tells it apart`, i)) {
			t.Errorf("%s: %+v", f.Name, f)
		}
	}
	if f := fs[7]; f.Query != "action 7" {
		t.Errorf("action_7 found by %q, want \"action 7\"", f.Query)
	}
	if f := fs[12]; f.Query != "echo" || len(f.Problems) != 0 || f.Shared.Tools != 0 {
		t.Errorf("echo: %+v", f)
	}
}
