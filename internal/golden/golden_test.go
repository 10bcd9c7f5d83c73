package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeT records failures instead of failing the test.
type fakeT struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fakeT) Helper()                   {}
func (f *fakeT) Errorf(s string, a ...any) { f.failed, f.msg = true, s }
func (f *fakeT) Fatalf(s string, a ...any) { f.failed, f.msg = true, s }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.txt")
	f := &fakeT{}
	Check(f, path, "a\nb\n", false)
	if !f.failed {
		t.Error("a missing golden file passed")
	}
	Check(t, path, "a\nb\n", true)
	if b, _ := os.ReadFile(path); string(b) != "a\nb\n" {
		t.Fatalf("update wrote %q", b)
	}
	Check(t, path, "a\nb\n", false)
	f = &fakeT{}
	Check(f, path, "a\nc\n", false)
	if !f.failed {
		t.Error("a difference passed")
	}
	if d := Diff("a\nb\n", "a\nc\n"); !strings.Contains(d, "line 2:\n- b\n+ c") {
		t.Errorf("diff %q", d)
	}
}

func TestSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	doc := "# Title\n\n<!-- keys: made by a test -->\n| a |\n<!-- /keys -->\n\nafter\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	Section(t, path, "keys", "| a |\n", false)
	f := &fakeT{}
	Section(f, path, "keys", "| b |\n", false)
	if !f.failed || !strings.Contains(f.msg, "differs") {
		t.Errorf("a difference passed: %q", f.msg)
	}
	f = &fakeT{}
	Section(f, path, "flags", "| a |\n", false)
	if !f.failed {
		t.Error("a missing section passed")
	}
	Section(t, path, "keys", "| b |\n| c |\n", true)
	b, _ := os.ReadFile(path)
	if want := "# Title\n\n<!-- keys: made by a test -->\n| b |\n| c |\n<!-- /keys -->\n\nafter\n"; string(b) != want {
		t.Errorf("update wrote %q, want %q", b, want)
	}
	// A marker must be the name, not a longer word that starts with it.
	if _, _, ok := section("<!-- keysets -->\nx\n<!-- /keys -->\n", "keys"); ok {
		t.Error("<!-- keysets --> taken for <!-- keys -->")
	}
}
