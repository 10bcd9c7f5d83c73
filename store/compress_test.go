package store

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures/longsession"
	"github.com/tsinspect/tsinspect/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// frozenV1 is a real capture written with the first schema (bodies stored
// as they are), kept as it was: files like it must open for ever.
const frozenV1 = "testdata/capture-v1.db"

// copyFile copies src to a new file in a temporary directory.
func copyFile(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// describe is one line per exchange: enough to tell if any body read back
// differently.
func describe(exs []exchange.Exchange) string {
	var b strings.Builder
	for _, ex := range exs {
		fmt.Fprintf(&b, "%d %s %s %d req=%d:%s resp=%d:%s", ex.ID, ex.Method, ex.URL, ex.Status,
			len(ex.ReqBody), hashOf(ex.ReqBody)[:16], len(ex.RespBody), hashOf(ex.RespBody)[:16])
		if ex.RespBodyDecoded != nil {
			fmt.Fprintf(&b, " decoded=%d:%s", len(ex.RespBodyDecoded), hashOf(ex.RespBodyDecoded)[:16])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// storedHashes reads, straight from the tables, the hash each exchange's
// bodies were stored under: the SHA-256 of the bytes recorded.
func storedHashes(t *testing.T, db *DB) map[int64][3]string {
	t.Helper()
	rows, err := db.sql.Query(`SELECT id, req_body, resp_body, coalesce(resp_body_decoded, '') FROM exchange`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64][3]string{}
	for rows.Next() {
		var id int64
		var h [3]string
		if err := rows.Scan(&id, &h[0], &h[1], &h[2]); err != nil {
			t.Fatal(err)
		}
		out[id] = h
	}
	return out
}

// checkBodies compares every body with the hash it was stored under.
func checkBodies(t *testing.T, db *DB, exs []exchange.Exchange) {
	t.Helper()
	hashes := storedHashes(t, db)
	if len(hashes) != len(exs) {
		t.Fatalf("%d exchanges read, %d in the table", len(exs), len(hashes))
	}
	for _, ex := range exs {
		h := hashes[ex.ID]
		if hashOf(ex.ReqBody) != h[0] || hashOf(ex.RespBody) != h[1] {
			t.Errorf("exchange %d: a body differs from what was recorded", ex.ID)
		}
		if h[2] != "" && hashOf(ex.RespBodyDecoded) != h[2] {
			t.Errorf("exchange %d: the decoded response differs from what was recorded", ex.ID)
		}
	}
}

func TestFrozenV1CaptureOpensReadOnly(t *testing.T) {
	path := copyFile(t, frozenV1)
	db, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("a capture of schema version 1 must open read-only: %v", err)
	}
	defer db.Close()
	if db.version != 1 {
		t.Fatalf("schema version %d, want the frozen file's 1", db.version)
	}
	exs, err := db.Exchanges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkBodies(t, db, exs)
	golden.Check(t, filepath.Join("testdata", "capture-v1.golden"), describe(exs), *update)
	for _, ex := range exs {
		got, err := db.Get(context.Background(), ex.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameExchange(t, fmt.Sprintf("Get(%d)", ex.ID), got, ex)
	}
	sums, err := db.Summaries(context.Background(), 0)
	if err != nil || len(sums) != len(exs) {
		t.Fatalf("summaries: %d, %v", len(sums), err)
	}
}

func TestFrozenV1CaptureCompacts(t *testing.T) {
	ctx := context.Background()
	path := copyFile(t, frozenV1)
	before := fileSize(t, path)
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ro.Exchanges(ctx)
	ro.Close()
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(path) // upgrades the schema
	if err != nil {
		t.Fatal(err)
	}
	var reports []CompactProgress
	if err := db.Compact(ctx, func(p CompactProgress) { reports = append(reports, p) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if len(reports) < 2 || !reports[len(reports)-1].Vacuuming {
		t.Fatalf("progress: %+v, want batches then the rewrite", reports)
	}
	last := reports[len(reports)-1]
	if last.Done != last.Total || last.Total == 0 || last.After*4 > last.Before {
		t.Errorf("progress at the end: %+v, want every body done and at least 4:1", last)
	}
	after := fileSize(t, path)
	if after*3 > before {
		t.Errorf("file %d bytes after compacting, %d before: want at most a third", after, before)
	}
	db, err = OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := count(t, db, `SELECT count(*) FROM blob WHERE codec = 0 AND size >= ?`, minCompressed); n != 0 {
		t.Errorf("%d bodies left uncompressed", n)
	}
	got, err := db.Exchanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d exchanges after compacting, %d before", len(got), len(want))
	}
	for i := range got {
		sameExchange(t, fmt.Sprintf("exchange %d", got[i].ID), got[i], want[i])
	}
	checkBodies(t, db, got)
	// Compacting again finds nothing to do.
	rw, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var again []CompactProgress
	if err := rw.Compact(ctx, func(p CompactProgress) { again = append(again, p) }); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	if len(again) != 1 || again[0].Total != 0 {
		t.Errorf("second compaction: %+v, want nothing to do", again)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// record writes exs to a new capture as the recorder does (in flight, then
// complete) and returns its path.
func record(t *testing.T, exs []exchange.Exchange) string {
	t.Helper()
	return recordTB(t, exs)
}

func recordTB(t testing.TB, exs []exchange.Exchange) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "capture.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range exs {
		ex := exs[i]
		first := ex
		first.RespBody, first.RespBodyDecoded, first.State = nil, nil, exchange.StateInFlight
		if err := db.Insert(ctx, &first); err != nil {
			t.Fatal(err)
		}
		ex.ID = first.ID
		if err := db.Update(ctx, &ex); err != nil {
			t.Fatal(err)
		}
		exs[i].ID = ex.ID
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// sameBodies reads the capture at path back, all at once, one at a time
// and each by ID, and compares every body with want's.
func sameBodies(t *testing.T, path string, want []exchange.Exchange) {
	t.Helper()
	ctx := context.Background()
	db, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Exchanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d exchanges read back, %d written", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i].ReqBody, want[i].ReqBody) || !bytes.Equal(got[i].RespBody, want[i].RespBody) ||
			!bytes.Equal(got[i].RespBodyDecoded, want[i].RespBodyDecoded) {
			t.Fatalf("exchange %d: bodies differ from what was written", got[i].ID)
		}
	}
	checkBodies(t, db, got)
	checkRefs(t, got)
	// By ID, from the last (the longest chain of bases) backwards.
	for i := len(want) - 1; i >= 0; i -= 1 + i/7 {
		ex, err := db.Get(ctx, want[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ex.ReqBody, want[i].ReqBody) || !bytes.Equal(ex.RespBody, want[i].RespBody) {
			t.Fatalf("Get(%d): bodies differ from what was written", want[i].ID)
		}
	}
	// Streamed, each request body checked before the next is read.
	i := 0
	_, err = db.Scan(ctx, ScanOptions{Stream: true}, func(ex *exchange.Exchange) error {
		if !bytes.Equal(ex.ReqBody, want[i].ReqBody) || !bytes.Equal(ex.RespBody, want[i].RespBody) {
			return fmt.Errorf("Stream: exchange %d differs", ex.ID)
		}
		i++
		return nil
	})
	if err != nil || i != len(want) {
		t.Fatalf("Stream: %d exchanges, %v", i, err)
	}
	n := 0
	_, err = db.Scan(ctx, ScanOptions{After: want[len(want)/2].ID}, func(ex *exchange.Exchange) error {
		w := want[len(want)/2+1+n]
		if !bytes.Equal(ex.ReqBody, w.ReqBody) {
			return fmt.Errorf("Each: exchange %d differs", ex.ID)
		}
		n++
		return nil
	})
	if err != nil || n != len(want)-len(want)/2-1 {
		t.Fatalf("Each from the middle: %d exchanges, %v", n, err)
	}
}

// checkRefs holds what the store says of each request body to its bytes:
// one key names one body, and a body's first Prefix bytes are those of the
// body keyed Base, read earlier.
func checkRefs(t *testing.T, exs []exchange.Exchange) {
	t.Helper()
	byKey := map[string][]byte{}
	prefixed := 0
	for _, ex := range exs {
		r := ex.ReqRef
		if r.Key == "" {
			t.Fatalf("exchange %d: request body read without a key", ex.ID)
		}
		if b, ok := byKey[r.Key]; ok && !bytes.Equal(b, ex.ReqBody) {
			t.Fatalf("exchange %d: key %s names two different bodies", ex.ID, r.Key)
		}
		byKey[r.Key] = ex.ReqBody
		if r.Base == "" {
			continue
		}
		base, ok := byKey[r.Base]
		if !ok {
			continue // the base is a response body, or not read before
		}
		if r.Prefix > len(base) || r.Prefix > len(ex.ReqBody) || !bytes.Equal(base[:r.Prefix], ex.ReqBody[:r.Prefix]) {
			t.Fatalf("exchange %d: its first %d bytes are not those of its base", ex.ID, r.Prefix)
		}
		prefixed++
	}
	if len(exs) >= 20 && prefixed < len(exs)/4 {
		t.Errorf("only %d of %d request bodies name a base they begin with", prefixed, len(exs))
	}
}

// realExchanges is every exchange of the bundled real capture, plus the
// real requests of the reference samples when they are there.
func realExchanges(t *testing.T) []exchange.Exchange {
	t.Helper()
	db, err := OpenReadOnly(copyFile(t, frozenV1))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exs, err := db.Exchanges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	samples, _ := filepath.Glob("../../shared/samples/*/0*.json")
	for _, s := range samples {
		b, err := os.ReadFile(s)
		if err != nil || !json.Valid(b) || strings.Contains(s, "headers") {
			continue
		}
		ex := exs[len(exs)-1]
		ex.ReqBody = b
		exs = append(exs, ex)
	}
	return exs
}

// generated is a session built on the frozen capture's requests.
func generated(t testing.TB, turns int) []exchange.Exchange {
	t.Helper()
	base, err := longsession.BaseFrom(realExchangesTB(t))
	if err != nil {
		t.Fatal(err)
	}
	exs, _, err := longsession.Collect(context.Background(), base, longsession.Options{
		Turns: turns, Seed: 7, SubagentEvery: 25, SideEvery: 30, CompactEvery: 80})
	if err != nil {
		t.Fatal(err)
	}
	for i := range exs {
		exs[i].ID = 0
	}
	return exs
}

func realExchangesTB(t testing.TB) []exchange.Exchange {
	t.Helper()
	db, err := OpenReadOnly(frozenV1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exs, err := db.Exchanges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return exs
}

// TestBodiesByteForByte stores real and generated captures, reopens them
// and compares every body, read in order and by ID.
func TestBodiesByteForByte(t *testing.T) {
	t.Run("real", func(t *testing.T) {
		exs := realExchanges(t)
		for i := range exs {
			exs[i].ID = 0
		}
		sameBodies(t, record(t, exs), exs)
	})
	t.Run("long", func(t *testing.T) {
		exs := generated(t, 120)
		var raw int64
		for _, ex := range exs {
			raw += int64(len(ex.ReqBody) + len(ex.RespBody))
		}
		path := record(t, exs)
		if size := fileSize(t, path); size*20 > raw {
			t.Errorf("capture %d bytes for %d bytes of bodies: want at most 5 %%", size, raw)
		}
		sameBodies(t, path, exs)
	})
}

// TestBodiesProperty writes conversations that grow, get edited in the
// middle, restart and interleave, with random bytes, and reads them back.
func TestBodiesProperty(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			randBytes := func(n int) []byte {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(rng.IntN(256))
					if rng.IntN(3) > 0 {
						b[i] = "abcdefgh {}\":,\n"[rng.IntN(15)]
					}
				}
				return b
			}
			convs := make([][]byte, 3)
			var exs []exchange.Exchange
			for i := 0; i < 100; i++ {
				c := rng.IntN(len(convs))
				body := append([]byte{}, convs[c]...)
				switch rng.IntN(10) {
				case 0: // restart
					body = randBytes(rng.IntN(3000))
				case 1: // edit in the middle
					if len(body) > 10 {
						at := rng.IntN(len(body))
						body = append(body[:at:at], append(randBytes(rng.IntN(50)), body[min(at+rng.IntN(20), len(body)):]...)...)
					}
				case 2: // the same again
				default:
					body = append(body, randBytes(rng.IntN(4000))...)
				}
				convs[c] = body
				exs = append(exs, exchange.Exchange{Source: "mitm", Method: "POST", URL: "https://x/v1/messages",
					Host: "x", ReqBody: body, RespBody: randBytes(rng.IntN(500)), Status: 200, State: exchange.StateComplete})
			}
			sameBodies(t, record(t, exs), exs)
		})
	}
}

// TestUpdateDropsReplacedBodies: a response updated as it streams leaves
// no partial body behind, even when bodies are compressed.
func TestUpdateDropsReplacedBodies(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	ex := exchange.Exchange{Source: "mitm", Method: "POST", URL: "https://x/", Host: "x",
		ReqBody: bytes.Repeat([]byte("request "), 100), State: exchange.StateInFlight}
	if err := db.Insert(ctx, &ex); err != nil {
		t.Fatal(err)
	}
	resp := []byte{}
	for i := 0; i < 5; i++ {
		resp = append(resp, bytes.Repeat([]byte(fmt.Sprintf("event %d\n", i)), 40)...)
		ex.RespBody = append([]byte{}, resp...)
		if err := db.Update(ctx, &ex); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, db, `SELECT count(*) FROM blob`); n != 2 {
		t.Errorf("%d blobs after the updates, want 2 (request, final response)", n)
	}
	got, err := db.Get(ctx, ex.ID)
	if err != nil || !bytes.Equal(got.RespBody, resp) {
		t.Fatalf("final response read back wrong: %v", err)
	}
}

// BenchmarkRecordLong writes a generated 200-turn session (bodies growing
// to about 1 MB) as the recorder does: each exchange inserted in flight,
// then updated complete. It reports the capture's size against the raw
// bytes (file-%).
func BenchmarkRecordLong(b *testing.B) {
	exs := generated(b, 200)
	var raw int64
	for _, ex := range exs {
		raw += int64(len(ex.ReqBody) + len(ex.RespBody))
	}
	b.SetBytes(raw)
	b.ReportAllocs()
	var size int64
	for b.Loop() {
		ctx := context.Background()
		path := filepath.Join(b.TempDir(), "capture.db")
		db, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		for i := range exs {
			ex := exs[i]
			first := ex
			first.RespBody, first.State = nil, exchange.StateInFlight
			if err := db.Insert(ctx, &first); err != nil {
				b.Fatal(err)
			}
			ex.ID = first.ID
			if err := db.Update(ctx, &ex); err != nil {
				b.Fatal(err)
			}
		}
		size = 0
		for _, p := range []string{path, path + "-wal"} {
			if fi, err := os.Stat(p); err == nil {
				size += fi.Size()
			}
		}
		db.Close()
	}
	b.ReportMetric(100*float64(size)/float64(raw), "file-%")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*len(exs)), "ms/exchange")
}

// BenchmarkReadLong reads a generated 200-turn session back an exchange
// at a time, decompressing every body.
func BenchmarkReadLong(b *testing.B) {
	exs := generated(b, 200)
	var raw int64
	for _, ex := range exs {
		raw += int64(len(ex.ReqBody) + len(ex.RespBody))
	}
	path := recordTB(b, exs)
	db, err := OpenReadOnly(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.SetBytes(raw)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if _, err := db.Scan(context.Background(), ScanOptions{}, func(ex *exchange.Exchange) error { n++; return nil }); err != nil || n != len(exs) {
			b.Fatalf("%d exchanges, %v", n, err)
		}
	}
}

// TestRecordIntoV1Capture: recording into a first-schema capture upgrades
// it; old bodies stay as they were, new ones are compressed, all read
// back.
func TestRecordIntoV1Capture(t *testing.T) {
	ctx := context.Background()
	path := copyFile(t, frozenV1)
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	old, err := db.Exchanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	added := generated(t, 30)
	for i := range added {
		if err := db.Insert(ctx, &added[i]); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, db, `SELECT count(*) FROM blob WHERE codec = 0 AND size >= ?`, minCompressed); n != 16 {
		t.Errorf("%d bodies stored whole, want the 16 of the old capture", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	want := append(old, added...)
	for i := range want {
		if i >= len(old) {
			want[i].ID = added[i-len(old)].ID
		}
	}
	sameBodies(t, path, want)
}

// TestLiveScanReadsOnlyTheNew follows a capture as a live view does:
// each new exchange is read with a Live scan as soon as it is written,
// byte for byte, and rebuilding it decompresses its own bodies only, not
// the chain of earlier bodies its request is stored against.
func TestLiveScanReadsOnlyTheNew(t *testing.T) {
	ctx := context.Background()
	exs := generated(t, 60)
	path := filepath.Join(t.TempDir(), "capture.db")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write := func(ex exchange.Exchange) int64 {
		first := ex
		first.RespBody, first.RespBodyDecoded, first.State = nil, nil, exchange.StateInFlight
		if err := w.Insert(ctx, &first); err != nil {
			t.Fatal(err)
		}
		ex.ID = first.ID
		if err := w.Update(ctx, &ex); err != nil {
			t.Fatal(err)
		}
		return ex.ID
	}
	const head = 40
	var last int64
	for _, ex := range exs[:head] {
		last = write(ex)
	}
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, _, err := collect(ctx, r, ScanOptions{Live: true})
	if err != nil || len(got) != head {
		t.Fatalf("Live scan from 0: %d exchanges, %v: want %d", len(got), err, head)
	}
	// s follows with Live, Stream and Salvage, as the live view does.
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	streamed := 0
	if _, err := s.Scan(ctx, ScanOptions{Salvage: true, Partial: true, Stream: true, Live: true}, func(*exchange.Exchange) error { streamed++; return nil }); err != nil || streamed != head {
		t.Fatalf("streaming Live scan from 0: %d exchanges, %v: want %d", streamed, err, head)
	}
	deep := 0
	for i, ex := range exs[head:] {
		id := write(ex)
		sBefore := s.getReader.decoded
		var sGot []int64
		damage, err := s.Scan(ctx, ScanOptions{After: last, Salvage: true, Partial: true, Stream: true, Live: true}, func(got *exchange.Exchange) error {
			sGot = append(sGot, got.ID)
			if !bytes.Equal(got.ReqBody, ex.ReqBody) || !bytes.Equal(got.RespBody, ex.RespBody) {
				t.Errorf("exchange %d: streamed bodies differ from those written", head+i)
			}
			return nil
		})
		if err != nil || len(damage) > 0 || len(sGot) != 1 || sGot[0] != id {
			t.Fatalf("exchange %d: streaming Live scan after %d gave %v, damage %v, %v: want the new one", head+i, last, sGot, damage, err)
		}
		if n := s.getReader.decoded - sBefore; n > 2 {
			t.Errorf("exchange %d: %d blobs decompressed to stream it: want its request and response only", head+i, n)
		}
		before := r.getReader.decoded
		got, _, err := collect(ctx, r, ScanOptions{After: last, Live: true})
		if err != nil || len(got) != 1 || got[0].ID != id {
			t.Fatalf("exchange %d: Live scan after %d gave %d exchanges, %v: want the new one", head+i, last, len(got), err)
		}
		if !bytes.Equal(got[0].ReqBody, ex.ReqBody) || !bytes.Equal(got[0].RespBody, ex.RespBody) {
			t.Fatalf("exchange %d: bodies differ from those written", head+i)
		}
		if n := r.getReader.decoded - before; n > 2 {
			t.Errorf("exchange %d: %d blobs decompressed to read it: want its request and response only", head+i, n)
		}
		var depth int
		if err := r.sql.QueryRowContext(ctx, `SELECT b.depth FROM exchange e JOIN blob b ON b.hash = e.req_body WHERE e.id = ?`, id).Scan(&depth); err != nil {
			t.Fatal(err)
		}
		if depth >= 3 {
			deep++
		}
		// The caller's copy is its own: changing it leaves the next read whole.
		for j := range got[0].ReqBody {
			got[0].ReqBody[j] = 'x'
		}
		last = id
	}
	if deep == 0 {
		t.Fatal("no new request was stored at depth 3 or more: the test shows nothing")
	}
}
