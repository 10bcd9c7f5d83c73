// Package memlimit keeps a Go program's memory close to what it holds.
//
// The collector lets the heap grow to twice what is live before it
// collects, and freed pages go back to the system only slowly: reading a
// long capture, which rebuilds and drops a body of a megabyte or more per
// turn, peaked at 150–200 MB of resident memory for 60 MB of live data,
// more when other work competed for the CPU. A soft memory limit makes the
// collector and the scavenger keep the total near the limit. A fixed limit
// would make the collector run without end for a session whose live data
// outgrows it, so the limit follows the live heap: the larger of a floor
// and twice the live heap, which is where the collector would let the heap
// grow anyway.
//
// Under that limit the collector need not run each time a small live heap
// doubles: reading many short sessions one after another, it spent an eighth
// of the CPU collecting a heap of a few MB. The collector's percentage is
// raised (GCPercent), so that a small heap grows toward the limit before it
// is collected, and a large one is held to the limit as before.
package memlimit

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DefaultFloor is the limit while the live heap is small.
const DefaultFloor = 128 << 20

// GCPercent is the collector's percentage while the limit is kept: a heap
// may grow to five times what is live, the limit permitting.
const GCPercent = 400

// liveMetric is the heap the last collection found live.
const liveMetric = "/gc/heap/live:bytes"

// Start sets a soft memory limit of floor bytes and, after every
// collection, raises or lowers it to twice the live heap the collection
// found, when that is above floor; it sets the collector's percentage to
// GCPercent unless the GOGC environment variable is set. It does nothing
// when the GOMEMLIMIT environment variable is set: the user's limit
// stands. stop ends the adjusting and restores the limit and the
// percentage.
//
// The limit follows each collection as it ends (a finalizer the collector
// runs once per cycle), not a clock: polled every 100 ms it lagged a heap
// growing by tens of MB a second, and a collection that freed nothing came
// right after one that had raised the live heap; and an idle program is
// not woken to poll.
func Start(floor int64) (stop func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	old := debug.SetMemoryLimit(floor)
	oldPercent := -2 // left alone
	if os.Getenv("GOGC") == "" {
		oldPercent = debug.SetGCPercent(GCPercent)
	}
	a := &adjuster{floor: floor, limit: floor, sample: []metrics.Sample{{Name: liveMetric}}}
	a.arm()
	return func() {
		a.mu.Lock()
		a.stopped = true
		a.mu.Unlock()
		debug.SetMemoryLimit(old)
		if oldPercent != -2 {
			debug.SetGCPercent(oldPercent)
		}
	}
}

// adjuster keeps the limit of one Start.
type adjuster struct {
	floor int64

	mu      sync.Mutex
	stopped bool
	limit   int64
	sample  []metrics.Sample
}

// cycle is garbage made to be found by the next collection, whose
// finalizer then adjusts the limit. It holds a pointer so that it is not
// made by the tiny allocator, whose objects' finalizers need not run.
type cycle struct{ a *adjuster }

// arm makes the next collection adjust the limit.
func (a *adjuster) arm() {
	runtime.SetFinalizer(&cycle{a: a}, func(c *cycle) {
		if c.a.adjust() {
			c.a.arm()
		}
	})
}

// adjust sets the limit for the live heap the last collection found; it
// reports false once stop has been called.
func (a *adjuster) adjust() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return false
	}
	metrics.Read(a.sample)
	if a.sample[0].Value.Kind() != metrics.KindUint64 {
		return true
	}
	if want := Limit(a.floor, a.sample[0].Value.Uint64()); want != a.limit {
		a.limit = want
		debug.SetMemoryLimit(want)
	}
	return true
}

// Limit is the limit for a live heap of live bytes: floor, or twice the
// live heap rounded up to 16 MiB when that is more (rounded so that a heap
// that barely moves does not move the limit).
func Limit(floor int64, live uint64) int64 {
	const step = 16 << 20
	if live > math.MaxInt64/4 {
		return math.MaxInt64
	}
	want := (2*int64(live) + step - 1) / step * step
	return max(floor, want)
}
