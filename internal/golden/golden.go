// Package golden compares test output with a file under testdata/, or
// rewrites the file when the test runs with -update. Each test package
// declares its own -update flag and passes its value.
package golden

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Check compares got with the golden file at path. With update it writes
// got there instead (creating the directory). The failure shows the lines
// that differ.
func Check(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("golden: %v", err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatalf("golden: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (run the test with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run the test with -update to accept):\n%s", path, Diff(string(want), got))
	}
}

// Diff lists the lines of want and got that differ, position by position,
// "-" for want's and "+" for got's, and the count when they differ in
// length.
func Diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 40; i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n- " + a + "\n+ " + c + "\n")
			shown++
		}
	}
	if len(w) != len(g) {
		b.WriteString("want " + strconv.Itoa(len(w)) + " lines, got " + strconv.Itoa(len(g)) + "\n")
	}
	return b.String()
}

// Section compares got with a generated part of a hand-written file, such
// as a table in README.md: the lines between an opening marker line,
// "<!-- name -->" or "<!-- name: a note for the reader -->", and the
// closing line "<!-- /name -->". With update it writes got there instead,
// leaving the rest of the file as it was. got is whole lines, each ending
// in "\n".
func Section(t testing.TB, path, name, got string, update bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v", err)
		return
	}
	text := string(b)
	from, to, ok := section(text, name)
	if !ok {
		t.Fatalf("golden: %s has no section <!-- %s --> ... <!-- /%s -->", path, name, name)
		return
	}
	if update {
		if text[from:to] == got {
			return
		}
		if err := os.WriteFile(path, []byte(text[:from]+got+text[to:]), 0o644); err != nil {
			t.Fatalf("golden: %v", err)
		}
		return
	}
	if want := text[from:to]; got != want {
		t.Errorf("%s, section %s, differs (run the test with -update to accept):\n%s", path, name, Diff(want, got))
	}
}

// section finds the lines between name's markers in text: the offset
// after the opening marker's line and that of the closing marker.
func section(text, name string) (from, to int, ok bool) {
	open, end := "<!-- "+name, "<!-- /"+name+" -->"
	at := 0
	for _, line := range strings.SplitAfter(text, "\n") {
		l := strings.TrimRight(line, "\r\n")
		switch {
		case from == 0 && strings.HasPrefix(l, open) && strings.HasSuffix(l, "-->") &&
			len(l) > len(open) && (l[len(open)] == ' ' || l[len(open)] == ':'):
			from = at + len(line)
		case from > 0 && l == end:
			return from, at, true
		}
		at += len(line)
	}
	return 0, 0, false
}
