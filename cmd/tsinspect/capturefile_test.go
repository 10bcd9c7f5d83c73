package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures/democapture"
)

// TestReadersSuggestImport gives every command that reads a capture files
// other recorders wrote (a HAR, a claude-trace log, a Claude Code
// raw-bodies directory): each says in one line what the file is and the
// import command to run, and that command, then the suggested one, work.
// A file of no format tsinspect reads keeps the plain error.
func TestReadersSuggestImport(t *testing.T) {
	dir := t.TempDir()
	demo := filepath.Join(dir, "demo.db")
	if err := os.WriteFile(demo, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	har := filepath.Join(dir, "session.har")
	if code, _, stderr := runIn("export", demo, "--format", "har", "--out", har); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	trace := filepath.Join("..", "..", "importer", "claudetrace", "testdata", "claude-trace-1.0.9.jsonl")
	bodies := filepath.Join("..", "..", "importer", "rawbodies", "testdata", "claude-code-2.1.328")
	inputs := []struct{ path, what, db string }{
		{har, "a HAR file", filepath.Join(dir, "session.db")},
		{trace, "a claude-trace log", strings.TrimSuffix(trace, ".jsonl") + ".db"},
		{bodies, "a Claude Code raw-bodies directory", bodies + ".db"},
	}
	for _, in := range inputs {
		for _, cmd := range []string{"open", "turns", "searches", "report", "export", "stats", "exchanges", "replay", "replay-server"} {
			args := []string{cmd, in.path}
			if cmd == "open" && in.path == har {
				args = append(args, "--follow")
			}
			code, stdout, stderr := runIn(args...)
			want := "tsinspect: " + in.path + " is " + in.what + ", not a tsinspect capture: import it with 'tsinspect import " + in.path + " --db " + in.db + "', then run 'tsinspect " + cmd + " " + in.db + "'\n"
			if code != 1 || stdout != "" || stderr != want {
				t.Errorf("%v: exit %d, stdout %q, stderr\n%q\nwant\n%q", args, code, stdout, stderr, want)
			}
		}
	}
	// The suggested commands work (into a copy of the directory, so as not
	// to write beside the test data).
	if code, _, stderr := runIn("import", har, "--db", filepath.Join(dir, "session.db")); code != 0 {
		t.Fatalf("the suggested import: %s", stderr)
	}
	if code, out, stderr := runIn("turns", filepath.Join(dir, "session.db")); code != 0 || !strings.Contains(out, "total") {
		t.Errorf("turns on the capture made: exit %d, %s", code, stderr)
	}
	// Now that session.db is taken, the suggestion does not name it.
	if _, _, stderr := runIn("turns", har); !strings.Contains(stderr, "--db "+har+".db'") {
		t.Errorf("with session.db taken: %q", stderr)
	}
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("hello"), 0o600)
	if code, _, stderr := runIn("turns", notes); code != 1 || stderr != "tsinspect: open "+notes+": not a tsinspect capture file\n" {
		t.Errorf("a text file: exit %d, %q", code, stderr)
	}
}
