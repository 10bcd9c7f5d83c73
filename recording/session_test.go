package recording

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/capture"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/store"
)

// TestSession records one exchange through a reverse-mode session: the
// hook hears its writes, Stop leaves it complete in the capture with the
// metadata, and a second session on the same address or capture is
// refused with the error its caller tells apart.
func TestSession(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"type":"message","id":"msg_1"}`)
	}))
	defer up.Close()
	db := filepath.Join(t.TempDir(), "s.db")
	var said []string
	rs, err := Open(Options{DB: db, Mode: capture.ModeReverse, Listen: "127.0.0.1:0", Upstream: up.URL, Version: "test",
		Say: func(l string) { said = append(said, l) }})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var states []exchange.State
	if err := rs.Serve(Hooks{OnWrite: func(ex *exchange.Exchange) {
		mu.Lock()
		states = append(states, ex.State)
		mu.Unlock()
	}}, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
		t.Fatal(err)
	}

	// The address and the capture are this session's.
	if _, err := Open(Options{DB: filepath.Join(t.TempDir(), "other.db"), Mode: capture.ModeReverse, Listen: rs.Addr()}); !errors.As(err, new(*ListenError)) {
		t.Errorf("a second session on %s: %v, want a ListenError", rs.Addr(), err)
	}
	if _, err := Open(Options{DB: db, Mode: capture.ModeReverse, Listen: "127.0.0.1:0"}); !errors.As(err, new(*CaptureError)) {
		t.Errorf("a second session on the capture: %v, want a CaptureError", err)
	}

	resp, err := http.Post("http://"+rs.Addr()+"/v1/messages", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	st, unfinished := rs.Stop(5 * time.Second)
	if st.Exchanges != 1 || st.Complete != 1 || unfinished {
		t.Fatalf("stats %+v, unfinished %v", st, unfinished)
	}
	mu.Lock()
	if len(states) == 0 || states[len(states)-1] != exchange.StateComplete {
		t.Errorf("hook heard %v", states)
	}
	mu.Unlock()
	r, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sums, err := r.Summaries(context.Background(), 0)
	if err != nil || len(sums) != 1 || sums[0].State != exchange.StateComplete {
		t.Fatalf("capture: %+v %v", sums, err)
	}
	for _, k := range []string{"recorder", "mode", "started_at", "listen", "ended_at"} {
		if v, err := r.Meta(context.Background(), k); err != nil || v == "" {
			t.Errorf("meta %s = %q (%v)", k, v, err)
		}
	}
	if len(said) != 0 {
		t.Errorf("a fresh capture said %q", said)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:secret@gw.example/v1": "https://user:xxxxx@gw.example/v1",
		"http://127.0.0.1:8642":             "http://127.0.0.1:8642",
		"::bad@host:1":                      "host:1",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
