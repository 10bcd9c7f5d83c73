package decode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oracleResultText is a tool_result's text as encoding/json reads it.
func oracleResultText(t *testing.T, raw []byte) string {
	t.Helper()
	var b struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("block %s: %v", raw, err)
	}
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var items []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(b.Content, &items)
	var texts []string
	for _, it := range items {
		if it.Type == "text" {
			texts = append(texts, it.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func TestResultTextReadsTheBlock(t *testing.T) {
	cases := []struct{ name, raw, want string }{
		{"string", `{"type":"tool_result","tool_use_id":"t1","content":"line 1\nline \"2\"\u00e9"}`, "line 1\nline \"2\"é"},
		{"blocks", `{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"},{"type":"tool_reference","tool_name":"X"},{"type":"text","text":"b"}]}`, "a\nb"},
		{"image only", `{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{}}]}`, ""},
		{"null", `{"type":"tool_result","tool_use_id":"t1","content":null}`, ""},
		{"absent", `{"type":"tool_result","tool_use_id":"t1"}`, ""},
	}
	for _, c := range cases {
		turn := &Turn{}
		b := parseBlock(turn, json.RawMessage(c.raw), "block")
		if got := b.ResultText(); got != c.want {
			t.Errorf("%s: ResultText %q, want %q", c.name, got, c.want)
		}
		if b.Text != "" {
			t.Errorf("%s: Text %q: a tool_result's text is not held", c.name, b.Text)
		}
		if len(turn.Problems) != 0 {
			t.Errorf("%s: problems %v", c.name, turn.Problems)
		}
	}
	other := Block{Type: "text", Text: "hi", Raw: json.RawMessage(`{"type":"text","text":"hi"}`)}
	if other.ResultText() != "" || other.ResultContains("hi") {
		t.Errorf("a text block has no result text")
	}
}

func TestResultContainsSeesEscapedText(t *testing.T) {
	cases := []struct {
		raw, s string
		want   bool
	}{
		{`{"type":"tool_result","tool_use_id":"t","content":"Error: No such tool available: X"}`, NoSuchToolText, true},
		// Letters written as \u escapes hold the text too.
		{`{"type":"tool_result","tool_use_id":"t","content":"No such tool \u0061vailable"}`, NoSuchToolText, true},
		// The words outside the content are not its text.
		{`{"type":"tool_result","tool_use_id":"No such tool available","content":"fine"}`, NoSuchToolText, false},
		{`{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"No such tool available"}]}`, NoSuchToolText, true},
		{`{"type":"tool_result","tool_use_id":"t","content":"done"}`, NoSuchToolText, false},
		// A slash may be written \/, and a quote or a newline always is.
		{`{"type":"tool_result","tool_use_id":"t","content":"see a\/b"}`, "a/b", true},
		{`{"type":"tool_result","tool_use_id":"t","content":"say \"hi\"\nbye"}`, "\"hi\"\nbye", true},
		{`{"type":"tool_result","tool_use_id":"t","content":"say hi"}`, "\"hi\"", false},
	}
	for _, c := range cases {
		b := parseBlock(&Turn{}, json.RawMessage(c.raw), "block")
		if got := b.ResultContains(c.s); got != c.want {
			t.Errorf("%s: ResultContains(%q) %v, want %v", c.raw, c.s, got, c.want)
		}
		if got := strings.Contains(b.ResultText(), c.s); got != c.want {
			t.Errorf("%s: the case is wrong: ResultText holds %q: %v", c.raw, c.s, got)
		}
	}
}

func TestResultTextProblemsStayAtDecode(t *testing.T) {
	cases := []struct{ raw, problem string }{
		{`{"type":"tool_result","tool_use_id":"t","content":7}`, "neither a string nor an array"},
		{`{"type":"tool_result","tool_use_id":"t","content":[3]}`, "content 0 is not an object"},
		{`{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":5}]}`, "content text is not a string"},
		{`{"type":"tool_result","tool_use_id":"t","content":[{"type":"tool_reference"}]}`, "tool_reference without tool_name"},
	}
	for _, c := range cases {
		turn := &Turn{}
		parseBlock(turn, json.RawMessage(c.raw), "block")
		if len(turn.Problems) != 1 || !strings.Contains(turn.Problems[0], c.problem) {
			t.Errorf("%s: problems %q, want one saying %q", c.raw, turn.Problems, c.problem)
		}
	}
}

// TestResultTextOnRecordedRequests holds every tool_result of the recorded
// requests to encoding/json's reading of it.
func TestResultTextOnRecordedRequests(t *testing.T) {
	dir := sampleDir(t)
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no recorded requests in %s: %v", dir, err)
	}
	seen := 0
	for _, name := range names {
		if _, err := os.Stat(name); err != nil {
			t.Fatal(err)
		}
		turn := Decode(sampleExchange(t, filepath.Base(name)))
		for _, m := range turn.Request.Messages {
			for i := range m.Blocks {
				b := &m.Blocks[i]
				if b.Type != "tool_result" {
					continue
				}
				seen++
				if got, want := b.ResultText(), oracleResultText(t, b.Raw); got != want {
					t.Errorf("%s: tool_result %s: ResultText %q, want %q", filepath.Base(name), b.ToolUseID, got, want)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("the recorded requests hold no tool_result")
	}
	t.Logf("%d tool results", seen)
}
