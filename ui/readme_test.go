package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/golden"
)

// TestREADMEKeys holds docs/timeline.md's key list to the key table; -update
// rewrites it.
func TestREADMEKeys(t *testing.T) {
	got := readmeKeys(keyTable())
	for _, r := range keyTable() {
		for _, k := range strings.Fields(r.keys + " " + r.also) {
			if !strings.Contains(got, fmt.Sprintf("`%s`", k)) {
				t.Errorf("key %s not in the key list of docs/timeline.md", k)
			}
		}
	}
	golden.Section(t, "../docs/timeline.md", "keys", got, *update)
}

// readmeKeys is the key table as docs/timeline.md's key list (Markdown).
func readmeKeys(rows []keyRow) string {
	code := func(s string) string {
		f := strings.Fields(s)
		for i := range f {
			f[i] = "`" + f[i] + "`"
		}
		return strings.Join(f, " ")
	}
	var b strings.Builder
	b.WriteString("| keys | where | what they do |\n| --- | --- | --- |\n")
	for _, r := range rows {
		keys := code(r.keys)
		if r.also != "" {
			keys += " (also " + code(r.also) + ")"
		}
		text := r.doc
		if text == "" {
			text = strings.ReplaceAll(r.help, "\n", " ")
		}
		text = strings.ReplaceAll(text, "|", `\|`)
		fmt.Fprintf(&b, "| %s | %s | %s |\n", keys, r.where, text)
	}
	return b.String()
}
