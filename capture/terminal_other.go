//go:build !linux

package capture

import "os"

// IsTerminal reports whether f is a character device, which a terminal
// is (so is /dev/null: elsewhere than Linux, tsinspect errs on the side of
// keeping its lines off a device).
func IsTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
