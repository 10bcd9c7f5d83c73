// Command livelag measures how soon a new turn is on screen in tsinspect's
// live views: 'open --follow' (the turn appended to the capture through
// the store, as a recorder in another process does) and 'record --ui'
// (the turn sent through its reverse proxy to an upstream of this
// program's on 127.0.0.1). Each runs in a real terminal (tmux, 200×50),
// on a copy of a generated capture (fixtures/longsession) of each size;
// the time is from the exchange's completion (the store's Update
// returning; the reply read by the client) to the header's turn count
// showing the new turn, polled every 20 ms with tmux capture-pane.
//
//	go run ./bench/livelag [-sizes 10,1000] [-reps 5] [-dir DIR]
//
// Run it from the module root; it needs tmux. Captures are kept in DIR
// (default a new temporary directory) and reused by a later run with the
// same DIR.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures/longsession"
	"github.com/tsinspect/tsinspect/internal/bench/recload"
	"github.com/tsinspect/tsinspect/store"
)

func main() {
	sizes := flag.String("sizes", "10,1000", "comma-separated capture sizes in turns")
	reps := flag.Int("reps", 5, "new turns to time per size and view")
	dir := flag.String("dir", "", "directory for captures and the binary (default: a new temporary one, removed)")
	views := flag.String("views", "follow,record", "views to time: follow (open --follow), record (record --ui)")
	flag.Parse()
	if err := run(*sizes, *views, *reps, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "livelag:", err)
		os.Exit(1)
	}
}

func run(sizeList, viewList string, reps int, dir string) error {
	if _, err := exec.LookPath("tmux"); err != nil {
		return fmt.Errorf("needs tmux: %w", err)
	}
	ctx := context.Background()
	bin, dir, base, cleanup, err := recload.Setup(ctx, dir, "livelag-")
	if err != nil {
		return err
	}
	defer cleanup()
	for _, s := range strings.Split(sizeList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-sizes: bad size %q", s)
		}
		path := filepath.Join(dir, fmt.Sprintf("base%d.db", n))
		extra, err := ensureCapture(path, n, reps, base)
		if err != nil {
			return err
		}
		for _, v := range strings.Split(viewList, ",") {
			var lat []time.Duration
			switch v {
			case "follow":
				lat, err = timeFollow(bin, dir, path, extra)
			case "record":
				lat, err = timeRecordUI(bin, dir, path, extra)
			default:
				return fmt.Errorf("-views: unknown view %q", v)
			}
			if err != nil {
				return fmt.Errorf("%s, %d turns: %w", v, n, err)
			}
			fmt.Printf("%-7s %5d turns: %s\n", v, n, summary(lat))
		}
	}
	return nil
}

func summary(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	return fmt.Sprintf("median %d ms, max %d ms (each: %s ms)", s[len(s)/2].Milliseconds(), s[len(s)-1].Milliseconds(), strings.Join(parts, ", "))
}

// splitSink writes the first n exchanges to the store and keeps the rest.
type splitSink struct {
	db    *store.DB
	n     int
	count int
	extra []*exchange.Exchange
}

func (s *splitSink) Insert(ctx context.Context, ex *exchange.Exchange) error {
	s.count++
	if s.count > s.n {
		s.extra = append(s.extra, ex)
		return nil
	}
	return s.db.Insert(ctx, ex)
}

func (s *splitSink) Update(ctx context.Context, ex *exchange.Exchange) error {
	if len(s.extra) > 0 && s.extra[len(s.extra)-1] == ex {
		return nil
	}
	return s.db.Update(ctx, ex)
}

// ensureCapture makes the capture of n turns at path (unless it is there)
// and returns the reps turns that follow them in the same session.
func ensureCapture(path string, n, reps int, base longsession.Base) ([]*exchange.Exchange, error) {
	o := longsession.Options{Turns: n + reps, Seed: 1}
	if n >= 1000 {
		o.CompactEvery = 350
	}
	tmp := path + ".new"
	_, statErr := os.Stat(path)
	target := path
	if statErr == nil {
		target = "" // there already: only the extra turns are wanted
	} else {
		target = tmp
		for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
			_ = os.Remove(p)
		}
	}
	var db *store.DB
	if target != "" {
		d, err := store.Open(target)
		if err != nil {
			return nil, err
		}
		db = d
	}
	s := &splitSink{db: db, n: n}
	if db == nil {
		s.n = 0
	}
	if _, err := longsession.Generate(context.Background(), s, base, o); err != nil {
		if db != nil {
			db.Close()
		}
		return nil, err
	}
	extra := s.extra[max(len(s.extra)-reps, 0):]
	if db == nil {
		return extra, nil
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	return extra, os.Rename(tmp, path)
}

func copyFile(from, to string) error {
	for _, p := range []string{to, to + "-wal", to + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}

// pane is a tmux session running one command.
type pane struct{ name string }

func startPane(name string, argv ...string) (*pane, error) {
	_ = exec.Command("tmux", "kill-session", "-t", name).Run()
	args := append([]string{"new-session", "-d", "-s", name, "-x", "200", "-y", "50", "--"}, argv...)
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("tmux: %w: %s", err, out)
	}
	return &pane{name: name}, nil
}

func (p *pane) text() string {
	out, err := exec.Command("tmux", "capture-pane", "-p", "-t", p.name).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

func (p *pane) close() { _ = exec.Command("tmux", "kill-session", "-t", p.name).Run() }

var turnsRE = regexp.MustCompile(`([0-9][0-9,]*) turns`)

// turns is the turn count the header shows, or -1.
func (p *pane) turns() int {
	m := turnsRE.FindStringSubmatch(p.text())
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	if err != nil {
		return -1
	}
	return n
}

// waitTurns polls every 20 ms until the header shows want turns, and
// returns when it first did.
func (p *pane) waitTurns(want int, limit time.Duration) (time.Time, error) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if p.turns() >= want {
			return time.Now(), nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("the screen did not show %d turns within %s; it shows:\n%s", want, limit, p.text())
}

func countTurns(path string) (int, error) {
	db, err := store.OpenReadOnly(path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	sums, err := db.Summaries(context.Background(), 0)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range sums {
		if s.Method == "POST" && strings.Contains(s.URL, "/v1/messages") && !strings.Contains(s.URL, "count_tokens") {
			n++
		}
	}
	return n, nil
}

// pause waits a random part of the live views' 250 ms poll, so that the
// timings sample its phase.
func pause() { time.Sleep(300*time.Millisecond + time.Duration(rand.IntN(250))*time.Millisecond) }

// prepare copies the base capture to file in dir and counts its turns.
func prepare(dir, base, file string) (string, int, error) {
	work := filepath.Join(dir, file)
	if err := copyFile(base, work); err != nil {
		return "", 0, err
	}
	n, err := countTurns(work)
	return work, n, err
}

// timeTurns waits for the view in p, started at started, to show the
// capture's n turns, then adds each exchange of extra with add and times
// how long after add returns the view shows one more turn.
func timeTurns(name string, p *pane, n int, started time.Time, extra []*exchange.Exchange, add func(ex *exchange.Exchange) error) ([]time.Duration, error) {
	shown, err := p.waitTurns(n, 60*time.Second)
	if err != nil {
		return nil, err
	}
	fmt.Printf("%-7s %5d turns: first shown %d ms after start\n", name, n, shown.Sub(started).Milliseconds())
	var lat []time.Duration
	for i, ex := range extra {
		pause()
		if err := add(ex); err != nil {
			return nil, err
		}
		t0 := time.Now()
		at, err := p.waitTurns(n+i+1, 30*time.Second)
		if err != nil {
			return nil, err
		}
		lat = append(lat, at.Sub(t0))
	}
	return lat, nil
}

func timeFollow(bin, dir, base string, extra []*exchange.Exchange) ([]time.Duration, error) {
	work, n, err := prepare(dir, base, "follow.db")
	if err != nil {
		return nil, err
	}
	started := time.Now()
	p, err := startPane("livelag-follow", bin, "open", "--follow", work)
	if err != nil {
		return nil, err
	}
	defer p.close()
	var db *store.DB // opened once the view has loaded the capture
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	ctx := context.Background()
	return timeTurns("follow", p, n, started, extra, func(ex *exchange.Exchange) error {
		if db == nil {
			if db, err = store.Open(work); err != nil {
				return err
			}
		}
		c := *ex
		c.ID = 0
		done := c
		c.State, c.RespBody, c.RespHeaders, c.Chunks, c.Status = exchange.StateInFlight, nil, nil, nil, 0
		if err := db.Insert(ctx, &c); err != nil {
			return err
		}
		done.ID = c.ID
		return db.Update(ctx, &done)
	})
}

// reply answers every POST with the current exchange's response.
type reply struct {
	ex atomic.Pointer[exchange.Exchange]
}

func (r *reply) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(r.ex.Load().RespBody)
}

func timeRecordUI(bin, dir, base string, extra []*exchange.Exchange) ([]time.Duration, error) {
	work, n, err := prepare(dir, base, "record.db")
	if err != nil {
		return nil, err
	}
	up := &reply{}
	upLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: up, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(upLn) }()
	defer srv.Close()
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := pl.Addr().String()
	pl.Close()
	started := time.Now()
	p, err := startPane("livelag-record", bin, "record", "--ui", "--mode", "reverse", "--listen", addr,
		"--upstream", "http://"+upLn.Addr().String(), "--db", work)
	if err != nil {
		return nil, err
	}
	defer p.close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	return timeTurns("record", p, n, started, extra, func(ex *exchange.Exchange) error {
		up.ex.Store(ex)
		req, err := http.NewRequest("POST", "http://"+addr+"/v1/messages?beta=true", bytes.NewReader(ex.ReqBody))
		if err != nil {
			return err
		}
		for _, h := range ex.ReqHeaders {
			switch strings.ToLower(h.Name) {
			case "content-length", "host", "connection", "accept-encoding", "transfer-encoding":
				continue
			}
			req.Header.Add(h.Name, h.Value)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return err
	})
}
