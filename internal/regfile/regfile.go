// Package regfile is the one owner of "read a file tsinspect did not
// write, bounded": a path is read only if, once opened, it is a regular
// file (a named pipe, a device such as a link to /dev/zero, a socket or a
// directory is refused in one line, never waited on), and no more of it
// than its size when opened, nor more than the caller's limit.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// ErrNotRegular is returned for a path that is not a regular file: a named
// pipe, a device (a link to /dev/zero), a socket or a directory. Reading
// one could block for ever or never end, so it is not read.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned by [ReadAll] for a file larger than its limit.
var ErrTooLarge = errors.New("file too large")

// Open opens path for reading if, once opened, it is a regular file. The
// check is on the opened file, not on the name, so a file swapped for a
// pipe between a listing and the read is refused too; the open itself
// does not wait for a pipe's writer (see openFlags).
func Open(path string) (*os.File, fs.FileInfo, error) {
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
		return nil, nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, Kind(info.Mode()))}
	}
	return f, info, nil
}

// kinds names what a file that is not regular is, by its mode bit, in the
// order they are tried.
var kinds = []struct {
	bit  fs.FileMode
	name string
}{
	{fs.ModeNamedPipe, "a named pipe"},
	{fs.ModeCharDevice, "a character device"},
	{fs.ModeDevice, "a device"},
	{fs.ModeSocket, "a socket"},
	{fs.ModeDir, "a directory"},
	{fs.ModeSymlink, "a symbolic link"},
}

// Kind names what a file of mode m is when it is not a regular file
// ("a named pipe", "a character device", ...).
func Kind(m fs.FileMode) string {
	for _, k := range kinds {
		if m&k.bit != 0 {
			return k.name
		}
	}
	return "of mode " + m.String()
}

// ReadAll reads the regular file at path as it was when opened: no more
// than the size it had then, however much is appended while it is read.
// A limit above 0 refuses a file larger than limit bytes before reading
// any of it (ErrTooLarge, with both sizes).
func ReadAll(path string, limit int64) ([]byte, error) {
	f, info, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if limit > 0 && info.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: path,
			Err: fmt.Errorf("%w (%s, more than the %s allowed)", ErrTooLarge, numfmt.Bytes(info.Size()), numfmt.Bytes(limit))}
	}
	buf := make([]byte, info.Size())
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	// A file cut while it was read holds what was read.
	return buf[:n], nil
}
