package timeline_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

// record re-records the captures of testdata with the real clients (go
// test ./timeline -run TestRecord -record); without it the tests read the
// stored ones.
var record = flag.Bool("record", false, "re-record the captures in testdata with the real clients")

// storedExchange is one exchange of a stored capture: the fields the
// timeline reads, bodies as text (they are JSON and SSE), so that the file
// compresses well.
type storedExchange struct {
	ID          int64             `json:"id"`
	Source      string            `json:"source"`
	Start       time.Time         `json:"start"`
	FirstByte   time.Time         `json:"first_byte"`
	End         time.Time         `json:"end"`
	Method      string            `json:"method"`
	URL         string            `json:"url"`
	Host        string            `json:"host"`
	ReqHeaders  []exchange.Header `json:"request_headers"`
	ReqBody     string            `json:"request_body"`
	Status      int               `json:"status"`
	RespHeaders []exchange.Header `json:"response_headers"`
	RespBody    string            `json:"response_body"`
	State       exchange.State    `json:"state"`
	Error       string            `json:"error,omitempty"`
}

// loadCapture reads testdata/NAME.json.gz, a capture written by
// storeCapture.
func loadCapture(t *testing.T, name string) []exchange.Exchange {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".json.gz"))
	if err != nil {
		t.Fatalf("%v (record it with: go test ./timeline -run TestRecord -record)", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var stored []storedExchange
	if err := json.NewDecoder(zr).Decode(&stored); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := make([]exchange.Exchange, 0, len(stored))
	for _, x := range stored {
		ex := exchange.Exchange{ID: x.ID, Source: x.Source, Start: x.Start, FirstByte: x.FirstByte, End: x.End,
			Method: x.Method, URL: x.URL, Host: x.Host, ReqHeaders: x.ReqHeaders, ReqBody: []byte(x.ReqBody),
			Status: x.Status, RespHeaders: x.RespHeaders, RespBody: []byte(x.RespBody), State: x.State, Error: x.Error}
		if len(ex.RespBody) > 0 {
			ex.Chunks = []exchange.Chunk{{Offset: 0, Size: len(ex.RespBody), At: ex.End}}
		}
		out = append(out, ex)
	}
	return out
}

// storeCapture writes the Messages API exchanges of exs (count_tokens
// and the rest left out) to testdata/NAME.json.gz, minimised (see minimise)
// and with the strings of replace swapped.
func storeCapture(t *testing.T, name string, all []exchange.Exchange, replace [][2]string) {
	t.Helper()
	var exs []exchange.Exchange
	for _, ex := range all {
		if path, _, _ := strings.Cut(ex.URL, "?"); strings.HasSuffix(path, "/v1/messages") {
			minimise(t, &ex, replace)
			exs = append(exs, ex)
		}
	}
	stored := make([]storedExchange, 0, len(exs))
	for _, ex := range exs {
		stored = append(stored, storedExchange{ID: ex.ID, Source: ex.Source, Start: ex.Start, FirstByte: ex.FirstByte, End: ex.End,
			Method: ex.Method, URL: ex.URL, Host: ex.Host, ReqHeaders: ex.ReqHeaders, ReqBody: string(ex.ReqBody),
			Status: ex.Status, RespHeaders: ex.RespHeaders, RespBody: string(ex.RespBody), State: ex.State, Error: ex.Error})
	}
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(stored); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(raw.Bytes())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name+".json.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("stored testdata/%s.json.gz: %d exchanges, %d bytes", name, len(exs), gz.Len())
}

// minimise keeps a recorded capture small: long system prompt texts and
// tool descriptions, which the timeline compares but never reads, become a
// stand-in naming their size and hash (equal texts stay equal, different
// ones different); replace swaps the test's temporary paths for neutral
// ones everywhere.
func minimise(t *testing.T, ex *exchange.Exchange, replace [][2]string) {
	t.Helper()
	swap := func(s string) string {
		for _, r := range replace {
			s = strings.ReplaceAll(s, r[0], r[1])
		}
		return s
	}
	short := func(what, s string) string {
		if len(s) <= 300 {
			return s
		}
		sum := sha256.Sum256([]byte(s))
		return fmt.Sprintf("[%s of %d bytes, sha256 %x]", what, len(s), sum[:8])
	}
	ex.URL = swap(ex.URL)
	ex.RespBody = []byte(swap(string(ex.Body())))
	ex.RespBodyDecoded = nil
	for i, h := range ex.RespHeaders {
		if strings.EqualFold(h.Name, "Content-Encoding") {
			ex.RespHeaders[i].Value = "identity"
		}
	}
	var body map[string]any
	if json.Unmarshal(ex.ReqBody, &body) == nil {
		if sys, ok := body["system"].([]any); ok {
			for _, b := range sys {
				if m, ok := b.(map[string]any); ok {
					if s, ok := m["text"].(string); ok && !strings.HasPrefix(s, "x-anthropic-billing-header") {
						m["text"] = short("system text", s)
					}
				}
			}
		}
		if tools, ok := body["tools"].([]any); ok {
			for _, tl := range tools {
				if m, ok := tl.(map[string]any); ok {
					if s, ok := m["description"].(string); ok {
						m["description"] = short("tool description", s)
					}
				}
			}
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(body); err != nil {
			t.Fatal(err)
		}
		ex.ReqBody = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	ex.ReqBody = []byte(swap(string(ex.ReqBody)))
	for i, h := range ex.ReqHeaders {
		ex.ReqHeaders[i].Value = swap(h.Value)
		if strings.EqualFold(h.Name, "Content-Length") {
			ex.ReqHeaders[i].Value = strconv.Itoa(len(ex.ReqBody))
		}
	}
	ex.Chunks = nil
	if len(ex.RespBody) > 0 {
		ex.Chunks = []exchange.Chunk{{Offset: 0, Size: len(ex.RespBody), At: ex.End}}
	}
}
