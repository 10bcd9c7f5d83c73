package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// CompactProgress is reported by Compact as it goes.
type CompactProgress struct {
	Done, Total int   // bodies compressed so far, bodies to compress
	Before      int64 // bytes of the bodies done, as they were stored
	After       int64 // the same bodies' bytes now
	Vacuuming   bool  // all bodies done; the file is being rewritten
}

// compactBatch is how many bodies Compact compresses per transaction.
const compactBatch = 64

// Compact compresses, in place, the bodies a capture file holds as they
// are: those of a file written before bodies were compressed, or by an
// older version. Each body is compressed against an earlier one of the same
// kind, as when recording, then the file is rewritten (VACUUM) to give the
// space back. The bodies read back byte for byte as before. progress, when
// not nil, is called after each batch and once before the rewrite.
//
// Compact works on a file being recorded into, but holds the write lock a
// batch at a time; the final rewrite waits for other writers.
func (db *DB) Compact(ctx context.Context, progress func(CompactProgress)) error {
	if db.readOnly {
		return fmt.Errorf("store: compact: %w", ErrReadOnly)
	}
	if err := db.compact(ctx, progress); err != nil {
		return fmt.Errorf("store: compact: %w", err)
	}
	return nil
}

func (db *DB) compact(ctx context.Context, progress func(CompactProgress)) error {
	type todo struct {
		hash string
		kind bodyKind
	}
	// Bodies in the order the exchanges that use them were recorded, so
	// that each is compressed against the one before it in its
	// conversation.
	rows, err := db.sql.QueryContext(ctx, `
		SELECT u.hash, u.kind FROM (
			SELECT id, 0 AS n, req_body AS hash, 0 AS kind FROM exchange
			UNION ALL SELECT id, 1, resp_body, 1 FROM exchange
			UNION ALL SELECT id, 2, resp_body_decoded, 1 FROM exchange WHERE resp_body_decoded IS NOT NULL
		) u JOIN blob b ON b.hash = u.hash
		WHERE b.codec = 0 AND b.size >= ?
		ORDER BY u.id, u.n`, minCompressed)
	if err != nil {
		return err
	}
	var list []todo
	seen := map[string]bool{}
	for rows.Next() {
		var t todo
		if err := rows.Scan(&t.hash, &t.kind); err != nil {
			rows.Close()
			return err
		}
		if !seen[t.hash] {
			seen[t.hash] = true
			list = append(list, t)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	p := CompactProgress{Total: len(list)}
	for start := 0; start < len(list); start += compactBatch {
		batch := list[start:min(start+compactBatch, len(list))]
		tx, err := db.sql.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for _, t := range batch {
			var (
				data  []byte
				codec int
			)
			err := tx.QueryRowContext(ctx, `SELECT data, codec FROM blob WHERE hash = ?`, t.hash).Scan(&data, &codec)
			if errors.Is(err, sql.ErrNoRows) || err == nil && codec != codecRaw {
				continue // deleted or compressed by a writer meanwhile
			}
			if err != nil {
				tx.Rollback()
				return err
			}
			var base *candidate
			if c, ok := db.bases.pick(t.kind, data, nil); ok {
				base = &c
			}
			e, err := db.enc.compress(data, base)
			if err != nil {
				tx.Rollback()
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE blob SET data = ?, codec = ?, base = ?, depth = ? WHERE hash = ?`,
				nonNil(e.data), e.codec, e.base, e.depth, t.hash); err != nil {
				tx.Rollback()
				return err
			}
			// The row exists whatever becomes of this transaction, so it
			// can be a base at once.
			db.bases.add(t.kind, candidate{hash: t.hash, data: data, depth: e.depth})
			p.Before += int64(len(data))
			p.After += int64(len(e.data))
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		p.Done += len(batch)
		if progress != nil {
			progress(p)
		}
	}
	p.Vacuuming = true
	if progress != nil {
		progress(p)
	}
	if _, err := db.sql.ExecContext(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	if _, err := db.sql.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// CompactLines returns a Compact progress function that writes to w a
// line at each tenth of the bodies, and one when the file is rewritten.
func CompactLines(w io.Writer) func(CompactProgress) {
	lastTenth := -1
	return func(p CompactProgress) {
		switch {
		case p.Vacuuming:
			fmt.Fprintf(w, "compact: %d bodies compressed, %s to %s; rewriting the file\n",
				p.Total, numfmt.Bytes(p.Before), numfmt.Bytes(p.After))
		case p.Total > 0 && p.Done*10/p.Total != lastTenth:
			lastTenth = p.Done * 10 / p.Total
			fmt.Fprintf(w, "compact: %d/%d bodies (%d %%), %s to %s\n",
				p.Done, p.Total, p.Done*100/p.Total, numfmt.Bytes(p.Before), numfmt.Bytes(p.After))
		}
	}
}
