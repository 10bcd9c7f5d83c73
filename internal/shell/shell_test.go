package shell

import "testing"

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain.db": "plain.db", "": "''", "a b": "'a b'", "it's": `'it'\''s'`, "$HOME": "'$HOME'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
}
