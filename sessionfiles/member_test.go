package sessionfiles

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzMember holds member to encoding/json: on valid JSON, what it finds
// (when it says it can tell) is what decoding into a struct field gives.
func FuzzMember(f *testing.F) {
	for _, s := range []string{
		`{"content":[1,2]}`, `{"Content":"a","content":"b"}`, `{"content":"a","CONTENT":{"x":1}}`,
		`{"model":"m","content":null}`, `{ "content" : [ {"a":"}"} ] , "x":1}`, `{"\u0063ontent":1}`,
		`{"content":1,"cont\u00e9nt":2}`, `[]`, `null`, `"s"`, `{}`, `{"other":{"content":5}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var want struct {
			Content json.RawMessage `json:"content"`
		}
		werr := json.Unmarshal(b, &want)
		got, ok := member(b, "content")
		if !ok {
			return
		}
		if werr != nil {
			t.Fatalf("member read %q of %q, which encoding/json refuses: %v", got, b, werr)
		}
		if !bytes.Equal(got, want.Content) {
			t.Fatalf("member(%q) = %q, encoding/json %q", b, got, want.Content)
		}
	})
}
