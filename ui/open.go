package ui

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// Open shows the capture file at path until the user quits or ctx is done.
// The file is checked first (a missing file or one that is not a capture
// is an error before anything is drawn); then the interface is drawn at
// once, saying it is loading, while the file is read and the session built
// in the background, and the turns appear when that is done. A large
// capture thus never leaves a blank terminal.
func Open(ctx context.Context, path string, opts Options) error {
	db, err := store.OpenReadOnly(path)
	if err != nil {
		return fmt.Errorf("ui: open: %w", err)
	}
	m := view.New(nil)
	m.SetStatus("loading " + filepath.Base(path) + " …")
	a := newApp(m, opts)
	failed := make(chan error, 1)
	// The file stays open while the interface runs: the turns keep what
	// was decoded, and the Raw tab reads a turn's bodies back when shown.
	defer db.Close()
	err = a.run(ctx, func(done <-chan struct{}) {
		b := timeline.NewBuilder(false)
		b.SetLoader(func(id int64) (*exchange.Exchange, error) {
			ex, err := db.Get(ctx, id)
			return &ex, err
		})
		damage, err := db.StreamSalvaged(ctx, func(ex *exchange.Exchange) error {
			b.Add(ex)
			return nil
		})
		if err != nil {
			failed <- err
			a.stop()
			return
		}
		s := b.Session()
		status := ""
		if len(damage) > 0 {
			// One bad row costs only itself: say which were left out.
			status = store.DamageSummary(damage)
		}
		a.tv.QueueUpdateDraw(func() {
			a.m.SetSession(s)
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
