package ui

import (
	"context"
	"time"

	"github.com/tsinspect/tsinspect/source"
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
		f := source.Follow(path)
		defer f.Close()
		t := time.NewTicker(poll)
		defer t.Stop()
		shown := waiting // the status this loop set, cleared when it no longer holds
		for {
			s, err := f.Poll(ctx)
			status := shown
			switch {
			case err != nil:
				status = "live: " + err.Error()
			case f.Opened():
				status = f.Status()
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
