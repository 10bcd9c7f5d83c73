package view_test

import (
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// TestConversationOfARealTurn: on the bundled real session, the turn after
// the echo call shows the echo's result (what its request added) and the
// next call with its input (its response); the whole history holds the
// user's prompt too; a filter keeps the messages holding it.
func TestConversationOfARealTurn(t *testing.T) {
	s := timeline.Build(session.DemoExchanges(t))
	var turn *timeline.Turn
	for _, tu := range s.Turns {
		if req, _ := s.Content(tu); strings.Contains(req, "hello from the demo") {
			turn = tu
		}
	}
	if turn == nil {
		t.Fatal("no turn carries the echo's result")
	}
	text := view.Text(view.Conversation(s, turn, "", false))
	for _, want := range []string{"← result of mcp__demo__echo", "hello from the demo", "── assistant ──", "→ call mcp__demo__action_7", `"target": "inbox"`} {
		if !strings.Contains(text, want) {
			t.Errorf("conversation lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Show me what the demo MCP tools can do") {
		t.Errorf("the history repeated in what the turn added:\n%s", text)
	}
	all := view.Text(view.Conversation(s, turn, "", true))
	if !strings.Contains(all, "Show me what the demo MCP tools can do") || !strings.Contains(all, "a: only what this turn added") {
		t.Errorf("the whole history lacks the prompt:\n%s", all)
	}
	only := view.Text(view.Conversation(s, turn, "inbox", false))
	if strings.Contains(only, "── user ──") || !strings.Contains(only, "inbox") {
		t.Errorf("filter inbox:\n%s", only)
	}
}
