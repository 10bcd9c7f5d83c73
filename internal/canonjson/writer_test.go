package canonjson

import (
	"bytes"
	"testing"
)

// TestWriterAsEachAfresh holds one Writer, used for value after value, to
// CanonicalValid with nothing kept, on objects of several depths, repeated
// and escaped keys, and cache marks left out.
func TestWriterAsEachAfresh(t *testing.T) {
	values := []string{
		`{"b":1,"a":{"d":[{"z":1,"y":2}],"c":null},"cache_control":{"type":"ephemeral"}}`,
		`{"x":{"y":{"z":{"w":1}}}}`,
		`{"a":1,"a":2,"\u0062":3,"b":4}`,
		`[{"k":"v"},{"j":"u","i":"t"}]`,
		`{"type":"text","text":"a \u2028 b","cache_control":null}`,
		`{"b":1,"a":{"d":[{"z":1,"y":2}],"c":null}}`,
	}
	var w Writer
	for _, o := range []Options{{}, {OmitMarks: true, OmitNulls: true}} {
		for _, v := range values {
			var got, want bytes.Buffer
			okGot := w.CanonicalValid(&got, []byte(v), o)
			okWant := CanonicalValid(&want, []byte(v), o)
			if okGot != okWant || got.String() != want.String() {
				t.Errorf("%s (%+v): the Writer wrote %s, afresh %s", v, o, got.String(), want.String())
			}
		}
	}
}
