package ui

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/tsinspect/tsinspect/source"
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

// OpenSource is Open over any source, which the caller closes after it
// returns; name is what the "loading" status calls it.
func OpenSource(ctx context.Context, src source.Source, name string, opts Options) error {
	m := view.New(nil)
	m.SetStatus("loading " + name + " …")
	a := newApp(m, opts)
	failed := make(chan error, 1)
	err := a.run(ctx, func(done <-chan struct{}) {
		b, problems, err := source.Read(ctx, src)
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
