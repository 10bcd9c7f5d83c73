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
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// DefaultFloor is the limit while the live heap is small.
const DefaultFloor = 128 << 20

// GCPercent is the collector's percentage while the limit is kept: a heap
// may grow to five times what is live, the limit permitting.
const GCPercent = 400

// liveMetric is the heap the last collection found live.
const liveMetric = "/gc/heap/live:bytes"

// Start sets a soft memory limit of floor bytes and, every interval,
// raises or lowers it to twice the live heap when that is above floor; it
// sets the collector's percentage to GCPercent unless the GOGC environment
// variable is set. It does nothing when the GOMEMLIMIT environment variable
// is set: the user's limit stands. stop ends the adjusting and restores
// the limit and the percentage.
func Start(floor int64, interval time.Duration) (stop func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	old := debug.SetMemoryLimit(floor)
	oldPercent := -2 // left alone
	if os.Getenv("GOGC") == "" {
		oldPercent = debug.SetGCPercent(GCPercent)
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		sample := []metrics.Sample{{Name: liveMetric}}
		limit := floor
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				continue
			}
			if want := Limit(floor, sample[0].Value.Uint64()); want != limit {
				limit = want
				debug.SetMemoryLimit(limit)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		debug.SetMemoryLimit(old)
		if oldPercent != -2 {
			debug.SetGCPercent(oldPercent)
		}
	}
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
