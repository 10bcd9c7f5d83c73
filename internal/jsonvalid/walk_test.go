package jsonvalid

import (
	"encoding/json"
	"testing"
)

// FuzzValueEndValid holds ValueEndValid to encoding/json.Valid: it ends a
// value where a valid prefix ends, the whole valid exactly when white
// space alone follows, and then ValueEnd ends it there too; at a depth, it refuses what nests
// deeper than MaxDepth in all.
func FuzzValueEndValid(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2,{"b":"c\n"}],"d":null}`, `"x\u00e9"`, `-1.5e+3`, `true`, `[]`, `{}`, `[1,]`, `{"a" 1}`,
		`"a` + "\x01" + `"`, `"\q"`, `01`, `tru`, `{"a":1} `, `{"a":1}x`, `[[[[]]]]`, `"\ud800"`, `{"a":"\"}"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 0 && SkipSpace(b, 0) > 0 {
			return // a value starts where it is called
		}
		e := ValueEndValid(b, 0, 0)
		valid := json.Valid(b)
		if got := e >= 0 && SkipSpace(b, e) == len(b); got != valid {
			t.Fatalf("%q: ended at %d, valid %v", b, e, valid)
		}
		if e >= 0 {
			if !json.Valid(b[:e]) {
				t.Fatalf("%q: ended at %d, where %q is not valid", b, e, b[:e])
			}
			if w := ValueEnd(b, 0); valid && w != e {
				t.Fatalf("%q: ended at %d, ValueEnd at %d", b, e, w)
			}
		}
	})
}

// TestValueEndValidCountsTheDepthAbove checks that the containers open
// above a value count toward MaxDepth.
func TestValueEndValidCountsTheDepthAbove(t *testing.T) {
	nested := func(n int) []byte {
		b := make([]byte, 0, 2*n)
		for range n {
			b = append(b, '[')
		}
		for range n {
			b = append(b, ']')
		}
		return b
	}
	if e := ValueEndValid(nested(10), 0, MaxDepth-10); e != 20 {
		t.Errorf("10 deep under %d: ended at %d, want 20", MaxDepth-10, e)
	}
	if e := ValueEndValid(nested(10), 0, MaxDepth-9); e != -1 {
		t.Errorf("10 deep under %d: ended at %d, want -1 (deeper than %d)", MaxDepth-9, e, MaxDepth)
	}
	if !Valid(nested(MaxDepth)) || Valid(nested(MaxDepth+1)) {
		t.Errorf("Valid's depth moved: %d deep valid %v, %d deep valid %v", MaxDepth, Valid(nested(MaxDepth)), MaxDepth+1, Valid(nested(MaxDepth+1)))
	}
}

// TestCheckerKeepsItsStack checks that a Checker allocates nothing for a
// value once it has checked one as deep, and ends values as
// ValueEndValid does.
func TestCheckerKeepsItsStack(t *testing.T) {
	b := []byte(`{"a":[{"b":[1,{"c":"d"}]}],"e":{"f":[[[]]]}}, "x"`)
	var c Checker
	want := ValueEndValid(b, 0, 1)
	if got := c.ValueEnd(b, 0, 1); got != want || want != len(b)-5 {
		t.Fatalf("Checker ended at %d, ValueEndValid at %d, want %d", got, want, len(b)-5)
	}
	if n := testing.AllocsPerRun(100, func() { c.ValueEnd(b, 0, 1) }); n != 0 {
		t.Errorf("%v allocations a value", n)
	}
}
