package testwait

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	Until(t, time.Millisecond, "n never reached 3", func() bool { n++; return n >= 3 })
	if n != 3 {
		t.Fatalf("cond called %d times, want 3", n)
	}
}

func TestContextEndsWithTheTest(t *testing.T) {
	var ctx context.Context
	t.Run("inner", func(t *testing.T) {
		ctx = Context(t)
		if dl, ok := ctx.Deadline(); !ok || time.Until(dl) < Patience-time.Minute {
			t.Fatalf("deadline %v, %v: want about %v from now", dl, ok, Patience)
		}
		if ctx.Err() != nil {
			t.Fatalf("ended early: %v", ctx.Err())
		}
	})
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("after the test: %v, want canceled", ctx.Err())
	}
}
