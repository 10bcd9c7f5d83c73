package diffreport_test

import (
	"bytes"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/diffreport"
	"github.com/tsinspect/tsinspect/internal/golden"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	ct "github.com/tsinspect/tsinspect/timeline/compare/comparetest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// pair is two sessions that differ in their client, a system block, a
// tool description, a parameter and one extra search.
func pair(t *testing.T, policy redact.Policy, tools string) *diffreport.Result {
	t.Helper()
	steps := []ct.Step{ct.Search("select:mcp__demo__echo", "mcp__demo__echo"), ct.Call("mcp__demo__echo"), ct.Done("It answered hello.")}
	a := ct.Session(ct.DefaultShape(), steps...)
	sh := ct.DefaultShape()
	sh.Version = "2.1.331"
	sh.System += " Be brief."
	sh.Thinking = `{"type":"adaptive"}`
	sh.EchoDesc = "Echo the given text back, unchanged."
	sh.IDSeed = 3
	more := append([]ct.Step{steps[0], ct.Search("weather forecast for /home/alice/notes")}, steps[1:]...)
	b := ct.Session(sh, more...)
	return diffreport.Build(diffreport.Input{Name: "yesterday.db", Session: a}, diffreport.Input{Name: "today.db", Session: b},
		diffreport.Options{Prices: pricing.Default(), Policy: policy, Tools: tools, Version: "test"})
}

func TestText(t *testing.T) {
	r := pair(t, redact.Off, "mcp__demo__")
	var out bytes.Buffer
	if err := r.WriteText(&out, diffreport.Width); err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(out.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > diffreport.Width {
			t.Errorf("line %d is %d columns: %q", i+1, n, l)
		}
	}
	golden.Check(t, "testdata/diff.txt", out.String(), *update)
}

func TestMarkdownRedacted(t *testing.T) {
	r := pair(t, redact.Strict, "mcp__demo__")
	var out bytes.Buffer
	if err := r.WriteMarkdown(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if strings.Contains(s, "alice") || strings.Contains(s, "mcp__demo__") {
		t.Errorf("a path or an MCP server name is left:\n%s", s)
	}
	if !strings.Contains(s, "mcp__s1__echo") {
		t.Errorf("the tool is not named by its server's pseudonym:\n%s", s)
	}
	golden.Check(t, "testdata/diff.md", s, *update)
}

func TestHTMLAndJSON(t *testing.T) {
	r := pair(t, redact.Default, "")
	var h, j bytes.Buffer
	if err := r.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&j); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h.String(), "<!DOCTYPE html>") || strings.Contains(h.String(), "alice") {
		t.Errorf("html:\n%s", h.String())
	}
	golden.Check(t, "testdata/diff.html", h.String(), *update)
	golden.Check(t, "testdata/diff.json", j.String(), *update)
}

// TestTextListsOnce: B announces a dozen more deferred tools and sends six
// more inline, on every turn, and its system prompt names another memory
// folder (two runs in different folders). The lists are written once, not
// again on every turn, and the system block shows the line that changed.
func TestTextListsOnce(t *testing.T) {
	steps := []ct.Step{ct.Search("select:mcp__demo__echo", "mcp__demo__echo"), ct.Call("mcp__demo__echo"), ct.Done("It answered hello.")}
	memory := func(dir string) string {
		return "You are an agent working with the user toward their goals.\n\n# auto memory\n\nYou have a persistent, file-based memory system at `/home/dev/.claude/projects/-home-dev-" + dir + "/memory/`. This directory already exists; write to it directly.\n\nBe concise."
	}
	sa := ct.DefaultShape()
	sa.System = memory("alpha")
	sb := ct.DefaultShape()
	sb.System = memory("beta")
	sb.IDSeed = 5
	var extra []string
	for i := 0; i < 12; i++ {
		extra = append(extra, fmt.Sprintf("mcp__web__page_%02d", i))
	}
	sb.Catalog = append(slices.Clone(ct.Catalog), extra...)
	sb.Inline = []string{"CronCreate", "CronDelete", "CronList", "Monitor", "WebFetch", "WebSearch"}
	r := diffreport.Build(diffreport.Input{Name: "alpha.db", Session: ct.Session(sa, steps...)}, diffreport.Input{Name: "beta.db", Session: ct.Session(sb, steps...)},
		diffreport.Options{Prices: pricing.Default(), Version: "test"})
	var out bytes.Buffer
	if err := r.WriteText(&out, diffreport.Width); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, n := range append(extra, sb.Inline...) {
		if c := strings.Count(s, n); c != 1 {
			t.Errorf("%s written %d times, want once", n, c)
		}
	}
	for _, want := range []string{"-home-dev-alpha/memory/", "-home-dev-beta/memory/", "the same change as the request shape", "tools: + 6: CronCreate, CronDelete"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q not written", want)
		}
	}
	for i, l := range strings.Split(s, "\n") {
		if n := utf8.RuneCountInString(l); n > diffreport.Width {
			t.Errorf("line %d is %d columns: %q", i+1, n, l)
		}
	}
	golden.Check(t, "testdata/diff-lists.txt", s, *update)
	// Redacted, the system prompt's lines are not written.
	r = diffreport.Build(diffreport.Input{Name: "alpha.db", Session: ct.Session(sa, steps...)}, diffreport.Input{Name: "beta.db", Session: ct.Session(sb, steps...)},
		diffreport.Options{Policy: redact.Default, Version: "test"})
	out.Reset()
	if err := r.WriteMarkdown(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "memory/") {
		t.Errorf("a redacted diff holds the system prompt's lines:\n%s", out.String())
	}
}
