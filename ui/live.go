package ui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// defaultPoll is how often a live view looks at the capture.
const defaultPoll = 250 * time.Millisecond

// RunLive shows the capture file at path while another goroutine or
// process records into it, until the user quits or ctx is done. It only
// reads: the file is opened read-only (SQLite in WAL mode lets a reader and
// the recorder's writer go on side by side), and it is polled every
// opts.Poll for new exchanges and for those that were still in flight, so
// a new turn shows within a second. The session is rebuilt off the UI
// goroutine and handed over with QueueUpdateDraw; the selection follows
// the newest turn while the last row is selected. If the file does not
// exist yet, RunLive waits for it.
func RunLive(ctx context.Context, path string, opts Options) error {
	m := view.New(nil)
	m.FollowTail()
	waiting := "waiting for " + path
	m.SetStatus(waiting)
	a := newApp(m, opts)
	poll := opts.Poll
	if poll <= 0 {
		poll = defaultPoll
	}
	return a.run(ctx, func(done <-chan struct{}) {
		if opts.Notes != nil {
			go func() {
				for {
					select {
					case <-done:
						return
					case n, ok := <-opts.Notes:
						if !ok {
							return
						}
						a.tv.QueueUpdateDraw(func() {
							a.note = n
							a.chrome()
						})
					}
				}
			}()
		}
		f := &follower{path: path}
		defer f.close()
		t := time.NewTicker(poll)
		defer t.Stop()
		shown := waiting // the status this loop set, cleared when it no longer holds
		for {
			s, err := f.poll(ctx)
			status := shown
			switch {
			case err != nil:
				status = "live: " + err.Error()
			case f.db != nil:
				status = ""
			}
			if s != nil || status != shown {
				prev := shown
				a.tv.QueueUpdateDraw(func() {
					if a.m.Status() == prev {
						a.m.SetStatus(status)
					}
					if s != nil {
						a.m.SetSession(s)
					}
				})
				shown = status
			}
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// follower keeps up with a growing capture file.
type follower struct {
	path     string
	db       *store.DB
	exs      []exchange.Exchange
	at       map[int64]int // exchange ID to its place in exs
	lastID   int64
	inFlight []int64
	built    bool
}

// poll reads what changed since the last call and returns the rebuilt
// session, or nil when nothing changed.
func (f *follower) poll(ctx context.Context) (*timeline.Session, error) {
	if f.db == nil {
		db, err := store.OpenReadOnly(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil // not created yet
		}
		if err != nil {
			return nil, fmt.Errorf("ui: live: %w", err)
		}
		f.db, f.at = db, map[int64]int{}
	}
	changed := !f.built
	// Exchanges that were in flight may have ended since.
	var still []int64
	for _, id := range f.inFlight {
		ex, err := f.db.Get(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("ui: live: %w", err)
		}
		i := f.at[id]
		if ex.State != f.exs[i].State || len(ex.RespBody) != len(f.exs[i].RespBody) || len(ex.Chunks) != len(f.exs[i].Chunks) {
			f.exs[i] = ex
			changed = true
		}
		if ex.State == exchange.StateInFlight {
			still = append(still, id)
		}
	}
	f.inFlight = still
	news, err := f.db.ExchangesAfter(ctx, f.lastID)
	if err != nil {
		return nil, fmt.Errorf("ui: live: %w", err)
	}
	for _, ex := range news {
		f.at[ex.ID] = len(f.exs)
		f.exs = append(f.exs, ex)
		f.lastID = max(f.lastID, ex.ID)
		if ex.State == exchange.StateInFlight {
			f.inFlight = append(f.inFlight, ex.ID)
		}
		changed = true
	}
	if !changed {
		return nil, nil
	}
	f.built = true
	// The session shown keeps pointers into the slice it was built from:
	// build from a copy, so that later updates never touch it.
	return timeline.Build(slices.Clone(f.exs)), nil
}

func (f *follower) close() {
	if f.db != nil {
		f.db.Close()
	}
}
