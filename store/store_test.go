package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/testwait"
)

func openTemp(t testing.TB) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "capture.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func count(t *testing.T, db *DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.sql.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// fullExchange has every field set, with values chosen to catch lossy
// encodings: nanosecond times in a non-UTC zone, repeated and oddly spelled
// headers, a header value that is not UTF-8, binary bodies.
func fullExchange() exchange.Exchange {
	zone := time.FixedZone("X", 5*3600+30*60)
	start := time.Date(2025, 3, 4, 5, 6, 7, 123456789, zone)
	return exchange.Exchange{
		Source:    "mitm",
		Start:     start,
		FirstByte: start.Add(350*time.Millisecond + 7),
		End:       start.Add(2*time.Second + 11),
		Method:    "POST",
		URL:       "https://api.anthropic.com/v1/messages?beta=true",
		Host:      "api.anthropic.com",
		ReqHeaders: []exchange.Header{
			{Name: "Content-Type", Value: "application/json"},
			{Name: "anthropic-beta", Value: "a"},
			{Name: "Anthropic-Beta", Value: "b & <c>"},
			{Name: "X-Latin1", Value: "caf\xe9"},
			{Name: "accept", Value: ""},
		},
		ReqBody:     []byte(`{"model":"claude","messages":[{"role":"user","content":"hi \u00e9"}]}`),
		Status:      200,
		RespHeaders: []exchange.Header{{Name: "Content-Encoding", Value: "gzip"}, {Name: "Content-Type", Value: "text/event-stream"}},
		RespBody:    []byte{0x1f, 0x8b, 0x08, 0x00, 0x00, 0xff, 0x00, 0x01},
		RespBodyDecoded: []byte("event: message_start\ndata: {}\n\n" +
			"event: message_stop\ndata: {}\n\n"),
		Chunks: []exchange.Chunk{
			{Offset: 0, Size: 5, At: start.Add(350*time.Millisecond + 7)},
			{Offset: 5, Size: 3, At: start.Add(900*time.Millisecond + 1)},
		},
		Error: "upstream said: \"no\"",
		State: exchange.StateComplete,
	}
}

// asStored is what ex reads back as: times in UTC.
func asStored(ex exchange.Exchange) exchange.Exchange {
	utc := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return t.UTC()
	}
	ex.Start, ex.FirstByte, ex.End = utc(ex.Start), utc(ex.FirstByte), utc(ex.End)
	ex.Chunks = append([]exchange.Chunk(nil), ex.Chunks...)
	for i := range ex.Chunks {
		ex.Chunks[i].At = utc(ex.Chunks[i].At)
	}
	return ex
}

func sameExchange(t *testing.T, what string, got, want exchange.Exchange) {
	t.Helper()
	got.ReqRef, want.ReqRef = exchange.BodyRef{}, exchange.BodyRef{} // a hint of the read, tested on its own
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %#v\nwant %#v", what, got, want)
	}
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	in := fullExchange()
	if err := db.Insert(ctx, &in); err != nil {
		t.Fatal(err)
	}
	if in.ID == 0 {
		t.Fatal("Insert did not set ID")
	}
	want := asStored(in)

	got, err := db.Get(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameExchange(t, "Get", got, want)
	if got.Start.Location() != time.UTC {
		t.Errorf("Start location = %v, want UTC", got.Start.Location())
	}
	if !got.Start.Equal(in.Start) || got.Start.Nanosecond() != 123456789 {
		t.Errorf("Start = %v, want %v", got.Start, in.Start)
	}
	all, err := db.Exchanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 {
		t.Fatalf("Exchanges: %d, want 1", len(all))
	}
	sameExchange(t, "Exchanges", all[0], want)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// And from disk, through a read-only handle.
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	got, err = ro.Get(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameExchange(t, "Get after reopen", got, want)

	sums, err := ro.Summaries(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantSum := Summary{
		ID: in.ID, Source: "mitm", Start: want.Start, FirstByte: want.FirstByte, End: want.End,
		Method: "POST", URL: in.URL, Host: in.Host, Status: 200,
		ReqBytes: int64(len(in.ReqBody)), RespBytes: int64(len(in.RespBody)),
		State: exchange.StateComplete, Error: in.Error,
	}
	if len(sums) != 1 || sums[0] != wantSum {
		t.Errorf("Summaries = %+v\nwant %+v", sums, wantSum)
	}

	if _, err := ro.Get(ctx, in.ID+1); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of a missing ID: %v, want ErrNotFound", err)
	}
}

func TestEmptyNilAndZero(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)

	// nil bodies and headers, zero times, no chunks, no decoded body.
	a := exchange.Exchange{Source: "reverse", Method: "GET", State: exchange.StateInFlight}
	// Empty (non-nil) everything, the Unix epoch as a real time, and an
	// empty decoded body, which is not the same as none.
	epoch := time.Unix(0, 0).UTC()
	b := exchange.Exchange{
		Start:           epoch,
		ReqHeaders:      []exchange.Header{},
		ReqBody:         []byte{},
		RespHeaders:     []exchange.Header{},
		RespBody:        []byte{},
		RespBodyDecoded: []byte{},
		Chunks:          []exchange.Chunk{{Offset: 0, Size: 0}},
		State:           exchange.StateUpstreamFailed,
	}
	for _, ex := range []*exchange.Exchange{&a, &b} {
		if err := db.Insert(ctx, ex); err != nil {
			t.Fatal(err)
		}
	}
	if b.ID <= a.ID {
		t.Errorf("IDs %d then %d: not increasing", a.ID, b.ID)
	}

	ga, err := db.Get(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ga.ReqBody == nil || len(ga.ReqBody) != 0 || ga.RespBody == nil || len(ga.RespBody) != 0 {
		t.Errorf("nil bodies read back as %#v, %#v; want empty", ga.ReqBody, ga.RespBody)
	}
	if ga.RespBodyDecoded != nil {
		t.Errorf("nil decoded body read back as %#v, want nil", ga.RespBodyDecoded)
	}
	if !ga.Start.IsZero() || !ga.FirstByte.IsZero() || !ga.End.IsZero() {
		t.Errorf("zero times read back as %v %v %v", ga.Start, ga.FirstByte, ga.End)
	}
	if ga.ReqHeaders != nil || ga.RespHeaders != nil || ga.Chunks != nil {
		t.Errorf("nil lists read back as %#v %#v %#v", ga.ReqHeaders, ga.RespHeaders, ga.Chunks)
	}

	gb, err := db.Get(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if gb.RespBodyDecoded == nil || len(gb.RespBodyDecoded) != 0 {
		t.Errorf("empty decoded body read back as %#v, want empty non-nil", gb.RespBodyDecoded)
	}
	if gb.Start.IsZero() || !gb.Start.Equal(epoch) {
		t.Errorf("epoch start read back as %v", gb.Start)
	}
	if !gb.Chunks[0].At.IsZero() {
		t.Errorf("zero chunk time read back as %v", gb.Chunks[0].At)
	}
	sameExchange(t, "empty exchange", gb, asStored(b))

	// One empty blob serves every empty body.
	if n := count(t, db, `SELECT count(*) FROM blob`); n != 1 {
		t.Errorf("%d blob rows, want 1 (the empty body)", n)
	}
}

func TestTimeOutOfRange(t *testing.T) {
	db := openTemp(t)
	ex := exchange.Exchange{Start: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}
	err := db.Insert(context.Background(), &ex)
	if err == nil || !strings.HasPrefix(err.Error(), "store: insert: start: ") {
		t.Errorf("Insert with a year-3000 start: %v, want an out-of-range error", err)
	}
	if n := count(t, db, `SELECT count(*) FROM exchange`); n != 0 {
		t.Errorf("%d rows written", n)
	}
}

func TestBlobDedup(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	body := bytes.Repeat([]byte(`{"role":"user","content":"same prefix"}`), 100)
	for i := 0; i < 2; i++ {
		ex := exchange.Exchange{
			ReqBody:  body,
			RespBody: []byte{byte('a' + i)},
			State:    exchange.StateComplete,
		}
		if err := db.Insert(ctx, &ex); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, db, `SELECT count(*) FROM blob WHERE hash = ?`, hashOf(body)); n != 1 {
		t.Errorf("%d blob rows for the shared body, want 1", n)
	}
	if n := count(t, db, `SELECT count(*) FROM blob`); n != 3 {
		t.Errorf("%d blob rows, want 3 (shared request, two responses)", n)
	}
	all, err := db.Exchanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || !bytes.Equal(all[0].ReqBody, body) || !bytes.Equal(all[1].ReqBody, body) {
		t.Errorf("shared body did not read back into both exchanges")
	}
}

func TestUpdateInFlight(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	full := fullExchange()
	ex := full
	ex.FirstByte, ex.End = time.Time{}, time.Time{}
	ex.Status, ex.RespHeaders, ex.RespBody, ex.RespBodyDecoded, ex.Chunks = 0, nil, nil, nil, nil
	ex.Error, ex.State = "", exchange.StateInFlight
	if err := db.Insert(ctx, &ex); err != nil {
		t.Fatal(err)
	}
	other := exchange.Exchange{RespBody: []byte("partial 1"), State: exchange.StateComplete}
	if err := db.Insert(ctx, &other); err != nil {
		t.Fatal(err)
	}

	sums, err := db.Summaries(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sums[0].State != exchange.StateInFlight || sums[0].RespBytes != 0 || !sums[0].End.IsZero() {
		t.Errorf("in-flight summary = %+v", sums[0])
	}

	// Two progress updates as the body streams in, then the end.
	for _, part := range []string{"partial 1", "partial 1 and 2"} {
		ex.RespBody = []byte(part)
		ex.Status = 200
		if err := db.Update(ctx, &ex); err != nil {
			t.Fatal(err)
		}
	}
	full.ID = ex.ID
	if err := db.Update(ctx, &full); err != nil {
		t.Fatal(err)
	}

	got, err := db.Get(ctx, ex.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameExchange(t, "after Update", got, asStored(full))
	if n := count(t, db, `SELECT count(*) FROM exchange`); n != 2 {
		t.Errorf("%d exchange rows after updates, want 2", n)
	}
	// The partial body only this exchange used is gone; the one another
	// exchange also uses stays.
	if n := count(t, db, `SELECT count(*) FROM blob WHERE hash = ?`, hashOf([]byte("partial 1 and 2"))); n != 0 {
		t.Errorf("replaced partial body still stored")
	}
	if n := count(t, db, `SELECT count(*) FROM blob WHERE hash = ?`, hashOf([]byte("partial 1"))); n != 1 {
		t.Errorf("body still used by another exchange was deleted")
	}
	if o, err := db.Get(ctx, other.ID); err != nil || string(o.RespBody) != "partial 1" {
		t.Errorf("other exchange after updates: %q, %v", o.RespBody, err)
	}

	missing := exchange.Exchange{ID: other.ID + 100}
	if err := db.Update(ctx, &missing); !errors.Is(err, ErrNotFound) {
		t.Errorf("Update of a missing ID: %v, want ErrNotFound", err)
	}
}

func TestReaderWhileWriting(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "live.db")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	first := exchange.Exchange{Method: "POST", State: exchange.StateComplete}
	if err := w.Insert(ctx, &first); err != nil {
		t.Fatal(err)
	}

	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seen, err := r.Exchanges(ctx)
	if err != nil || len(seen) != 1 {
		t.Fatalf("reader sees %d exchanges, %v; want 1", len(seen), err)
	}
	last := seen[0].ID

	const n = 50
	done := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			ex := exchange.Exchange{
				Method:   "POST",
				ReqBody:  bytes.Repeat([]byte{byte(i)}, 10000),
				RespBody: []byte("data"),
				State:    exchange.StateInFlight,
			}
			if err := w.Insert(ctx, &ex); err != nil {
				done <- err
				return
			}
			ex.State = exchange.StateComplete
			if err := w.Update(ctx, &ex); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()

	got := 0
	deadline := time.Now().Add(testwait.Patience)
	for got < n {
		if time.Now().After(deadline) {
			t.Fatalf("reader saw %d of %d new exchanges", got, n)
		}
		news, _, err := collect(ctx, r, ScanOptions{After: last, Live: true})
		if err != nil {
			t.Fatalf("reader while writing: %v", err)
		}
		for _, ex := range news {
			if ex.ID <= last {
				t.Fatalf("Live scan after %d returned ID %d", last, ex.ID)
			}
			if len(ex.ReqBody) != 10000 || ex.ReqBody[0] != byte(got) {
				t.Fatalf("exchange %d: wrong request body", ex.ID)
			}
			last = ex.ID
			got++
		}
		time.Sleep(time.Millisecond)
	}
	if err := <-done; err != nil {
		t.Fatalf("writer: %v", err)
	}
	if err := r.Insert(ctx, &exchange.Exchange{}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Insert through a read-only handle: %v, want ErrReadOnly", err)
	}
	if err := r.SetMeta(ctx, "k", "v"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("SetMeta through a read-only handle: %v, want ErrReadOnly", err)
	}
}

func TestOpenReadOnlyBadFiles(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.db")
	if err := os.WriteFile(text, []byte(strings.Repeat("just some text\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.db")
	if err := os.WriteFile(zero, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "other.db")
	odb, err := sql.Open("sqlite3", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := odb.Exec(`CREATE TABLE t (x); INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	odb.Close()
	emptyDB := filepath.Join(dir, "empty.db")
	edb, err := sql.Open("sqlite3", emptyDB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := edb.Exec(`PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	edb.Close()

	missing := filepath.Join(dir, "missing.db")
	if _, err := OpenReadOnly(missing); !errors.Is(err, fs.ErrNotExist) ||
		err.Error() != "store: open "+missing+": file does not exist" {
		t.Errorf("missing file: %v", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenReadOnly created the missing file")
	}
	for _, p := range []string{text, zero, foreign, emptyDB} {
		db, err := OpenReadOnly(p)
		if err == nil {
			db.Close()
		}
		want := "store: open " + p + ": not a tsinspect capture file"
		if !errors.Is(err, ErrNotCapture) || err.Error() != want {
			t.Errorf("OpenReadOnly(%s): %v, want %q", filepath.Base(p), err, want)
		}
	}
	// Read-write Open refuses them too, and leaves them alone.
	for _, p := range []string{text, foreign} {
		before, _ := os.ReadFile(p)
		db, err := Open(p)
		if err == nil {
			db.Close()
		}
		if !errors.Is(err, ErrNotCapture) {
			t.Errorf("Open(%s): %v, want ErrNotCapture", filepath.Base(p), err)
		}
		if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
			t.Errorf("Open(%s) changed the file", filepath.Base(p))
		}
	}
	if _, err := OpenReadOnly(dir); err == nil {
		t.Errorf("OpenReadOnly of a directory succeeded")
	}
}

func TestMigrationsIdempotent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "twice.db")
	migs, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := 0; i < 2; i++ {
		db, err := Open(path)
		if err != nil {
			t.Fatalf("open #%d: %v", i+1, err)
		}
		if n := count(t, db, `SELECT count(*) FROM schema_version`); n != len(migs) {
			t.Errorf("open #%d: %d schema_version rows, want %d", i+1, n, len(migs))
		}
		if n := count(t, db, `SELECT max(version) FROM schema_version`); n != len(migs) {
			t.Errorf("open #%d: schema version %d, want %d", i+1, n, len(migs))
		}
		if id, err := db.applicationID(ctx); err != nil || id != applicationID {
			t.Errorf("application_id = %x, %v", id, err)
		}
		ex := exchange.Exchange{State: exchange.StateComplete}
		if err := db.Insert(ctx, &ex); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ex.ID)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if ids[1] <= ids[0] {
		t.Errorf("IDs %v after reopening", ids)
	}
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	all, err := db.Exchanges(ctx)
	if err != nil || len(all) != 2 {
		t.Errorf("after reopening: %d exchanges, %v; want 2", len(all), err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.Exec(`INSERT INTO schema_version (version, applied_ns) VALUES (999, 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err := Open(path); err == nil || !strings.Contains(err.Error(), "newer") {
		if err == nil {
			db.Close()
		}
		t.Errorf("Open of a newer capture: %v", err)
	}
	if db, err := OpenReadOnly(path); err == nil || !strings.Contains(err.Error(), "newer") {
		if err == nil {
			db.Close()
		}
		t.Errorf("OpenReadOnly of a newer capture: %v", err)
	}
}

func TestEmbeddedMigrations(t *testing.T) {
	migs, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range migs {
		if m.version != int64(i+1) || strings.TrimSpace(m.sql) == "" {
			t.Errorf("migration %d: %+v", i, m)
		}
	}
}

// TestPragmasOnEveryConnection holds several pooled connections at once:
// each must have the settings, which only the DSN can guarantee.
func TestPragmasOnEveryConnection(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	var conns []*sql.Conn
	for i := 0; i < 3; i++ {
		c, err := db.sql.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	for i, c := range conns {
		var mode string
		var fk, busy int
		if err := c.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || fk != 1 || busy != 5000 {
			t.Errorf("connection %d: journal_mode=%s foreign_keys=%d busy_timeout=%d", i, mode, fk, busy)
		}
	}
	// Foreign keys are enforced: an exchange cannot point at a missing blob.
	_, err := db.sql.Exec(`INSERT INTO exchange (source, method, url, host, req_headers, req_body,
		status, resp_headers, resp_body, chunks, error, state)
		VALUES ('', '', '', '', 'null', 'nope', 0, 'null', 'nope', 'null', '', '')`)
	if err == nil {
		t.Error("row referencing a missing blob was accepted")
	}
}

func TestOddPath(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a dir#1")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "we?ird %41 name.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if db.Path() != path {
		t.Errorf("Path() = %q, want %q", db.Path(), path)
	}
	if err := db.SetMeta(ctx, "mode", "mitm"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("capture not at the path given: %v", err)
	}
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if v, err := ro.Meta(ctx, "mode"); v != "mitm" || err != nil {
		t.Errorf("Meta = %q, %v", v, err)
	}
}

func TestMeta(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	if v, err := db.Meta(ctx, "recorder_version"); v != "" || err != nil {
		t.Errorf("absent key: %q, %v; want \"\", nil", v, err)
	}
	for _, v := range []string{"0.1.0", "0.2.0"} {
		if err := db.SetMeta(ctx, "recorder_version", v); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := db.Meta(ctx, "recorder_version"); v != "0.2.0" || err != nil {
		t.Errorf("Meta = %q, %v; want 0.2.0", v, err)
	}
	if n := count(t, db, `SELECT count(*) FROM meta`); n != 1 {
		t.Errorf("%d meta rows, want 1", n)
	}
}

func TestFileIsPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unix permissions")
	}
	db := openTemp(t)
	fi, err := os.Stat(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("capture file mode %v, want no access for group and others", perm)
	}
}

// TestCredentialCanary plants credentials in every header that carries one,
// through Insert and Update, and looks for them in the raw bytes on disk.
func TestCredentialCanary(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "canary.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{
		"x-api-key":     "sk-ant-api03-CANARY-apikey-7f3a9c",
		"Authorization": "Bearer CANARY-oauth-token-51d2e8",
		"Cookie":        "session=CANARY-cookie-88b1c0",
		"Set-Cookie":    "sid=CANARY-setcookie-2e4f60; HttpOnly",
	}
	ex := exchange.Exchange{
		Method: "POST",
		ReqHeaders: []exchange.Header{
			{Name: "X-Api-Key", Value: secrets["x-api-key"]},
			{Name: "Authorization", Value: secrets["Authorization"]},
			{Name: "Cookie", Value: secrets["Cookie"]},
			{Name: "Content-Type", Value: "application/json"},
		},
		ReqBody: []byte(`{}`),
		State:   exchange.StateInFlight,
	}
	if err := db.Insert(ctx, &ex); err != nil {
		t.Fatal(err)
	}
	if ex.ReqHeaders[0].Value != secrets["x-api-key"] {
		t.Errorf("Insert changed the caller's headers")
	}
	ex.Status = 200
	ex.RespHeaders = []exchange.Header{{Name: "set-cookie", Value: secrets["Set-Cookie"]}}
	ex.State = exchange.StateComplete
	if err := db.Update(ctx, &ex); err != nil {
		t.Fatal(err)
	}
	// A second exchange goes in with its response at once.
	ex2 := ex
	if err := db.Insert(ctx, &ex2); err != nil {
		t.Fatal(err)
	}

	got, err := db.Get(ctx, ex.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v := got.ReqHeader("x-api-key"); v != exchange.Fingerprint(secrets["x-api-key"]) {
		t.Errorf("stored x-api-key = %q, want its fingerprint", v)
	}
	if v := got.RespHeader("set-cookie"); v != exchange.Fingerprint(secrets["Set-Cookie"]) {
		t.Errorf("stored set-cookie = %q, want its fingerprint", v)
	}
	if v := got.ReqHeader("content-type"); v != "application/json" {
		t.Errorf("ordinary header changed to %q", v)
	}

	check := func(when string, mustHaveWAL bool) {
		t.Helper()
		var all []byte
		for _, p := range []string{path, path + "-wal"} {
			b, err := os.ReadFile(p)
			if errors.Is(err, fs.ErrNotExist) && !(mustHaveWAL && strings.HasSuffix(p, "-wal")) {
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			for name, secret := range secrets {
				for _, needle := range []string{secret, strings.SplitN(secret, "CANARY", 2)[1]} {
					if bytes.Contains(b, []byte(needle)) {
						t.Errorf("%s: %s value %q found in %s", when, name, needle, filepath.Base(p))
					}
				}
			}
			all = append(all, b...)
		}
		for name, secret := range secrets {
			if !bytes.Contains(all, []byte(exchange.Fingerprint(secret))) {
				t.Errorf("%s: fingerprint of %s not found on disk", when, name)
			}
		}
	}
	check("while open", true)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	check("after close", false)
}

func BenchmarkInsert(b *testing.B) {
	ctx := context.Background()
	db := openTemp(b)
	body := bytes.Repeat([]byte("0123456789abcdef"), 100<<10/16)
	ex := exchange.Exchange{
		Method:     "POST",
		ReqHeaders: []exchange.Header{{Name: "Content-Type", Value: "application/json"}},
		RespBody:   []byte("ok"),
		State:      exchange.StateComplete,
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint64(body, uint64(i)) // a new blob every time
		ex.ReqBody = body
		if err := db.Insert(ctx, &ex); err != nil {
			b.Fatal(err)
		}
	}
}

// smallExchange is a small Messages exchange, different for each i.
func smallExchange(i int) *exchange.Exchange {
	return &exchange.Exchange{
		Method: "POST", URL: "http://127.0.0.1/v1/messages", Status: 200, State: exchange.StateComplete,
		ReqHeaders: []exchange.Header{{Name: "Content-Type", Value: "application/json"}},
		ReqBody:    []byte(fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hello %d, and some more words to compress"}]}`, i)),
		RespBody:   []byte(fmt.Sprintf("event: message_start\ndata: {\"type\":\"message_start\",\"n\":%d}\n\nevent: message_stop\ndata: {}\n\n", i)),
	}
}

// TestSmallExchangesAllocateLittle: storing an exchange of a few hundred
// bytes reuses the zstd encoders. A new encoder per body allocated and
// cleared about 3 MB of tables, 6 MB of garbage per exchange.
func TestSmallExchangesAllocateLittle(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	for i := 0; i < 5; i++ { // warm up: the first encoders are made
		if err := db.Insert(ctx, smallExchange(i)); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 50
	for i := 5; i < 5+n; i++ {
		if err := db.Insert(ctx, smallExchange(i)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 256<<10 {
		t.Errorf("%d bytes allocated per small exchange stored, want at most 256 KiB", per)
	}
	exs, err := db.Exchanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, ex := range exs {
		want := smallExchange(i)
		if !bytes.Equal(ex.ReqBody, want.ReqBody) || !bytes.Equal(ex.RespBody, want.RespBody) {
			t.Fatalf("exchange %d: bodies differ from what was written", i)
		}
	}
}

// BenchmarkInsertSmall stores a small exchange (about 200 bytes each way).
func BenchmarkInsertSmall(b *testing.B) {
	ctx := context.Background()
	db := openTemp(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := db.Insert(ctx, smallExchange(i)); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSettleInFlight(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	done := fullExchange()
	done.State = exchange.StateComplete
	if err := db.Insert(ctx, &done); err != nil {
		t.Fatal(err)
	}
	cut := fullExchange()
	cut.State = exchange.StateInFlight
	cut.Error = ""
	if err := db.Insert(ctx, &cut); err != nil {
		t.Fatal(err)
	}
	n, err := db.SettleInFlight(ctx, "recorder gone")
	if err != nil || n != 1 {
		t.Fatalf("settled %d, %v; want 1", n, err)
	}
	got, err := db.Get(ctx, cut.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != exchange.StateInterrupted || got.Error != "recorder gone" || !bytes.Equal(got.RespBody, cut.RespBody) {
		t.Errorf("settled row: state %s, error %q, body kept %v", got.State, got.Error, bytes.Equal(got.RespBody, cut.RespBody))
	}
	if other, _ := db.Get(ctx, done.ID); other.State != exchange.StateComplete {
		t.Errorf("a complete row became %s", other.State)
	}
	if n, _ := db.SettleInFlight(ctx, "again"); n != 0 {
		t.Errorf("second settle changed %d rows", n)
	}
}

// BenchmarkInsertThenUpdateSmall stores a small exchange as a recorder
// does one that runs past its hold: in flight first, then its final state.
func BenchmarkInsertThenUpdateSmall(b *testing.B) {
	ctx := context.Background()
	db := openTemp(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ex := smallExchange(i)
		final := *ex
		ex.State, ex.RespBody = exchange.StateInFlight, ex.RespBody[:20]
		if err := db.Insert(ctx, ex); err != nil {
			b.Fatal(err)
		}
		final.ID = ex.ID
		if err := db.Update(ctx, &final); err != nil {
			b.Fatal(err)
		}
	}
}

// collect runs a Scan with opts and returns the exchanges it read.
func collect(ctx context.Context, db *DB, opts ScanOptions) ([]exchange.Exchange, []Damage, error) {
	var out []exchange.Exchange
	damage, err := db.Scan(ctx, opts, func(ex *exchange.Exchange) error {
		out = append(out, *ex)
		return nil
	})
	if err != nil {
		return nil, damage, err
	}
	return out, damage, nil
}
