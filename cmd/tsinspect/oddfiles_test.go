//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Issue 42, item 6: a named pipe or a link to /dev/zero in place of the
// sessions index, the advice cache, the user's prices.json or --prices
// hung every command (a pipe) or ran it out of memory (/dev/zero). Each
// is now refused in one line: a cache is read afresh and replaced, a
// price file is an error naming what it is.
func TestOddFilesInPlaceOfCachesAndPrices(t *testing.T) {
	config := t.TempDir()
	main := writeSession(t, config, plainFixture())
	projects := filepath.Join(config, "projects")
	for _, odd := range []struct {
		name string
		make func(p string) error
	}{
		{"a named pipe", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"a link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
	} {
		cache, conf := t.TempDir(), t.TempDir()
		t.Setenv("XDG_CACHE_HOME", cache)
		t.Setenv("XDG_CONFIG_HOME", conf)
		for _, p := range []string{filepath.Join(cache, "tsinspect", "sessions-index.gob"), filepath.Join(cache, "tsinspect", "advice-facts.gob")} {
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := odd.make(p); err != nil {
				t.Fatal(err)
			}
		}
		for _, args := range [][]string{{"sessions", projects}, {"advise", projects}} {
			code, _, stderr := runIn(args...)
			if code != 0 || strings.Count(stderr, "not a regular file") != 1 {
				t.Errorf("%s with %s as its cache: exit %d, stderr:\n%s\nwant it said once", args[0], odd.name, code, stderr)
			}
			// Said once: the cache was replaced by a regular file.
			if code, _, stderr := runIn(args...); code != 0 || strings.Contains(stderr, "not a regular file") {
				t.Errorf("%s again: exit %d: %s", args[0], code, stderr)
			}
		}
		prices := filepath.Join(t.TempDir(), "prices.json")
		if err := odd.make(prices); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runIn("turns", main, "--prices", prices); code == 0 || !strings.Contains(stderr, "not a regular file") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("--prices %s: exit %d, %q", odd.name, code, stderr)
		}
		if err := os.MkdirAll(filepath.Join(conf, "tsinspect"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := odd.make(filepath.Join(conf, "tsinspect", "prices.json")); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runIn("turns", main); code == 0 || !strings.Contains(stderr, "not a regular file") {
			t.Errorf("%s as the user's prices.json: exit %d, %q", odd.name, code, stderr)
		}
	}
}

// Issue 42, item 8: huge but finite prices made every total $NaN or
// $+Inf and --json fail. Such a file is refused naming the model and its
// line, before any output.
func TestHugePricesRefused(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	main := writeSession(t, config, plainFixture())
	prices := filepath.Join(t.TempDir(), "prices.json")
	body := "{\"extends\": \"built-in\", \"taken\": \"2026-12-01\", \"models\": [\n {\"model\": \"claude-opus-4-6\", \"input\": 1e300, \"output\": 1e300}]}"
	if err := os.WriteFile(prices, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"turns", main, "--json"}, {"sessions", filepath.Join(config, "projects"), "--json"}} {
		code, out, stderr := runIn(append(args, "--prices", prices)...)
		if code == 0 || out != "" || !strings.Contains(stderr, "line 2: claude-opus-4-6: input: 1e+300 is more than") {
			t.Errorf("%s: exit %d, out %q, stderr %q", args[0], code, out, stderr)
		}
		if strings.Contains(out+stderr, "NaN") || strings.Contains(out+stderr, "Inf") {
			t.Errorf("%s: NaN or Inf shown", args[0])
		}
	}
}
