package web

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/redact"
)

// At most maxOpen sessions stay read; the one used longest ago goes first,
// never one a request is using.
func TestOpenSessionsBounded(t *testing.T) {
	o := &openSessions{ctx: context.Background(), policy: redact.Default, budget: DefaultBudget, m: map[string]*opened{}}
	held, release, err := o.get("held", "/nonexistent/held.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 * maxOpen {
		s, done, err := o.get(fmt.Sprint(i), fmt.Sprintf("/nonexistent/%d.jsonl", i))
		if err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		s.refresh(context.Background(), redact.Default)
		s.mu.Unlock()
		done()
		if len(o.m) > maxOpen {
			t.Fatalf("%d sessions open, want at most %d", len(o.m), maxOpen)
		}
		if o.m["held"] != held {
			t.Fatalf("the session in use was let go after %d others", i+1)
		}
	}
	release()
	if _, ok := o.m[fmt.Sprint(2*maxOpen-1)]; !ok {
		t.Error("the session used last was let go")
	}
	o.closeAll()
	if len(o.m) != 0 {
		t.Errorf("%d sessions left after closeAll", len(o.m))
	}
}

// A session whose files grew past the budget since the listing read them
// is refused when a page opens it, in one line saying how to raise it.
func TestOpenSessionOverBudget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(path, make([]byte, 3*MB/2), 0o600); err != nil {
		t.Fatal(err)
	}
	o := &openSessions{ctx: context.Background(), policy: redact.Default, budget: MB, m: map[string]*opened{}}
	_, _, err := o.get("big", path)
	if !errors.Is(err, errOverBudget) || !strings.Contains(err.Error(), "1.5 MB, more than the 1.0 MB") || !strings.Contains(err.Error(), "--budget 2 (megabytes)") {
		t.Errorf("get = %v; want it refused, saying how to raise the budget", err)
	}
	if len(o.m) != 0 {
		t.Error("the refused session is held")
	}
}

// Issue 42, item 4: Ctrl-C waited for a session's read to end (35 s on
// 320 MB). Stopping lets go of every session without waiting for one a
// request is reading.
func TestCloseAllDoesNotWaitForAReader(t *testing.T) {
	o := &openSessions{ctx: context.Background(), policy: redact.Default, budget: DefaultBudget, m: map[string]*opened{}}
	s, release, err := o.get("busy", "/nonexistent/busy.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock() // a request reading it
	o.closeAll()
	if len(o.m) != 0 {
		t.Errorf("%d sessions left after closeAll", len(o.m))
	}
	s.mu.Unlock()
	release()
}
