package httpflow

import (
	"bytes"
	"compress/gzip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func stream(closed bool, parts ...string) Stream {
	var s Stream
	for i, p := range parts {
		s.Append([]byte(p), at(i*10))
	}
	s.Closed = closed
	return s
}

func TestKeepAliveChunkedAndTimes(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"ok":true}`))
	zw.Close()
	c := &Conn{
		Scheme:     "https",
		ServerAddr: "10.1.2.3:443",
		Client: stream(true,
			"POST /v1/messages?beta=true HTTP/1.1\r\nHost: api.anthropic.com\r\nX-Api-Key: sk-secret\r\nContent-Length: 4\r\n\r\n{}",
			"{}GET /api/hello HTTP/1.1\r\nHost: api.anthropic.com\r\n\r\n"),
		Server: stream(true,
			"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
			"6\r\nevent:\r\n",
			"5\r\n data\r\n0\r\n\r\n",
			"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: "+itoa(gz.Len())+"\r\n\r\n"+gz.String()),
	}
	res := Parse(c, "test")
	if res.Problem != "" || len(res.Exchanges) != 2 {
		t.Fatalf("problem %q, %d exchanges", res.Problem, len(res.Exchanges))
	}
	a, b := res.Exchanges[0], res.Exchanges[1]
	if a.URL != "https://api.anthropic.com/v1/messages?beta=true" || a.Host != "api.anthropic.com" || string(a.ReqBody) != "{}{}" {
		t.Errorf("first: %s %s %q", a.URL, a.Host, a.ReqBody)
	}
	if got := a.ReqHeader("X-Api-Key"); !strings.HasPrefix(got, exchange.FingerprintPrefix) {
		t.Errorf("the key is kept: %q", got)
	}
	if string(a.RespBody) != "event: data" || a.State != exchange.StateComplete {
		t.Errorf("body %q state %s", a.RespBody, a.State)
	}
	if len(a.Chunks) != 2 || !a.Chunks[0].At.Equal(at(10)) || !a.Chunks[1].At.Equal(at(20)) || a.Chunks[1].Offset != 6 {
		t.Errorf("chunks %+v", a.Chunks)
	}
	if !a.Start.Equal(at(0)) || !a.FirstByte.Equal(at(0)) || !a.End.Equal(at(20)) {
		t.Errorf("times %v %v %v", a.Start, a.FirstByte, a.End)
	}
	if string(b.RespBodyDecoded) != `{"ok":true}` || !bytes.Equal(b.RespBody, gz.Bytes()) || !b.Start.Equal(at(10)) {
		t.Errorf("second: decoded %q start %v", b.RespBodyDecoded, b.Start)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCutAndMissingResponses(t *testing.T) {
	req := "POST /v1/messages HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}"
	head := "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345"
	cases := []struct {
		name   string
		server Stream
		state  exchange.State
		err    string
	}{
		{"server closed mid-body", stream(true, head), exchange.StateUpstreamFailed, "broke off"},
		{"capture ended mid-body", stream(false, head), exchange.StateInFlight, "capture ended"},
		{"capture lost data", func() Stream { s := stream(false, head); s.Lost = true; return s }(), exchange.StateUpstreamFailed, "lost"},
		{"no response, closed", stream(true), exchange.StateUpstreamFailed, "before responding"},
		{"no response yet", stream(false), exchange.StateInFlight, "capture ended"},
		{"close-delimited, closed", stream(true, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabc"), exchange.StateComplete, ""},
		{"close-delimited, still open", stream(false, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabc"), exchange.StateInFlight, "capture ended"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := Parse(&Conn{Client: stream(false, req), Server: c.server}, "x")
			if len(res.Exchanges) != 1 {
				t.Fatalf("%d exchanges (%s)", len(res.Exchanges), res.Problem)
			}
			ex := res.Exchanges[0]
			if ex.State != c.state || !strings.Contains(ex.Error, c.err) {
				t.Errorf("state %s error %q", ex.State, ex.Error)
			}
		})
	}
}

func TestInterimAndHeadAndJunk(t *testing.T) {
	c := &Conn{
		Client: stream(true,
			"POST /a HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx",
			"HEAD /b HTTP/1.1\r\nHost: h\r\n\r\n",
			"NOT HTTP AT ALL\r\n\r\n"),
		Server: stream(true,
			"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
			"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"),
	}
	res := Parse(c, "x")
	if len(res.Exchanges) != 2 || res.Exchanges[0].Status != 201 || string(res.Exchanges[0].RespBody) != "ok" {
		t.Fatalf("%+v", res.Exchanges)
	}
	if h := res.Exchanges[1]; h.State != exchange.StateComplete || len(h.RespBody) != 0 {
		t.Errorf("HEAD: %s %q", h.State, h.RespBody)
	}
	if !strings.Contains(res.Problem, "request 3") {
		t.Errorf("problem %q", res.Problem)
	}
}
