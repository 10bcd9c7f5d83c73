package sessionfiles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrefixTooShortOrAmbiguous: a prefix under four characters, or one
// that several sessions start with, says so and names the sessions it
// could be; a short prefix no session starts with is left to be a file.
func TestPrefixTooShortOrAmbiguous(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "-home-user-project")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"abcd1234-0000-4000-8000-000000000001", "abcd9999-0000-4000-8000-000000000002", "ab120000-0000-4000-8000-000000000003"} {
		if err := os.WriteFile(filepath.Join(proj, id+".jsonl"), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, arg := range []string{"a", "ab", "abc", "0"} {
		if !ShortPrefix(arg) {
			t.Errorf("ShortPrefix(%q) = false", arg)
		}
	}
	for _, arg := range []string{"", "abcd", "ab.db", "xyz", "AB"} {
		if ShortPrefix(arg) {
			t.Errorf("ShortPrefix(%q) = true", arg)
		}
	}
	err := TooShort(root, "ab")
	if err == nil || !errors.Is(err, ErrNotOne) {
		t.Fatalf("ab: %v", err)
	}
	for _, want := range []string{`"ab" is too short for a session ID (give at least 4 characters)`, "; it could be ", "abcd1234 (-home-user-project, last written ", "abcd9999 (", "ab120000 ("} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ab: %v\nwant %q in it", err, want)
		}
	}
	if err := TooShort(root, "abc"); err == nil || !strings.Contains(err.Error(), "it could be abcd") || strings.Contains(err.Error(), "ab120000") {
		t.Errorf("abc: %v", err)
	}
	if err := TooShort(root, "ab1"); err == nil || !strings.Contains(err.Error(), "it is the start of ab120000 (") {
		t.Errorf("ab1: %v", err)
	}
	if err := TooShort(root, "f"); err != nil {
		t.Errorf("f, which no session starts with: %v", err)
	}
	if err := TooShort(filepath.Join(root, "none"), "ab"); err != nil {
		t.Errorf("no sessions directory: %v", err)
	}
	_, err = Resolve(root, "abcd")
	if !errors.Is(err, ErrNotOne) || !strings.Contains(err.Error(), "2 sessions start so, give more of the ID; it could be ") || !strings.Contains(err.Error(), "abcd1234 (") || !strings.Contains(err.Error(), "abcd9999 (") {
		t.Errorf("abcd: %v", err)
	}
}

// TestCandidatesAreBounded: past five sessions the list says how many
// more, not which.
func TestCandidatesAreBounded(t *testing.T) {
	var es []Entry
	for i := 0; i < 9; i++ {
		es = append(es, Entry{ID: strings.Repeat(string(rune('a'+i)), 8) + "-0000", Project: "p"})
	}
	got := Candidates(es)
	if strings.Count(got, "(p, last written") != 5 || !strings.HasSuffix(got, "and 4 more ('tsinspect sessions' lists them)") {
		t.Errorf("candidates: %s", got)
	}
}
