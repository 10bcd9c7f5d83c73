// Package outfile writes files whose path a user named on the command line
// (reports, exports) without ever destroying something that is not an
// ordinary file of theirs.
//
// What happens depends on what the path names, after following symbolic
// links (the user named the link, so writing where it points is what they
// asked for, as a shell's '>' would):
//
//   - nothing yet: the file is created, readable by its owner only, in a
//     directory that must exist;
//   - a regular file: the new content goes to a temporary file beside it and
//     is renamed over it, so the path holds the old file or the whole new
//     one, never a part; a symbolic link stays a link to the new file. A
//     file without any write permission bit is refused;
//   - a character device or named pipe (/dev/null, /dev/stdout, a FIFO):
//     written through, never replaced;
//   - a directory, socket or anything else: refused with an error.
//
// No other path is followed: the temporary file is created with O_EXCL
// beside the resolved target, and removed if anything fails.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrIsDir is returned for a path that names a directory.
	ErrIsDir = errors.New("is a directory")
	// ErrReadOnly is returned for a regular file with no write permission
	// bit: replacing it would defeat the protection its owner gave it.
	ErrReadOnly = errors.New("is read-only")
	// ErrNotWritable is returned for a socket and other kinds of file that
	// cannot be written through.
	ErrNotWritable = errors.New("is not a regular file, device or pipe")
	// ErrNoDir is returned when the directory of a new file does not exist.
	ErrNoDir = errors.New("directory does not exist")
)

// File is an output being written. Write to it, then Close to put it in
// place; Abort drops it.
type File struct {
	f      *os.File
	tmp    string // temporary file to rename to target; "" when writing through
	target string
	name   string // the path the user gave, for messages
	done   bool
}

// Create opens path for writing according to the package rules.
func Create(path string) (*File, error) {
	fail := func(err error) (*File, error) { return nil, fmt.Errorf("write %s: %w", path, err) }
	target, fi, err := inspect(path)
	if err != nil {
		return fail(err)
	}
	if fi != nil && fi.Mode()&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe) != 0 {
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return fail(unwrap(err))
		}
		return &File{f: f, target: target, name: path}, nil
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fail(unwrap(err))
	}
	return &File{f: f, tmp: f.Name(), target: target, name: path}, nil
}

// Check reports, without creating or changing anything, the error Create
// would return for path because of what is there (a directory, a
// read-only file, a missing directory...), or nil. A command calls it
// before its work, so that a bad output path is refused before anything
// is read or written.
func Check(path string) error {
	if _, _, err := inspect(path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// inspect resolves path and refuses what the package rules refuse; it
// returns the path to write and what is there (nil: nothing yet).
func inspect(path string) (string, fs.FileInfo, error) {
	target, fi, err := resolve(path)
	if err != nil {
		return "", nil, err
	}
	if fi != nil {
		switch mode := fi.Mode(); {
		case mode.IsDir():
			return "", nil, ErrIsDir
		case mode&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe) != 0:
			return target, fi, nil
		case !mode.IsRegular():
			return "", nil, ErrNotWritable
		case mode.Perm()&0o222 == 0:
			return "", nil, ErrReadOnly
		}
	}
	dir := filepath.Dir(target)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", nil, fmt.Errorf("%w: %s", ErrNoDir, dirName(target))
	}
	return target, fi, nil
}

// dirName is the directory part of path as messages give it: "dir/",
// or "." for a bare name.
func dirName(path string) string {
	dir, _ := filepath.Split(path)
	if dir == "" {
		return "."
	}
	return dir
}

// Write writes p to the output.
func (o *File) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	if err != nil {
		return n, fmt.Errorf("write %s: %w", o.name, unwrap(err))
	}
	return n, nil
}

// Close finishes the output: a new or regular file is synced and renamed
// into place; a device or pipe is closed.
func (o *File) Close() error {
	if o.done {
		return nil
	}
	o.done = true
	fail := func(err error) error {
		o.f.Close()
		if o.tmp != "" {
			os.Remove(o.tmp)
		}
		return fmt.Errorf("write %s: %w", o.name, unwrap(err))
	}
	if o.tmp == "" {
		if err := o.f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", o.name, unwrap(err))
		}
		return nil
	}
	if err := o.f.Sync(); err != nil {
		return fail(err)
	}
	if err := o.f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(o.tmp, o.target); err != nil {
		return fail(err)
	}
	return nil
}

// Abort drops an output that is not to be kept: the temporary file is
// removed and the target left as it was.
func (o *File) Abort() {
	if o.done {
		return
	}
	o.done = true
	o.f.Close()
	if o.tmp != "" {
		os.Remove(o.tmp)
	}
}

// WriteFile writes data to path according to the package rules.
func WriteFile(path string, data []byte) error {
	o, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := o.Write(data); err != nil {
		o.Abort()
		return err
	}
	return o.Close()
}

// WriteWith creates path, lets write fill it, and puts it in place only if
// write succeeds.
func WriteWith(path string, write func(io.Writer) error) error {
	o, err := Create(path)
	if err != nil {
		return err
	}
	if err := write(o); err != nil {
		o.Abort()
		return err
	}
	return o.Close()
}

// resolve follows symbolic links from path and returns the final path with
// its file info, or a nil info when nothing is there (yet).
func resolve(path string) (string, fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil, nil
	}
	if err != nil {
		return "", nil, unwrap(err)
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return path, fi, nil
	}
	target, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		// A dangling link: create the file it points at, as '>' would.
		dest, rerr := danglingTarget(path)
		if rerr != nil {
			return "", nil, rerr
		}
		return dest, nil, nil
	}
	if err != nil {
		return "", nil, unwrap(err)
	}
	fi, err = os.Stat(target)
	if err != nil {
		return "", nil, unwrap(err)
	}
	return target, fi, nil
}

// danglingTarget returns where a link whose target does not exist points,
// following a bounded chain of links.
func danglingTarget(path string) (string, error) {
	cur := path
	for range 40 {
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return cur, nil
		}
		if err != nil {
			return "", unwrap(err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return cur, nil
		}
		dest, err := os.Readlink(cur)
		if err != nil {
			return "", unwrap(err)
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(cur), dest)
		}
		cur = dest
	}
	return "", errors.New("too many levels of symbolic links")
}

// unwrap drops the *PathError wrapper, which names the temporary file
// rather than the one the user asked for.
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
