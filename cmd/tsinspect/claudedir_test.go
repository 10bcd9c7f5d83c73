package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// treeHash lists every path under root with its mode, and its content's
// hash or its link's target: two listings are equal when nothing under
// root was created, removed, changed or re-moded.
func treeHash(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		line := fmt.Sprintf("%s %v", rel, info.Mode())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			line += " " + hex.EncodeToString(h[:8])
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// Issue 30, row 11: 'compact SESSION.jsonl' created and deleted
// SESSION.jsonl.lock in Claude Code's directory. No command writes there:
// every command run over a Claude Code directory (CLAUDE_CONFIG_DIR) leaves
// it as it was, byte for byte, and those told to write into it refuse
// before they write.
func TestNoCommandWritesInClaudeCodesDirectory(t *testing.T) {
	config := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", config)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer collector.Close()
	main := writeSession(t, config, plainFixture())
	// A second project reached through a link, as some users keep them.
	other := t.TempDir()
	if err := os.Symlink(other, filepath.Join(config, "projects", "-home-me-linked")); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	before := treeHash(t, config)
	inside := func(name string) string { return filepath.Join(config, "projects", "-home-me-repo", name) }
	prefix := fixtureID[:8]
	for _, c := range []struct {
		args    []string
		refused bool // exit 2 with a line naming Claude Code's directory
	}{
		{args: []string{"sessions"}},
		{args: []string{"sessions", "--json"}},
		{args: []string{"sessions", filepath.Join(config, "projects"), "--sort", "cost"}},
		{args: []string{"turns", "latest"}},
		{args: []string{"turns", prefix, "--json"}},
		{args: []string{"turns", main}},
		{args: []string{"searches", "latest", "--tools", "mcp__demo__"}},
		{args: []string{"exchanges", main}},
		{args: []string{"exchanges", main, "--json"}},
		{args: []string{"report", main, "--format", "markdown"}},
		{args: []string{"report", "latest", "--format", "html", "--out", filepath.Join(out, "r.html")}},
		{args: []string{"report", main, "--format", "json", "--redact", "off"}},
		{args: []string{"export", main, "--format", "har", "--out", filepath.Join(out, "s.har")}},
		{args: []string{"export", main}},
		{args: []string{"export", main, "--format", "otlp", "--endpoint", collector.URL}},
		{args: []string{"stats", main}},
		{args: []string{"diff", main, main, "--format", "markdown"}},
		{args: []string{"import", main, "--db", filepath.Join(out, "s.db")}},
		{args: []string{"compact", main}, refused: true},
		{args: []string{"import", main, "--db", inside("s.db")}, refused: true},
		{args: []string{"report", main, "--out", inside("r.md")}, refused: true},
		{args: []string{"export", main, "--out", inside("s.har")}, refused: true},
		{args: []string{"diff", main, main, "--out", filepath.Join(config, "d.txt")}, refused: true},
		{args: []string{"record", "--db", inside("x.db"), "--", "true"}, refused: true},
		{args: []string{"ca", "--ca-dir", filepath.Join(config, "ca")}, refused: true},
		{args: []string{"standin", "--mcp-config", filepath.Join(config, "mcp.json")}, refused: true},
		{args: []string{"import", main, "--db", filepath.Join(config, "projects", "-home-me-linked", "s.db")}, refused: true},
	} {
		code, stdout, stderr := runIn(c.args...)
		if c.refused {
			if code != 2 || !strings.Contains(stderr, "never writes") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("%q: exit %d, %q", c.args, code, stderr)
			}
		} else if code != 0 {
			t.Errorf("%q: exit %d: %s", c.args, code, stderr)
		}
		if c.args[0] == "compact" && !strings.Contains(stderr, "tsinspect import") {
			t.Errorf("compact of a session file does not say what to do instead: %q", stderr)
		}
		_ = stdout
		if after := treeHash(t, config); strings.Join(after, "\n") != strings.Join(before, "\n") {
			t.Fatalf("%q changed Claude Code's directory:\nbefore:\n%s\nafter:\n%s", c.args, strings.Join(before, "\n"), strings.Join(after, "\n"))
		}
	}
	if _, err := os.Stat(filepath.Join(out, "s.db")); err != nil {
		t.Errorf("the import elsewhere did not happen: %v", err)
	}
}
