package decode

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestLargeInputs decodes hostile inputs of a few megabytes that once took
// quadratic time (usage with many keys, announcement headers or tags
// repeated on one line). Each must raise at most maxProblems problems and
// give the expected result; BenchmarkLargeInputs measures how long each
// takes (milliseconds; the quadratic versions took minutes).
func TestLargeInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	streams, requests := largeInputs()
	for name, body := range streams {
		turn := Decode(streamExchange(body))
		if len(turn.Problems) > maxProblems {
			t.Errorf("%s: %d problems", name, len(turn.Problems))
		}
		if name == "usage keys" && turn.Response.Usage.OutputTokens != 7 {
			t.Errorf("usage keys: %+v", turn.Response.Usage)
		}
	}
	for name, c := range requests {
		turn := DecodeRequest(c.body)
		noProblems(t, name, turn)
		if len(turn.Catalog) != c.catalog {
			t.Errorf("%s: catalog %d, want %d", name, len(turn.Catalog), c.catalog)
		}
	}
}

// BenchmarkLargeInputs decodes each of TestLargeInputs' hostile inputs.
func BenchmarkLargeInputs(b *testing.B) {
	streams, requests := largeInputs()
	for name, body := range streams {
		b.Run(strings.ReplaceAll(name, " ", "-"), func(b *testing.B) {
			for b.Loop() {
				Decode(streamExchange(body))
			}
		})
	}
	for name, c := range requests {
		b.Run(strings.ReplaceAll(name, " ", "-"), func(b *testing.B) {
			for b.Loop() {
				DecodeRequest(c.body)
			}
		})
	}
}

// largeInput is a hostile request body and the size of the catalog it
// should give.
type largeInput struct {
	body    []byte
	catalog int
}

// largeInputs returns the hostile streams and requests, by name.
func largeInputs() (map[string][]byte, map[string]largeInput) {
	var keys strings.Builder
	for i := range 100000 {
		keys.WriteString(`"k` + strconv.Itoa(i) + `":1,`)
	}
	streams := map[string][]byte{
		"usage keys":  []byte(`data: {"type":"message_start","message":{"usage":{` + keys.String() + `"output_tokens":7}}}` + "\n\n"),
		"many deltas": bytes.Repeat([]byte(`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`+"\n\n"), 50000),
		"bad lines":   bytes.Repeat([]byte("data: {\n\n"), 100000),
		"deep":        append(append([]byte("data: "), bytes.Repeat([]byte("["), 200000)...), bytes.Repeat([]byte("]"), 200000)...),
		"backslashes": append(append([]byte(`data: {"a":"`), bytes.Repeat([]byte(`\\"`), 500000)...), "\"}\n\n"...),
	}
	text := func(s string) []byte {
		return []byte(`{"model":"m","messages":[{"role":"user","content":` + string(quote(s)) + `}]}`)
	}
	requests := map[string]largeInput{
		"headers on one line": {text(strings.Repeat(">The following deferred tools are now available via", 80000)), 0},
		"tags on one line":    {text(strings.Repeat("<available-deferred-tools>", 200000)), 0},
		"many names":          {text("The following deferred tools are now available via X:\n" + strings.Repeat("n\nm\n", 200000)), 2},
	}
	return streams, requests
}
