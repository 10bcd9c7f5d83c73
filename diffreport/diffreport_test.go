package diffreport_test

import (
	"bytes"
	"flag"
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
