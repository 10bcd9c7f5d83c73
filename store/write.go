package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tsinspect/tsinspect/exchange"
)

// Insert writes ex as a new exchange, in whatever state it is (usually
// exchange.StateInFlight with the request only), and sets ex.ID to its new
// ID; an ID already in ex is ignored. IDs only grow.
//
// Credential header values are replaced by their fingerprints
// (exchange.Scrub) in what is written; ex itself is not changed apart from
// its ID.
func (db *DB) Insert(ctx context.Context, ex *exchange.Exchange) error {
	if db.readOnly {
		return fmt.Errorf("store: insert: %w", ErrReadOnly)
	}
	row, err := encodeExchange(ex)
	if err != nil {
		return fmt.Errorf("store: insert: %w", err)
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: insert: %w", err)
	}
	defer tx.Rollback()
	id, added, err := db.insertExchange(ctx, tx, row)
	if err != nil {
		return fmt.Errorf("store: insert: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: insert: %w", err)
	}
	db.remember(added)
	ex.ID = id
	return nil
}

// Update rewrites every field of the stored exchange whose ID is ex.ID with
// the values in ex. Credentials are scrubbed as by Insert. Bodies no longer
// used by any exchange are deleted, so updating a streaming response as it
// grows does not leave every partial body behind. It returns an error
// wrapping ErrNotFound if there is no such exchange.
func (db *DB) Update(ctx context.Context, ex *exchange.Exchange) error {
	if db.readOnly {
		return fmt.Errorf("store: update %d: %w", ex.ID, ErrReadOnly)
	}
	row, err := encodeExchange(ex)
	if err != nil {
		return fmt.Errorf("store: update %d: %w", ex.ID, err)
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: update %d: %w", ex.ID, err)
	}
	defer tx.Rollback()
	added, dropped, err := db.updateExchange(ctx, tx, ex.ID, row)
	if err != nil {
		return fmt.Errorf("store: update %d: %w", ex.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: update %d: %w", ex.ID, err)
	}
	for _, h := range dropped {
		db.bases.forget(h)
	}
	db.remember(added)
	return nil
}

// insertExchange writes a new exchange row and its bodies; it returns the
// bodies newly stored, to be remembered as bases once the transaction
// commits.
func (db *DB) insertExchange(ctx context.Context, tx *sql.Tx, r *exchangeRow) (int64, []stored, error) {
	reqHash, respHash, decHash, added, err := db.putBodies(ctx, tx, r, nil)
	if err != nil {
		return 0, nil, err
	}
	res, err := tx.ExecContext(ctx, `
		INSERT INTO exchange (source, start_ns, first_byte_ns, end_ns, method, url, host,
			req_headers, req_body, status, resp_headers, resp_body, resp_body_decoded,
			chunks, error, state)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.source, r.start, r.firstByte, r.end, r.method, r.url, r.host,
		r.reqHeaders, reqHash, r.status, r.respHeaders, respHash, decHash,
		r.chunks, r.errText, r.state)
	if err != nil {
		return 0, nil, err
	}
	id, err := res.LastInsertId()
	return id, added, err
}

// updateExchange rewrites an exchange row; it returns the bodies newly
// stored and the hashes of those deleted.
func (db *DB) updateExchange(ctx context.Context, tx *sql.Tx, id int64, r *exchangeRow) (added []stored, dropped []string, err error) {
	var old [3]sql.NullString
	err = tx.QueryRowContext(ctx,
		`SELECT req_body, resp_body, resp_body_decoded FROM exchange WHERE id = ?`, id).
		Scan(&old[0], &old[1], &old[2])
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	var avoid []string
	for _, h := range old {
		if h.Valid {
			avoid = append(avoid, h.String)
		}
	}
	reqHash, respHash, decHash, added, err := db.putBodies(ctx, tx, r, avoid)
	if err != nil {
		return nil, nil, err
	}
	_, err = tx.ExecContext(ctx, `
		UPDATE exchange SET source = ?, start_ns = ?, first_byte_ns = ?, end_ns = ?,
			method = ?, url = ?, host = ?, req_headers = ?, req_body = ?, status = ?,
			resp_headers = ?, resp_body = ?, resp_body_decoded = ?, chunks = ?, error = ?,
			state = ?
		WHERE id = ?`,
		r.source, r.start, r.firstByte, r.end, r.method, r.url, r.host,
		r.reqHeaders, reqHash, r.status, r.respHeaders, respHash, decHash,
		r.chunks, r.errText, r.state, id)
	if err != nil {
		return nil, nil, err
	}
	for _, h := range old {
		if h.Valid {
			gone, err := dropUnusedBlob(ctx, tx, h.String)
			if err != nil {
				return nil, nil, err
			}
			if gone {
				dropped = append(dropped, h.String)
			}
		}
	}
	return added, dropped, nil
}

// stored is a body newly written to the blob table.
type stored struct {
	kind bodyKind
	c    candidate
}

// remember makes bodies just committed candidate bases for the next ones.
func (db *DB) remember(added []stored) {
	for _, a := range added {
		if a.c.hash != "" {
			db.bases.add(a.kind, a.c)
		}
	}
}

// putBodies stores the three bodies of r and returns their hashes; decHash
// is NULL when r has no decoded body. No body is compressed against one
// named in avoid.
func (db *DB) putBodies(ctx context.Context, tx *sql.Tx, r *exchangeRow, avoid []string) (reqHash, respHash string, decHash sql.NullString, added []stored, err error) {
	put := func(kind bodyKind, data []byte) (string, error) {
		hash, c, err := db.putBlob(ctx, tx, kind, data, avoid)
		if err == nil && c.hash != "" {
			added = append(added, stored{kind: kind, c: c})
		}
		return hash, err
	}
	if reqHash, err = put(kindRequest, r.reqBody); err != nil {
		return "", "", decHash, nil, err
	}
	if respHash, err = put(kindResponse, r.respBody); err != nil {
		return "", "", decHash, nil, err
	}
	if r.respDecoded != nil {
		if decHash.String, err = put(kindResponse, r.respDecoded); err != nil {
			return "", "", decHash, nil, err
		}
		decHash.Valid = true
	}
	return reqHash, respHash, decHash, added, nil
}

// putBlob stores data under its SHA-256, once, and returns the hash. A body
// not stored yet is compressed, against a recent body of the same kind when
// there is one; it is returned as a candidate base for later bodies. A nil
// body is stored as an empty one.
func (db *DB) putBlob(ctx context.Context, tx *sql.Tx, kind bodyKind, data []byte, avoid []string) (string, candidate, error) {
	hash := bodyHash(data)
	if data == nil {
		data = []byte{} // NOT NULL column: a nil []byte would bind as NULL
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM blob WHERE hash = ?`, hash).Scan(&n); err != nil {
		return "", candidate{}, fmt.Errorf("blob: %w", err)
	}
	if n > 0 {
		return hash, candidate{}, nil
	}
	var base *candidate
	if len(data) >= minCompressed {
		if c, ok := db.bases.pick(kind, data, avoid); ok {
			base = &c
		}
	}
	e, err := db.enc.compress(data, base)
	if err != nil {
		return "", candidate{}, fmt.Errorf("blob: %w", err)
	}
	if e.data == nil {
		e.data = []byte{}
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO blob (hash, size, data, codec, base, depth) VALUES (?, ?, ?, ?, ?, ?)`,
		hash, len(data), e.data, e.codec, e.base, e.depth)
	if err != nil {
		return "", candidate{}, fmt.Errorf("blob: %w", err)
	}
	if len(data) < minCompressed {
		return hash, candidate{}, nil
	}
	return hash, candidate{hash: hash, data: data, depth: e.depth}, nil
}

// dropUnusedBlob deletes the blob with the given hash if no exchange uses
// it and no other blob is compressed against it, and says whether it did.
func dropUnusedBlob(ctx context.Context, tx *sql.Tx, hash string) (bool, error) {
	res, err := tx.ExecContext(ctx, `
		DELETE FROM blob WHERE hash = ?1 AND NOT EXISTS (
			SELECT 1 FROM exchange
			WHERE req_body = ?1 OR resp_body = ?1 OR resp_body_decoded = ?1)
		AND NOT EXISTS (SELECT 1 FROM blob b WHERE b.base = ?1)`, hash)
	if err != nil {
		return false, fmt.Errorf("blob: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("blob: %w", err)
	}
	return n > 0, nil
}
