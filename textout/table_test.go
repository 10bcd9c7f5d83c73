package textout

import (
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/report"
)

func TestSizeDelta(t *testing.T) {
	for _, c := range []struct {
		n, added, removed int
		want              string
	}{{41, 0, 0, "41"}, {13, 1, 0, "13 +1"}, {12, 0, 2, "12 -2"}, {13, 2, 1, "13 +2 -1"}} {
		if got := sizeDelta(c.n, c.added, c.removed); got != c.want {
			t.Errorf("sizeDelta(%d, %d, %d) = %q, want %q", c.n, c.added, c.removed, got, c.want)
		}
	}
}

func TestFlagKinds(t *testing.T) {
	fs := []report.Flag{{Kind: "cache_break"}, {Kind: "blind_call"}, {Kind: "cache_break"}}
	if got, want := flagKinds(fs), "cache_break(2),blind_call"; got != want {
		t.Errorf("flagKinds = %q, want %q", got, want)
	}
	if got := flagKinds(nil); got != "" {
		t.Errorf("flagKinds(nil) = %q", got)
	}
}

func TestCell(t *testing.T) {
	for in, want := range map[string]string{"": "-", "a\tb\nc": "a b c", "abcdef": "abcd…", "abcde": "abcde"} {
		if got := cell(in, 5); got != want {
			t.Errorf("cell(%q, 5) = %q, want %q", in, got, want)
		}
	}
}

// TestWriteTable: numbers are right-aligned, one space apart from a number
// column before them, two from text; a line has no trailing blanks.
func TestWriteTable(t *testing.T) {
	cols := []column{{"NAME", false}, {"N", true}, {"M", true}, {"NOTE", false}}
	var b strings.Builder
	if err := writeTable(&b, cols, [][]string{header(cols), {"a", "1", "200", ""}, {"long", "10", "3", "é"}}); err != nil {
		t.Fatal(err)
	}
	want := "NAME   N   M  NOTE\n" +
		"a      1 200\n" +
		"long  10   3  é\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}
