package decode

import "testing"

func TestShortModel(t *testing.T) {
	for in, want := range map[string]string{
		"claude-sonnet-4-5-20250929": "sonnet-4-5", "claude-haiku-4-5": "haiku-4-5", "claude-opus-5-5": "opus-5-5",
		"gpt-x": "gpt-x", "": "", "claude-x-2025092a": "x-2025092a",
	} {
		if got := ShortModel(in); got != want {
			t.Errorf("ShortModel(%q) = %q, want %q", in, got, want)
		}
	}
}
