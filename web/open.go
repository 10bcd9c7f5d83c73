package web

import (
	"context"
	"sync"
	"time"

	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// maxOpen bounds the sessions kept read at once: a 1,000-turn session
// holds some 150 MB. The one used longest ago, and watched by no page, is
// let go first.
const maxOpen = 4

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
	red      *redactor
	redFull  bool // red knows the private values of a session with turns
	deferral view.Deferral
	// turnsJSON caches the turn list of generation turnsGen.
	turnsJSON []byte
	turnsGen  uint64

	// users counts the requests using the session (a page's live updates
	// for as long as it is open): one in use is never let go. Guarded by
	// openSessions.mu.
	users int
}

// openSessions holds the sessions being shown.
type openSessions struct {
	ctx    context.Context // the server's: the followers read with it
	policy redact.Policy
	mu     sync.Mutex
	m      map[string]*opened
}

// get returns the session at path, opening it (and letting the least
// used one go when too many are open), for the caller to use until it
// calls release.
func (o *openSessions) get(key, path string) (s *opened, release func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.m[key]
	if !ok || s.path != path {
		if len(o.m) >= maxOpen {
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
			if oldest != nil {
				o.close(oldest)
			}
		}
		s = &opened{key: key, path: path, poll: source.KindOf(path).Poll, used: time.Now()}
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
	}
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

// closeAll lets every session go.
func (o *openSessions) closeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.m {
		o.close(s)
	}
}

// refresh polls the session when it was last polled at least its poll
// interval ago (s.mu held); the first poll reads it whole.
func (s *opened) refresh(ctx context.Context, policy redact.Policy) {
	s.used = time.Now()
	if s.f == nil {
		s.f = source.Follow(s.path)
	} else if time.Since(s.polled) < s.poll {
		return
	}
	got, err := s.f.Poll(ctx)
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

// session returns the session read so far (never nil).
func (s *opened) session() *timeline.Session {
	if s.s == nil {
		return &timeline.Session{}
	}
	return s.s
}
