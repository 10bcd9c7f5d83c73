package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures/democapture"
)

// TestImportTwice imports a HAR of the bundled real session twice into one
// capture: the second import adds nothing and says how many exchanges it
// skipped, so turns, flags and cost are those of the session, once.
func TestImportTwice(t *testing.T) {
	dir := t.TempDir()
	demo := filepath.Join(dir, "demo.db")
	if err := os.WriteFile(demo, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	har := filepath.Join(dir, "demo.har")
	// The bodies as recorded: the same exchanges come back.
	if code, _, stderr := runIn("export", demo, "--format", "har", "--redact", "off", "--out", har); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	_, want, _ := runIn("turns", demo)
	db := filepath.Join(dir, "x.db")
	if code, _, stderr := runIn("import", har, "--db", db); code != 0 || stderr != "tsinspect: imported 9 exchanges from demo.har (har) into "+db+"\n" {
		t.Fatalf("first import: exit %d, %q", code, stderr)
	}
	code, _, stderr := runIn("import", har, "--db", db)
	if code != 0 || stderr != "tsinspect: imported nothing from demo.har (har) into "+db+": 9 exchanges already in the capture, skipped\n" {
		t.Errorf("second import: exit %d, %q", code, stderr)
	}
	_, got, _ := runIn("turns", db)
	if got != want {
		t.Errorf("after two imports, turns shows\n%s\nwant the session once:\n%s", got, want)
	}
	// The capture the HAR was exported from holds every exchange already.
	if code, _, stderr := runIn("import", har, "--db", demo); code != 0 || !strings.Contains(stderr, "9 exchanges already in the capture, skipped") {
		t.Errorf("import into the capture it came from: exit %d, %q", code, stderr)
	}
}
