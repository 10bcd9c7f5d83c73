package source

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures/democapture"
	"github.com/tsinspect/tsinspect/store"
)

// TestReadAndFollow: a capture read whole gives the session, and its
// turns' bodies come back through the open source; a follower of a file
// that does not exist yet waits, then sees what is written into it.
func TestReadAndFollow(t *testing.T) {
	dir := t.TempDir()
	demo := filepath.Join(dir, "demo.db")
	if err := os.WriteFile(demo, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := OpenCapture(demo)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b, problems, err := Read(ctx, c)
	if err != nil || len(problems) != 0 {
		t.Fatalf("read: %v %v", err, problems)
	}
	s := b.Session()
	if len(s.Turns) != 7 {
		t.Fatalf("%d turns, want the demo's 7", len(s.Turns))
	}
	ex, err := s.Turns[0].Load()
	if err != nil || len(ex.ReqBody) == 0 {
		t.Fatalf("turn 1's bodies through the source: %v (%d bytes)", err, len(ex.ReqBody))
	}
	if Summary(nil) != "" || Summary([]Problem{{ID: 3, Problem: "bad"}}) == "" {
		t.Error("summary")
	}

	path := filepath.Join(dir, "live.db")
	f := Follow(path)
	defer f.Close()
	if s, err := f.Poll(ctx); s != nil || err != nil || f.Opened() {
		t.Fatalf("before the file exists: %v %v %v", s, err, f.Opened())
	}
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := c.Stream(ctx, func(ex *exchange.Exchange) error {
		cp := *ex
		cp.ID = 0
		return db.Insert(ctx, &cp)
	}); err != nil {
		t.Fatal(err)
	}
	got, err := f.Poll(ctx)
	if err != nil || got == nil || len(got.Turns) != 7 || !f.Opened() || f.Status() != "" {
		t.Fatalf("after the writes: %v, %v", got, err)
	}
	if again, err := f.Poll(ctx); again != nil || err != nil {
		t.Errorf("nothing changed, yet poll gave %v %v", again, err)
	}
}
