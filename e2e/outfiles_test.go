package e2e

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/fixtures/democapture"
)

// tree lists every path under dir with its kind, so that a test can tell
// that a command touched nothing it was not meant to.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel+" "+d.Type().String())
		return nil
	})
	sort.Strings(out)
	return out
}

// TestOutputPaths runs 'report --out' and 'export --out' onto each kind of
// path a user may name, and checks the documented outcome: regular files
// replaced whole, links kept and written through, devices and pipes written
// through, directories, read-only files and missing directories refused
// with one line, and nothing else in the directory touched.
func TestOutputPaths(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "demo.db")
	if err := os.WriteFile(db, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	devNull, err := os.Lstat(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{
		{"report", db, "--format", "markdown", "--out"},
		{"export", db, "--format", "har", "--out"},
	} {
		name := cmd[0]
		t.Run(name, func(t *testing.T) {
			run := func(path string) (int, string, string) {
				return runCLI(t, append(append([]string{}, cmd...), path)...)
			}
			work := filepath.Join(dir, name)
			os.Mkdir(work, 0o700)

			// /dev/null stays the device it was.
			if code, _, stderr := run(os.DevNull); code != 0 {
				t.Fatalf("--out /dev/null: exit %d: %s", code, stderr)
			}
			after, err := os.Lstat(os.DevNull)
			if err != nil || !os.SameFile(devNull, after) || after.Mode()&fs.ModeCharDevice == 0 {
				t.Fatalf("/dev/null was replaced: mode %v", after.Mode())
			}

			// A regular file is replaced whole; a link to it stays a link.
			real := filepath.Join(work, "real.out")
			os.WriteFile(real, []byte("old"), 0o600)
			link := filepath.Join(work, "link.out")
			os.Symlink("real.out", link)
			if code, _, stderr := run(link); code != 0 {
				t.Fatalf("--out onto a link: exit %d: %s", code, stderr)
			}
			if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
				t.Error("the symbolic link was replaced by a file")
			}
			if b, _ := os.ReadFile(real); len(b) < 100 || string(b) == "old" {
				t.Errorf("the link's target holds %d bytes, want the output", len(b))
			}

			// A FIFO is written through, not replaced.
			fifo := filepath.Join(work, "pipe")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			got := make(chan int, 1)
			go func() {
				f, err := os.Open(fifo)
				if err != nil {
					got <- -1
					return
				}
				defer f.Close()
				n, _ := io.Copy(io.Discard, f)
				got <- int(n)
			}()
			if code, _, stderr := run(fifo); code != 0 {
				t.Fatalf("--out onto a FIFO: exit %d: %s", code, stderr)
			}
			select {
			case n := <-got:
				if n < 100 {
					t.Errorf("the FIFO's reader got %d bytes", n)
				}
			case <-time.After(patience):
				t.Fatal("the FIFO's reader got nothing")
			}

			// Refused, with one line and nothing written.
			sub := filepath.Join(work, "sub")
			os.Mkdir(sub, 0o700)
			ro := filepath.Join(work, "ro.out")
			os.WriteFile(ro, []byte("keep"), 0o444)
			before := tree(t, work)
			for _, tc := range []struct{ path, want string }{
				{sub, "is a directory"},
				{ro, "is read-only"},
				{filepath.Join(work, "missing", "r.out"), "directory does not exist"},
			} {
				code, stdout, stderr := run(tc.path)
				assertRefused(t, code, stdout, stderr, 1, tc.want)
			}
			if b, _ := os.ReadFile(ro); string(b) != "keep" {
				t.Errorf("the read-only file now holds %q", b)
			}
			if after := tree(t, work); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Errorf("refused runs changed the directory:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestCapturePaths opens --db and reading commands on paths that are not
// capture files: each is refused with one line and left as it was.
func TestCapturePaths(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.db")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(dir, "ro.db")
	os.WriteFile(ro, democapture.Bytes(), 0o444)
	har := filepath.Join(dir, "demo.har")
	if code, _, stderr := runCLI(t, "export", ro, "--format", "har", "--out", har); code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	devNull, _ := os.Lstat(os.DevNull)
	before := tree(t, dir)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"turns on a FIFO", []string{"turns", fifo}, "is a named pipe"},
		{"turns on /dev/null", []string{"turns", os.DevNull}, "is a device"},
		{"import into /dev/null", []string{"import", "--db", os.DevNull, har}, "is a device"},
		{"import into a FIFO", []string{"import", "--db", fifo, har}, "is a named pipe"},
		{"import into a directory", []string{"import", "--db", dir, har}, "is a directory"},
		{"import into a read-only capture", []string{"import", "--db", ro, har}, "is read-only"},
		{"import into a missing directory", []string{"import", "--db", filepath.Join(dir, "no", "x.db"), har}, "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan struct{})
			var code int
			var stdout, stderr string
			go func() {
				code, stdout, stderr = runCLI(t, tc.args...)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(patience):
				t.Fatal("the command hung")
			}
			assertRefused(t, code, stdout, stderr, 1, tc.want)
		})
	}
	if after := tree(t, dir); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("refused runs changed the directory:\nbefore %v\nafter  %v", before, after)
	}
	if after, err := os.Lstat(os.DevNull); err != nil || !os.SameFile(devNull, after) {
		t.Error("/dev/null was replaced")
	}
	if _, err := os.Lstat(os.DevNull + "-wal"); err == nil {
		t.Error("a -wal file was created beside /dev/null")
	}
}
