package advice_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/internal/golden"
)

// TestKindTable holds the table of kinds of advice together: each kind
// named once, with its title and its three columns of docs, and the
// functions that read it agree with it.
func TestKindTable(t *testing.T) {
	seen := map[string]bool{}
	rows := advice.KindRows()
	if got := strings.Join(advice.Kinds(), ","); got != "load_up_front,never_used,search_misses,blind_calls,cache_breaks,tool_loads,search_partial,pauses,tool_search" {
		t.Errorf("kinds %s", got)
	}
	for i, r := range rows {
		if r.Kind == "" || seen[r.Kind] || r.Title == "" || r.Pattern == "" || r.Advice == "" || r.Figure == "" {
			t.Errorf("row %d (%s): a kind of its own, a title and the three columns of docs are wanted", i, r.Kind)
		}
		seen[r.Kind] = true
		if advice.KindTitle(r.Kind) != r.Title || advice.Costs(r.Kind) != r.Costs || advice.Kinds()[i] != r.Kind {
			t.Errorf("kind %s: KindTitle, Costs or Kinds disagree with its row", r.Kind)
		}
	}
	if advice.KindTitle("nosuch") != "nosuch" || advice.Costs("nosuch") {
		t.Error("an unknown kind has a row")
	}
}

// TestDocsKinds holds docs/advise.md's table of what advise looks for to
// the table of kinds; -update rewrites it.
func TestDocsKinds(t *testing.T) {
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	var b strings.Builder
	b.WriteString("| kind | the pattern | the advice | the figure |\n| --- | --- | --- | --- |\n")
	for _, r := range advice.KindRows() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(r.Title), cell(r.Pattern), cell(r.Advice), cell(r.Figure))
	}
	golden.Section(t, "../docs/advise.md", "kinds", b.String(), *update)
}
