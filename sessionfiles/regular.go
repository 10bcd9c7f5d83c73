package sessionfiles

import (
	"io/fs"
	"os"

	"github.com/tsinspect/tsinspect/internal/regfile"
)

// ErrNotRegular is returned for a path that is not a regular file: a named
// pipe, a device (a link to /dev/zero), a socket or a directory. Reading
// one could block for ever or never end, so it is not read.
var ErrNotRegular = regfile.ErrNotRegular

// openRegular opens path for reading if, once opened, it is a regular
// file (regfile.Open).
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	return regfile.Open(path)
}

// kindOf names what a file that is not regular is.
func kindOf(m fs.FileMode) string { return regfile.Kind(m) }

// readWhole reads the regular file at path as it was when opened: no more
// than the size it had then, however much is appended while it is read.
func readWhole(path string) ([]byte, error) {
	return regfile.ReadAll(path, 0)
}
