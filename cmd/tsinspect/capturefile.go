package main

import (
	"github.com/tsinspect/tsinspect/importer"
	"github.com/tsinspect/tsinspect/store"
)

// captureError is the error of command cmd that could not open the
// capture at path to write it (store.TargetError).
func captureError(cmd, path string, err error) error {
	return store.TargetError(cmd, path, err)
}

// readError is the error of command cmd that could not read the capture
// at path (importer.NotCapture): for a file of a format 'import' reads, it
// says how to import it; otherwise it is err.
func readError(cmd, path string, err error) error {
	return importer.NotCapture(cmd, path, err)
}
