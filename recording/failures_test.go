package recording

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

func TestFailureLog(t *testing.T) {
	var out strings.Builder
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l := NewFailureLog(&out)
	l.now = func() time.Time { return now }
	down := &exchange.Exchange{Method: "POST", URL: "https://api.anthropic.com/v1/messages", Start: now, End: now.Add(time.Millisecond),
		State: exchange.StateUpstreamFailed, Status: 502, Error: "dial tcp 127.0.0.1:9: connect: connection refused"}
	ok := &exchange.Exchange{Method: "POST", URL: "https://api.anthropic.com/v1/messages", Start: now, End: now, State: exchange.StateComplete, Status: 200}
	overloaded := &exchange.Exchange{Method: "POST", URL: "https://api.anthropic.com/v1/messages", Start: now, End: now, State: exchange.StateComplete, Status: 529}
	l.Exchange(ok)
	for i := 0; i < 7; i++ {
		l.Exchange(down)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 || !strings.Contains(lines[0], "failed: ") || !strings.Contains(lines[0], "upstream_failed: dial tcp") {
		t.Fatalf("7 failures in a window printed:\n%s", out.String())
	}
	now = now.Add(11 * time.Second)
	l.Exchange(overloaded)
	l.Tunnel("statsig.example:443", errors.New("connection refused"))
	lines = strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 7 || !strings.Contains(lines[5], "529") || !strings.HasSuffix(lines[5], "(and 2 more failures not shown)") {
		t.Errorf("after the window:\n%s", out.String())
	}
	if !strings.Contains(lines[6], "failed: tunnel to statsig.example:443 (not recorded): connection refused") {
		t.Errorf("tunnel line %q", lines[6])
	}
}
