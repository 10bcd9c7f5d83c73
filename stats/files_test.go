package stats

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFilesFindsSessions: a projects directory gives its Claude Code
// sessions' main files (not their subagents' files), and a session is
// named by its ID under CLAUDE_CONFIG_DIR.
func TestFilesFindsSessions(t *testing.T) {
	dir := filepath.Join("..", "source", "testdata", "releases", "2.1.299", "projects")
	fs, err := Files([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 5 {
		t.Fatalf("%d files, want the 5 sessions: %+v", len(fs), fs)
	}
	for _, f := range fs {
		if !f.Found || strings.Contains(f.Path, "subagents") || !strings.HasSuffix(f.Path, ".jsonl") {
			t.Errorf("%+v", f)
		}
	}
	abs, _ := filepath.Abs(filepath.Join(dir, ".."))
	t.Setenv("CLAUDE_CONFIG_DIR", abs)
	fs, err = Files([]string{"45a0fa3c"})
	if err != nil || len(fs) != 1 || !strings.HasSuffix(fs[0].Path, "45a0fa3c-3569-4097-809e-6a2c1c79df51.jsonl") {
		t.Fatalf("by ID: %v %+v", err, fs)
	}
}
