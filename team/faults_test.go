package team

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tsinspect/tsinspect/pricing"
)

// TestPushCutAndResumed cuts a push off after some sessions: what it
// stored stays, and the next push sends only the rest.
func TestPushCutAndResumed(t *testing.T) {
	c := startCluster(t)
	url := c.NewDB("resumed")
	root := copySessions(t, "cy")
	ctx, cancel := context.WithCancel(context.Background())
	const cut = 5
	stored := 0
	_, err := Push(ctx, PushOptions{URL: url, Person: "cy", Machine: "m", Roots: []string{root}, Prices: pricing.Default(),
		Progress: func(done, total int) {
			stored = done
			if done == cut {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("push cut off: %v, want it cancelled", err)
	}
	if n := count(t, url, `SELECT count(*) FROM sessions`); n != cut || stored != cut {
		t.Fatalf("%d sessions stored by a push cut after %d (%d said)", n, cut, stored)
	}
	st := push(t, url, "cy", "m", root)
	if st.Unchanged != cut || st.Pushed != st.Sessions-cut {
		t.Fatalf("resumed push: %+v, want %d unchanged and the rest pushed", st, cut)
	}
	if n := count(t, url, `SELECT count(*) FROM sessions`); n != st.Sessions {
		t.Fatalf("%d sessions stored, want %d", n, st.Sessions)
	}
	if n, want := count(t, url, `SELECT count(*) FROM turns`), count(t, url, `SELECT sum(json_array_length(summary->'usage')) FROM sessions`); n != want {
		t.Fatalf("%d turn rows, the sessions have %d answers", n, want)
	}
}

// syncBuffer is a log written by a Push while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls until cond holds.
func waitFor(cond func() bool) {
	for !cond() {
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFollowServerRestarted stops the server while a push follows the
// sessions, adds a session, and starts the server again: the push waits
// it out, says so, and sends the new session.
func TestFollowServerRestarted(t *testing.T) {
	c := startCluster(t)
	url := c.NewDB("follow")
	root := copySessions(t, "di", "17-v2.1.101-toolsearch-deferred-delta", "22-v2.1.205-toolsearch-fable")
	ctx, cancel := context.WithCancel(context.Background())
	log := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		_, err := Push(ctx, PushOptions{URL: url, Person: "di", Machine: "m", Roots: []string{root}, Prices: pricing.Default(),
			Follow: true, Interval: 100 * time.Millisecond, Log: log})
		done <- err
	}()
	sessions := func() int {
		// Before the push made the schema, and while the server is down: -1.
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			return -1
		}
		defer conn.Close(context.Background())
		var n int
		if conn.QueryRow(context.Background(), `SELECT count(*) FROM sessions`).Scan(&n) != nil {
			return -1
		}
		return n
	}
	waitFor(func() bool { return sessions() == 2 })
	c.Stop()
	waitFor(func() bool { return strings.Contains(log.String(), "trying again") })
	more := copySessions(t, "di", "27-v2.1.205-toolsearch-keyword-query")
	dirs, _ := filepath.Glob(filepath.Join(more, "*"))
	if err := os.Rename(dirs[0], filepath.Join(root, filepath.Base(dirs[0]))); err != nil {
		t.Fatal(err)
	}
	c.Start()
	waitFor(func() bool { return sessions() == 3 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("follow ended with %v", err)
	}
	if l := log.String(); strings.Contains(l, superPassword) || !strings.Contains(l, "trying again") {
		t.Fatalf("the follow's log says %q: want the lost server said, without the password", l)
	}
}

// TestReaderMayOnlyRead reads the store as a role that may only read, and
// pushes as it: the push is refused with a hint.
func TestReaderMayOnlyRead(t *testing.T) {
	c := startCluster(t)
	url := c.NewDB("readonly")
	root := copySessions(t, "ed", "17-v2.1.101-toolsearch-deferred-delta", "22-v2.1.205-toolsearch-fable")
	push(t, url, "ed", "m", root)
	c.Exec("readonly", "CREATE ROLE reader LOGIN PASSWORD 'reader-pw'", "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
	rurl := c.URL("reader", "reader-pw", "readonly")
	s, err := Open(context.Background(), rurl)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sums, err := s.Summaries(context.Background(), Filter{})
	if err != nil || len(sums) != 2 {
		t.Fatalf("the reader read %d sessions, %v", len(sums), err)
	}
	facts, err := s.Facts(context.Background(), Filter{Person: "ed"})
	if err != nil || len(facts) != 2 {
		t.Fatalf("the reader read %d facts, %v", len(facts), err)
	}
	_, err = Push(context.Background(), PushOptions{URL: rurl, Person: "ed", Machine: "other", Roots: []string{root}, Prices: pricing.Default()})
	if err == nil || !strings.Contains(err.Error(), "a reader may only read") || strings.Contains(err.Error(), "reader-pw") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a reader's push: %v; want one line saying it may only read, without the password", err)
	}
	if n := count(t, url, `SELECT count(*) FROM sessions`); n != 2 {
		t.Fatalf("%d sessions after the reader's push, want 2", n)
	}
}

// TestBadURLsAndLogins: each is one line saying what is wrong and what to
// do, never the password.
func TestBadURLsAndLogins(t *testing.T) {
	c := startCluster(t)
	c.NewDB("logins")
	closed := freePort(t)
	cases := []struct{ url, want string }{
		{"mysql://u:hunter22@127.0.0.1/db", "want postgres://"},
		{"postgres://u:hunter22@127.0.0.1:5432", "names no database"},
		{"postgres://u:hunter22@127.0.0.1:99999/db", "want postgres://"},
		{"postgres://u:hunter22@127.0.0.1:5432/db?sslmode=bogus", "want postgres://"},
		{"::not a url hunter22", "does not parse"},
		{c.URL("postgres", "hunter22", "logins"), "login was refused"},
		{c.URL("nobody", "hunter22", "logins"), "login was refused"},
		{c.URL("postgres", superPassword, "nosuchdb"), "no such database"},
		{fmt.Sprintf("postgres://u:hunter22@127.0.0.1:%d/db?sslmode=disable", closed), "cannot reach the store"},
	}
	for _, tc := range cases {
		_, perr := Push(context.Background(), PushOptions{URL: tc.url, Person: "p", Machine: "m", Roots: []string{t.TempDir()}, Prices: pricing.Default()})
		_, oerr := Open(context.Background(), tc.url)
		for _, err := range []error{perr, oerr} {
			if err == nil {
				t.Errorf("%s: no error", tc.url)
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || strings.Contains(msg, "hunter22") || strings.Contains(msg, superPassword) || strings.Contains(msg, "\n") {
				t.Errorf("%s: %q: want one line saying %q, without the password", tc.url, msg, tc.want)
			}
		}
	}
	_, err := Push(context.Background(), PushOptions{URL: c.URL("postgres", superPassword, "logins"), Person: " ", Machine: "m", Roots: []string{t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), "--person") {
		t.Errorf("an empty person: %v", err)
	}
}
