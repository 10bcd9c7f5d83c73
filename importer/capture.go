package importer

import (
	"context"
	"errors"
	"fmt"
	"os"
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

// ImportFile is 'tsinspect import': it checks that in exists and that
// no other process writes db, imports in into db (ImportInto) and says
// how it went (Report.Outcome): partial when only part of in was read.
func ImportFile(ctx context.Context, in, db string, opts Options) (line string, partial bool, err error) {
	if _, err := os.Stat(in); err != nil {
		return "", false, fmt.Errorf("import: %w", err)
	}
	// Before the input is read (a large one takes a while): a capture
	// that a record or another import is writing is refused at once.
	if err := store.CheckTarget(db); err != nil {
		return "", false, store.TargetError("import", db, err)
	}
	rep, err := ImportInto(ctx, in, db, opts)
	if err != nil {
		return "", false, err
	}
	return rep.Outcome(filepath.Base(in), db)
}
