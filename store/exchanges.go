package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

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

// exchangeRow is an exchange encoded for its table row.
type exchangeRow struct {
	source                 string
	start, firstByte, end  sql.NullInt64
	method, url, host      string
	reqHeaders             string
	reqBody                []byte
	status                 int
	respHeaders            string
	respBody, respDecoded  []byte // respDecoded nil: column NULL
	chunks, errText, state string
}

func encodeExchange(ex *exchange.Exchange) (*exchangeRow, error) {
	r := &exchangeRow{
		source:      ex.Source,
		method:      ex.Method,
		url:         ex.URL,
		host:        ex.Host,
		reqBody:     ex.ReqBody,
		status:      ex.Status,
		respBody:    ex.RespBody,
		respDecoded: ex.RespBodyDecoded,
		errText:     ex.Error,
		state:       string(ex.State),
	}
	var err error
	if r.start, err = encodeTime(ex.Start); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	if r.firstByte, err = encodeTime(ex.FirstByte); err != nil {
		return nil, fmt.Errorf("first byte: %w", err)
	}
	if r.end, err = encodeTime(ex.End); err != nil {
		return nil, fmt.Errorf("end: %w", err)
	}
	// The capture layer scrubs too; this is the last line of defence. Scrub
	// copies: the caller's headers are theirs.
	if r.reqHeaders, err = encodeHeaders(exchange.Scrub(cloneHeaders(ex.ReqHeaders))); err != nil {
		return nil, fmt.Errorf("request headers: %w", err)
	}
	if r.respHeaders, err = encodeHeaders(exchange.Scrub(cloneHeaders(ex.RespHeaders))); err != nil {
		return nil, fmt.Errorf("response headers: %w", err)
	}
	if r.chunks, err = encodeChunks(ex.Chunks); err != nil {
		return nil, fmt.Errorf("chunks: %w", err)
	}
	return r, nil
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

// selectExchange is the query that reads whole exchanges, for a file of
// the given schema version: files from before migration 0002 have no codec
// columns, and every body in them is stored as is.
func selectExchange(version int64) string {
	blobCols := func(t string) string {
		if version < 2 {
			return "0, NULL, " + t + ".size, " + t + ".data"
		}
		return t + ".codec, " + t + ".base, " + t + ".size, " + t + ".data"
	}
	return `
	SELECT e.id, e.source, e.start_ns, e.first_byte_ns, e.end_ns, e.method, e.url, e.host,
	       e.req_headers, e.req_body, ` + blobCols("rq") + `, e.status, e.resp_headers,
	       e.resp_body, ` + blobCols("rs") + `,
	       e.resp_body_decoded, ` + blobCols("rd") + `, e.chunks, e.error, e.state
	FROM exchange e
	JOIN blob rq ON rq.hash = e.req_body
	JOIN blob rs ON rs.hash = e.resp_body
	LEFT JOIN blob rd ON rd.hash = e.resp_body_decoded`
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

// blobCols receives the four blob columns of one body.
type blobCols struct {
	hash  sql.NullString
	codec sql.NullInt64
	base  sql.NullString
	size  sql.NullInt64
	data  []byte
}

func (b *blobCols) dest() []any { return []any{&b.hash, &b.codec, &b.base, &b.size, &b.data} }

func (b *blobCols) body(ctx context.Context, br *bodyReader, request bool) ([]byte, error) {
	return br.body(ctx, b.hash.String, int(b.codec.Int64), b.base, b.size.Int64, b.data, request)
}

// ref names the body and, when it is stored as a splice of its base, how
// many leading bytes it has of that base.
func (b *blobCols) ref() exchange.BodyRef {
	r := exchange.BodyRef{Key: b.hash.String}
	if b.codec.Int64 == codecSplice && b.base.Valid {
		if p, n := binary.Uvarint(b.data); n > 0 && p > 0 && p <= uint64(b.size.Int64) {
			r.Base, r.Prefix = b.base.String, int(p)
		}
	}
	return r
}

// scanExchange reads one row of selectExchange, decompressing its bodies.
func scanExchange(ctx context.Context, br *bodyReader, row interface{ Scan(...any) error }) (exchange.Exchange, error) {
	var (
		ex                   exchange.Exchange
		start, first, end    sql.NullInt64
		reqHeaders, respHdrs string
		rq, rs, rd           blobCols
		chunks, state        string
	)
	dest := []any{&ex.ID, &ex.Source, &start, &first, &end, &ex.Method, &ex.URL, &ex.Host, &reqHeaders}
	dest = append(dest, rq.dest()...)
	dest = append(dest, &ex.Status, &respHdrs)
	dest = append(dest, rs.dest()...)
	dest = append(dest, rd.dest()...)
	dest = append(dest, &chunks, &ex.Error, &state)
	if err := row.Scan(dest...); err != nil {
		return ex, err
	}
	var err error
	ex.Start, ex.FirstByte, ex.End = decodeTime(start), decodeTime(first), decodeTime(end)
	if ex.ReqHeaders, err = decodeHeaders(reqHeaders); err != nil {
		return ex, fmt.Errorf("exchange %d: request headers: %w", ex.ID, err)
	}
	if ex.RespHeaders, err = decodeHeaders(respHdrs); err != nil {
		return ex, fmt.Errorf("exchange %d: response headers: %w", ex.ID, err)
	}
	if ex.Chunks, err = decodeChunks(chunks); err != nil {
		return ex, fmt.Errorf("exchange %d: chunks: %w", ex.ID, err)
	}
	ref := rq.ref() // before body: the reader may reuse rq.data's buffer
	if ex.ReqBody, err = rq.body(ctx, br, true); err != nil {
		return ex, fmt.Errorf("exchange %d: request body: %w", ex.ID, err)
	}
	ex.ReqRef = ref
	if ex.RespBody, err = rs.body(ctx, br, false); err != nil {
		return ex, fmt.Errorf("exchange %d: response body: %w", ex.ID, err)
	}
	if rd.hash.Valid {
		if ex.RespBodyDecoded, err = rd.body(ctx, br, false); err != nil {
			return ex, fmt.Errorf("exchange %d: decoded response body: %w", ex.ID, err)
		}
	}
	ex.State = exchange.State(state)
	return ex, nil
}

// nonNil turns the nil SQLite gives for a zero-length blob into an empty
// slice, so that "empty" reads back the same however it was written.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// encodeTime gives the zero time as NULL and any other time as UTC unix
// nanoseconds, refusing times that do not fit (before 1678 or after 2262).
func encodeTime(t time.Time) (sql.NullInt64, error) {
	if t.IsZero() {
		return sql.NullInt64{}, nil
	}
	ns := t.UnixNano()
	if !time.Unix(0, ns).Equal(t) {
		return sql.NullInt64{}, fmt.Errorf("time %s out of range", t.Format(time.RFC3339))
	}
	return sql.NullInt64{Int64: ns, Valid: true}, nil
}

func decodeTime(ns sql.NullInt64) time.Time {
	if !ns.Valid {
		return time.Time{}
	}
	return time.Unix(0, ns.Int64).UTC()
}

// headerJSON is one stored header. A name or value that is not valid UTF-8
// (HTTP allows such bytes) would be mangled by JSON, so it is kept in
// base64 instead.
type headerJSON struct {
	Name        string `json:"name"`
	Value       string `json:"value"`
	NameBase64  string `json:"name_base64,omitempty"`
	ValueBase64 string `json:"value_base64,omitempty"`
}

func cloneHeaders(hs []exchange.Header) []exchange.Header {
	if hs == nil {
		return nil
	}
	return append(make([]exchange.Header, 0, len(hs)), hs...)
}

// encodeHeaders gives nil as "null" and an empty list as "[]", so that each
// reads back as it was.
func encodeHeaders(hs []exchange.Header) (string, error) {
	var js []headerJSON
	if hs != nil {
		js = make([]headerJSON, len(hs))
	}
	for i, h := range hs {
		if utf8.ValidString(h.Name) {
			js[i].Name = h.Name
		} else {
			js[i].NameBase64 = base64.StdEncoding.EncodeToString([]byte(h.Name))
		}
		if utf8.ValidString(h.Value) {
			js[i].Value = h.Value
		} else {
			js[i].ValueBase64 = base64.StdEncoding.EncodeToString([]byte(h.Value))
		}
	}
	b, err := json.Marshal(js)
	return string(b), err
}

func decodeHeaders(s string) ([]exchange.Header, error) {
	var js []headerJSON
	if err := json.Unmarshal([]byte(s), &js); err != nil {
		return nil, err
	}
	if js == nil {
		return nil, nil
	}
	hs := make([]exchange.Header, len(js))
	for i, h := range js {
		hs[i] = exchange.Header{Name: h.Name, Value: h.Value}
		if h.NameBase64 != "" {
			b, err := base64.StdEncoding.DecodeString(h.NameBase64)
			if err != nil {
				return nil, err
			}
			hs[i].Name = string(b)
		}
		if h.ValueBase64 != "" {
			b, err := base64.StdEncoding.DecodeString(h.ValueBase64)
			if err != nil {
				return nil, err
			}
			hs[i].Value = string(b)
		}
	}
	return hs, nil
}

// chunkJSON is one stored chunk; At is unix nanoseconds, absent for the zero
// time.
type chunkJSON struct {
	Offset int64  `json:"offset"`
	Size   int    `json:"size"`
	At     *int64 `json:"at,omitempty"`
}

func encodeChunks(cs []exchange.Chunk) (string, error) {
	var js []chunkJSON
	if cs != nil {
		js = make([]chunkJSON, len(cs))
	}
	for i, c := range cs {
		js[i] = chunkJSON{Offset: c.Offset, Size: c.Size}
		at, err := encodeTime(c.At)
		if err != nil {
			return "", fmt.Errorf("chunk %d: %w", i, err)
		}
		if at.Valid {
			js[i].At = &at.Int64
		}
	}
	b, err := json.Marshal(js)
	return string(b), err
}

func decodeChunks(s string) ([]exchange.Chunk, error) {
	var js []chunkJSON
	if err := json.Unmarshal([]byte(s), &js); err != nil {
		return nil, err
	}
	if js == nil {
		return nil, nil
	}
	cs := make([]exchange.Chunk, len(js))
	for i, c := range js {
		cs[i] = exchange.Chunk{Offset: c.Offset, Size: c.Size}
		if c.At != nil {
			cs[i].At = decodeTime(sql.NullInt64{Int64: *c.At, Valid: true})
		}
	}
	return cs, nil
}
