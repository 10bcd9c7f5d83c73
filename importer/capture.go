package importer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/tsinspect/tsinspect/store"
)

// ImportInto imports the file or directory in into the capture file db,
// created when missing and appended to when not (opened only once the
// input's format is known), and notes in the capture where and when
// exchanges came from.
func ImportInto(ctx context.Context, in, db string, opts Options) (*Report, error) {
	var out *store.DB
	open := func() (Sink, error) {
		var err error
		if out, err = store.OpenWriter(db, false); err != nil {
			if msg, ok := store.BusyMessage(db, err); ok {
				return nil, errors.New(msg)
			}
			return nil, err
		}
		return out, nil
	}
	rep, err := Import(ctx, in, open, opts)
	if out != nil {
		if rep != nil && rep.Imported > 0 {
			_ = out.SetMeta(ctx, "imported_from", filepath.Base(in))
			_ = out.SetMeta(ctx, "imported_at", time.Now().UTC().Format(time.RFC3339Nano))
		}
		if cerr := out.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("import: %w", cerr)
		}
	}
	return rep, err
}
