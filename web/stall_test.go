package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/web"
)

// stalled is a client that takes what it is sent only when told to: its
// first Write blocks until release is closed.
type stalled struct {
	h       http.Header
	writing chan struct{}
	release chan struct{}
	once    sync.Once
	n       int
}

func (w *stalled) Header() http.Header { return w.h }
func (w *stalled) WriteHeader(int)     {}
func (w *stalled) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.writing) })
	<-w.release
	w.n += len(b)
	return len(b), nil
}

// Issue 42, item 5: one client that stopped reading blocked a session's
// page for everyone (the session's lock was held while writing). With a
// client stuck in the middle of each answer a page reads of a session,
// other clients are answered about the same session all the same.
func TestStalledClientStallsNoOne(t *testing.T) {
	dir, capture := fixture(t)
	s := serve(t, web.Options{Roots: []string{dir}, Files: []string{capture}, Policy: redact.Off})
	host := strings.TrimPrefix(s.url, "http://")
	for _, path := range []string{"/api/s/demo.db/turns", "/api/s/demo.db/turn/1/raw", "/api/s/demo.db/turn/2/flags"} {
		w := &stalled{h: http.Header{}, writing: make(chan struct{}), release: make(chan struct{})}
		done := make(chan struct{})
		go func() {
			defer close(done)
			req := httptest.NewRequest("GET", path, nil)
			req.Host = host
			s.srv.Handler().ServeHTTP(w, req)
		}()
		<-w.writing
		// The stalled client is in the middle of its answer: the others
		// are answered (before the fix, this waited for ever).
		for _, other := range []string{"/api/s/demo.db/turns", "/api/s/demo.db/turn/1/cache", "/s/demo.db"} {
			if code, body, _ := get(t, s, "GET", other, ""); code != http.StatusOK {
				t.Errorf("while %s stalls, %s: %d %.200s", path, other, code, body)
			}
		}
		close(w.release)
		<-done
		if w.n == 0 {
			t.Errorf("%s: the stalled client got nothing once it read", path)
		}
	}
}
