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
