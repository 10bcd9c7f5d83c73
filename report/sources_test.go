package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

// TestSources: turns imported from a format that keeps less than a
// recording are counted with what the format lacks, and the rendered
// reports say so.
func TestSources(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ex := func(source string) exchange.Exchange {
		return exchange.Exchange{
			Source: source, Start: at, End: at, Method: "POST", URL: "https://api.anthropic.com/v1/messages",
			ReqBody:     []byte(`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`),
			Status:      200,
			RespHeaders: []exchange.Header{{Name: "Content-Type", Value: "application/json"}},
			RespBody:    []byte(`{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`),
			State:       exchange.StateComplete,
		}
	}
	s := timeline.Build([]exchange.Exchange{ex("mitm"), ex(exchange.SourceClaudeTrace), ex(exchange.SourceClaudeTrace)})
	r := Build(s, "test")
	if len(r.Capture.Sources) != 1 || r.Capture.Sources[0].Source != exchange.SourceClaudeTrace || r.Capture.Sources[0].Turns != 2 || len(r.Capture.Sources[0].Lacks) == 0 {
		t.Fatalf("sources %+v", r.Capture.Sources)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "2 turns were imported from claude-trace, which lacks: no SSE timing") {
		t.Errorf("markdown does not say where turns came from:\n%.600s", md.String())
	}
	if r := Build(timeline.Build([]exchange.Exchange{ex("mitm")}), "test"); r.Capture.Sources != nil {
		t.Errorf("a proxy recording has sources %+v", r.Capture.Sources)
	}
}

// TestQuerySource: the query_source a raw-bodies capture keeps names the
// thread.
func TestQuerySource(t *testing.T) {
	ex := exchange.Exchange{
		Source: exchange.SourceRawBodies, Method: "POST", URL: "https://api.anthropic.com/v1/messages",
		ReqHeaders:  []exchange.Header{{Name: exchange.QuerySourceHeader, Value: "repl_main_thread"}},
		ReqBody:     []byte(`{"model":"claude-sonnet-4-5","max_tokens":32000,"tools":[{"name":"Read","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"hi"}]}`),
		Status:      200,
		RespHeaders: []exchange.Header{{Name: "Content-Type", Value: "application/json"}},
		RespBody:    []byte(`{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`),
		State:       exchange.StateComplete,
	}
	s := timeline.Build([]exchange.Exchange{ex})
	if len(s.Threads) != 1 || s.Threads[0].QuerySource != "repl_main_thread" {
		t.Fatalf("threads %+v", s.Threads)
	}
	r := Build(s, "test")
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if r.Threads[0].QuerySource != "repl_main_thread" || !strings.Contains(md.String(), "repl_main_thread") {
		t.Errorf("report thread %+v; markdown:\n%.1000s", r.Threads[0], md.String())
	}
}

// TestSessions: when a capture holds more than one Claude Code session,
// threads carry their session id and their labels name it.
func TestSessions(t *testing.T) {
	ex := func(session, prompt string) exchange.Exchange {
		return exchange.Exchange{
			Source: "mitm", Method: "POST", URL: "https://api.anthropic.com/v1/messages",
			ReqHeaders:  []exchange.Header{{Name: exchange.SessionHeader, Value: session}},
			ReqBody:     []byte(`{"model":"claude-sonnet-4-5","max_tokens":32000,"tools":[{"name":"Read","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"` + prompt + `"}]}`),
			Status:      200,
			RespHeaders: []exchange.Header{{Name: "Content-Type", Value: "application/json"}},
			RespBody:    []byte(`{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`),
			State:       exchange.StateComplete,
		}
	}
	one := Build(timeline.Build([]exchange.Exchange{ex("s-1", "hello")}), "test")
	if one.Threads[0].Session != "" || strings.Contains(one.threadViews()[0].Label, "session") {
		t.Errorf("one session: %+v, label %q", one.Threads[0], one.threadViews()[0].Label)
	}
	two := Build(timeline.Build([]exchange.Exchange{ex("s-1", "hello"), ex("s-2", "something else entirely")}), "test")
	if len(two.Threads) != 2 {
		t.Fatalf("%d threads", len(two.Threads))
	}
	for i, v := range two.threadViews() {
		if !strings.Contains(v.Label, "session s-") {
			t.Errorf("thread %d label %q does not name its session", i, v.Label)
		}
	}
}
