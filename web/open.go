package web

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// maxOpen bounds the sessions kept read at once, however small: the one
// used longest ago, and watched by no page, is let go first. What they
// hold together is bounded by the server's budget (Options.Budget).
const maxOpen = 4

// DefaultBudget is Options.Budget's default: the bytes of session files
// the server holds read at once (512 MB). A session in memory takes some
// six times its files' size (a 1,000-turn session some 150 MB), so about
// 3 GB.
const DefaultBudget = 512 * MB

// MB is the unit of serve's --budget, as numfmt writes sizes.
const MB = 1000 * 1000

// errOverBudget is wrapped by the refusals of openSessions.get.
var errOverBudget = errors.New("over the server's budget")

// idle is how long a session no page watches stays read.
const idle = 5 * time.Minute

// opened is a session being shown: followed as it is written (source.
// Follow, as 'open --follow' does), polled when a page asks and at most
// every poll.
type opened struct {
	key, path string
	poll      time.Duration

	// mu guards everything below, and the reading of a turn's bodies
	// (the follower's source is not safe for concurrent use).
	mu       sync.Mutex
	f        source.Following
	s        *timeline.Session
	gen      uint64 // counts the sessions f gave
	polled   time.Time
	err      error
	status   string
	used     time.Time
	red      *redactor // the redacted view's
	redFull  bool      // red knows the private values of a session with turns
	deferral view.Deferral
	// turnsJSON caches the turn list of generation turnsGen, shown
	// everything [0] and redacted [1].
	turnsJSON [2][]byte
	turnsGen  [2]uint64

	// first starts the first reading in the background (firstRead);
	// firstDone is closed when it is done.
	first     sync.Once
	firstDone chan struct{}

	// size is the bytes of its files when it was opened: what it counts
	// against the budget.
	size int64

	// users counts the requests using the session (a page's live updates
	// for as long as it is open): one in use is never let go. Guarded by
	// openSessions.mu.
	users int
}

// openSessions holds the sessions being shown.
type openSessions struct {
	ctx    context.Context // the server's: the followers read with it
	policy redact.Policy
	// budget bounds the bytes of the files of the sessions held, watched
	// by a page or not.
	budget int64
	mu     sync.Mutex
	m      map[string]*opened
}

// held is the bytes of the files of the sessions held (o.mu held).
func (o *openSessions) held() int64 {
	var n int64
	for _, c := range o.m {
		n += c.size
	}
	return n
}

// leastUsed is the session used longest ago that no request uses, or nil
// (o.mu held).
func (o *openSessions) leastUsed() *opened {
	var oldest *opened
	var oldestUsed time.Time
	for _, c := range o.m {
		if c.users > 0 {
			continue
		}
		c.mu.Lock()
		used := c.used
		c.mu.Unlock()
		if oldest == nil || used.Before(oldestUsed) {
			oldest, oldestUsed = c, used
		}
	}
	return oldest
}

// get returns the session at path, opening it, for the caller to use
// until it calls release. To open one it lets go the sessions used
// longest ago that no page watches, as long as too many are held or
// their files and the new one's are more than the budget; a session
// larger than the budget, or one that does not fit beside those pages
// watch, is refused with one line saying why and how to raise the budget.
func (o *openSessions) get(key, path string) (s *opened, release func(), err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.m[key]
	if !ok || s.path != path {
		size := filesSize(path)
		if size > o.budget {
			return nil, nil, fmt.Errorf("%w: this session's files are %s, more than the %s of sessions it holds at once; start tsinspect serve with --budget %s (megabytes) or more to open it",
				errOverBudget, numfmt.Bytes(size), numfmt.Bytes(o.budget), budgetHint(size))
		}
		for len(o.m) >= maxOpen || o.held()+size > o.budget {
			oldest := o.leastUsed()
			if oldest == nil {
				break
			}
			o.close(oldest)
		}
		if held := o.held(); held+size > o.budget {
			return nil, nil, fmt.Errorf("%w: the sessions open pages watch hold %s of its %s, and this one is %s; close a page, or start tsinspect serve with --budget %s (megabytes) or more",
				errOverBudget, numfmt.Bytes(held), numfmt.Bytes(o.budget), numfmt.Bytes(size), budgetHint(held+size))
		}
		s = &opened{key: key, path: path, size: size, poll: source.KindOf(path).Poll, used: time.Now()}
		if s.poll <= 0 {
			s.poll = 250 * time.Millisecond
		}
		o.m[key] = s
	}
	s.users++
	return s, func() {
		o.mu.Lock()
		s.users--
		o.mu.Unlock()
	}, nil
}

// budgetHint is a budget that holds n bytes, as serve's --budget takes
// it: whole megabytes, rounded up.
func budgetHint(n int64) string {
	return fmt.Sprintf("%d", (n+MB-1)/MB)
}

// filesSize is the bytes of the files of the session at path: the file,
// and for a Claude Code session the directory of its subagents' files
// beside it.
func filesSize(path string) int64 {
	var n int64
	if fi, err := os.Stat(path); err == nil {
		n = fi.Size()
	}
	if dir, ok := strings.CutSuffix(path, ".jsonl"); ok {
		filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
	}
	return n
}

// close lets a session go (o.mu held; no request uses it).
func (o *openSessions) close(s *opened) {
	delete(o.m, s.key)
	s.mu.Lock()
	if s.f != nil {
		s.f.Close()
	}
	s.f, s.s = nil, nil
	s.mu.Unlock()
}

// sweep lets go the sessions no page watched for idle.
func (o *openSessions) sweep() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.m {
		if s.users > 0 {
			continue
		}
		s.mu.Lock()
		stale := time.Since(s.used) > idle
		s.mu.Unlock()
		if stale {
			o.close(s)
		}
	}
}

// closeAll lets every session go that no request is reading; the reads
// under way stop with the server's context, and are not waited for (a
// stopping server does not wait for a long read to end).
func (o *openSessions) closeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.m {
		if !s.mu.TryLock() {
			delete(o.m, s.key)
			continue
		}
		s.mu.Unlock()
		o.close(s)
	}
}

// refresh polls the session when it was last polled at least its poll
// interval ago (s.mu held); the first poll reads it whole. policy is the
// redacted view's.
func (s *opened) refresh(ctx context.Context, policy redact.Policy) {
	s.used = time.Now()
	if s.f == nil {
		s.f = source.Follow(s.path)
	} else if time.Since(s.polled) < s.poll {
		return
	}
	got, err := s.f.Poll(ctx)
	if err != nil && ctx.Err() != nil {
		// The read was stopped (its client left, the server stops):
		// what it read is dropped, and the next request reads afresh.
		s.f.Close()
		s.f = nil
		return
	}
	s.polled = time.Now()
	s.err = err
	if s.f.Opened() {
		s.status = s.f.Status()
	}
	if got != nil {
		s.s = got
		s.gen++
		if !s.redFull {
			// Pseudonyms are numbered once, from the session as first
			// read with turns: the same value keeps its pseudonym as it
			// grows.
			s.red, s.redFull = newRedactor(policy, got), len(got.Turns) > 0
		}
	}
	if s.red == nil {
		s.red = newRedactor(policy, nil)
	}
}

// redactor is the session's redactor for a page redacted or not (s.mu
// held, after a refresh).
func (s *opened) redactor(redacted bool) *redactor {
	if redacted {
		return s.red
	}
	return newRedactor(redact.Off, nil)
}

// session returns the session read so far (never nil).
func (s *opened) session() *timeline.Session {
	if s.s == nil {
		return &timeline.Session{}
	}
	return s.s
}

// readContext is done when the server stops or the request that reads
// is gone (its client left): a read of a session stops with either. What
// a stopped read left out is read by the next poll.
func readContext(server, request context.Context) context.Context {
	ctx, cancel := context.WithCancel(request)
	stop := context.AfterFunc(server, cancel)
	context.AfterFunc(ctx, func() { stop() })
	return ctx
}
