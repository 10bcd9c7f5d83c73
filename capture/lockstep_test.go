package capture

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/internal/testwait"
)

// patience bounds a wait for something bound to happen: long enough that
// only a broken machine reaches it, so that a loaded one never fails a
// test. No test here asserts how fast anything is; bench_test.go measures
// that.
const patience = testwait.Patience

// lockstep is an upstream that streams sseEvents one at a time: it writes
// an event only once the client has said it received the one before
// (next), so a proxy that held the stream back would leave the client
// without it. After patience without word it writes the rest at once,
// counting the wait in heldBack, so that such a proxy still ends.
type lockstep struct {
	next chan struct{}

	mu       sync.Mutex
	written  []time.Time // when each event was handed to the connection
	heldBack int
}

func newLockstep() *lockstep {
	return &lockstep{next: make(chan struct{}, len(sseEvents))}
}

func (l *lockstep) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	waiting := true
	for i, e := range sseEvents {
		if i > 0 && waiting {
			select {
			case <-l.next:
			case <-r.Context().Done():
				return
			case <-time.After(patience):
				waiting = false
				l.mu.Lock()
				l.heldBack++
				l.mu.Unlock()
			}
		}
		l.mu.Lock()
		l.written = append(l.written, time.Now())
		l.mu.Unlock()
		io.WriteString(w, e)
		w.(http.Flusher).Flush()
	}
}

// times returns when each event was written and how many waits for the
// client ran out.
func (l *lockstep) times() ([]time.Time, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.written...), l.heldBack
}

// readLockstep reads the SSE events of body one at a time, checks each is
// the next of sseEvents, tells l to send the next one, and returns when
// each was received.
func readLockstep(t *testing.T, body io.Reader, l *lockstep) []time.Time {
	t.Helper()
	br := bufio.NewReader(body)
	var got []time.Time
	var ev strings.Builder
	for {
		line, err := br.ReadString('\n')
		ev.WriteString(line)
		if line == "\n" {
			if n := len(got); n >= len(sseEvents) || ev.String() != sseEvents[n] {
				t.Fatalf("event %d: got %q", n, ev.String())
			}
			got = append(got, time.Now())
			ev.Reset()
			l.next <- struct{}{}
		}
		if err != nil {
			if err != io.EOF {
				t.Fatalf("after %d events: %v", len(got), err)
			}
			if ev.Len() > 0 || len(got) != len(sseEvents) {
				t.Fatalf("%d events and %q left over; want %d events", len(got), ev.String(), len(sseEvents))
			}
			return got
		}
	}
}
