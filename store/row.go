package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/exchange"
)

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
