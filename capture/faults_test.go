package capture

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/tsinspect/tsinspect/exchange"
)

// TestUpstreamFaults: whatever the upstream does, the client gets it as the
// upstream sent it (or as cut off where the upstream broke), and the
// record says so, in both modes.
func TestUpstreamFaults(t *testing.T) {
	big := make([]byte, 50<<20)
	rand.Read(big)
	var br, zs bytes.Buffer
	bw := brotli.NewWriter(&br)
	bw.Write([]byte(strings.Repeat("brotli body ", 1000)))
	bw.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write([]byte(strings.Repeat("zstd body ", 1000)))
	zw.Close()
	var gz bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write([]byte(strings.Repeat("gzip body ", 1000)))
	gw.Close()

	var stalled atomic.Value // when the stall mid-stream ended
	cases := []struct {
		name    string
		handler http.HandlerFunc
		// check looks at what the client got (body, read error) and at
		// the record.
		check func(t *testing.T, status int, body []byte, readErr error, ex exchange.Exchange)
	}{
		{"reset mid-stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: ping\ndata: {}\n\n")
			w.(http.Flusher).Flush()
			c, _, _ := w.(http.Hijacker).Hijack()
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}, func(t *testing.T, status int, body []byte, readErr error, ex exchange.Exchange) {
			if readErr == nil {
				t.Error("the client read a broken stream to a clean end")
			}
			if ex.State != exchange.StateUpstreamFailed || !bytes.HasPrefix(ex.RespBody, []byte("event: ping")) {
				t.Errorf("recorded %s with %q", ex.State, ex.RespBody)
			}
		}},
		{"529 overloaded", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(529)
			io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		}, func(t *testing.T, status int, body []byte, readErr error, ex exchange.Exchange) {
			if status != 529 || !bytes.Contains(body, []byte("overloaded_error")) || ex.Status != 529 || ex.State != exchange.StateComplete {
				t.Errorf("client %d %q; recorded %d %s", status, body, ex.Status, ex.State)
			}
		}},
		{"stall before headers", func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(700 * time.Millisecond)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: ping\ndata: {}\n\n")
		}, func(t *testing.T, status int, body []byte, readErr error, ex exchange.Exchange) {
			if status != 200 || readErr != nil || string(body) != "event: ping\ndata: {}\n\n" || ex.State != exchange.StateComplete {
				t.Errorf("client %d %q (%v); recorded %s", status, body, readErr, ex.State)
			}
			if wait := ex.FirstByte.Sub(ex.Start); wait < 500*time.Millisecond {
				t.Errorf("first byte recorded %v after the start, want the stall in it", wait)
			}
		}},
		{"gzip body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz.Bytes())
		}, func(t *testing.T, status int, body []byte, readErr error, ex exchange.Exchange) {
			if !bytes.Equal(body, gz.Bytes()) || string(ex.RespBodyDecoded) != strings.Repeat("gzip body ", 1000) {
				t.Errorf("client got %d bytes; decoded record %d bytes", len(body), len(ex.RespBodyDecoded))
			}
		}},
		{"stall mid-stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: ping\ndata: {\"n\":1}\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(700 * time.Millisecond)
			stalled.Store(time.Now())
			io.WriteString(w, "event: ping\ndata: {\"n\":2}\n\n")
		}, func(t *testing.T, status int, body []byte, readErr error, ex exchange.Exchange) {
			// The second event is timed when it came, after the stall,
			// not with the first.
			after, _ := stalled.Load().(time.Time)
			if readErr != nil || len(ex.Chunks) < 2 || ex.Chunks[len(ex.Chunks)-1].At.Before(after) || !ex.Chunks[0].At.Before(after) {
				t.Errorf("read error %v; chunks %+v: want both events, the second after the stall ended at %v", readErr, ex.Chunks, after)
			}
		}},
		{"50 MB body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(big)
		}, func(t *testing.T, status int, body []byte, readErr error, ex exchange.Exchange) {
			if !bytes.Equal(body, big) || !bytes.Equal(ex.RespBody, big) || ex.State != exchange.StateComplete {
				t.Errorf("client got %d bytes, record holds %d (%s); want the 50 MB as sent", len(body), len(ex.RespBody), ex.State)
			}
		}},
		{"brotli body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "br")
			w.Write(br.Bytes())
		}, func(t *testing.T, status int, body []byte, readErr error, ex exchange.Exchange) {
			if !bytes.Equal(body, br.Bytes()) || string(ex.RespBodyDecoded) != strings.Repeat("brotli body ", 1000) {
				t.Errorf("client got %d bytes; decoded record %d bytes", len(body), len(ex.RespBodyDecoded))
			}
		}},
		{"zstd body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "zstd")
			w.Write(zs.Bytes())
		}, func(t *testing.T, status int, body []byte, readErr error, ex exchange.Exchange) {
			if !bytes.Equal(body, zs.Bytes()) || string(ex.RespBodyDecoded) != strings.Repeat("zstd body ", 1000) {
				t.Errorf("client got %d bytes; decoded record %d bytes", len(body), len(ex.RespBodyDecoded))
			}
		}},
	}
	for _, c := range cases {
		up := httptest.NewServer(c.handler)
		for _, mode := range []string{ModeReverse, ModeMITM} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				r := newRig(t, Config{Mode: mode, Upstream: up.URL})
				client, url := &http.Client{Transport: &http.Transport{DisableCompression: true}}, r.url+"/v1/messages"
				if mode == ModeMITM {
					client, url = mitmClient(r), "https://api.anthropic.com/v1/messages"
					client.Transport.(*http.Transport).DisableCompression = true
				}
				resp, err := client.Post(url, "application/json", strings.NewReader("{}"))
				if err != nil {
					t.Fatal(err)
				}
				body, readErr := io.ReadAll(resp.Body)
				resp.Body.Close()
				rows := r.flush(t)
				if len(rows) != 1 {
					t.Fatalf("%d rows", len(rows))
				}
				c.check(t, resp.StatusCode, body, readErr, rows[0])
			})
		}
		up.Close()
	}
}
