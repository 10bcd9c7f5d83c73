package sessionfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRequestGoesAfterEveryRecordItCarries holds a request's time to the
// latest record of the user message it sends. Claude Code stamps a
// skill's or command's prompt (an isMeta user text, then its
// command_permissions attachment) when the skill was called, and writes
// it after the call's result, seconds later: public session 35 (2.1.205)
// has one such turn sent 9.5 s after the time the text and the attachment
// carry. A record that opens a new user message after an answer keeps its
// own time, earlier or not.
func TestRequestGoesAfterEveryRecordItCarries(t *testing.T) {
	const day = "2026-11-20T10:00:"
	for _, c := range []struct {
		name         string
		result, meta string // seconds past 10:00 of the tool result and of the skill's prompt
		want1, want2 string // when the two requests went
	}{
		{name: "prompt stamped before the result", result: "20", meta: "06", want1: "00", want2: "20"},
		{name: "prompt written after the result", result: "20", meta: "25", want1: "00", want2: "25"},
		{name: "in order", result: "07", meta: "08", want1: "00", want2: "08"},
		// The result opens a new user message after the answer: its own
		// time stands, though the answer's record is stamped later.
		{name: "result stamped before the answer", result: "03", meta: "04", want1: "00", want2: "04"},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines := []string{
				`{"type":"user","parentUuid":null,"uuid":"u1","sessionId":"s","timestamp":"` + day + `00.000Z","message":{"role":"user","content":"review the change"}}`,
				`{"type":"assistant","parentUuid":"u1","uuid":"a1","sessionId":"s","timestamp":"` + day + `05.000Z","message":{"id":"msg_1","model":"claude-opus-5","role":"assistant","type":"message","content":[{"type":"tool_use","id":"toolu_1","name":"Skill","input":{"skill":"review"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}}`,
				`{"type":"user","parentUuid":"a1","uuid":"u2","sessionId":"s","timestamp":"` + day + c.result + `.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"Launching skill: review"}]},"toolUseResult":{}}`,
				`{"type":"user","parentUuid":"u2","uuid":"u3","sessionId":"s","isMeta":true,"timestamp":"` + day + c.meta + `.000Z","message":{"role":"user","content":[{"type":"text","text":"the skill's prompt"}]}}`,
				`{"type":"attachment","parentUuid":"u3","uuid":"t1","sessionId":"s","timestamp":"` + day + c.meta + `.000Z","attachment":{"type":"command_permissions","allowedTools":[]}}`,
				`{"type":"assistant","parentUuid":"t1","uuid":"a2","sessionId":"s","timestamp":"` + day + `40.000Z","message":{"id":"msg_2","model":"claude-opus-5","role":"assistant","type":"message","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}}`,
			}
			s := openLines(t, lines)
			if s.Len() != 2 {
				t.Fatalf("%d requests, want 2", s.Len())
			}
			for i, want := range []string{c.want1, c.want2} {
				ex := s.Exchange(i)
				w, _ := time.Parse(time.RFC3339, day+want+"Z")
				if !ex.Start.Equal(w) {
					t.Errorf("request %d went at %s, want %s", i+1, ex.Start.Format(time.RFC3339), w.Format(time.RFC3339))
				}
			}
			if got := fmt.Sprint(s.Exchange(1).End.Sub(s.Exchange(1).Start)); c.result == "20" && c.meta == "06" && got != "20s" {
				t.Errorf("the second request took %s, want 20s (10:00:20 to the answer at 10:00:40)", got)
			}
		})
	}
}

// openLines opens a session file of the given records, one a line.
func openLines(t *testing.T, lines []string) *Session {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
