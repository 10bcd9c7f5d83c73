package capture

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
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
		sink := &memSink{}
		rec := NewRecorder(sink, io.Discard, nil)
		p, err := New(Config{Mode: ModeReverse, Upstream: up.URL, Recorder: rec})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(p)
		defer srv.Close()
		do(b, srv.URL+"/v1/messages")
		b.StopTimer()
		rec.Close()
	})
}
