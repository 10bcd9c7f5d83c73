package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/internal/shell"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// outsideClaudeDir refuses, as a bad flag (before anything is written),
// an output path of command cmd (what: "--out", "--db", ...) that is in
// Claude Code's own directory: tsinspect reads Claude Code's files and
// never writes there. "" and "-" (standard output) pass.
func outsideClaudeDir(cmd, what, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if dir, in := sessionfiles.Inside(path, os.Getenv); in {
		return cli.Usage("%s: %s %s is in Claude Code's directory %s, which tsinspect never writes into: give a path elsewhere", cmd, what, path, dir)
	}
	return nil
}

// notASessionFile refuses to rewrite a Claude Code session file in place
// (compact): it is Claude Code's, and no capture.
func notASessionFile(cmd, path string) error {
	if !strings.HasSuffix(path, ".jsonl") && !sessionfiles.Sniff(path) {
		return nil
	}
	db := strings.TrimSuffix(filepath.Base(path), ".jsonl") + ".db"
	return cli.Usage("%s: %s is a Claude Code session file, not a capture, and tsinspect never writes Claude Code's files; the other commands read it as it is, or keep it as a capture with 'tsinspect import %s --db %s'", cmd, path, shell.Quote(path), shell.Quote(db))
}
