package store

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrBusy is returned by OpenWriter and CheckTarget when another process
// is writing the capture (a record or an import); test for it with
// errors.Is.
var ErrBusy = errors.New("another tsinspect is writing to it")

// lockSuffix names the lock file beside a capture that its writer holds.
const lockSuffix = ".lock"

// LockPath returns the path of the lock file that the process writing
// the capture at path holds while it writes (see OpenWriter).
func LockPath(path string) string { return path + lockSuffix }

// OpenWriter opens the capture file at path as Open does (OpenDurable when
// durable is set), for the one process that writes it: it first takes the
// capture's writer lock, an exclusive lock on the file LockPath(path),
// and returns an error wrapping ErrBusy, without touching the capture,
// while another process holds it. The lock is released by Close and, as
// the system drops the locks of a process that ends, by a crash or kill
// -9: a file left by a killed recorder is never locked out. Readers take
// no lock. The lock file is removed when the lock is released cleanly.
//
// The lock is a separate file rather than a lock on the capture itself:
// SQLite locks ranges of the capture with POSIX locks, which closing any
// other descriptor of the file would drop, and which some systems make
// conflict with a whole-file lock.
func OpenWriter(path string, durable bool) (*DB, error) {
	fail := func(err error) (*DB, error) { return nil, fmt.Errorf("store: open %s: %w", path, err) }
	if err := checkWritable(path); err != nil {
		return fail(err)
	}
	lk, err := lockWriter(LockPath(path))
	if err != nil {
		return fail(err)
	}
	params := rwParams
	if durable {
		params += "&_sync=FULL"
	}
	db, err := openRW(path, params)
	if err != nil {
		lk.release()
		return nil, err
	}
	db.lock = lk
	return db, nil
}

// CheckTarget reports, without opening it, whether a capture could be
// written at path now: an error for a path OpenWriter would refuse (not a
// regular file, read-only, in a missing directory) and one wrapping
// ErrBusy while another process writes the capture. A command that
// writes a capture calls it before its slow work, so that it refuses at
// once.
func CheckTarget(path string) error {
	if err := checkWritable(path); err != nil {
		return fmt.Errorf("store: %s: %w", path, err)
	}
	lk, err := lockWriter(LockPath(path))
	if err != nil {
		return fmt.Errorf("store: %s: %w", path, err)
	}
	lk.release()
	return nil
}

// BusyError is the error of OpenWriter and CheckTarget for a capture that
// another process is writing; it wraps ErrBusy.
type BusyError struct {
	// PID is the process that holds the capture's writer lock, 0 when
	// the lock file does not say.
	PID int
}

func (e *BusyError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%v (process %d)", ErrBusy, e.PID)
	}
	return ErrBusy.Error()
}

// Unwrap returns ErrBusy.
func (e *BusyError) Unwrap() error { return ErrBusy }

// busy is the error for a lock held by another process, naming it when
// the lock file says which.
func busy(holder []byte) error {
	pid, err := strconv.Atoi(strings.TrimSpace(string(holder)))
	if err != nil || pid < 0 {
		pid = 0
	}
	return &BusyError{PID: pid}
}

// releaseLock releases the writer lock of db, if it holds one. It runs
// once the capture's SQLite handles are closed.
func (db *DB) releaseLock() {
	if db.lock != nil {
		db.lock.release()
		db.lock = nil
	}
}

// writeHolder records this process as the lock's holder, for the message
// of a process that finds it taken.
func writeHolder(f *os.File) {
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
}

// BusyMessage says, when err is a *BusyError, that the capture at path is
// being written by another process and what to do; ok is false for any
// other error.
func BusyMessage(path string, err error) (msg string, ok bool) {
	var be *BusyError
	if !errors.As(err, &be) {
		return "", false
	}
	who := "another tsinspect"
	if be.PID > 0 {
		who += fmt.Sprintf(" (process %d)", be.PID)
	}
	return fmt.Sprintf("%s is being written by %s, a record or an import; wait until it ends, or write to another file", path, who), true
}

// TargetError is the error of operation op that could not open the
// capture at path to write it: one line saying who holds it when another
// process is writing it, else "op: err".
func TargetError(op, path string, err error) error {
	if msg, ok := BusyMessage(path, err); ok {
		return fmt.Errorf("%s: %s", op, msg)
	}
	return fmt.Errorf("%s: %w", op, err)
}
