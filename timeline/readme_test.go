package timeline_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/golden"
	"github.com/tsinspect/tsinspect/timeline"
)

var update = flag.Bool("update", false, "rewrite the flag table in docs/flags.md")

// TestREADMEFlags holds docs/flags.md's flag table to the table of flag
// kinds; -update rewrites it.
func TestREADMEFlags(t *testing.T) {
	var b strings.Builder
	b.WriteString("| kind | severity | when |\n| --- | --- | --- |\n")
	for _, r := range timeline.FlagKinds() {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.Kind, r.Severity, strings.ReplaceAll(r.When, "|", `\|`))
	}
	golden.Section(t, "../docs/flags.md", "flags", b.String(), *update)
}
