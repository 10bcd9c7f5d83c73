package claudetools

import "testing"

// TestReleases: every recorded release reads, names tools with
// descriptions and sizes, and For picks the right one for any version.
func TestReleases(t *testing.T) {
	all := Releases()
	if len(all) < 2 {
		t.Fatalf("%d releases recorded", len(all))
	}
	for _, r := range all {
		if len(r.Tools) < 5 {
			t.Errorf("%s: %d tools", r.Version, len(r.Tools))
		}
		for _, tl := range r.Tools {
			if tl.Name == "" || tl.Description == "" || tl.Bytes < len(tl.Description) {
				t.Errorf("%s: %+v", r.Version, tl)
			}
		}
	}
	newest := all[len(all)-1].Version
	for v, want := range map[string]string{"2.1.328": "2.1.328", "2.1.331": "2.1.331", "2.1.330": "2.1.328", "2.1.999": newest, "": newest, "2.1.1": all[0].Version} {
		if got, exact := For(v); got.Version != want || exact != (v == want) {
			t.Errorf("For(%q) = %s (exact %v), want %s", v, got.Version, exact, want)
		}
	}
	if n, ok := Size("2.1.328", "WebFetch"); !ok || n < 500 {
		t.Errorf("WebFetch of 2.1.328: %d bytes, %v", n, ok)
	}
	if _, ok := Size("2.1.328", "mcp__demo__echo"); ok {
		t.Error("a size for a tool not Claude Code's")
	}
}
