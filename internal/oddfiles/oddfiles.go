// Package oddfiles makes, for tests, the files tsinspect must refuse to
// read in place of a regular one: a named pipe (reading it would wait for
// a writer) and a link to /dev/zero (reading it would never end).
package oddfiles

import (
	"os"
	"syscall"
	"testing"
)

// Make makes a named pipe at fifo and a link to /dev/zero at zero; it
// skips tb where named pipes cannot be made.
func Make(tb testing.TB, fifo, zero string) {
	tb.Helper()
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		tb.Skipf("no named pipes here: %v", err)
	}
	if err := os.Symlink("/dev/zero", zero); err != nil {
		tb.Fatal(err)
	}
}
