package main

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/internal/termsafe"
)

// hostileFixture carries escape sequences everywhere Claude Code writes a
// string tsinspect shows: the project directory, the working directory,
// the release, a tool's name, a search query, a stop reason, a record
// type, and the text of a prompt and a tool result.
func hostileFixture() sessionFixture {
	return sessionFixture{
		project:     "-home-me-\x1b]0;retitled\x07repo",
		cwd:         "/home/me/\x1b]0;retitled\x07repo",
		version:     "2.1.328\x1b[2J\x1b[H",
		tool:        "mcp__x__\x1b]52;c;cHduZWQ=\x07echo\u202etxt.exe",
		query:       "select:mcp__x__\x1b[31mred\u009b0m",
		stop:        "end_turn\x1b[5m\a",
		unknownType: "evil\x1b]52;c;cHduZWQ=\x07",
		prompt:      "look \u2066here\u2069 \x9b31m",
		result:      "\x1b]8;;http://example.invalid\x07link\x1b]8;;\x07",
	}
}

// Issue 30, row 10: an escape sequence in any string a session holds
// reached the terminal raw in sessions, turns and the Markdown report (OSC
// 52 can write the clipboard). Every text command now shows it escaped.
func TestNoEscapeSequenceReachesTheTerminal(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	main := writeSession(t, config, hostileFixture())
	projects := filepath.Join(config, "projects")
	for _, args := range [][]string{
		{"sessions", projects},
		{"sessions", projects, "--json", "--no-index"},
		{"turns", main},
		{"turns", main, "--json"},
		{"searches", main},
		{"searches", main, "--json"},
		{"exchanges", main},
		{"report", main, "--format", "markdown"},
		{"report", main, "--format", "markdown", "--redact", "off"},
		{"report", main, "--format", "json", "--redact", "off"},
		{"stats", main},
		{"diff", main, main},
		{"turns", filepath.Join(projects, "-home-me-\x1b]0;x\x07", "nothing.jsonl")},
	} {
		code, out, stderr := runIn(args...)
		if code > 1 {
			t.Errorf("%s: exit %d: %s", args[0], code, stderr)
		}
		for name, text := range map[string]string{"stdout": out, "stderr": stderr} {
			for i, r := range text {
				if r == '\n' || r == '\t' {
					continue
				}
				// (U+FFFD written whole is what JSON makes of a byte
				// that is not UTF-8; the byte itself must not pass.)
				if termsafe.Unsafe(r) || r == utf8.RuneError && !strings.HasPrefix(text[i:], "\uFFFD") {
					t.Errorf("%q: %s holds %U at %d: %q", args, name, r, i, text[max(0, i-40):min(len(text), i+40)])
					break
				}
			}
		}
		// What was escaped is still shown.
		if args[0] == "sessions" && len(args) == 2 && !strings.Contains(out, `\u001b[2J`) {
			t.Errorf("sessions: the release is not shown escaped:\n%s", out)
		}
		if args[0] == "searches" && len(args) == 2 && !strings.Contains(out, `select:mcp__x__\u001b[31mred\u009b0m`) {
			t.Errorf("searches: the query is not shown escaped:\n%s", out)
		}
		if args[0] == "turns" && len(args) == 2 && args[1] == main && !strings.Contains(stderr, `evil\u001b]52;c;cHduZWQ=\u0007 ×1`) {
			t.Errorf("turns: the unknown record type is not named escaped: %s", stderr)
		}
	}
}
