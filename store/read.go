package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
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

// ScanOptions chooses which exchanges Scan reads and how.
type ScanOptions struct {
	// After limits the scan to the exchanges whose ID is greater: what
	// was added since a reader last looked (exchanges it has already
	// seen may have been updated since; re-read those with Get). 0 reads
	// them all.
	After int64
	// Salvage reads a capture that may be damaged: a row that cannot be
	// read (malformed JSON in a column, a body missing from the blob
	// table, a state this program does not know, a page of the file cut
	// off) is skipped and named in the damage Scan returns, and every
	// other row is handed to fn. The rows are read in one pass while they
	// read well and, from the first that does not, one row at a time, so
	// that a damaged row costs only itself. Without Salvage the first row
	// that cannot be read ends the scan with an error, and no damage is
	// returned.
	Salvage bool
	// Partial, with Salvage, returns whatever could be read even when
	// that is nothing: without it, a scan that met damaged rows and read
	// none fails ("no row could be read"), returning the damage it found.
	// A Partial scan also names the rows missing a body that it could
	// list when listing them all failed; another names none.
	Partial bool
	// Stream is for a caller that keeps no request body past fn: the
	// ReqBody fn is given is valid only until fn returns, after which its
	// buffer may be reused for a later one, so that reading a long
	// capture costs no fresh memory per request. Everything else of the
	// exchange, response bodies included, is fn's to keep.
	Stream bool
	// Live is for a reader that follows a growing capture, each scan
	// starting After the last exchange the previous one read: it reads
	// with the cache of rebuilt bodies that Get uses, and a body is
	// usually stored against the previous request of its conversation,
	// which the previous scan read, so each new exchange is rebuilt alone
	// rather than from the start of its chain of bases. fn runs while
	// that cache is held: it must not call Get or a Live Scan.
	//
	// With Salvage, the damage of a Live scan names only the rows it
	// stepped over: rows whose body is missing, which no scan reaches,
	// are not looked for, and a row in a state this program does not know
	// is handed to fn like any other, unless it comes after a damaged row
	// (the row-at-a-time reading that follows one skips it as damage).
	Live bool
}

// Scan calls fn with each exchange opts selects, in ID order, bodies and
// chunks loaded, reading one exchange at a time: fn may keep the exchange
// (but see ScanOptions.Stream), and a caller that drops each one after use
// holds only one in memory. An error from fn stops the scan and is
// returned as is.
//
// With opts.Salvage, Scan returns the rows it skipped, in ID order; it
// fails only when the capture cannot be read at all.
func (db *DB) Scan(ctx context.Context, opts ScanOptions, fn func(*exchange.Exchange) error) ([]Damage, error) {
	op := "exchanges"
	if opts.Live || opts.After > 0 {
		op = fmt.Sprintf("exchanges after %d", opts.After)
	}
	var (
		last      = opts.After
		delivered int
		damage    []Damage
		fnErr     error
	)
	err := db.onePass(ctx, opts, func(ex *exchange.Exchange) error {
		last = ex.ID
		if opts.Salvage && !opts.Live && !knownState(ex.State) {
			damage = append(damage, Damage{ID: ex.ID, Problem: fmt.Sprintf("unknown state %q", ex.State)})
			return nil
		}
		delivered++
		fnErr = fn(ex)
		return fnErr
	})
	switch {
	case err != nil && fnErr != nil:
		return damage, fnErr
	case err != nil && !opts.Salvage:
		return nil, fmt.Errorf("store: %s: %w", op, err)
	case err != nil && ctx.Err() != nil:
		return damage, fmt.Errorf("store: %s: %w", op, ctx.Err())
	case err != nil:
		more, rerr := db.eachFrom(ctx, last, func(ex *exchange.Exchange) error {
			delivered++
			return fn(ex)
		})
		damage = append(damage, more...)
		if rerr != nil {
			return damage, rerr
		}
		if !opts.Partial && delivered == 0 && len(damage) > 0 {
			return db.unreadable(ctx, opts, op, damage, err)
		}
	}
	if opts.Salvage && !opts.Live {
		damage = db.addMissing(ctx, opts, damage)
	}
	sort.SliceStable(damage, func(i, j int) bool { return damage[i].ID < damage[j].ID })
	return damage, nil
}

// unreadable is the error of a salvaging scan that met damaged rows and
// could read none (err: why the one pass stopped), with its damage.
//
// It keeps the two forms the readers Scan replaced gave it: the one that
// streamed named the pass by its own name and did not look for rows whose
// body is missing, the one that did not stream named the cause alone and
// did look.
func (db *DB) unreadable(ctx context.Context, opts ScanOptions, op string, damage []Damage, err error) ([]Damage, error) {
	if opts.Stream && !opts.Live {
		err = fmt.Errorf("store: stream after %d: %w", opts.After, err)
	} else if !opts.Live {
		damage = db.addMissing(ctx, opts, damage)
		sort.SliceStable(damage, func(i, j int) bool { return damage[i].ID < damage[j].ID })
	}
	return damage, fmt.Errorf("store: %s: no row could be read: %w", op, err)
}

// addMissing appends to damage the rows whose body is missing, which a
// scan leaves out without a word. If they cannot all be listed, a Partial
// scan names those that were and another none.
func (db *DB) addMissing(ctx context.Context, opts ScanOptions, damage []Damage) []Damage {
	if missing, err := db.rowsMissingBodies(ctx); err == nil || opts.Partial {
		damage = append(damage, missing...)
	}
	return damage
}

// Exchanges returns every exchange in ID order, bodies and chunks loaded:
// a Scan with no options, collected.
func (db *DB) Exchanges(ctx context.Context) ([]exchange.Exchange, error) {
	var out []exchange.Exchange
	if _, err := db.Scan(ctx, ScanOptions{}, func(ex *exchange.Exchange) error {
		out = append(out, *ex)
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// onePass reads the exchanges opts selects in one query, in order, and
// hands each to fn; it stops at the first that cannot be read.
func (db *DB) onePass(ctx context.Context, opts ScanOptions, fn func(*exchange.Exchange) error) error {
	if !opts.Live {
		br := newBodyReader(db.sql)
		br.reuse = opts.Stream
		defer br.close()
		return db.scanAfter(ctx, br, opts.After, fn)
	}
	db.getMu.Lock()
	defer db.getMu.Unlock()
	br := db.sharedReader()
	if opts.Stream {
		// Nobody else holds a body of the cache: Get and the other Live
		// scans hand out copies of those, so their buffers may be reused
		// while this reads.
		br.reuse = true
		defer func() { br.reuse = false }()
		return db.scanAfter(ctx, br, opts.After, fn)
	}
	return db.scanAfter(ctx, br, opts.After, func(ex *exchange.Exchange) error {
		// The cache keeps some of the bodies it rebuilt, for the next
		// read: fn gets its own copy of those.
		ex.ReqBody, ex.RespBody, ex.RespBodyDecoded = br.own(ex.ReqBody), br.own(ex.RespBody), br.own(ex.RespBodyDecoded)
		return fn(ex)
	})
}

// own returns b, or a copy of it if it is the buffer of a cached body.
func (r *bodyReader) own(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	for _, c := range r.cache {
		if len(c.data) > 0 && &c.data[0] == &b[0] {
			return bytes.Clone(b)
		}
	}
	return b
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

// sharedReader is the body reader of Get and of the Live scans; the
// caller holds getMu.
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
