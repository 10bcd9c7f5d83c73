package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

// failureLog prints a line per recording failure as it happens: an
// exchange whose upstream failed or that the API answered with an
// overload, rate-limit or server error, and a tunnel to another host that
// could not be opened. At most burst lines are printed per window; the
// rest are counted, and the next line printed says how many were left out.
type failureLog struct {
	mu     sync.Mutex
	w      io.Writer
	now    func() time.Time
	window time.Duration
	burst  int

	start   time.Time // of the current window
	printed int       // lines printed in it
	skipped int       // failures not printed since the last line
}

func newFailureLog(w io.Writer) *failureLog {
	return &failureLog{w: w, now: time.Now, window: 10 * time.Second, burst: 5}
}

// failed reports whether ex is a failure worth a line.
func failed(ex *exchange.Exchange) bool {
	switch {
	case ex.State == exchange.StateUpstreamFailed:
		return true
	case ex.State == exchange.StateInFlight:
		return false
	}
	return ex.Status == 429 || ex.Status >= 500
}

// exchange prints a line for ex if it failed.
func (l *failureLog) exchange(ex *exchange.Exchange) {
	if failed(ex) {
		l.printf("failed: %s", flowLine(ex))
	}
}

// tunnel prints a line for a tunnel that could not be opened.
func (l *failureLog) tunnel(hostport string, err error) {
	l.printf("failed: tunnel to %s (not recorded): %v", hostport, unwrapOp(err))
}

func (l *failureLog) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.start) >= l.window {
		l.start, l.printed = now, 0
	}
	if l.printed >= l.burst {
		l.skipped++
		return
	}
	l.printed++
	line := "tsinspect: " + fmt.Sprintf(format, args...)
	if l.skipped > 0 {
		line += fmt.Sprintf(" (and %d more failures not shown)", l.skipped)
		l.skipped = 0
	}
	fmt.Fprintln(l.w, line)
}
