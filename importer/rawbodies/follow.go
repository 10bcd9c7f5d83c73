package rawbodies

import (
	"context"
	"sync"

	"github.com/tsinspect/tsinspect/exchange"
)

// Sink takes the exchanges a Follower reads: a capture file open for
// writing (store.DB) is one.
type Sink interface {
	Insert(ctx context.Context, ex *exchange.Exchange) error
	Update(ctx context.Context, ex *exchange.Exchange) error
}

// FollowStats counts what a Follower copied.
type FollowStats struct {
	Exchanges, Complete, Failed int
	ReqBytes, RespBytes         int64
	// WriteErrors counts the writes to the sink that failed; FirstError
	// says what the first was.
	WriteErrors int
	FirstError  string
	// BadLines, FirstBad and Redacted are the directory's (see Dir).
	BadLines int
	FirstBad string
	Redacted int
}

// Follower copies the exchanges of a directory Claude Code is writing
// into a sink as they appear: a request first, in flight, then its answer.
// record --mode bodies polls one. Safe for concurrent use.
type Follower struct {
	dir   *Dir
	sink  Sink
	ended func(*exchange.Exchange)
	fail  func(error)

	mu    sync.Mutex
	ids   map[string]int64 // request file -> exchange ID
	done  map[string]bool
	stats FollowStats
}

// NewFollower follows dir into sink. ended, when not nil, is told of each
// exchange once it has ended; firstError, when not nil, of the first write
// that failed (the rest are only counted).
func NewFollower(dir *Dir, sink Sink, ended func(*exchange.Exchange), firstError func(error)) *Follower {
	return &Follower{dir: dir, sink: sink, ended: ended, fail: firstError, ids: map[string]int64{}, done: map[string]bool{}}
}

// Poll reads what is new in the directory into the sink; final reads what
// is left as it stands (a request without an answer stays in flight).
func (f *Follower) Poll(ctx context.Context, final bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cs, err := f.dir.Scan(final)
	if err != nil {
		f.failed(err)
		return
	}
	for _, c := range cs {
		ex := c.Exchange
		if id, ok := f.ids[c.Key]; ok {
			ex.ID = id
			if err := f.sink.Update(ctx, &ex); err != nil {
				f.failed(err)
				continue
			}
		} else {
			if err := f.sink.Insert(ctx, &ex); err != nil {
				f.failed(err)
				continue
			}
			f.ids[c.Key] = ex.ID
			f.stats.Exchanges++
			f.stats.ReqBytes += int64(len(ex.ReqBody))
		}
		if ex.State == exchange.StateInFlight || f.done[c.Key] {
			continue
		}
		f.done[c.Key] = true
		f.stats.RespBytes += int64(len(ex.RespBody))
		if ex.State == exchange.StateComplete {
			f.stats.Complete++
		} else {
			f.stats.Failed++
		}
		if f.ended != nil {
			f.ended(&ex)
		}
	}
}

// Settled reports whether every request seen has its answer.
func (f *Follower) Settled() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dir.Settled()
}

// Stats returns what was copied so far.
func (f *Follower) Stats() FollowStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.stats
	st.BadLines, st.FirstBad, st.Redacted = f.dir.BadLines, f.dir.FirstBad, f.dir.Redacted
	return st
}

func (f *Follower) failed(err error) {
	f.stats.WriteErrors++
	if f.stats.FirstError == "" {
		f.stats.FirstError = err.Error()
		if f.fail != nil {
			f.fail(err)
		}
	}
}
