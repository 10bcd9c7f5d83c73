package tooltokens

import (
	"encoding/json"
	"testing"

	"github.com/tsinspect/tsinspect/timeline"
)

func TestHashIgnoresMarkersAndOrder(t *testing.T) {
	a := Hash(json.RawMessage(`{"name":"x","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}`))
	b := Hash(json.RawMessage(`{ "input_schema": {"type": "object"}, "name": "x" }`))
	c := Hash(json.RawMessage(`{"name":"y","input_schema":{"type":"object"}}`))
	if a != b || a == c {
		t.Errorf("hashes %s %s %s", a, b, c)
	}
}

func TestMarks(t *testing.T) {
	for _, c := range []struct {
		n                  int64
		unknown, estimated int
		want               string
	}{{2263, 0, 0, "2,263"}, {2263, 0, 3, "≈2,263"}, {2263, 1, 3, "≥ 2,263"}} {
		if got := TokensText(c.n, c.unknown, c.estimated); got != c.want {
			t.Errorf("TokensText(%d, %d, %d) = %q, want %q", c.n, c.unknown, c.estimated, got, c.want)
		}
	}
}

// TestEmpty: a nil session, and a session whose turn was not decoded,
// have figures all the same, zero.
func TestEmpty(t *testing.T) {
	if f := Compute(nil, nil); len(f.Turns) != 0 || len(f.Threads) != 0 || f.Turn(1) != nil {
		t.Errorf("nil session: %+v", f)
	}
	s := &timeline.Session{Turns: []*timeline.Turn{{Index: 1, Thread: "main"}},
		Threads: []*timeline.Thread{{ID: "main", Turns: []int{1}}}}
	f := Compute(s, nil)
	if ft := f.Turn(1); ft == nil || ft.Tokens != (Tokens{}) || ft.Definitions != nil {
		t.Errorf("undecoded turn: %+v", ft)
	}
	if len(f.Threads) != 1 || f.Threads[0].Turns != 1 || f.Threads[0].LoadedTools == nil {
		t.Errorf("threads %+v", f.Threads)
	}
}
