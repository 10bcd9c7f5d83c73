package web

import (
	"context"
	"fmt"
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
