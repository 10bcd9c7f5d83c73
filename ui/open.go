package ui

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/compare"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// Open shows the capture file at path until the user quits or ctx is done.
// The file is checked first (a missing file or one that is not a capture
// is an error before anything is drawn); then the interface is drawn at
// once, saying it is loading, while the file is read and the session built
// in the background, and the turns appear when that is done. A large
// capture thus never leaves a blank terminal.
func Open(ctx context.Context, path string, opts Options) error {
	c, err := source.Open(path)
	if err != nil {
		return fmt.Errorf("ui: open: %w", err)
	}
	// The file stays open while the interface runs: the turns keep what
	// was decoded, and the Raw tab reads a turn's bodies back when shown.
	defer c.Close()
	return OpenSource(ctx, c, filepath.Base(path), opts)
}

// ReplayFile plays the capture file at path back (Replay) until the user
// quits or ctx is done, saying on log what of it could not be read.
// notOpened makes the error of a file that is no capture.
func ReplayFile(ctx context.Context, path string, opts Options, log io.Writer, notOpened func(error) error) error {
	c, err := source.OpenCapture(path)
	if err != nil {
		return notOpened(err)
	}
	// The file stays open while the timeline plays: the Raw tab, and what
	// it saves, read a turn's bodies back from it.
	defer c.Close()
	b, problems, err := source.Read(ctx, c)
	if len(problems) > 0 {
		fmt.Fprintf(log, "tsinspect: warning: %s: %s\n", c.Name(), source.Summary(problems))
	}
	if err != nil {
		return err
	}
	return Replay(ctx, b.Session(), opts)
}

// OpenSource is Open over any source, which the caller closes after it
// returns; name is what the "loading" status calls it. Until the session
// is read, the header says how far the reading is.
func OpenSource(ctx context.Context, src source.Source, name string, opts Options) error {
	m := view.New(nil)
	m.SetStatus("loading " + name + " …")
	a := newApp(m, opts)
	a.loading = "reading …"
	failed := make(chan error, 1)
	err := a.run(ctx, func(done <-chan struct{}) {
		cs := &counting{Source: src, total: total(ctx, src)}
		read := make(chan struct{})
		go a.showProgress(cs, read, done)
		b, problems, err := source.ReadSeen(ctx, cs, a.paintFirst(cs, read))
		close(read)
		if err != nil {
			failed <- err
			a.stop()
			return
		}
		s := b.Session()
		// One bad row costs only itself: say which were left out.
		status := source.Summary(problems)
		var cmp *view.Comparison
		if opts.Compare != nil {
			cmp = view.NewComparison(compare.Compare(compare.Side{Session: s}, compare.Side{Session: opts.Compare}, compare.Options{}), opts.CompareName)
		}
		a.tv.QueueUpdateDraw(func() {
			a.loading = ""
			a.m.SetSession(s)
			if cmp != nil {
				a.m.SetComparison(cmp)
			}
			a.m.SetStatus(status)
		})
	})
	if err != nil {
		return err
	}
	select {
	case lerr := <-failed:
		return fmt.Errorf("ui: open: %w", lerr)
	default:
		return nil
	}
}

// firstPaintTurns turns are shown as soon as they are read, or those read
// after firstPaintAfter (two or more), while the rest is read: a long
// session's first screen appears at once rather than after the whole
// reading.
const (
	firstPaintTurns = 200
	firstPaintAfter = 300 * time.Millisecond
)

// paintFirst returns the reading's seen callback: it shows the turns read
// so far, once, when firstPaintTurns are read or firstPaintAfter has
// passed (checked as each turn is read and by a timer, for a reading that
// waits), browsable, the header saying how far the reading is; the whole
// session replaces them when read. The timer stops with done.
func (a *app) paintFirst(c *counting, done <-chan struct{}) func(*timeline.Builder) {
	paint := func(b *timeline.Builder) {
		c.painted = true
		s := b.Session()
		a.tv.QueueUpdateDraw(func() {
			if a.loading != "" && len(a.m.Session().Turns) == 0 {
				a.m.SetSession(s)
			}
		})
	}
	go func() {
		t := time.NewTimer(firstPaintAfter)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.late = true
		if c.b != nil && !c.painted && len(c.b.Exchanges()) >= 2 {
			paint(c.b)
		}
	}()
	return func(b *timeline.Builder) {
		// Called with c.mu held (counting.Stream).
		c.b = b
		n := len(b.Exchanges())
		if !c.painted && n >= 2 && (n >= firstPaintTurns || c.late) {
			paint(b)
		}
	}
}

// counting is a source that counts the exchanges it has handed on, and
// knows how many it holds (total, 0 when unknown). Each exchange is handed
// on with mu held, so that what was read so far (b, the Builder the
// reading adds to) can be shown from another goroutine (paintFirst);
// painted and late are paintFirst's, under mu too.
type counting struct {
	source.Source
	n     atomic.Int64
	total int64

	mu      sync.Mutex
	b       *timeline.Builder
	painted bool
	late    bool
}

// Stream hands on the source's exchanges, counting them.
func (c *counting) Stream(ctx context.Context, fn func(*exchange.Exchange) error) ([]source.Problem, error) {
	return c.Source.Stream(ctx, c.counted(fn))
}

// StreamMade is Stream handing on the requests the source made as their
// parts, when it can (source.MadeStreamer).
func (c *counting) StreamMade(ctx context.Context, fn func(*exchange.Exchange) error) ([]source.Problem, error) {
	if m, ok := c.Source.(source.MadeStreamer); ok {
		return m.StreamMade(ctx, c.counted(fn))
	}
	return c.Stream(ctx, fn)
}

// counted is fn counting each exchange, called with mu held.
func (c *counting) counted(fn func(*exchange.Exchange) error) func(*exchange.Exchange) error {
	return func(ex *exchange.Exchange) error {
		c.n.Add(1)
		c.mu.Lock()
		defer c.mu.Unlock()
		return fn(ex)
	}
}

// progress says how far the reading is: "reading 3,400 of 14,000
// requests (24 %)".
func (c *counting) progress() string {
	n := c.n.Load()
	if c.total <= 0 {
		return fmt.Sprintf("reading: %s requests so far", numfmt.Thousands(n))
	}
	n = min(n, c.total)
	return fmt.Sprintf("reading %s of %s requests (%d %%)", numfmt.Thousands(n), numfmt.Thousands(c.total), n*100/c.total)
}

// total is how many exchanges src holds, when it can tell; 0 otherwise.
func total(ctx context.Context, src source.Source) int64 {
	switch s := src.(type) {
	case *source.Files:
		return int64(s.Session().Len())
	case interface {
		Len(context.Context) (int64, error)
	}:
		if n, err := s.Len(ctx); err == nil {
			return n
		}
	}
	return 0
}

// progressEvery is how often the header's reading progress is redrawn.
const progressEvery = 100 * time.Millisecond

// showProgress redraws the header's reading progress until read or done
// is closed.
func (a *app) showProgress(c *counting, read, done <-chan struct{}) {
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case <-read:
			return
		case <-done:
			return
		case <-tick.C:
			text := c.progress()
			a.tv.QueueUpdateDraw(func() {
				if a.loading != "" {
					a.loading = text
					a.chrome()
				}
			})
		}
	}
}
