package sessionfiles

import (
	"errors"
	"io/fs"
	"os"

	"path/filepath"
)

// ConfigDir is Claude Code's own directory: $CLAUDE_CONFIG_DIR, or
// ~/.claude. Nothing tsinspect does writes in it. getenv is os.Getenv in
// the command.
func ConfigDir(getenv func(string) string) (string, error) {
	root, err := Root(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Dir(root), nil
}

// Inside reports whether path (which need not exist yet) is in Claude
// Code's directory, links followed, and which directory that is. A
// command refuses to write there: Claude Code owns those files and writes
// them while tsinspect reads them.
func Inside(path string, getenv func(string) string) (string, bool) {
	dir, err := ConfigDir(getenv)
	if err != nil {
		return "", false
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return dir, false // no such directory: nothing is in it
	}
	p, err := filepath.Abs(path)
	if err != nil {
		return dir, false
	}
	if absDir, err := filepath.Abs(dir); err == nil && within(p, absDir) {
		return dir, true
	}
	return dir, within(resolveExisting(p), realDir)
}

// resolveExisting is the absolute path p with the links of its longest
// existing ancestor resolved: where a file created at p would be.
func resolveExisting(p string) string {
	rest := ""
	for {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(p, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// SaveDir is where the timeline's Raw tab saves bodies: the working
// directory (""), or the home directory when the working directory is in
// Claude Code's own.
func SaveDir(getenv func(string) string) string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	if _, in := Inside(wd, getenv); in {
		if home, err := os.UserHomeDir(); err == nil {
			return home
		}
	}
	return ""
}
