package memlimit

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimit(t *testing.T) {
	for _, c := range []struct {
		floor int64
		live  uint64
		want  int64
	}{
		{128 << 20, 0, 128 << 20},
		{128 << 20, 60 << 20, 128 << 20},
		{128 << 20, 64 << 20, 128 << 20},
		{128 << 20, 65 << 20, 144 << 20},
		{128 << 20, 300 << 20, 608 << 20},
		{128 << 20, math.MaxUint64, math.MaxInt64},
	} {
		if got := Limit(c.floor, c.live); got != c.want {
			t.Errorf("Limit(%d MiB, %d MiB) = %d MiB, want %d MiB", c.floor>>20, c.live>>20, got>>20, c.want>>20)
		}
	}
}

// TestStartFollowsTheLiveHeap holds more live data than half the floor and
// checks that the limit rises with it, then that stop restores the limit
// that was there before.
func TestStartFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	const floor = 8 << 20
	stop := Start(floor)
	if got := debug.SetMemoryLimit(-1); got != floor {
		t.Errorf("limit %d after Start, want the floor %d", got, floor)
	}
	held := make([][]byte, 0, 40)
	for i := 0; i < 40; i++ {
		held = append(held, make([]byte, 1<<20))
	}
	// Until the adjusting sees the live heap: go test's -timeout bounds a
	// limit that never rises.
	for debug.SetMemoryLimit(-1) < 2*40<<20 {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	runtime.KeepAlive(held)
	stop()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit %d after stop, want %d as before", got, before)
	}
}

func TestStartLeavesGOMEMLIMIT(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1GiB")
	before := debug.SetMemoryLimit(-1)
	stop := Start(8 << 20)
	defer stop()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit changed to %d with GOMEMLIMIT set", got)
	}
}

// gcPercent reads the collector's percentage.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestStartRaisesTheCollectorsPercentage checks that Start sets GCPercent
// and stop restores what was there, and that a GOGC the user set stands.
func TestStartRaisesTheCollectorsPercentage(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	before := debug.SetGCPercent(150)
	defer debug.SetGCPercent(before)
	stop := Start(DefaultFloor)
	if got := gcPercent(); got != GCPercent {
		t.Errorf("percentage %d after Start, want %d", got, GCPercent)
	}
	stop()
	if got := gcPercent(); got != 150 {
		t.Errorf("percentage %d after stop, want 150 as before", got)
	}
	t.Setenv("GOGC", "150")
	stop = Start(DefaultFloor)
	if got := gcPercent(); got != 150 {
		t.Errorf("percentage %d after Start under GOGC=150, want it left alone", got)
	}
	stop()
}

// TestStopEndsTheAdjusting checks that collections after stop leave the
// limit alone: the finalizer that follows them stops re-arming.
func TestStopEndsTheAdjusting(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	stop := Start(8 << 20)
	runtime.GC() // the adjusting has run at least once before stop
	stop()
	const mine = 1 << 40
	debug.SetMemoryLimit(mine)
	held := make([][]byte, 0, 40)
	for i := 0; i < 40; i++ {
		held = append(held, make([]byte, 1<<20))
	}
	for i := 0; i < 5; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizers' turn
	}
	runtime.KeepAlive(held)
	if got := debug.SetMemoryLimit(-1); got != mine {
		t.Errorf("limit %d after collections that followed stop, want %d left alone", got, int64(mine))
	}
}
