package claudetap

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
)

// The testdata trace is written to claude-tap's record format (as its proxy
// builds records and 'claude-tap export' writes them) with the stand-in
// API's answers: a stream with its events, a JSON answer, an HTTP 529.
const recorded = "testdata/claude-tap.jsonl"

func TestTrace(t *testing.T) {
	b, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	if !Looks(b) {
		t.Fatal("Looks = false")
	}
	res, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 3 || res.Invalid != 0 || res.Damage != "" {
		t.Fatalf("got %d exchanges, %d invalid, damage %q", len(res.Exchanges), res.Invalid, res.Damage)
	}
	sse, js, overloaded := res.Exchanges[0], res.Exchanges[1], res.Exchanges[2]
	if sse.URL != "https://api.anthropic.com/v1/messages?beta=true" || sse.End.Sub(sse.Start) != 412*time.Millisecond {
		t.Errorf("url %q duration %v", sse.URL, sse.End.Sub(sse.Start))
	}
	if !bytes.HasPrefix(sse.RespBody, []byte("event: message_start\ndata: {")) {
		t.Errorf("stream not rebuilt: %.60q", sse.RespBody)
	}
	d := decode.Decode(&sse)
	if !d.Response.Streamed || len(d.Response.Content) != 1 || d.Response.Content[0].Text != "Done." || d.Response.StopReason != "end_turn" {
		t.Errorf("rebuilt stream decodes as %+v", d.Response)
	}
	if d := decode.Decode(&js); d.Response.Streamed || d.Response.ID == "" {
		t.Errorf("JSON answer decodes as %+v", d.Response)
	}
	if overloaded.Status != 529 || overloaded.State != exchange.StateComplete {
		t.Errorf("529: %d %s", overloaded.Status, overloaded.State)
	}
	if k := sse.ReqHeader("x-api-key"); !strings.HasPrefix(k, exchange.FingerprintPrefix) {
		t.Errorf("x-api-key kept as %q", k)
	}
}

func TestDamageAndMeta(t *testing.T) {
	b, _ := os.ReadFile(recorded)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	in := `{"kind":"meta","trace_id":"x"}` + "\n" + lines[0] + "\n{broken\n" + lines[1] + "\n" + lines[2][:40]
	res, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 2 || res.Invalid != 1 || !strings.Contains(res.Damage, "cut off") {
		t.Fatalf("got %d exchanges, %d invalid, damage %q", len(res.Exchanges), res.Invalid, res.Damage)
	}
}

// TestUpstreamScheme: a base URL's scheme is read in any case and written
// in lower case; one that is not http or https is the default upstream.
func TestUpstreamScheme(t *testing.T) {
	b, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.SplitN(string(b), "\n", 2)[0]
	if !strings.Contains(line, `"upstream_base_url":"https://api.anthropic.com"`) {
		t.Fatalf("the first record names no https upstream: %.200s", line)
	}
	for base, want := range map[string]string{
		"HTTPS://api.anthropic.com":   "https://api.anthropic.com/v1/messages?beta=true",
		"htTp://127.0.0.1:8080/":      "http://127.0.0.1:8080/v1/messages?beta=true",
		"ftp://api.anthropic.com":     DefaultUpstream + "/v1/messages?beta=true",
		"https://Api.Anthropic.com//": "https://Api.Anthropic.com/v1/messages?beta=true",
	} {
		in := strings.Replace(line, `"upstream_base_url":"https://api.anthropic.com"`, `"upstream_base_url":"`+base+`"`, 1)
		res, err := Read(strings.NewReader(in))
		if err != nil || len(res.Exchanges) != 1 {
			t.Fatalf("%s: %v, %+v", base, err, res)
		}
		if got := res.Exchanges[0].URL; got != want {
			t.Errorf("upstream %q: URL %q, want %q", base, got, want)
		}
	}
}

func TestNotClaudeTap(t *testing.T) {
	for _, in := range []string{"", "hello", `{"log":{}}`} {
		if _, err := Read(strings.NewReader(in)); !errors.Is(err, ErrNotClaudeTap) {
			t.Errorf("Read(%q) = %v, want ErrNotClaudeTap", in, err)
		}
	}
}

func FuzzRead(f *testing.F) {
	b, _ := os.ReadFile(recorded)
	f.Add(b)
	f.Add([]byte(`{"timestamp":"x","request_id":"r","turn":1,"request":{"path":"v1"},"response":{"status":200,"sse_events":[{"event":"e","data":"a\nb"}]}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := Read(bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, ex := range res.Exchanges {
			if ex.State == "" || !strings.HasPrefix(ex.URL, "http") {
				t.Fatalf("exchange without state or URL: %+v", ex)
			}
		}
	})
}
