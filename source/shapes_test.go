package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/timeline"
)

// TestTwoSearchesInOneAnswer reads an answer that makes two ToolSearch
// calls at once, each result written under its own tool_use record and
// the next answer continuing from one of them through a hook's progress
// record: both searches are the next turn's, both tools are loaded, the
// calls of them are not blind, and the listing counts what the timeline
// shows.
func TestTwoSearchesInOneAnswer(t *testing.T) {
	lines := []string{
		`{"type":"user","uuid":"u1","parentUuid":null,"isSidechain":false,"sessionId":"s","version":"2.1.205","timestamp":"2026-05-01T10:00:00.000Z","message":{"role":"user","content":"find the news"}}`,
		`{"type":"attachment","uuid":"at1","parentUuid":"u1","isSidechain":false,"sessionId":"s","version":"2.1.205","timestamp":"2026-05-01T10:00:00.000Z","attachment":{"type":"deferred_tools_delta","addedNames":["WebFetch","WebSearch","NotebookEdit"]}}`,
		`{"type":"assistant","uuid":"a1","parentUuid":"at1","isSidechain":false,"sessionId":"s","version":"2.1.205","timestamp":"2026-05-01T10:00:05.000Z","message":{"id":"msg_A","model":"claude-opus-4-6","role":"assistant","content":[{"type":"tool_use","id":"ts1","name":"ToolSearch","input":{"query":"select:WebSearch"}}],"usage":{"input_tokens":3,"output_tokens":40,"cache_read_input_tokens":0,"cache_creation_input_tokens":20000}}}`,
		`{"type":"assistant","uuid":"a2","parentUuid":"a1","isSidechain":false,"sessionId":"s","version":"2.1.205","timestamp":"2026-05-01T10:00:05.500Z","message":{"id":"msg_A","model":"claude-opus-4-6","role":"assistant","content":[{"type":"tool_use","id":"ts2","name":"ToolSearch","input":{"query":"select:WebFetch"}}],"usage":{"input_tokens":3,"output_tokens":80,"cache_read_input_tokens":0,"cache_creation_input_tokens":20000}}}`,
		`{"type":"user","uuid":"r1","parentUuid":"a1","isSidechain":false,"sessionId":"s","version":"2.1.205","timestamp":"2026-05-01T10:00:06.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"ts1","content":[{"type":"tool_reference","tool_name":"WebSearch"}]}]}}`,
		`{"type":"user","uuid":"r2","parentUuid":"a2","isSidechain":false,"sessionId":"s","version":"2.1.205","timestamp":"2026-05-01T10:00:06.200Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"ts2","content":[{"type":"tool_reference","tool_name":"WebFetch"}]}]}}`,
		`{"type":"progress","uuid":"p1","parentUuid":"r1","isSidechain":false,"sessionId":"s","version":"2.1.205","timestamp":"2026-05-01T10:00:06.300Z","data":{"type":"hook_progress","hookEvent":"PostToolUse"}}`,
		`{"type":"assistant","uuid":"b1","parentUuid":"p1","isSidechain":false,"sessionId":"s","version":"2.1.205","timestamp":"2026-05-01T10:00:09.000Z","message":{"id":"msg_B","model":"claude-opus-4-6","role":"assistant","content":[{"type":"tool_use","id":"c1","name":"WebSearch","input":{"query":"news"}}],"usage":{"input_tokens":3,"output_tokens":30,"cache_read_input_tokens":20000,"cache_creation_input_tokens":900}}}`,
		`{"type":"assistant","uuid":"b2","parentUuid":"b1","isSidechain":false,"sessionId":"s","version":"2.1.205","timestamp":"2026-05-01T10:00:09.100Z","message":{"id":"msg_B","model":"claude-opus-4-6","role":"assistant","content":[{"type":"tool_use","id":"c2","name":"WebFetch","input":{"url":"https://example.com"}}],"usage":{"input_tokens":3,"output_tokens":60,"cache_read_input_tokens":20000,"cache_creation_input_tokens":900}}}`,
		`{"type":"user","uuid":"r3","parentUuid":"b1","isSidechain":false,"sessionId":"s","version":"2.1.205","timestamp":"2026-05-01T10:00:12.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"results"}]}}`,
		`{"type":"user","uuid":"r4","parentUuid":"b2","isSidechain":false,"sessionId":"s","version":"2.1.205","timestamp":"2026-05-01T10:00:13.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c2","content":"page"}]}}`,
		`{"type":"assistant","uuid":"d1","parentUuid":"r3","isSidechain":false,"sessionId":"s","version":"2.1.205","timestamp":"2026-05-01T10:00:20.000Z","message":{"id":"msg_C","model":"claude-opus-4-6","role":"assistant","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":5,"cache_read_input_tokens":20900,"cache_creation_input_tokens":300}}}`,
	}
	f := filepath.Join(t.TempDir(), "projects", "p", "11111111-2222-3333-4444-555555555555.jsonl")
	os.MkdirAll(filepath.Dir(f), 0o700)
	if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sess, row := readRelease(t, f) // the listing agrees with the timeline
	if !strings.Contains(row, "searches 2 ") || !strings.Contains(row, "blind 0 ") {
		t.Errorf("listing: %s", row)
	}
	if len(sess.Turns) != 3 {
		t.Fatalf("%d turns, want 3", len(sess.Turns))
	}
	b := sess.Turns[1]
	var found []string
	for _, s := range b.NewSearches {
		found = append(found, s.Query+"→"+strings.Join(s.Results, ","))
	}
	if strings.Join(found, " ") != "select:WebSearch→WebSearch select:WebFetch→WebFetch" {
		t.Errorf("turn 2 searches %v", found)
	}
	var ws []string
	for _, w := range b.Decoded.WorkingSet {
		ws = append(ws, w.Name)
	}
	if strings.Join(ws, ",") != "WebFetch,WebSearch" {
		t.Errorf("turn 2 working set %v", ws)
	}
	c := sess.Turns[2]
	if len(c.Decoded.WorkingSet) != 2 {
		t.Errorf("turn 3 working set %v, want both tools still", c.Decoded.WorkingSet)
	}
	for _, tu := range sess.Turns {
		for _, fl := range tu.Flags {
			if fl.Kind == timeline.FlagCallBeforeLoad || fl.Kind == timeline.FlagUnknownTool {
				t.Errorf("turn %d: %s %s", tu.Index, fl.Kind, fl.Detail)
			}
		}
	}
	// The request of turn 3 went when the last result was written.
	if got := c.Exchange.Start.Format("15:04:05"); got != "10:00:13" {
		t.Errorf("turn 3 sent at %s, want 10:00:13 (its last result)", got)
	}
}
