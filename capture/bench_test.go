package capture

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/internal/bench/overhead"
	"github.com/tsinspect/tsinspect/store"
)

// BenchmarkReverseProxy measures one recorded exchange through the reverse
// proxy: a 90 KB request (the size of a Claude Code turn) and a 4 KB SSE
// response, against a direct request to the same server.
func BenchmarkReverseProxy(b *testing.B) {
	reqBody := bytes.Repeat([]byte("x"), 90<<10)
	resp := bytes.Repeat([]byte("event: ping\ndata: {\"type\": \"ping\"}\n\n"), 4<<10/36)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(resp)
	}))
	defer up.Close()
	do := func(b *testing.B, url string) {
		b.SetBytes(int64(len(reqBody) + len(resp)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			r, err := http.Post(url, "application/json", bytes.NewReader(reqBody))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
	}
	b.Run("direct", func(b *testing.B) { do(b, up.URL+"/v1/messages") })
	b.Run("recorded", func(b *testing.B) {
		u, stop := recordingServer(b, up.URL, &memSink{})
		do(b, u+"/v1/messages")
		b.StopTimer()
		stop()
	})
}

// recordingServer serves the reverse proxy to upstream, recording into
// sink; stop closes the recorder, then the server, and returns the
// recorder's figures.
func recordingServer(b *testing.B, upstream string, sink Sink) (url string, stop func() Stats) {
	rec := NewRecorder(sink, io.Discard, nil)
	p, err := New(Config{Mode: ModeReverse, Upstream: upstream, Recorder: rec})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(p)
	return srv.URL, func() Stats {
		st := rec.Close()
		srv.Close()
		return st
	}
}

// BenchmarkReverseProxyFirstByte measures the time to first byte of a
// small request answered with a short SSE stream, over one keep-alive
// connection, direct and through the recording reverse proxy (into memory
// and into a capture file); it reports
// the median and 90th percentile (ttfb-p50-µs, ttfb-p90-µs).
func BenchmarkReverseProxyFirstByte(b *testing.B) {
	reqBody := bytes.Repeat([]byte("x"), 600)
	event := []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for range 4 {
			w.Write(event)
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	do := func(b *testing.B, url string) {
		c := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}
		defer c.CloseIdleConnections()
		ttfb := make([]time.Duration, 0, b.N)
		buf := make([]byte, 32<<10)
		b.ReportAllocs()
		for b.Loop() {
			start := time.Now()
			r, err := c.Post(url, "application/json", bytes.NewReader(reqBody))
			if err != nil {
				b.Fatal(err)
			}
			if n, err := r.Body.Read(buf); n == 0 {
				b.Fatalf("no first byte: %v", err)
			}
			ttfb = append(ttfb, time.Since(start))
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		slices.Sort(ttfb)
		b.ReportMetric(float64(ttfb[len(ttfb)/2])/1e3, "ttfb-p50-µs")
		b.ReportMetric(float64(ttfb[len(ttfb)*9/10])/1e3, "ttfb-p90-µs")
	}
	b.Run("direct", func(b *testing.B) { do(b, up.URL+"/v1/messages") })
	// A bare proxy, recording nothing: what any Go proxy adds here.
	b.Run("bare", func(b *testing.B) {
		tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16}
		defer tr.CloseIdleConnections()
		target, _ := url.Parse(up.URL)
		srv := httptest.NewServer(overhead.FloorHandler(target, tr))
		defer srv.Close()
		do(b, srv.URL+"/v1/messages")
	})
	recorded := func(b *testing.B, sink Sink) {
		u, stop := recordingServer(b, up.URL, sink)
		do(b, u+"/v1/messages")
		b.StopTimer()
		if st := stop(); st.Complete == 0 || st.RecordErrors != 0 {
			b.Fatalf("recorder: %+v", st)
		}
	}
	b.Run("recorded", func(b *testing.B) { recorded(b, &memSink{}) })
	// The writer's SQLite work competes with the proxy for the processor.
	b.Run("recorded-sqlite", func(b *testing.B) {
		db, err := store.Open(filepath.Join(b.TempDir(), "capture.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		recorded(b, db)
	})
}

// BenchmarkStreamEventLag measures how long an SSE event takes from the
// upstream's write to the client's read, direct and through the recording
// proxy in each mode: streams of sseEvents 10 ms apart; it reports the
// median and the largest lag (lag-p50-µs, lag-max-µs). TestStreamingEventByEvent
// checks that each event passes on its own; this is how soon.
func BenchmarkStreamEventLag(b *testing.B) {
	const gap = 10 * time.Millisecond
	var mu sync.Mutex
	var written []time.Time
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i, e := range sseEvents {
			if i > 0 {
				time.Sleep(gap)
			}
			mu.Lock()
			written = append(written, time.Now())
			mu.Unlock()
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	do := func(b *testing.B, c *http.Client, u string) {
		var lags []time.Duration
		for b.Loop() {
			mu.Lock()
			written = written[:0]
			mu.Unlock()
			resp, err := c.Post(u, "application/json", strings.NewReader("{}"))
			if err != nil {
				b.Fatal(err)
			}
			var got []time.Time
			br := bufio.NewReader(resp.Body)
			for {
				line, err := br.ReadString('\n')
				if line == "\n" {
					got = append(got, time.Now())
				}
				if err != nil {
					break
				}
			}
			resp.Body.Close()
			mu.Lock()
			if len(got) != len(written) {
				b.Fatalf("%d events read, %d written", len(got), len(written))
			}
			for i := range got {
				lags = append(lags, got[i].Sub(written[i]))
			}
			mu.Unlock()
		}
		slices.Sort(lags)
		b.ReportMetric(float64(lags[len(lags)/2])/1e3, "lag-p50-µs")
		b.ReportMetric(float64(lags[len(lags)-1])/1e3, "lag-max-µs")
	}
	b.Run("direct", func(b *testing.B) { do(b, http.DefaultClient, up.URL+"/v1/messages") })
	for _, mode := range []string{ModeReverse, ModeMITM} {
		b.Run(mode, func(b *testing.B) {
			rec := NewRecorder(&memSink{}, io.Discard, nil)
			cfg := Config{Mode: mode, Upstream: up.URL, Recorder: rec}
			c := http.DefaultClient
			if mode == ModeMITM {
				ca, err := LoadOrCreateCA(b.TempDir(), InterceptHosts(nil))
				if err != nil {
					b.Fatal(err)
				}
				cfg.CA = ca
			}
			p, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(p)
			defer srv.Close()
			u := srv.URL + "/v1/messages"
			if mode == ModeMITM {
				pu, _ := url.Parse(srv.URL)
				c = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: cfg.CA.Pool()}}}
				u = "https://api.anthropic.com/v1/messages"
			}
			do(b, c, u)
			b.StopTimer()
			rec.Close()
		})
	}
}
