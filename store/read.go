package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

// Summary is one exchange without its headers and bodies: what a listing
// needs.
type Summary struct {
	ID        int64
	Source    string
	Start     time.Time
	FirstByte time.Time
	End       time.Time
	Method    string
	URL       string
	Host      string
	Status    int
	ReqBytes  int64 // size of the request body
	RespBytes int64 // size of the response body as received (maybe compressed)
	State     exchange.State
	Error     string
}

// Exchanges returns every exchange in ID order, bodies and chunks loaded.
func (db *DB) Exchanges(ctx context.Context) ([]exchange.Exchange, error) {
	out, err := db.list(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("store: exchanges: %w", err)
	}
	return out, nil
}

// ExchangesAfter returns, in ID order, the exchanges whose ID is greater than
// afterID: what was added since a live view last looked. Exchanges it has
// already seen may have been updated since; re-read those with Get.
//
// ExchangesAfter and Get share the cache of rebuilt bodies: a body is
// usually stored against the previous request of its conversation, which
// the last call read, so a live view that reads each new exchange as it
// comes rebuilds only that one, not the chain of bases it is stored on.
func (db *DB) ExchangesAfter(ctx context.Context, afterID int64) ([]exchange.Exchange, error) {
	out, err := db.tail(ctx, afterID)
	if err != nil {
		return nil, fmt.Errorf("store: exchanges after %d: %w", afterID, err)
	}
	return out, nil
}

// tail lists the exchanges after afterID with the reader Get uses, whose
// cache thus holds the last bodies read for the next call.
func (db *DB) tail(ctx context.Context, afterID int64) ([]exchange.Exchange, error) {
	db.getMu.Lock()
	defer db.getMu.Unlock()
	rows, err := db.sql.QueryContext(ctx, selectExchange(db.version)+` WHERE e.id > ? ORDER BY e.id`, afterID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	br := db.sharedReader()
	var out []exchange.Exchange
	for rows.Next() {
		ex, err := scanExchange(ctx, br, rows)
		if err != nil {
			return nil, err
		}
		out = append(out, ex)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The cache keeps some of the bodies it rebuilt, for the next call:
	// the caller gets its own copy of those. (The others it dropped
	// without reusing their memory.)
	kept := map[*byte]bool{}
	for _, c := range br.cache {
		if len(c.data) > 0 {
			kept[&c.data[0]] = true
		}
	}
	own := func(b []byte) []byte {
		if len(b) > 0 && kept[&b[0]] {
			return bytes.Clone(b)
		}
		return b
	}
	for i := range out {
		ex := &out[i]
		ex.ReqBody, ex.RespBody, ex.RespBodyDecoded = own(ex.ReqBody), own(ex.RespBody), own(ex.RespBodyDecoded)
	}
	return out, nil
}

// streamShared is tail for a caller that keeps no request body past fn
// (DB.Stream): the reader reuses the buffers of the request bodies it
// drops from its cache.
func (db *DB) streamShared(ctx context.Context, afterID int64, fn func(*exchange.Exchange) error) error {
	db.getMu.Lock()
	defer db.getMu.Unlock()
	// Nobody else holds a body of the cache: Get and tail hand out
	// copies of those, so their buffers may be reused while this reads.
	br := db.sharedReader()
	br.reuse = true
	defer func() { br.reuse = false }()
	return db.scanAfter(ctx, br, afterID, fn)
}

// scanAfter reads the exchanges after afterID, in order, with br, and
// hands each to fn.
func (db *DB) scanAfter(ctx context.Context, br *bodyReader, afterID int64, fn func(*exchange.Exchange) error) error {
	rows, err := db.sql.QueryContext(ctx, selectExchange(db.version)+` WHERE e.id > ? ORDER BY e.id`, afterID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		ex, err := scanExchange(ctx, br, rows)
		if err != nil {
			return err
		}
		if err := fn(&ex); err != nil {
			return err
		}
	}
	return rows.Err()
}

// sharedReader is the body reader of Get and ExchangesAfter; the caller
// holds getMu.
func (db *DB) sharedReader() *bodyReader {
	if db.getReader == nil {
		db.getReader = newBodyReader(db.sql)
		db.getReader.limit = getCacheSize
	}
	return db.getReader
}

// Get returns the exchange with the given ID, or an error wrapping
// ErrNotFound.
//
// Gets share a small cache of rebuilt bodies, so that reading neighbouring
// exchanges one after the other (a viewer stepping through turns) rebuilds
// each from the one before rather than from the start of its chain.
func (db *DB) Get(ctx context.Context, id int64) (exchange.Exchange, error) {
	db.getMu.Lock()
	defer db.getMu.Unlock()
	ex, err := scanExchange(ctx, db.sharedReader(), db.sql.QueryRowContext(ctx, selectExchange(db.version)+` WHERE e.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return exchange.Exchange{}, fmt.Errorf("store: get %d: %w", id, err)
	}
	// The cache keeps what it rebuilt: the caller gets its own copy.
	ex.ReqBody, ex.RespBody, ex.RespBodyDecoded = bytes.Clone(ex.ReqBody), bytes.Clone(ex.RespBody), bytes.Clone(ex.RespBodyDecoded)
	return ex, nil
}

// Summaries returns one summary per exchange after afterID (0: all) in ID
// order, without reading any body.
func (db *DB) Summaries(ctx context.Context, afterID int64) ([]Summary, error) {
	rows, err := db.sql.QueryContext(ctx, `
		SELECT e.id, e.source, e.start_ns, e.first_byte_ns, e.end_ns, e.method, e.url, e.host,
		       e.status, rq.size, rs.size, e.state, e.error
		FROM exchange e
		JOIN blob rq ON rq.hash = e.req_body
		JOIN blob rs ON rs.hash = e.resp_body
		WHERE e.id > ?
		ORDER BY e.id`, afterID)
	if err != nil {
		return nil, fmt.Errorf("store: summaries: %w", err)
	}
	defer rows.Close()
	var out []Summary
	for rows.Next() {
		var (
			s                 Summary
			start, first, end sql.NullInt64
			state             string
		)
		if err := rows.Scan(&s.ID, &s.Source, &start, &first, &end, &s.Method, &s.URL, &s.Host,
			&s.Status, &s.ReqBytes, &s.RespBytes, &state, &s.Error); err != nil {
			return nil, fmt.Errorf("store: summaries: %w", err)
		}
		s.Start, s.FirstByte, s.End = decodeTime(start), decodeTime(first), decodeTime(end)
		s.State = exchange.State(state)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: summaries: %w", err)
	}
	return out, nil
}

func (db *DB) list(ctx context.Context, afterID int64) ([]exchange.Exchange, error) {
	var out []exchange.Exchange
	err := db.each(ctx, afterID, func(ex *exchange.Exchange) error {
		out = append(out, *ex)
		return nil
	})
	return out, err
}

// Each calls fn with every exchange whose ID is greater than afterID, in ID
// order, bodies and chunks loaded, reading one exchange at a time: fn may
// keep the exchange, but a caller that drops each one after use holds only
// one in memory. An error from fn stops the walk and is returned as is.
func (db *DB) Each(ctx context.Context, afterID int64, fn func(ex *exchange.Exchange) error) error {
	var fnErr error
	err := db.each(ctx, afterID, func(ex *exchange.Exchange) error {
		fnErr = fn(ex)
		return fnErr
	})
	if err != nil && fnErr != nil && errors.Is(err, fnErr) {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("store: each after %d: %w", afterID, err)
	}
	return nil
}

// Stream is Each for a caller that does not keep request bodies: the
// ReqBody fn is given is valid only until fn returns, after which its
// buffer may be reused for a later one. Reading a long capture then costs
// no fresh memory per request. Everything else of the exchange, response
// bodies included, is fn's to keep.
func (db *DB) Stream(ctx context.Context, afterID int64, fn func(ex *exchange.Exchange) error) error {
	var fnErr error
	err := db.eachWith(ctx, afterID, true, func(ex *exchange.Exchange) error {
		fnErr = fn(ex)
		return fnErr
	})
	if err != nil && fnErr != nil && errors.Is(err, fnErr) {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("store: stream after %d: %w", afterID, err)
	}
	return nil
}

func (db *DB) each(ctx context.Context, afterID int64, fn func(ex *exchange.Exchange) error) error {
	return db.eachWith(ctx, afterID, false, fn)
}

func (db *DB) eachWith(ctx context.Context, afterID int64, reuse bool, fn func(ex *exchange.Exchange) error) error {
	br := newBodyReader(db.sql)
	br.reuse = reuse
	defer br.close()
	return db.scanAfter(ctx, br, afterID, fn)
}
