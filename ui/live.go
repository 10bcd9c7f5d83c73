package ui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
// exist yet, RunLive waits for it. With opts.Wake it also looks as soon
// as it is told the capture was written.
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
				status = f.status()
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
			case <-opts.Wake:
			}
		}
	})
}

// follower keeps up with a growing capture file.
type follower struct {
	path     string
	db       *store.DB
	b        *timeline.Builder // decodes each exchange once, as it comes
	seen     map[int64]progress
	lastID   int64
	inFlight []int64
	built    bool
	// damage names the rows that could not be read and were skipped.
	damage []store.Damage
}

// status is what the live view's status line says once the capture is
// open: the damaged rows skipped, if any.
func (f *follower) status() string {
	if len(f.damage) == 0 {
		return ""
	}
	return store.DamageSummary(f.damage)
}

// progress is what tells that an exchange in flight has moved on: the
// builder drops the bodies of Messages exchanges.
type progress struct {
	state  exchange.State
	resp   int
	chunks int
}

func progressOf(ex *exchange.Exchange) progress {
	return progress{state: ex.State, resp: len(ex.RespBody), chunks: len(ex.Chunks)}
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
		f.db, f.seen = db, map[int64]progress{}
		f.b = timeline.NewBuilder(false)
		f.b.SetLoader(func(id int64) (*exchange.Exchange, error) {
			ex, err := db.Get(ctx, id)
			return &ex, err
		})
	}
	changed := !f.built
	// Exchanges that were in flight may have ended since.
	var still []int64
	for _, id := range f.inFlight {
		ex, err := f.db.Get(ctx, id)
		if err != nil {
			// One bad row costs only itself: it is named, and left.
			f.damage = append(f.damage, store.Damage{ID: id, Problem: err.Error()})
			changed = true
			continue
		}
		if p := progressOf(&ex); p != f.seen[id] {
			f.seen[id] = p
			if ex.State == exchange.StateInFlight {
				still = append(still, id)
			}
			f.b.Update(&ex)
			changed = true
		} else if ex.State == exchange.StateInFlight {
			still = append(still, id)
		}
	}
	f.inFlight = still
	// Only the exchanges after the last one read are read, each rebuilt
	// from the bodies the last poll left in the reader's cache, and
	// handed to the builder one at a time (it keeps no request body).
	damage, err := f.db.StreamAfterSalvaged(ctx, f.lastID, func(ex *exchange.Exchange) error {
		f.seen[ex.ID] = progressOf(ex)
		f.lastID = max(f.lastID, ex.ID)
		if ex.State == exchange.StateInFlight {
			f.inFlight = append(f.inFlight, ex.ID)
		}
		f.b.Add(ex)
		changed = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ui: live: %w", err)
	}
	for _, d := range damage {
		f.lastID = max(f.lastID, d.ID) // step past it
	}
	if len(damage) > 0 {
		f.damage = append(f.damage, damage...)
		changed = true
	}
	if !changed {
		return nil, nil
	}
	f.built = true
	// Only the new and changed exchanges were decoded; the session shown
	// keeps its own lists, so later updates never touch it.
	return f.b.Session(), nil
}

func (f *follower) close() {
	if f.db != nil {
		f.db.Close()
	}
}
