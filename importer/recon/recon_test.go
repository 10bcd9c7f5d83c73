package recon

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

func TestBody(t *testing.T) {
	for in, want := range map[string]string{
		``:                 ``,
		`null`:             ``,
		`"text \"q\""`:     `text "q"`,
		`{ "a" : [1, 2] }`: `{"a":[1,2]}`,
	} {
		if got := Body(json.RawMessage(in)); string(got) != want {
			t.Errorf("Body(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestSSE(t *testing.T) {
	got := SSE([]Event{{Event: "ping", Data: []byte(`{"type":"ping"}`)}, {Data: []byte("a\nb")}})
	want := "event: ping\ndata: {\"type\":\"ping\"}\n\ndata: a\ndata: b\n\n"
	if string(got) != want {
		t.Errorf("SSE = %q, want %q", got, want)
	}
}

func TestHeaderMap(t *testing.T) {
	hs := HeaderMap(json.RawMessage(`{"b":"2","a":["1","x"],"c":3}`))
	want := []exchange.Header{{Name: "a", Value: "1"}, {Name: "a", Value: "x"}, {Name: "b", Value: "2"}}
	if len(hs) != len(want) {
		t.Fatalf("HeaderMap = %v", hs)
	}
	for i := range want {
		if hs[i] != want[i] {
			t.Errorf("header %d = %v, want %v", i, hs[i], want[i])
		}
	}
}

func TestExchange(t *testing.T) {
	at := UnixSeconds(1795380640.828)
	if at.UnixMilli() != 1795380640828 {
		t.Errorf("UnixSeconds = %v", at)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(`{"ok":true}`))
	w.Close()
	for _, c := range []struct {
		name  string
		body  []byte
		state exchange.State
	}{
		{"encoded", gz.Bytes(), exchange.StateComplete},
		{"kept decoded", []byte(`{"ok":true}`), exchange.StateComplete},
	} {
		ex := Exchange(Parts{Source: "s", Start: at, End: at.Add(time.Second), URL: "https://h:8443/v1/messages",
			ReqHeaders: []exchange.Header{{Name: "X-Api-Key", Value: "secret"}, {Name: ":authority", Value: "h"}},
			Status:     200, RespHeaders: []exchange.Header{{Name: "Content-Encoding", Value: "gzip"}}, RespBody: c.body})
		if ex.Host != "h" || ex.Method != "POST" || ex.State != c.state || string(ex.Body()) != `{"ok":true}` {
			t.Errorf("%s: host %q method %q state %s body %q", c.name, ex.Host, ex.Method, ex.State, ex.Body())
		}
		if len(ex.ReqHeaders) != 1 || ex.ReqHeaders[0].Value == "secret" {
			t.Errorf("%s: request headers %v", c.name, ex.ReqHeaders)
		}
		if len(ex.Chunks) != 1 || !ex.FirstByte.Equal(ex.End) {
			t.Errorf("%s: chunks %v first byte %v", c.name, ex.Chunks, ex.FirstByte)
		}
	}
	failed := Exchange(Parts{URL: "https://h/", Start: at})
	if failed.State != exchange.StateUpstreamFailed || failed.Error == "" || failed.RespHeaders != nil {
		t.Errorf("no response: %+v", failed)
	}
}
