package timeline_test

import (
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/timeline"
)

// TestFlagKinds holds the table of flag kinds together: each row names a
// kind once, with a severity and every text a person reads, and Kinds,
// Severity and Explain answer from it.
func TestFlagKinds(t *testing.T) {
	rows := timeline.FlagKinds()
	if len(rows) != len(timeline.Kinds()) || len(rows) < 14 {
		t.Fatalf("%d rows, %d kinds", len(rows), len(timeline.Kinds()))
	}
	seen := map[string]bool{}
	for i, r := range rows {
		if seen[r.Kind] || r.Kind != timeline.Kinds()[i] {
			t.Errorf("row %d: kind %q repeated or out of order", i, r.Kind)
		}
		seen[r.Kind] = true
		switch r.Severity {
		case timeline.SeverityError, timeline.SeverityWarning, timeline.SeverityInfo:
		default:
			t.Errorf("%s: severity %q", r.Kind, r.Severity)
		}
		if r.When == "" || r.Why == "" || r.Todo == "" || strings.Contains(r.When, "\n") {
			t.Errorf("%s: texts missing, or When not one line: %+v", r.Kind, r)
		}
		if got := timeline.Severity(r.Kind); got != r.Severity {
			t.Errorf("Severity(%s) = %q, row %q", r.Kind, got, r.Severity)
		}
		if why, todo := timeline.Explain(r.Kind); why != r.Why || todo != r.Todo {
			t.Errorf("Explain(%s) is not the row's", r.Kind)
		}
	}
	if why, todo := timeline.Explain("no_such_kind"); why != "" || todo != "" || timeline.Severity("no_such_kind") != "" {
		t.Error("an unknown kind has texts or a severity")
	}
	// A copy: a caller cannot change the table.
	rows[0].Severity = "changed"
	if timeline.Severity(rows[0].Kind) == "changed" {
		t.Error("FlagKinds hands out the table itself")
	}
}
