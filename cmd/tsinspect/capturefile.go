package main

import (
	"github.com/tsinspect/tsinspect/importer"
)

// readError is the error of command cmd that could not read the capture
// at path (importer.NotCapture): for a file of a format 'import' reads, it
// says how to import it; otherwise it is err.
func readError(cmd, path string, err error) error {
	return importer.NotCapture(cmd, path, err)
}
