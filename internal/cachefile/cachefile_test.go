//go:build unix

package cachefile_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tsinspect/tsinspect/internal/oddfiles"

	"github.com/tsinspect/tsinspect/internal/cachefile"
)

// TestEveryFlippedBitIsCaught: a cache saved and read back holds what was
// saved; with any one bit of it flipped (its header or its payload), or
// of another version or kind, Load says so in one line and gives nothing.
func TestEveryFlippedBitIsCaught(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.gob")
	payload := bytes.Repeat([]byte("facts "), 40)
	if err := cachefile.Save(path, "test cache", 3, payload); err != nil {
		t.Fatal(err)
	}
	if b, err := cachefile.Load(path, "test cache", 3); err != nil || !bytes.Equal(b, payload) {
		t.Fatalf("Load = %q, %v", b, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the cache's mode: %v, %v", fi.Mode(), err)
	}
	for _, c := range []struct {
		kind    string
		version int
	}{{"test cache", 4}, {"other cache", 3}} {
		if b, err := cachefile.Load(path, c.kind, c.version); !errors.Is(err, cachefile.ErrRebuild) || b != nil {
			t.Errorf("Load as %s v%d = %d bytes, %v; want ErrRebuild", c.kind, c.version, len(b), err)
		}
	}
	good, _ := os.ReadFile(path)
	for i := range len(good) * 8 {
		bad := bytes.Clone(good)
		bad[i/8] ^= 1 << (i % 8)
		if err := os.WriteFile(path, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := cachefile.Load(path, "test cache", 3)
		if !errors.Is(err, cachefile.ErrRebuild) || b != nil || strings.Contains(err.Error(), "\n") {
			t.Fatalf("bit %d flipped: Load = %d bytes, %v; want one line and ErrRebuild", i, len(b), err)
		}
	}
	if b, err := cachefile.Load(filepath.Join(t.TempDir(), "none"), "test cache", 3); b != nil || err != nil {
		t.Errorf("a missing cache: %q, %v; want nothing, said nowhere", b, err)
	}
}

// TestNotARegularCache: a named pipe or a link to /dev/zero in place of a
// cache is refused at once, in one line, and the next Save replaces it.
func TestNotARegularCache(t *testing.T) {
	dir := t.TempDir()
	fifo, zero := filepath.Join(dir, "fifo.gob"), filepath.Join(dir, "zero.gob")
	oddfiles.Make(t, fifo, zero)
	for _, p := range []string{fifo, zero} {
		if _, err := cachefile.Load(p, "test cache", 1); !errors.Is(err, cachefile.ErrRebuild) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Load(%s) = %v, want not a regular file, rebuilding", filepath.Base(p), err)
		}
		if err := cachefile.Save(p, "test cache", 1, []byte("x")); err != nil {
			t.Errorf("Save over %s: %v", filepath.Base(p), err)
		}
		if b, err := cachefile.Load(p, "test cache", 1); err != nil || string(b) != "x" {
			t.Errorf("after Save over %s: %q, %v", filepath.Base(p), b, err)
		}
	}
}

// fullDiskEnv names the directory the child process of
// TestSaveOnAFullDiskLeavesNothing saves into.
const fullDiskEnv = "TSINSPECT_TEST_FULL_DISK_DIR"

// TestSaveOnAFullDiskLeavesNothing: a save that cannot be written whole
// (a child process whose files may not grow past 4 KB, as on a full disk)
// fails with an error, leaves the cache as it was and no temporary file.
func TestSaveOnAFullDiskLeavesNothing(t *testing.T) {
	if dir := os.Getenv(fullDiskEnv); dir != "" {
		lim := syscall.Rlimit{Cur: 4096, Max: 4096}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatalf("setrlimit: %v", err)
		}
		err := cachefile.Save(filepath.Join(dir, "c.gob"), "test cache", 1, make([]byte, 64<<10))
		if err == nil {
			t.Fatal("a 64 KB save past a 4 KB limit succeeded")
		}
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "c.gob")
	if err := cachefile.Save(path, "test cache", 1, []byte("old")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSaveOnAFullDiskLeavesNothing$", "-test.count=1")
	cmd.Env = append(os.Environ(), fullDiskEnv+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 1 || names[0].Name() != "c.gob" {
		var got []string
		for _, n := range names {
			got = append(got, n.Name())
		}
		t.Errorf("after a failed save the directory holds %q, want only c.gob", got)
	}
	if b, err := cachefile.Load(path, "test cache", 1); err != nil || string(b) != "old" {
		t.Errorf("the cache after a failed save: %q, %v; want it as it was", b, err)
	}
}
