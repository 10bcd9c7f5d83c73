package timeline

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tsinspect/tsinspect/decode"
)

func TestCanonicalJSON(t *testing.T) {
	a := CanonicalJSON([]byte(`{"type":"tool_result", "content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}],"tool_use_id":"x","cache_control":{"type":"ephemeral","ttl":"1h"},"citations":null,"n":1.50}`))
	b := CanonicalJSON([]byte(`{"tool_use_id":"x","type":"tool_result","content":[{"text":"a","type":"text"}],"n":1.50}`))
	if !bytes.Equal(a, b) {
		t.Errorf("%s != %s", a, b)
	}
	if string(b) != `{"content":[{"text":"a","type":"text"}],"n":1.50,"tool_use_id":"x","type":"tool_result"}` {
		t.Errorf("canonical form %s", b)
	}
	if got := CanonicalJSON([]byte("not json")); string(got) != "not json" {
		t.Errorf("invalid JSON changed: %s", got)
	}
	// A string message and its one-text-block form hash alike; the role
	// counts.
	h := newHasher()
	str := &decode.Message{Role: "user", StringContent: true, Text: "hi"}
	blk := &decode.Message{Role: "user", Blocks: []decode.Block{{Type: "text", Text: "hi", Raw: json.RawMessage(`{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}`)}}}
	if h.message(str) != h.message(blk) || !bytes.Equal(canonicalMessage(str), canonicalMessage(blk)) {
		t.Errorf("string and block forms differ")
	}
	if h.message(&decode.Message{Role: "assistant", Blocks: blk.Blocks}) == h.message(blk) {
		t.Errorf("role ignored")
	}
}

func TestSigned(t *testing.T) {
	if signed(-5) != "−5" || signed(5) != "+5" {
		t.Errorf("signed")
	}
}
