// Package testwait is the tests' one patience for what must happen: a
// server to stop, a key to end the interface, an exporter to deliver, a
// row to arrive. A test that waits only a few seconds fails when the
// machine is loaded (two cores running the fuzzers, the browser and
// PostgreSQL beside it), and says nothing true about the code when it
// does; a test waits Patience, which a working program never comes near
// and a hung one reaches well before go test's -timeout.
//
// What a test asserts about speed belongs in a benchmark, not here.
package testwait

import (
	"context"
	"testing"
	"time"
)

// Patience is how long a test waits for something that must happen
// before it fails.
const Patience = 2 * time.Minute

// Context is a context that ends after Patience, or when the test ends.
func Context(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Patience)
	tb.Cleanup(cancel)
	return ctx
}

// Until calls cond every step until it reports true; the test fails with
// what (what did not happen) if Patience passes first.
func Until(tb testing.TB, step time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(Patience)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("%s (waited %v)", what, Patience)
		}
		time.Sleep(step)
	}
}
