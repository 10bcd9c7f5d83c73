package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveShortPrefix: two characters of a session ID are neither a
// missing file nor a session: the error says they are too short and which
// sessions they could be. A file of that name is still the file.
func TestResolveShortPrefix(t *testing.T) {
	config := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", config)
	proj := filepath.Join(config, "projects", "-home-user-project")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "3f2a91c0-0000-4000-8000-000000000001.jsonl"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Resolve("3f", nil)
	if err == nil || !strings.Contains(err.Error(), `"3f" is too short for a session ID (give at least 4 characters); it is the start of 3f2a91c0 (-home-user-project`) {
		t.Errorf("3f: %v", err)
	}
	if p, err := Resolve("9e", nil); err != nil || p != "9e" {
		t.Errorf("9e, no session: %q %v", p, err)
	}
	t.Chdir(t.TempDir())
	if err := os.WriteFile("3f", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := Resolve("3f", nil); err != nil || p != "3f" {
		t.Errorf("3f, a file: %q %v", p, err)
	}
}
