package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"

	"github.com/tsinspect/tsinspect/exchange"
)

// LastID returns the ID of the newest exchange in the capture, 0 when it
// holds none. IDs only grow: exchanges added later have greater IDs.
func (db *DB) LastID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	if err := db.sql.QueryRowContext(ctx, `SELECT max(id) FROM exchange`).Scan(&id); err != nil {
		return 0, fmt.Errorf("store: last id: %w", err)
	}
	return id.Int64, nil
}

// Matching returns, in ID order, the IDs up to upTo of the stored
// exchanges that ex would duplicate: the same start time, method, URL and
// status, and the same request and response bodies byte for byte (the
// response as received). It reads no body: bodies are stored under their
// SHA-256, and the request's is indexed, so it costs ex's two hashes and
// one indexed lookup however big the capture.
func (db *DB) Matching(ctx context.Context, ex *exchange.Exchange, upTo int64) ([]int64, error) {
	start, err := encodeTime(ex.Start)
	if err != nil {
		return nil, fmt.Errorf("store: matching: %w", err)
	}
	rows, err := db.sql.QueryContext(ctx, `
		SELECT id FROM exchange
		WHERE req_body = ? AND resp_body = ? AND start_ns IS ? AND method = ? AND url = ? AND status = ? AND id <= ?
		ORDER BY id`,
		bodyHash(ex.ReqBody), bodyHash(ex.RespBody), start, ex.Method, ex.URL, ex.Status, upTo)
	if err != nil {
		return nil, fmt.Errorf("store: matching: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: matching: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: matching: %w", err)
	}
	return ids, nil
}

// bodyHash is the key a body is stored under (see putBlob).
func bodyHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
