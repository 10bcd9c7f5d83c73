// Package cachefile is the one owner of tsinspect's cache files (the
// session listing's index, the advice facts): each carries its kind, a
// format version and a SHA-256 checksum of what it holds, is read only when
// it is a regular file no larger than a bound, and is written through a
// temporary file of its own, renamed into place and removed when anything
// fails, so that neither a crash, a full disk nor two writers at once
// leaves a half-written cache or a stray temporary file behind.
package cachefile

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/tsinspect/tsinspect/internal/regfile"
)

// MaxSize bounds a cache file tsinspect reads: a larger one is not read
// (and is rebuilt).
const MaxSize = 1 << 30

// magic starts every cache file; the kind, the version and the checksum
// follow on the same line.
const magic = "tsinspect-cache/1"

// ErrRebuild is wrapped by every error of [Load] that means "this cache
// cannot be used and will be rebuilt": not a regular file, too large,
// another kind or version, a checksum that does not match.
var ErrRebuild = errors.New("rebuilding it")

// Load returns what the cache file at path holds when it is a regular
// file of the given kind and version whose checksum matches. A missing
// file is (nil, nil): an empty cache, said nowhere. Any other failure is
// one line naming the file and what is wrong with it, wrapping
// [ErrRebuild]: the caller says it once and rebuilds the cache.
func Load(path, kind string, version int) ([]byte, error) {
	b, err := regfile.ReadAll(path, MaxSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", kind, err, ErrRebuild)
	}
	line, payload, ok := bytes.Cut(b, []byte{'\n'})
	fields := bytes.Fields(line)
	if !ok || len(fields) != 4 || string(fields[0]) != magic || string(fields[1]) != slug(kind) {
		return nil, fmt.Errorf("%s %s: not a cache file of this version of tsinspect: %w", kind, path, ErrRebuild)
	}
	if string(fields[2]) != "v"+strconv.Itoa(version) {
		return nil, fmt.Errorf("%s %s: format %s, not v%d: %w", kind, path, fields[2], version, ErrRebuild)
	}
	sum := sha256.Sum256(payload)
	if fmt.Sprintf("%x", sum) != string(fields[3]) {
		return nil, fmt.Errorf("%s %s: damaged (its checksum does not match): %w", kind, path, ErrRebuild)
	}
	return payload, nil
}

// Save writes payload as the cache file at path, of the given kind and
// version, readable by the user only: through a temporary file of this
// call's own beside it, renamed into place. On any failure (a full disk,
// a directory in the way) the temporary file is removed and the cache
// left as it was.
func Save(path, kind string, version int, payload []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("save %s: %w", kind, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("save %s: %w", kind, err)
	}
	tmp := f.Name()
	sum := sha256.Sum256(payload)
	_, werr := fmt.Fprintf(f, "%s %s v%d %x\n", magic, slug(kind), version, sum)
	if werr == nil {
		_, werr = f.Write(payload)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		if errors.Is(werr, syscall.ENOSPC) {
			return fmt.Errorf("save %s: %w (free some space; tsinspect reads every session until it can save it)", kind, werr)
		}
		return fmt.Errorf("save %s: %w", kind, werr)
	}
	return nil
}

// slug is kind as one word, as the file's first line holds it.
func slug(kind string) string { return strings.ReplaceAll(kind, " ", "-") }
