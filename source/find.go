package source

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/sessionfiles"
)

// Found is one session a kind found under a directory: a Claude Code
// session (its main file, with its subagents' files) or a capture file.
type Found struct {
	// Kind is the name of the kind that found it (KindSession,
	// KindCapture).
	Kind string
	// Path is the session's main file or the capture's; ID what 'tsinspect
	// open' takes (the session ID, or the capture's path); Project the
	// project directory's name (none for a capture).
	Path, ID, Project string
	// Size and ModTime cover the session's files, subagents' included.
	Size    int64
	ModTime time.Time
	// Entry is a Claude Code session's listing entry (nil for a capture).
	Entry *sessionfiles.Entry
}

// Foreign reports whether f is a .jsonl file that is no Claude Code
// session (another tool's JSON Lines, a raw-bodies index): found by name,
// nothing to read a session from.
func (f Found) Foreign() bool {
	return f.Entry != nil && !f.Entry.SubagentsOnly && !sessionfiles.Sniff(f.Path)
}

// Finding is what Find found under its roots: the sessions, newest first,
// each once, and what was passed over, a line each.
type Finding struct {
	Found   []Found
	Skipped []string
}

// Sessions returns the Claude Code sessions of f, in its order.
func (f Finding) Sessions() []sessionfiles.Entry {
	var out []sessionfiles.Entry
	for _, x := range f.Found {
		if x.Entry != nil {
			out = append(out, *x.Entry)
		}
	}
	return out
}

// Find asks every kind with a find of its own (the kinds' table, Kinds)
// what it finds under each root: a directory (searched recursively), or
// one file. A root that cannot be listed is an error when strict, else a
// line of Skipped and its sessions left out.
func Find(strict bool, roots ...string) (Finding, error) {
	var out Finding
	seen := map[string]bool{}
	for _, root := range roots {
		for _, k := range Kinds() {
			if k.find == nil {
				continue
			}
			found, skipped, err := k.find(root)
			if err != nil {
				if strict {
					return Finding{}, err
				}
				out.Skipped = append(out.Skipped, err.Error())
				continue
			}
			if skipped != "" {
				out.Skipped = append(out.Skipped, skipped)
			}
			for _, f := range found {
				if !seen[f.Path] {
					seen[f.Path] = true
					f.Kind = k.Name
					out.Found = append(out.Found, f)
				}
			}
		}
	}
	slices.SortStableFunc(out.Found, func(a, b Found) int { return b.ModTime.Compare(a.ModTime) })
	return out, nil
}

// findSessions is the session kind's find: the Claude Code sessions under
// root (a projects directory, one project's, or a session file); a root
// that is a capture file holds none.
func findSessions(root string) ([]Found, string, error) {
	if info, err := os.Stat(root); err == nil && info.Mode().IsRegular() && !IsSessionFile(root) {
		return nil, "", nil
	}
	listing, err := sessionfiles.Find(root)
	if err != nil {
		return nil, "", err
	}
	var out []Found
	for i := range listing.Entries {
		e := listing.Entries[i]
		out = append(out, Found{Path: e.Path, ID: e.ID, Project: e.Project, Size: e.Size, ModTime: e.ModTime, Entry: &e})
	}
	return out, listing.SkippedSummary(), nil
}

// findCaptures is the capture kind's find: the capture files (*.db)
// under root, searched recursively, or root itself when it is one.
func findCaptures(root string) ([]Found, string, error) {
	info, err := os.Stat(root)
	if err != nil {
		// Said by the session kind's find, which lists the same root.
		return nil, "", nil
	}
	if !info.IsDir() {
		if info.Mode().IsRegular() && strings.HasSuffix(root, ".db") {
			return []Found{{Path: root, ID: root, Size: info.Size(), ModTime: info.ModTime()}}, "", nil
		}
		return nil, "", nil
	}
	var out []Found
	unreadable := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			unreadable++
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".db") {
			if fi, err := d.Info(); err == nil {
				out = append(out, Found{Path: p, ID: p, Size: fi.Size(), ModTime: fi.ModTime()})
			}
		}
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("find captures: %w", err)
	}
	skipped := ""
	if unreadable > 0 {
		skipped = fmt.Sprintf("%s: %d entries could not be read while looking for capture files", root, unreadable)
	}
	return out, skipped, nil
}
