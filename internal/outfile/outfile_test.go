package outfile_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/tsinspect/tsinspect/internal/outfile"
)

// entries lists the names in dir, to check that nothing was left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestNewFileIsPrivate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	if err := outfile.WriteFile(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want a regular 0600 file", fi.Mode())
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %v, want only r.json", got)
	}
}

func TestRegularFileReplacedWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	os.WriteFile(p, []byte("old content"), 0o644)
	if err := outfile.WriteFile(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("content %q, want new", b)
	}
	// A failed write leaves the old file as it was and no temporary file.
	err := outfile.WriteWith(p, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return errors.New("boom")
	})
	if err == nil {
		t.Fatal("WriteWith: want the write's error")
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("after a failed write the content is %q, want new", b)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %v after a failed write, want only r.json", got)
	}
}

func TestSymlinkStaysALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.md")
	os.WriteFile(target, []byte("old"), 0o600)
	link := filepath.Join(dir, "link.md")
	if err := os.Symlink("real.md", link); err != nil {
		t.Fatal(err)
	}
	if err := outfile.WriteFile(link, []byte("via link")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: mode %v, err %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != "via link" {
		t.Errorf("target holds %q, want the new content", b)
	}
}

func TestDanglingSymlinkCreatesItsTarget(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link.md")
	os.Symlink("made.md", link)
	if err := outfile.WriteFile(link, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "made.md")); err != nil || string(b) != "x" {
		t.Errorf("target: %q, %v", b, err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("the dangling link was replaced by a file")
	}
}

func TestDevNullWrittenThrough(t *testing.T) {
	before, err := os.Lstat(os.DevNull)
	if err != nil {
		t.Skip("no /dev/null here")
	}
	if err := outfile.WriteFile(os.DevNull, []byte("discard me")); err != nil {
		t.Fatal(err)
	}
	after, err := os.Lstat(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if after.Mode() != before.Mode() || after.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("/dev/null mode %v after the write, was %v", after.Mode(), before.Mode())
	}
	if !os.SameFile(before, after) {
		t.Error("/dev/null was replaced by another file")
	}
}

func TestFIFOWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(p)
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if err := outfile.WriteFile(p, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("reader got %q", s)
	}
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
}

// TestRefused: what the package refuses is refused by Check too, with
// the same error, before anything is touched.
func TestRefused(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro.json")
	os.WriteFile(ro, []byte("keep"), 0o444)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	for _, tc := range []struct {
		name, path string
		want       error
	}{
		{"directory", sub, outfile.ErrIsDir},
		{"read-only file", ro, outfile.ErrReadOnly},
		{"missing directory", filepath.Join(dir, "nope", "r.json"), outfile.ErrNoDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := outfile.WriteFile(tc.path, []byte("x"))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if cerr := outfile.Check(tc.path); cerr == nil || cerr.Error() != err.Error() {
				t.Errorf("Check: %v, want what writing said: %v", cerr, err)
			}
		})
	}
	// What may be written passes Check, which creates nothing.
	for _, p := range []string{filepath.Join(dir, "new.json"), filepath.Join(sub, "new.json"), os.DevNull} {
		if err := outfile.Check(p); err != nil {
			t.Errorf("Check(%s): %v", p, err)
		}
	}
	if b, _ := os.ReadFile(ro); string(b) != "keep" {
		t.Errorf("read-only file now holds %q", b)
	}
	if got := entries(t, dir); len(got) != 2 {
		t.Errorf("directory holds %v, want ro.json and sub only", got)
	}
	if got := entries(t, sub); len(got) != 0 {
		t.Errorf("sub holds %v, want nothing", got)
	}
}
