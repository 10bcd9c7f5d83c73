//go:build unix

package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// writerLock is a held writer lock: an exclusive flock on the lock file,
// which the system releases when the process ends, however it ends.
type writerLock struct {
	f    *os.File
	name string
}

// lockWriter takes the exclusive lock on the file name, creating it
// (0600) if needed, without waiting: it returns an error wrapping ErrBusy
// when another process holds it.
func lockWriter(name string) (*writerLock, error) {
	// A holder that releases the lock removes the file: one opened just
	// before that is no longer the lock, and is opened again.
	for range 8 {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("writer lock: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			holder, _ := io.ReadAll(io.LimitReader(f, 32))
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, busy(holder)
			}
			return nil, fmt.Errorf("writer lock: %w", err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(name)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			writeHolder(f)
			return &writerLock{f: f, name: name}, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("writer lock: %s keeps being replaced", name)
}

// release removes the lock file, then drops the lock.
func (l *writerLock) release() {
	_ = os.Remove(l.name)
	_ = l.f.Close()
}
