package ui

import (
	"fmt"
	"testing"
)

func TestScratchGolden(t *testing.T) {
	s := goldenSession()
	for _, tu := range s.Turns {
		for _, f := range tu.Flags {
			fmt.Println(tu.Index, "   ", f.Kind, f.Cause, f.Detail)
		}
	}
	h := newHarness(t, s, 120, 40, Options{Title: "golden"})
	for _, k := range []string{"jjjjjjjj4", "5", "jjjj1", "2", "6\t"} {
		h.keys(k)
		fmt.Println(h.text())
	}
}
