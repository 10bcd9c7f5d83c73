package main

import (
	"errors"
	"fmt"

	"github.com/tsinspect/tsinspect/store"
)

// captureError is the error of command cmd that could not open the
// capture at path to write it: one line saying who holds it when another
// process is writing it.
func captureError(cmd, path string, err error) error {
	if msg, ok := busyMessage(path, err); ok {
		return fmt.Errorf("%s: %s", cmd, msg)
	}
	return fmt.Errorf("%s: %w", cmd, err)
}

// busyMessage says, when err is store's ErrBusy, that the capture at path
// is being written by another process and what to do.
func busyMessage(path string, err error) (string, bool) {
	var be *store.BusyError
	if !errors.As(err, &be) {
		return "", false
	}
	who := "another tsinspect"
	if be.PID > 0 {
		who += fmt.Sprintf(" (process %d)", be.PID)
	}
	return fmt.Sprintf("%s is being written by %s, a record or an import; wait until it ends, or write to another file", path, who), true
}
