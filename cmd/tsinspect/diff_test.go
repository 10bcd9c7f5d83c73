package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures/democapture"
)

// TestDiffExitStatus: as diff(1), 0 for the same session, 2 for trouble
// (a file that cannot be read), with one line saying why.
func TestDiffExitStatus(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "c.db")
	if err := os.WriteFile(capture, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runIn("diff", capture, capture)
	if code != 0 || !strings.Contains(stdout, "The sessions are the same") || stderr != "" {
		t.Errorf("same capture: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = runIn("diff", capture, filepath.Join(dir, "missing.db"))
	if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "missing.db") || strings.Contains(stderr, "store:") {
		t.Errorf("missing capture: exit %d, stdout %q, stderr %q; want 2 and one line", code, stdout, stderr)
	}
	code, stdout, _ = runIn("diff", "--json", capture, capture)
	if code != 0 || !strings.Contains(stdout, `"same": true`) {
		t.Errorf("--json: exit %d, stdout %q", code, stdout)
	}
}
