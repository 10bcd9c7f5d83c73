package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/cli"
)

// runCLI runs tsinspect in process and returns its status and output.
func runCLI(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(&cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}, args)
	return code, out.String(), errOut.String()
}

// TestCompactOldCapture: a capture of the first schema compacts in place,
// with progress, and every command shows the same before and after.
func TestCompactOldCapture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	in, err := os.Open("../../store/testdata/capture-v1.db")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	in.Close()
	out.Close()
	before, _ := os.Stat(path)

	views := func() string {
		var all strings.Builder
		for _, args := range [][]string{{"turns"}, {"searches"}, {"exchanges"}, {"report", "--format", "json"}} {
			code, stdout, stderr := runCLI(append(args, path)...)
			if code != 0 && code != 3 {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
			all.WriteString(stdout)
		}
		return all.String()
	}
	want := views()
	code, stdout, stderr := runCLI("compact", path)
	if code != 0 {
		t.Fatalf("compact: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "16/16 bodies (100 %)") || !strings.Contains(stderr, "rewriting the file") {
		t.Errorf("compact progress:\n%s", stderr)
	}
	if !strings.Contains(stdout, "was 692.2 kB") {
		t.Errorf("compact summary: %q", stdout)
	}
	after, _ := os.Stat(path)
	if after.Size()*3 > before.Size() {
		t.Errorf("file %d bytes after compacting, %d before", after.Size(), before.Size())
	}
	if got := views(); got != want {
		t.Errorf("commands show something else after compacting:\n got %.1500s\nwant %.1500s", got, want)
	}
	if code, _, _ := runCLI("compact"); code != 2 {
		t.Errorf("compact without a file: exit %d, want 2", code)
	}
}
