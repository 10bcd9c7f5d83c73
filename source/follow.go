package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/crash"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline"
)

// Following is a source being followed as it is written: each Poll
// returns the session rebuilt with what changed, or nil when nothing did.
type Following interface {
	Poll(ctx context.Context) (*timeline.Session, error)
	// Status says what was skipped, "" for nothing.
	Status() string
	// Opened reports whether the source exists and was opened.
	Opened() bool
	Close()
}

// Follower keeps up with a capture file that is being written: each Poll
// reads what was added or changed since the last and rebuilds the
// session, decoding only the new and changed exchanges. The file may not
// exist yet when following starts.
type Follower struct {
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

// Status says which damaged rows were skipped, "" for none.
func (f *Follower) Status() string {
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

// Poll reads what changed since the last call and returns the rebuilt
// session, or nil when nothing changed (or the file does not exist yet).
func (f *Follower) Poll(ctx context.Context) (_ *timeline.Session, err error) {
	defer crash.Recover("follow "+f.path, &err)
	if f.db == nil {
		db, err := OpenCaptureDB(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil // not created yet
		}
		if err != nil {
			return nil, fmt.Errorf("ui: live: %w", err)
		}
		f.db, f.seen = db, map[int64]progress{}
		f.b = timeline.NewBuilder(false)
		// The loader outlives this poll (it reads a turn's bodies when
		// they are shown): it must not stop with this poll's context.
		loadCtx := context.WithoutCancel(ctx)
		f.b.SetLoader(func(id int64) (*exchange.Exchange, error) {
			ex, err := db.Get(loadCtx, id)
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
	damage, err := f.db.Scan(ctx, store.ScanOptions{After: f.lastID, Salvage: true, Partial: true, Stream: true, Live: true}, func(ex *exchange.Exchange) error {
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

// Opened reports whether the file exists and was opened.
func (f *Follower) Opened() bool { return f.db != nil }

// Close closes the file, if it was opened.
func (f *Follower) Close() {
	if f.db != nil {
		f.db.Close()
	}
}

// filesFollower follows a Claude Code session as Claude Code writes its
// files: each Poll reads what was appended and rebuilds the requests that
// are new or were still waiting for their answer. When the files start
// over (one was cut or replaced) the turns are built afresh.
type filesFollower struct {
	path       string
	s          *sessionfiles.Session
	b          *timeline.Builder
	added      int
	generation int
}

func (f *filesFollower) Poll(ctx context.Context) (_ *timeline.Session, err error) {
	defer crash.Recover("follow "+f.path, &err)
	from := 0
	if f.s == nil {
		s, err := sessionfiles.OpenContext(ctx, f.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("follow: %w", err)
		}
		s.Live = true
		f.s = s
		f.newBuilder()
	} else {
		n, err := f.s.Refresh()
		if err != nil {
			return nil, fmt.Errorf("follow: %w", err)
		}
		from = n
		if g := f.s.Generation(); g != f.generation {
			// The files started over: so do the turns.
			f.generation = g
			f.newBuilder()
			from = 0
		}
	}
	if from >= f.s.Len() && f.added == f.s.Len() && f.added > 0 {
		return nil, nil
	}
	for i := from; i < f.s.Len(); i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ex, err := f.s.GetMade(int64(i + 1))
		if err != nil {
			return nil, fmt.Errorf("follow: %w", err)
		}
		if i < f.added {
			f.b.Update(ex)
		} else {
			f.b.Add(ex)
		}
	}
	f.added = f.s.Len()
	return f.b.Session(), nil
}

// newBuilder starts the turns afresh.
func (f *filesFollower) newBuilder() {
	s := f.s
	f.b = timeline.NewBuilder(false)
	f.b.SetLoader(func(id int64) (*exchange.Exchange, error) { return s.Get(id) })
	f.added = 0
}

func (f *filesFollower) Status() string {
	if f.s == nil {
		return ""
	}
	var ps []Problem
	for _, p := range f.s.Problems {
		ps = append(ps, Problem{Problem: p.String()})
	}
	return Summary(ps)
}

func (f *filesFollower) Opened() bool { return f.s != nil }

func (f *filesFollower) Close() {}
