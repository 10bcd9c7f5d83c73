package har

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

func sample() []exchange.Exchange {
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"input_tokens":12}`))
	zw.Close()
	sse := []byte("event: message_start\ndata: {}\n\nevent: message_stop\ndata: {}\n\n")
	return []exchange.Exchange{
		{
			Source: "mitm", Start: t0, FirstByte: t0.Add(300 * time.Millisecond), End: t0.Add(900 * time.Millisecond),
			Method: "POST", URL: "https://api.anthropic.com/v1/messages?beta=true", Host: "api.anthropic.com",
			ReqHeaders: []exchange.Header{{Name: "Content-Type", Value: "application/json"}, {Name: "X-Api-Key", Value: exchange.Fingerprint("sk-ant-secret")}},
			ReqBody:    []byte(`{"model":"m","stream":true}`),
			Status:     200, RespHeaders: []exchange.Header{{Name: "Content-Type", Value: "text/event-stream"}, {Name: "Request-Id", Value: "req_1"}},
			RespBody: sse,
			Chunks: []exchange.Chunk{
				{Offset: 0, Size: 31, At: t0.Add(300 * time.Millisecond)},
				{Offset: 31, Size: len(sse) - 31, At: t0.Add(900*time.Millisecond + 1)},
			},
			State: exchange.StateComplete,
		},
		{
			Source: "reverse", Start: t0.Add(time.Second), FirstByte: t0.Add(1100 * time.Millisecond), End: t0.Add(1200 * time.Millisecond),
			Method: "POST", URL: "https://api.anthropic.com/v1/messages/count_tokens", Host: "api.anthropic.com",
			ReqHeaders: []exchange.Header{}, ReqBody: []byte{0xff, 0xfe, 0},
			Status: 200, RespHeaders: []exchange.Header{{Name: "Content-Encoding", Value: "gzip"}},
			RespBody: gz.Bytes(), RespBodyDecoded: []byte(`{"input_tokens":12}`),
			Chunks: []exchange.Chunk{{Offset: 0, Size: gz.Len(), At: t0.Add(1200 * time.Millisecond)}},
			State:  exchange.StateComplete,
		},
		{
			Source: "mitm", Start: t0.Add(2 * time.Second), End: t0.Add(3 * time.Second),
			Method: "POST", URL: "https://api.anthropic.com/v1/messages", Host: "api.anthropic.com",
			ReqHeaders: []exchange.Header{}, ReqBody: []byte(`{}`),
			Status: 502, RespHeaders: []exchange.Header{}, RespBody: []byte(`{"type":"error"}`),
			Error: "upstream failed", State: exchange.StateUpstreamFailed,
		},
		{
			Source: "mitm", Start: t0.Add(4 * time.Second),
			Method: "GET", URL: "https://api.anthropic.com/api/hello", Host: "api.anthropic.com",
			ReqHeaders: []exchange.Header{}, ReqBody: []byte{}, RespBody: []byte{},
			State: exchange.StateInFlight,
		},
	}
}

// TestRoundTrip exports exchanges and imports them again: every field but
// the source comes back as it was, bodies and times to the byte and the
// nanosecond; by default a response compressed on the wire comes back
// decoded (HAR keeps it so), in one chunk, and with Exact as it was.
func TestRoundTrip(t *testing.T) {
	for _, exact := range []bool{false, true} {
		in := sample()
		var buf bytes.Buffer
		if err := Write(&buf, in, "test", Options{Exact: exact}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), "sk-ant-secret") {
			t.Fatal("a credential is in the HAR")
		}
		if strings.Contains(buf.String(), `"requestBody"`) != exact {
			t.Errorf("exact %v: body copies present: %v", exact, !exact)
		}
		res, err := Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Exchanges) != len(in) || res.Invalid != 0 || res.Damage != "" {
			t.Fatalf("%d exchanges, %d invalid, damage %q", len(res.Exchanges), res.Invalid, res.Damage)
		}
		for i := range in {
			want, got := in[i], res.Exchanges[i]
			if got.Source != Source {
				t.Errorf("source %q", got.Source)
			}
			want.Source, got.Source = "", ""
			if !exact && want.RespBodyDecoded != nil {
				// Compressed on the wire: HAR holds it decoded.
				want.RespBody = want.RespBodyDecoded
				want.Chunks = []exchange.Chunk{{Offset: 0, Size: len(want.RespBodyDecoded), At: want.End}}
			}
			if !reflect.DeepEqual(normalize(want), normalize(got)) {
				t.Errorf("exact %v, exchange %d:\n got %#v\nwant %#v", exact, i, got, want)
			}
		}
	}
}

// TestReadVersion1: a HAR written by an earlier tsinspect, whose
// extension always held base64 copies of the bodies, still reads exactly.
func TestReadVersion1(t *testing.T) {
	in := sample()
	var buf bytes.Buffer
	if err := Write(&buf, in, "test", Options{Exact: true}); err != nil {
		t.Fatal(err)
	}
	old := strings.ReplaceAll(buf.String(), `"version": 2,`, `"version": 1,`)
	if old == buf.String() {
		t.Fatal("no extension version to rewrite")
	}
	res, err := Read(strings.NewReader(old))
	if err != nil || len(res.Exchanges) != len(in) {
		t.Fatalf("%v, %d exchanges", err, len(res.Exchanges))
	}
	if got := res.Exchanges[1]; !bytes.Equal(got.RespBody, in[1].RespBody) {
		t.Errorf("compressed body not given back exactly: %q", got.RespBody)
	}
}

// TestSize: a HAR of real Claude Code requests (JSON full of quotes,
// newlines and markup, which a HAR string escapes) is at most 1.25 times
// its bodies, not the 2.4 times of copying each in base64 too, as Exact
// does. (On the project's real 400-turn session, whose KB-sized tool
// results escape less, it is 1.06 times.)
func TestSize(t *testing.T) {
	var exs []exchange.Exchange
	var bodies int
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "claude-code-2.1.328", "0[1-5]-*.json"))
	if len(files) != 5 {
		t.Fatalf("%d sample requests", len(files))
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ex := sample()[0]
		ex.ReqBody = body
		bodies += len(ex.ReqBody) + len(ex.RespBody)
		exs = append(exs, ex)
	}
	for _, c := range []struct {
		exact    bool
		min, max float64
	}{{false, 1.0, 1.25}, {true, 2.0, 3.0}} {
		var buf bytes.Buffer
		if err := Write(&buf, exs, "test", Options{Exact: c.exact}); err != nil {
			t.Fatal(err)
		}
		if r := float64(buf.Len()) / float64(bodies); r < c.min || r > c.max {
			t.Errorf("exact %v: %d bytes for %d of bodies (%.2f×), want %.2f× to %.2f×", c.exact, buf.Len(), bodies, r, c.min, c.max)
		}
	}
}

// TestExportScrubs: a credential that reached the exporter in clear (it
// never should) leaves as a fingerprint.
func TestExportScrubs(t *testing.T) {
	ex := sample()[:1]
	ex[0].ReqHeaders = []exchange.Header{{Name: "Authorization", Value: "Bearer sk-ant-oat-secret"}, {Name: "Cookie", Value: "session=abc123secret"}}
	var buf bytes.Buffer
	Write(&buf, ex, "test", Options{Exact: true})
	for _, s := range []string{"sk-ant-oat-secret", "abc123secret"} {
		if strings.Contains(buf.String(), s) {
			t.Errorf("%s is in the HAR", s)
		}
	}
}

// mitmHAR is shaped like mitmproxy's har_dump output: body decoded, gzip
// header kept, integer timings, microsecond times with an offset.
const mitmHAR = `{
  "log": {
    "version": "1.2",
    "creator": {"name": "mitmproxy har_dump", "version": "0.1", "comment": "mitmproxy version 8.1.1"},
    "entries": [
      {
        "startedDateTime": "2026-03-04T05:06:07.123456+00:00",
        "time": 250,
        "request": {
          "method": "POST", "url": "https://api.anthropic.com/v1/messages?beta=true", "httpVersion": "HTTP/1.1",
          "cookies": [], "headers": [{"name": "x-api-key", "value": "sk-ant-live-key"}, {"name": "content-type", "value": "application/json"}],
          "queryString": [{"name": "beta", "value": "true"}], "headersSize": 120, "bodySize": 2,
          "postData": {"mimeType": "application/json", "text": "{}", "params": []}
        },
        "response": {
          "status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
          "headers": [{"name": "content-encoding", "value": "gzip"}, {"name": "content-type", "value": "application/json"}],
          "content": {"size": 11, "compression": -20, "mimeType": "application/json", "text": "{\"ok\":true}"},
          "redirectURL": "", "headersSize": 80, "bodySize": 31
        },
        "cache": {},
        "timings": {"send": 1, "receive": 9, "wait": 240, "connect": -1, "ssl": -1}
      },
      {
        "startedDateTime": "2026-03-04T05:06:08Z", "time": -1,
        "request": {"method": "GET", "url": "https://api.anthropic.com/api/hello", "httpVersion": "h2", "headers": [{"name": ":authority", "value": "api.anthropic.com"}]},
        "response": {"status": 0, "_error": "net::ERR_ABORTED", "headers": [], "content": {"size": 0, "mimeType": ""}},
        "timings": {"send": -1, "wait": -1, "receive": -1}
      }
    ]
  }
}`

func TestForeignHAR(t *testing.T) {
	res, err := Read(strings.NewReader(mitmHAR))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 2 {
		t.Fatalf("%d exchanges", len(res.Exchanges))
	}
	a := res.Exchanges[0]
	if a.ReqHeader("x-api-key") == "sk-ant-live-key" || !strings.HasPrefix(a.ReqHeader("x-api-key"), exchange.FingerprintPrefix) {
		t.Errorf("key kept in clear: %q", a.ReqHeader("x-api-key"))
	}
	if string(a.Body()) != `{"ok":true}` || a.State != exchange.StateComplete || a.Host != "api.anthropic.com" {
		t.Errorf("body %q state %s host %s", a.Body(), a.State, a.Host)
	}
	if a.Start.Nanosecond() != 123456000 || a.FirstByte.Sub(a.Start) != 241*time.Millisecond || a.End.Sub(a.Start) != 250*time.Millisecond {
		t.Errorf("times %v %v %v", a.Start, a.FirstByte, a.End)
	}
	b := res.Exchanges[1]
	if b.State != exchange.StateClientAborted || !strings.Contains(b.Error, "ERR_ABORTED") || len(b.ReqHeaders) != 0 {
		t.Errorf("aborted entry: %s %q %v", b.State, b.Error, b.ReqHeaders)
	}
}

func TestBrokenHAR(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"not JSON", "hello, I am not JSON", "not a HAR file: invalid character 'h'"},
		{"empty", "", "not a HAR file: the file is cut off"},
		{"JSON, not HAR", `{"foo": [1, 2]}`, "no log.entries"},
		{"array", `[1]`, "not a HAR file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.in))
			if !errors.Is(err, ErrNotHAR) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want %q", err, c.want)
			}
		})
	}
	t.Run("cut off", func(t *testing.T) {
		cut := mitmHAR[:strings.Index(mitmHAR, `"startedDateTime": "2026-03-04T05:06:08Z"`)+20]
		res, err := Read(strings.NewReader(cut))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Exchanges) != 1 || !strings.Contains(res.Damage, "after entry 1") || !strings.Contains(res.Damage, "cut off") {
			t.Errorf("%d exchanges, damage %q", len(res.Exchanges), res.Damage)
		}
	})
	t.Run("bad entries", func(t *testing.T) {
		in := `{"log":{"entries":[{"time":"soon"},{"request":{"method":"GET"}},` + entryJSON() + `]}}`
		res, err := Read(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Exchanges) != 1 || res.Invalid != 2 || !strings.Contains(res.FirstInvalid, "entry 1") {
			t.Errorf("%d exchanges, %d invalid (%s)", len(res.Exchanges), res.Invalid, res.FirstInvalid)
		}
	})
}

func entryJSON() string {
	return fmt.Sprintf(`{"startedDateTime":%q,"time":5,"request":{"method":"GET","url":"http://x/"},"response":{"status":204}}`, "2026-01-01T00:00:00Z")
}

// normalize gives every time the same location, so that DeepEqual
// compares instants.
func normalize(ex exchange.Exchange) exchange.Exchange {
	utc := func(t time.Time) time.Time {
		if t.IsZero() {
			return time.Time{}
		}
		return t.UTC()
	}
	ex.Start, ex.FirstByte, ex.End = utc(ex.Start), utc(ex.FirstByte), utc(ex.End)
	cs := append([]exchange.Chunk(nil), ex.Chunks...)
	for i := range cs {
		cs[i].At = utc(cs[i].At)
	}
	ex.Chunks = cs
	return ex
}

// writeAll is the former, whole-log encoding of Write: the streamed
// output must be the same.
func writeAll(w io.Writer, exs []exchange.Exchange, creatorVersion string) error {
	l := struct {
		Log logJSON `json:"log"`
	}{logJSON{Version: "1.2", Creator: creator{Name: "tsinspect", Version: creatorVersion}, Entries: make([]entry, 0, len(exs))}}
	for i := range exs {
		l.Log.Entries = append(l.Log.Entries, toEntry(&exs[i], Options{}))
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return fmt.Errorf("har: write: %w", err)
	}
	return nil
}

// TestStreamedWriteIsTheSame holds Writer's output to the whole-log
// encoding, for no entry, one and several.
func TestStreamedWriteIsTheSame(t *testing.T) {
	for n := 0; n <= len(sample()); n++ {
		exs := sample()[:n]
		var streamed, whole bytes.Buffer
		if err := Write(&streamed, exs, "test", Options{}); err != nil {
			t.Fatal(err)
		}
		if err := writeAll(&whole, exs, "test"); err != nil {
			t.Fatal(err)
		}
		if streamed.String() != whole.String() {
			t.Errorf("%d entries: streamed output differs:\n%s\nwant:\n%s", n, streamed.String(), whole.String())
		}
	}
}

// TestCompressedBodiesBounded reads a HAR of eight small gzip bodies that
// decode to 64 MiB each: what Read keeps decoded stays within
// MaxDecodedTotal, and every body is kept as sent.
func TestCompressedBodiesBounded(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(make([]byte, 64<<20))
	zw.Close()
	entry := fmt.Sprintf(`{"startedDateTime":"2025-01-01T00:00:00Z","time":1,"request":{"method":"POST","url":"https://api.anthropic.com/v1/messages","headers":[]},`+
		`"response":{"status":200,"headers":[{"name":"Content-Encoding","value":"gzip"}],"content":{"size":0,"mimeType":"application/json","encoding":"base64","text":%q}}}`,
		base64.StdEncoding.EncodeToString(gz.Bytes()))
	har := `{"log":{"version":"1.2","entries":[` + strings.TrimSuffix(strings.Repeat(entry+",", 8), ",") + `]}}`
	res, err := Read(strings.NewReader(har))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 8 {
		t.Fatalf("%d exchanges, want 8", len(res.Exchanges))
	}
	var decoded int
	for _, ex := range res.Exchanges {
		decoded += len(ex.RespBodyDecoded)
		if !bytes.Equal(ex.RespBody, gz.Bytes()) {
			t.Fatal("a body was not kept as sent")
		}
	}
	if decoded > MaxDecodedTotal || decoded == 0 {
		t.Errorf("kept %d MiB decoded, want some and at most %d MiB", decoded>>20, MaxDecodedTotal>>20)
	}
}
