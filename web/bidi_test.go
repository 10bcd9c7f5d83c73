package web_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/termsafe"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/web"
)

// unsafeIn returns the first character of s a page must not hold raw
// (newline and tab aside), or 0.
func unsafeIn(s string) rune {
	for _, r := range s {
		if r != '\n' && r != '\t' && termsafe.Unsafe(r) {
			return r
		}
	}
	return 0
}

// unsafeInJSON returns the first unsafe character of any string of the
// JSON document b, once decoded, or 0.
func unsafeInJSON(t *testing.T, b string) rune {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(b), &v); err != nil {
		t.Fatalf("%v: %.200s", err, b)
	}
	var walk func(v any) rune
	walk = func(v any) rune {
		switch x := v.(type) {
		case string:
			return unsafeIn(x)
		case []any:
			for _, e := range x {
				if r := walk(e); r != 0 {
					return r
				}
			}
		case map[string]any:
			for k, e := range x {
				if r := unsafeIn(k); r != 0 {
					return r
				}
				if r := walk(e); r != 0 {
					return r
				}
			}
		}
		return 0
	}
	return walk(v)
}

// Issue 42, item 12: bidirectional overrides reached the web page raw
// (the terminal escapes them). A session whose working directory and model
// hold an override, a C1 control and an escape sequence is shown with
// each as a visible \uXXXX on every page and in every answer a page reads,
// redacted or not.
func TestNoBidiOverrideReachesAPage(t *testing.T) {
	dir, _ := fixture(t)
	p := filepath.Join(dir, "-home-user-demo", "76805962-ccee-4e9e-8dd8-bbece00290ac.jsonl")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), `"cwd":"/home/user/demo"`, "\"cwd\":\"/home/user/de\u202emo\u2066\"")
	s = strings.ReplaceAll(s, `"model":"claude-sonnet-4-5"`, `"model":"claude-sonnet-4-5\u001b[31m\u202e\u009b"`)
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, policy := range []redact.Policy{redact.Off, redact.Default} {
		srv := serve(t, web.Options{Roots: []string{dir}, Policy: policy})
		shown := false
		for _, path := range []string{"/", "/s/76805962-ccee-4e9e-8dd8-bbece00290ac", "/api/s/76805962-ccee-4e9e-8dd8-bbece00290ac/turn/1/flags", "/api/s/76805962-ccee-4e9e-8dd8-bbece00290ac/turn/1/conversation"} {
			_, body, _ := get(t, srv, "GET", path, "")
			if r := unsafeIn(body); r != 0 {
				t.Errorf("%s, %s: %U raw", policy, path, r)
			}
		}
		for _, path := range []string{"/api/sessions", "/api/s/76805962-ccee-4e9e-8dd8-bbece00290ac/turns"} {
			_, body, _ := get(t, srv, "GET", path, "")
			if r := unsafeInJSON(t, body); r != 0 {
				t.Errorf("%s, %s: %U in a string", policy, path, r)
			}
			shown = shown || strings.Contains(body, `\\u202e`)
		}
		if policy == redact.Off && !shown {
			t.Errorf("%s: the override is not shown as \\u202e", policy)
		}
	}
}
