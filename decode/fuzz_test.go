package decode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
)

// seedDirs returns the sample and corpus directories; corpus is "" when
// the third-party corpus beside the module root is absent (the fuzz targets
// then seed from the samples and literals only).
func seedDirs() (samples, corpus string) {
	root := moduleRoot()
	samples = filepath.Join(root, "testdata", "claude-code-2.1.328")
	corpus = filepath.Join(root, "..", "shared", "corpus")
	if _, err := os.Stat(corpus); err != nil {
		corpus = ""
	}
	return samples, corpus
}

// checkInvariants asserts what holds for any decoded turn.
func checkInvariants(t *testing.T, turn *Turn, body []byte) {
	if turn == nil {
		t.Fatal("Decode returned nil")
	}
	if _, err := json.Marshal(turn); err != nil {
		t.Fatalf("turn does not marshal: %v", err)
	}
	if len(turn.Problems) > maxProblems {
		t.Fatalf("%d problems", len(turn.Problems))
	}
	for _, p := range turn.Problems {
		if strings.HasPrefix(p, "internal error") {
			t.Fatalf("decoder panicked: %s", p)
		}
	}
	if !slices.IsSorted(turn.Catalog) || len(slices.Compact(slices.Clone(turn.Catalog))) != len(turn.Catalog) {
		t.Fatalf("catalog not sorted and unique: %v", turn.Catalog)
	}
	names := map[string]bool{}
	for _, tool := range turn.Request.Tools {
		names[tool.Name] = true
	}
	for _, w := range turn.WorkingSet {
		if !names[w.Name] || w.Name == PlaceholderTool {
			t.Fatalf("working set tool %q not sendable", w.Name)
		}
	}
	for _, s := range turn.NewSearches {
		if !s.New || !s.HasResult {
			t.Fatalf("new search not new: %+v", s)
		}
	}
	calls := 0
	for _, b := range turn.Response.Content {
		if b.Type == "tool_use" || b.Type == "server_tool_use" || b.Type == "mcp_tool_use" {
			calls++
		}
	}
	if calls != len(turn.ToolCalls) {
		t.Fatalf("%d call blocks, %d tool calls", calls, len(turn.ToolCalls))
	}
	var last int64 = -1
	for _, e := range turn.Response.Events {
		if e.Offset < last || e.Offset >= int64(len(body)) {
			t.Fatalf("event offset %d out of order or range (body %d)", e.Offset, len(body))
		}
		last = e.Offset
	}
}

func FuzzSSE(f *testing.F) {
	f.Add([]byte(smallStream))
	f.Add([]byte("data: {\"type\":\"message_start\",\"message\":{}}\n\ndata: {\"type\":\"message_stop\"}\n\n"))
	f.Add([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"x\",\"message\":\"y\"}}\n\n"))
	f.Add([]byte("event: content_block_delta\ndata: {\"index\":-1}\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_start\",\"index\":99999999999,\"content_block\":null}\r\n\r\n"))
	f.Add([]byte(":\n\n\n\rdata\ndata:\nevent"))
	if _, corpus := seedDirs(); corpus != "" {
		files, _ := filepath.Glob(filepath.Join(corpus, "*", "*"))
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			switch {
			case strings.HasSuffix(p, ".chunks.txt"):
				for _, s := range sseFromDataLines(b) {
					f.Add(s)
				}
			case strings.HasSuffix(p, ".sse"), strings.HasSuffix(p, ".txt"), strings.HasSuffix(p, ".json"):
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ex := streamExchange(body, exchange.Header{Name: "Content-Type", Value: "text/event-stream"})
		turn := Decode(ex)
		checkInvariants(t, turn, body)
		if turn.Response.Size != len(body) {
			t.Fatalf("size %d, body %d", turn.Response.Size, len(body))
		}
	})
}

func FuzzRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"The following deferred tools are now available via ToolSearch:\nA\nB"}]}`))
	f.Add([]byte(`{"tools":[{"name":"T","defer_loading":true},{"type":"tool_search_tool_regex_20251119","name":"tool_search_tool_regex"}],"messages":[{"role":"assistant","content":[{"type":"server_tool_use","id":"s","name":"tool_search_tool_regex","input":{"pattern":"x"}},{"type":"tool_search_tool_result","tool_use_id":"s","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"T"}]}}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"system","content":[{"type":"tool_addition","tool":{"name":"X"}},{"type":"tool_removal","tool":null}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":"<available-deferred-tools>\nA"}]}`))
	f.Add([]byte(`[]`))
	if samples, _ := seedDirs(); samples != "" {
		files, _ := filepath.Glob(filepath.Join(samples, "0[1-5]-*.json"))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		turn := DecodeRequest(body)
		checkInvariants(t, turn, nil)
		if turn.Request.Size != len(body) {
			t.Fatalf("size %d, body %d", turn.Request.Size, len(body))
		}
		checkResultTexts(t, turn)
	})
}

// checkResultTexts holds each tool_result's text, read when asked, to
// encoding/json's reading of its block, and ResultContains to it.
func checkResultTexts(t *testing.T, turn *Turn) {
	for _, m := range turn.Request.Messages {
		for i := range m.Blocks {
			b := &m.Blocks[i]
			if b.Type != "tool_result" {
				continue
			}
			text := b.ResultText()
			if want := oracleResultText(t, b.Raw); text != want {
				t.Fatalf("tool_result %s: ResultText %q, encoding/json %q", b.Raw, text, want)
			}
			for _, s := range []string{text, text[len(text)/2:], "x/y", "\"", "\n", "é"} {
				if got, want := b.ResultContains(s), strings.Contains(text, s); got != want {
					t.Fatalf("tool_result %s: ResultContains(%q) %v, its text holds it: %v", b.Raw, s, got, want)
				}
			}
		}
	}
}
