package web_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/web"
)

// Issue 42, item 2: default-redacted pages leaked model IDs in the
// listing's notes, the price file's path (the home directory) and the
// full path of a session file that could not be read. None of them is on
// any page, or in any answer the pages read, under the default policy.
func TestDefaultRedactionHidesModelsPricePathAndUnreadableFiles(t *testing.T) {
	dir, capture := fixture(t)
	// A model no price names, and one priced as a neighbour.
	for model, file := range map[string]string{"gpt-privatemodel-123456789012": "-home-user-demo/76805962-ccee-4e9e-8dd8-bbece00290ac.jsonl",
		"claude-sonnet-4-5-privatebuild-123456789012": "-home-user-flaky/45a0fa3c-3569-4097-809e-6a2c1c79df51.jsonl"} {
		p := filepath.Join(dir, file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), `"model":"claude-sonnet-4-5"`, `"model":"`+model+`"`)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The user's price file, in a home directory of its own.
	config := filepath.Join(t.TempDir(), "home-of-privateuser", ".config")
	if err := os.MkdirAll(filepath.Join(config, "tsinspect"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "tsinspect", "prices.json"),
		[]byte(`{"extends":"built-in","taken":"2026-12-01","models":[{"model":"claude-opus-4-6","input":5,"output":25}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", config)
	// A capture that cannot be read, in a private directory.
	broken := filepath.Join(t.TempDir(), "privateproject", "broken.db")
	if err := os.MkdirAll(filepath.Dir(broken), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte("not a database at all, and long enough to be read as one"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, policy := range []redact.Policy{redact.Default, redact.Strict} {
		s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture, broken}, Policy: policy})
		var all strings.Builder
		for _, p := range []string{"/", "/api/sessions", "/api/sessions?model=gpt", "/s/demo.db", "/api/s/demo.db/turns", "/api/s/76805962-ccee-4e9e-8dd8-bbece00290ac/turns", "/api/s/45a0fa3c-3569-4097-809e-6a2c1c79df51/turns"} {
			_, body, _ := get(t, s, "GET", p, "")
			all.WriteString(body)
		}
		for _, private := range []string{"privatemodel", "privatebuild", "privateuser", "privateproject"} {
			if i := strings.Index(all.String(), private); i >= 0 {
				t.Errorf("%s: %q shown: …%s…", policy, private, all.String()[max(0, i-120):min(all.Len(), i+80)])
			}
		}
	}
}
