package sessionfiles

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is returned for a path that is not a regular file: a named
// pipe, a device (a link to /dev/zero), a socket or a directory. Reading
// one could block for ever or never end, so it is not read.
var ErrNotRegular = errors.New("not a regular file")

// openRegular opens path for reading if, once opened, it is a regular
// file. The check is on the opened file, not on the name, so a file
// swapped for a pipe between a listing and the read is refused too; the
// open itself does not wait for a pipe's writer (see openFlags).
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kindOf(info.Mode()))}
	}
	return f, info, nil
}

// kindOf names what a file that is not regular is.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "of mode " + m.String()
}

// readWhole reads the regular file at path as it was when opened: no more
// than the size it had then, however much is appended while it is read.
func readWhole(path string) ([]byte, error) {
	f, info, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, info.Size())
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	// A file cut while it was read holds what was read.
	return buf[:n], nil
}
