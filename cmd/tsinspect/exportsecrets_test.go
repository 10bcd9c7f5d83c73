package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// secretFixture is a session whose conversation holds secrets the way real
// ones do: pasted into a prompt, passed in a tool's input, printed by a
// tool (an environment dump, a config file), and one with no shape a
// pattern could know.
func secretFixture() (sessionFixture, []string) {
	f := plainFixture()
	secrets := []string{
		"sk-ant-api03-Zq3xVbN8mK2pL7wR4tY9uI1oP6aS5dF0gH3jK8lZ",
		"ghp_Q7wE2rT9yU4iO1pA6sD3fG8hJ5kL0zX7cV2b",
		"wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtZSJ9.c2lnbmF0dXJlLXNlY3JldA",
		"hunter2-prod-db",
		"correct horse battery staple",
	}
	f.prompt = "deploy with ANTHROPIC_API_KEY=" + secrets[0] + " and push with " + secrets[1] + "; the vault phrase is " + secrets[5]
	f.result = "AWS_SECRET_ACCESS_KEY=" + secrets[2] + "\nAuthorization: Bearer " + secrets[3] + "\nDATABASE_URL=postgres://admin:" + secrets[4] + "@db.internal:5432/prod\n"
	return f, secrets
}

// Issue 30, row 14: 'export --format har' of a session wrote every secret
// of the session into the file, with no warning, under a help text saying
// "Credentials are never included". The HAR is now redacted as a report
// is, unless --redact off, which warns; the OTLP export was already
// redacted, and is checked the same way.
func TestExportHoldsNoSecretOfTheSession(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	f, secrets := secretFixture()
	main := writeSession(t, config, f)
	out := t.TempDir()
	har := filepath.Join(out, "s.har")
	code, _, stderr := runIn("export", main, "--format", "har", "--out", har)
	if code != 0 || stderr != "tsinspect: exported 4 exchanges to "+har+" (redacted default: texts removed, secrets and paths pseudonymised)\n" {
		t.Fatalf("export: exit %d, %q", code, stderr)
	}
	b, err := os.ReadFile(har)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(string(b), s) {
			t.Errorf("the HAR holds %q", s)
		}
	}
	// What tool search did is still there: the import of the HAR gives
	// the same turns, search and call.
	for _, want := range []string{`"name":"ToolSearch"`, `select:mcp__demo__echo`, `"tool_reference"`, `"mcp__demo__echo"`, `"cache_creation_input_tokens":3000`, `bytes removed]`} {
		if !strings.Contains(strings.ReplaceAll(string(b), `\"`, `"`), want) {
			t.Errorf("the HAR lacks %s", want)
		}
	}
	db := filepath.Join(out, "s.db")
	if code, _, stderr := runIn("import", har, "--db", db); code != 0 {
		t.Fatalf("import: exit %d %s", code, stderr)
	}
	_, fromFiles, _ := runIn("searches", main)
	_, fromHAR, _ := runIn("searches", db)
	if fromFiles != fromHAR || !strings.Contains(fromHAR, "loaded mcp__demo__echo (called #3)") {
		t.Errorf("searches of the session:\n%s\nof its redacted HAR:\n%s", fromFiles, fromHAR)
	}
	// Raw, on request, with a warning.
	raw := filepath.Join(out, "raw.har")
	code, _, stderr = runIn("export", main, "--format", "har", "--redact", "off", "--out", raw)
	if code != 0 || !strings.Contains(stderr, "warning: --redact off: the HAR holds every body as recorded") {
		t.Fatalf("export --redact off: exit %d, %q", code, stderr)
	}
	if b, _ := os.ReadFile(raw); !strings.Contains(string(b), secrets[3]) {
		t.Error("--redact off left out the bodies")
	}
	if code, _, stderr := runIn("export", main, "--format", "har", "--exact", "--out", raw); code != 2 || !strings.Contains(stderr, "give --redact off") {
		t.Errorf("--exact without --redact off: exit %d %q", code, stderr)
	}
	// OTLP: what the collector receives.
	var mu sync.Mutex
	var got []byte
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, b...)
		mu.Unlock()
	}))
	defer collector.Close()
	if code, _, stderr := runIn("export", main, "--format", "otlp", "--endpoint", collector.URL); code != 0 {
		t.Fatalf("otlp: exit %d %s", code, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || !strings.Contains(string(got), "select:mcp__demo__echo") {
		t.Fatalf("the collector got %d bytes, without the search", len(got))
	}
	for _, s := range secrets {
		if strings.Contains(string(got), s) {
			t.Errorf("the OTLP export holds %q", s)
		}
	}
}
