package compare

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLineDiff: the lines of a system prompt that two runs in different
// folders wrote differently are shown, cut around where they differ; the
// rest is left out, and a long diff says how much more there is.
func TestLineDiff(t *testing.T) {
	head := strings.Repeat("You are an interactive agent that helps users with software engineering tasks. ", 3)
	a := "Intro.\n\n# auto memory\nYou have a persistent, file-based memory system at `/home/dev/.claude/projects/-home-dev-alpha/memory/`. " + head + "\nMore.\nThe end."
	b := "Intro.\n\n# auto memory\nYou have a persistent, file-based memory system at `/home/dev/.claude/projects/-home-dev-beta/memory/`. " + head + "\nMore.\nThe end."
	got := lineDiff(a, b)
	if len(got) != 2 || !strings.HasPrefix(got[0], "- …") || !strings.HasPrefix(got[1], "+ …") ||
		!strings.Contains(got[0], "-home-dev-alpha/memory/") || !strings.Contains(got[1], "-home-dev-beta/memory/") {
		t.Fatalf("memory path: %q", got)
	}
	for _, l := range got {
		if n := utf8.RuneCountInString(l); n > diffWidth+2 {
			t.Errorf("line of %d runes: %q", n, l)
		}
	}
	if got := lineDiff("a\nb\nc", "a\nc\nd"); strings.Join(got, "|") != "- b|+ d" {
		t.Errorf("removed and added: %q", got)
	}
	if got := lineDiff("same", "same"); got != nil {
		t.Errorf("equal: %q", got)
	}
	var many []string
	for i := 0; i < 30; i++ {
		many = append(many, fmt.Sprintf("line %d", i))
	}
	got = lineDiff(strings.Join(many, "\n"), "")
	if len(got) != diffLines+1 || got[diffLines] != fmt.Sprintf("… %d more changed lines", 30+1-diffLines) {
		t.Errorf("bounded: %q", got)
	}
}
