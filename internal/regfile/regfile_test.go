//go:build unix

package regfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/oddfiles"

	"github.com/tsinspect/tsinspect/internal/regfile"
)

// TestReadAllRefusesWhatIsNotARegularFile: a named pipe with no writer and
// a link to /dev/zero are refused in one line naming what they are, never
// waited on nor read without end; a file over the limit is refused before
// it is read; a regular file is read whole.
func TestReadAllRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo, zero := filepath.Join(dir, "fifo"), filepath.Join(dir, "zero")
	oddfiles.Make(t, fifo, zero)
	for path, kind := range map[string]string{fifo: "a named pipe", zero: "a character device", dir: "a directory"} {
		_, err := regfile.ReadAll(path, 0)
		if !errors.Is(err, regfile.ErrNotRegular) || !strings.Contains(err.Error(), kind) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ReadAll(%s) = %v, want one line: not a regular file (%s)", filepath.Base(path), err, kind)
		}
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := regfile.ReadAll(big, 1024); !errors.Is(err, regfile.ErrTooLarge) || !strings.Contains(err.Error(), "2.0 kB") {
		t.Errorf("ReadAll over the limit = %v, want ErrTooLarge with the size", err)
	}
	if b, err := regfile.ReadAll(big, 4096); err != nil || len(b) != 2048 {
		t.Errorf("ReadAll(regular) = %d bytes, %v", len(b), err)
	}
}
