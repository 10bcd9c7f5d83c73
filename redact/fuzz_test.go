package redact

import (
	"strings"
	"testing"
)

// FuzzScrub runs the free-text scrubber on arbitrary text with a key and an
// e-mail address planted in it on lines of their own: it must not panic,
// and neither planted value may come out.
//
// Run: go test ./redact -run '^$' -fuzz FuzzScrub -fuzztime 10m
func FuzzScrub(f *testing.F) {
	f.Add("write to alice.cnry@example.org today")
	f.Add("Authorization: Bearer abc123def456ghi789 and /home/bob/x")
	f.Add(`{"api_key": "zz9988xxyy", "path": "C:\\Users\\bob"}`)
	f.Add("session 5f0c4a8e-2b7d-4c1e-9a3f-6d8b1e2c7a90 ::1 10.0.0.1")
	f.Add("\xff\xfe invalid utf-8 \xc3")
	const key, mail = "sk-ant-api03-FuzzCanary0123456789-abc", "fuzz.canary@example.org"
	f.Fuzz(func(t *testing.T, s string) {
		sc := newScrubber(Collect(nil))
		out := sc.text(s + "\n" + key + "\n" + mail + "\n" + s)
		if strings.Contains(out, key) || strings.Contains(out, mail) {
			t.Fatalf("a planted value came through: %q", out)
		}
	})
}
