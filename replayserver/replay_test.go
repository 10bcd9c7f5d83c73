package replayserver

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func msgs(first string, n int) string {
	var ms []string
	for i := 0; i < n; i++ {
		role, text := "user", first
		if i > 0 {
			role, text = []string{"user", "assistant"}[i%2], fmt.Sprint("turn ", i)
		}
		ms = append(ms, fmt.Sprintf(`{"role":%q,"content":%q}`, role, text))
	}
	return fmt.Sprintf(`{"model":"m","metadata":{"user_id":"a"},"messages":[%s]}`, strings.Join(ms, ","))
}

func ex(id int64, method, path, body string, resp string, chunks ...time.Duration) exchange.Exchange {
	e := exchange.Exchange{
		ID: id, Method: method, URL: "https://api.anthropic.com" + path, ReqBody: []byte(body),
		Start: t0, FirstByte: t0.Add(10 * time.Millisecond), Status: 200,
		RespHeaders: []exchange.Header{{Name: "Content-Type", Value: "text/event-stream"}, {Name: "Request-Id", Value: fmt.Sprint("req_", id)}},
		RespBody:    []byte(resp), State: exchange.StateComplete,
	}
	per := len(resp) / max(len(chunks), 1)
	for i, d := range chunks {
		size := per
		if i == len(chunks)-1 {
			size = len(resp) - per*i
		}
		e.Chunks = append(e.Chunks, exchange.Chunk{Offset: int64(per * i), Size: size, At: e.FirstByte.Add(d)})
	}
	return e
}

func post(t *testing.T, url, path, body string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestMatchByThreadAndOrder replays a main thread and a subagent whose
// requests come in another order than recorded: each gets its own thread's
// answer at its position; a changed field is reported; an extra turn gets
// a 404 API error.
func TestMatchByThreadAndOrder(t *testing.T) {
	exs := []exchange.Exchange{
		ex(1, "POST", "/v1/messages?beta=true", msgs("main task", 1), "main-1"),
		ex(2, "POST", "/v1/messages?beta=true", msgs("sub task", 1), "sub-1"),
		ex(3, "POST", "/v1/messages?beta=true", msgs("main task", 3), "main-3"),
		ex(4, "POST", "/v1/messages/count_tokens", `{"messages":[]}`, `{"input_tokens":5}`),
		ex(5, "GET", "/api/hello", "", `{}`),
	}
	var log bytes.Buffer
	s := New(exs, Options{Fast: true, Log: &log})
	ts := httptest.NewServer(s)
	defer ts.Close()

	order := []struct{ body, want string }{
		{msgs("sub task", 1), "sub-1"},
		{msgs("main task", 1), "main-1"},
		{strings.Replace(msgs("main task", 3), `"model":"m"`, `"model":"other"`, 1), "main-3"},
	}
	for _, o := range order {
		resp, got := post(t, ts.URL, "/v1/messages?beta=true", o.body)
		if got != o.want || resp.StatusCode != 200 {
			t.Errorf("got %d %q, want %q", resp.StatusCode, got, o.want)
		}
	}
	if resp, got := post(t, ts.URL, "/v1/messages?beta=true", msgs("main task", 5)); resp.StatusCode != 404 || !strings.Contains(got, "not_found_error") {
		t.Errorf("extra turn: %d %s", resp.StatusCode, got)
	}
	for i := 0; i < 2; i++ { // side endpoints repeat their last answer
		resp, err := http.Get(ts.URL + "/api/hello")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /api/hello: %v", err)
		}
		resp.Body.Close()
	}
	if resp, _ := post(t, ts.URL, "/v1/other", "{}"); resp.StatusCode != 404 {
		t.Errorf("unknown endpoint: %d", resp.StatusCode)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	want := []string{
		"replay: 1 POST /v1/messages?beta=true -> recorded #2, same request",
		"replay: 2 POST /v1/messages?beta=true -> recorded #1, same request",
		"replay: 3 POST /v1/messages?beta=true -> recorded #3, differs in model",
		"replay: 4 POST /v1/messages?beta=true -> no recorded response: 404",
		"replay: 5 GET /api/hello -> recorded #5, same request",
		"replay: 6 GET /api/hello -> recorded #5, same request",
		"replay: 7 POST /v1/other -> no recorded response: 404",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant:\n%s", log.String(), strings.Join(want, "\n"))
	}
}

// TestDifferencesNameMessages: a changed message and an added field are
// named; without a message count match the order decides.
func TestDifferencesNameMessages(t *testing.T) {
	rec := msgs("task", 3)
	var log bytes.Buffer
	s := New([]exchange.Exchange{ex(7, "POST", "/v1/messages", rec, "x")}, Options{Fast: true, Log: &log})
	ts := httptest.NewServer(s)
	defer ts.Close()
	changed := strings.Replace(rec, "turn 2", "turn two", 1)
	changed = strings.Replace(changed, `"model":"m"`, `"model":"m","stream":true`, 1)
	post(t, ts.URL, "/v1/messages", changed)
	if got := log.String(); !strings.Contains(got, "differs in messages[2], stream (added)") {
		t.Errorf("log %q", got)
	}
}

// TestTiming streams the recorded chunks with their recorded gaps, or at
// once with Fast: timed, the stream takes at least the recorded 300 ms (a
// lower bound load cannot break); Fast sends the same bytes of a recording
// whose gaps add up to two hours before the client gives up, after two
// minutes.
func TestTiming(t *testing.T) {
	body := "event: a\n\nevent: b\n\nevent: c\n\n"
	e := ex(1, "POST", "/v1/messages", msgs("x", 1), body, 0, 150*time.Millisecond, 300*time.Millisecond)
	slow := ex(1, "POST", "/v1/messages", msgs("x", 1), body, 0, time.Hour, 2*time.Hour)
	for _, c := range []struct {
		fast bool
		e    exchange.Exchange
	}{{false, e}, {true, slow}} {
		s := New([]exchange.Exchange{c.e}, Options{Fast: c.fast})
		ts := httptest.NewServer(s)
		start := time.Now()
		client := &http.Client{Timeout: 2 * time.Minute}
		resp, err := client.Post(ts.URL+"/v1/messages", "application/json", strings.NewReader(msgs("x", 1)))
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		var got []byte
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				got = append(got, buf[:n]...)
			}
			if err != nil {
				break
			}
		}
		total := time.Since(start)
		resp.Body.Close()
		ts.Close()
		if string(got) != body {
			t.Errorf("fast=%v: body %q", c.fast, got)
		}
		if !c.fast && total < 300*time.Millisecond {
			t.Errorf("timed: the stream took %v, want at least the recorded 300ms", total)
		}
	}
}

// TestCutAndDecodedBodies: a recorded stream that broke off breaks off
// again; a body kept decoded under a gzip header (a HAR import) is sent
// without the coding; a compressed body is sent as recorded.
func TestCutAndDecodedBodies(t *testing.T) {
	cut := ex(1, "POST", "/v1/messages", msgs("a", 1), "event: message_start\n\n")
	cut.State, cut.Error = exchange.StateUpstreamFailed, "response body broke off: unexpected EOF"
	decoded := ex(2, "POST", "/v1/messages", msgs("b", 1), `{"ok":1}`)
	decoded.RespHeaders = []exchange.Header{{Name: "Content-Encoding", Value: "gzip"}, {Name: "Content-Length", Value: "99"}}
	decoded.RespBodyDecoded = []byte(`{"ok":1}`)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"ok":2}`))
	zw.Close()
	coded := ex(3, "POST", "/v1/messages", msgs("c", 1), gz.String())
	coded.RespHeaders = []exchange.Header{{Name: "Content-Encoding", Value: "gzip"}, {Name: "Set-Cookie", Value: exchange.Fingerprint("x")}}
	s := New([]exchange.Exchange{cut, decoded, coded}, Options{Fast: true})
	ts := httptest.NewServer(s)
	defer ts.Close()

	resp, err := http.Post(ts.URL+"/v1/messages", "application/json", strings.NewReader(msgs("a", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("the cut stream ended cleanly")
	}
	resp.Body.Close()
	if _, got := post(t, ts.URL, "/v1/messages", msgs("b", 1)); got != `{"ok":1}` {
		t.Errorf("decoded body: %q", got)
	}
	resp, got := post(t, ts.URL, "/v1/messages", msgs("c", 1)) // the client un-gzips
	if got != `{"ok":2}` || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("coded body: %q, set-cookie %q", got, resp.Header.Get("Set-Cookie"))
	}
}
