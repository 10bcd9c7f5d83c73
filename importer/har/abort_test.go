package har

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

// abortHAR is shaped like a mitmproxy HAR of Claude Code's traffic: the
// same request three times, a response that started and was left empty
// when the client hung up, no response at all after the client left, and
// no response because the server could not be reached.
func abortHAR() string {
	req := `{"method": "POST", "url": "https://api.anthropic.com/v1/messages?beta=true", "httpVersion": "HTTP/1.1",
          "headers": [{"name": "user-agent", "value": "claude-cli/2.1.328 (external, cli)"}, {"name": "content-type", "value": "application/json"}],
          "postData": {"mimeType": "application/json", "text": "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":32000,\"stream\":true,\"tools\":[{\"name\":\"Bash\",\"input_schema\":{\"type\":\"object\"}}],\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"}}`
	entry := func(at string, status int, ct, herr string) string {
		return fmt.Sprintf(`{"startedDateTime": "2026-03-04T05:06:%s.000Z", "time": 800, "request": %s,
        "response": {"status": %d, "headers": [{"name": "content-type", "value": %q}], "content": {"size": 0, "mimeType": %q}, "_error": %q},
        "timings": {"send": 1, "wait": 700, "receive": 99}}`, at, req, status, ct, ct, herr)
	}
	return `{"log": {"version": "1.2", "entries": [` +
		entry("07", 200, "text/event-stream; charset=utf-8", "Client disconnected.") + "," +
		entry("09", 0, "", "Client disconnected.") + "," +
		entry("11", 0, "", "Server connection to api.anthropic.com:443 refused.") + "]}}"
}

func TestAbortedEntries(t *testing.T) {
	res, err := Read(strings.NewReader(abortHAR()))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 3 {
		t.Fatalf("%d exchanges", len(res.Exchanges))
	}
	want := []exchange.State{exchange.StateClientAborted, exchange.StateClientAborted, exchange.StateUpstreamFailed}
	for i, ex := range res.Exchanges {
		if ex.State != want[i] {
			t.Errorf("entry %d: state %s (%q), want %s", i+1, ex.State, ex.Error, want[i])
		}
	}
	s := timeline.Build(res.Exchanges)
	if len(s.Turns) != 3 {
		t.Fatalf("%d turns", len(s.Turns))
	}
	var kinds []string
	for _, f := range s.Turns[0].Flags {
		kinds = append(kinds, f.Kind)
	}
	if len(kinds) != 1 || kinds[0] != timeline.FlagStreamIncomplete {
		t.Fatalf("empty aborted stream: flags %v", kinds)
	}
	if d := s.Turns[0].Flags[0].Detail; !strings.Contains(d, "sent no event") || !strings.Contains(d, "the client hung up") {
		t.Errorf("detail %q", d)
	}
	if d := s.Turns[1].Flags; len(d) == 0 || !strings.Contains(d[0].Detail, "the client hung up") {
		t.Errorf("status 0, client disconnected: %+v", d)
	}
	if c := s.Turns[0].Client; !c.ClaudeCode() || c.Version != "2.1.328" {
		t.Errorf("client %+v", c)
	}
}

// An exported exchange that did not complete says so in _error too, in
// words abortState reads back the same way.
func TestExportedErrorRoundTrip(t *testing.T) {
	for _, st := range []exchange.State{exchange.StateClientAborted, exchange.StateUpstreamFailed} {
		ex := exchange.Exchange{State: st, Error: "unexpected EOF"}
		msg := harError(&ex)
		if msg == "" || abortState(msg, "") != st {
			t.Errorf("%s: _error %q reads back as %q", st, msg, abortState(msg, ""))
		}
	}
	if msg := harError(&exchange.Exchange{State: exchange.StateComplete}); msg != "" {
		t.Errorf("complete exchange has _error %q", msg)
	}
}
