package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/golden"
)

// TestREADMEKeys holds README.md's key list to the key table; -update
// rewrites it.
func TestREADMEKeys(t *testing.T) {
	got := readmeKeys(keyTable())
	for _, r := range keyTable() {
		for _, k := range strings.Fields(r.keys + " " + r.also) {
			if !strings.Contains(got, fmt.Sprintf("`%s`", k)) {
				t.Errorf("key %s not in the README's list", k)
			}
		}
	}
	golden.Section(t, "../README.md", "keys", got, *update)
}
