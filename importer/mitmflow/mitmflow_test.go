package mitmflow

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
)

// The testdata dump was written by mitmdump 8.1.1 (flow format 17) in
// reverse mode in front of the stand-in API, with Claude Code 2.1.328 as the
// client: the first attempt got an HTTP 500, the retry a stream. Its API
// key was a throwaway one.
const recorded = "testdata/mitmproxy-8.1.1.flow"

func TestRecordedDump(t *testing.T) {
	b, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	if !Looks(b[:512]) {
		t.Fatal("Looks = false for a flow dump")
	}
	res, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 2 || res.Invalid != 0 || res.Damage != "" || res.NonHTTP != 0 {
		t.Fatalf("got %d exchanges, %d invalid (%s), damage %q", len(res.Exchanges), res.Invalid, res.FirstInvalid, res.Damage)
	}
	failed, ok := res.Exchanges[0], res.Exchanges[1]
	if failed.Status != 500 || failed.State != exchange.StateComplete || ok.Status != 200 {
		t.Errorf("statuses %d (%s), %d", failed.Status, failed.State, ok.Status)
	}
	if !strings.HasPrefix(ok.URL, "http://127.0.0.1:") || !strings.HasSuffix(ok.URL, "/v1/messages?beta=true") {
		t.Errorf("URL %q", ok.URL)
	}
	if k := ok.ReqHeader("x-api-key"); !strings.HasPrefix(k, exchange.FingerprintPrefix) {
		t.Errorf("x-api-key kept as %q", k)
	}
	if ok.Start.IsZero() || ok.FirstByte.Before(ok.Start) || ok.End.Before(ok.FirstByte) {
		t.Errorf("times %v %v %v", ok.Start, ok.FirstByte, ok.End)
	}
	d := decode.Decode(&ok)
	if !d.Response.Streamed || len(d.Response.Content) == 0 || d.Response.RequestID == "" {
		t.Errorf("decoded: streamed %v, %d blocks, request id %q", d.Response.Streamed, len(d.Response.Content), d.Response.RequestID)
	}
}

// enc writes v as a tnetstring, dictionaries with their keys sorted (as
// mitmproxy's own writer does not promise any order, neither may Read
// depend on one).
func enc(v any) []byte {
	var payload []byte
	var t byte
	switch x := v.(type) {
	case nil:
		t = '~'
	case bool:
		payload, t = []byte(fmt.Sprint(x)), '!'
	case int:
		payload, t = []byte(fmt.Sprint(x)), '#'
	case float64:
		payload, t = []byte(fmt.Sprint(x)), '^'
	case string: // mitmproxy writes some strings as unicode
		payload, t = []byte(x), ';'
	case []byte:
		payload, t = x, ','
	case []any:
		for _, e := range x {
			payload = append(payload, enc(e)...)
		}
		t = ']'
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			payload = append(payload, enc(k)...)
			payload = append(payload, enc(x[k])...)
		}
		t = '}'
	default:
		panic(fmt.Sprintf("enc %T", v))
	}
	return append(append([]byte(fmt.Sprintf("%d:", len(payload))), payload...), t)
}

// flow builds an HTTP flow of the given format version, with the
// connection fields that version added (written to the format's
// description: 18 websocket, 19 dns-era client_conn, 20 proxy_mode, 21
// server_conn via and transport protocol).
func flow(version int, resp map[string]any, errv map[string]any) map[string]any {
	client := map[string]any{"id": "c1", "address": []any{"127.0.0.1", 50000}, "timestamp_start": 1.7e9, "tls_established": false, "sni": nil}
	server := map[string]any{"id": "s1", "address": []any{"api.anthropic.com", 443}, "tls_established": true, "sni": "api.anthropic.com"}
	if version >= 19 {
		client["transport_protocol"], server["transport_protocol"] = "tcp", "tcp"
	}
	if version >= 20 {
		client["proxy_mode"] = "regular"
	}
	if version >= 21 {
		server["via"] = nil
	}
	f := map[string]any{
		"version": version, "type": "http", "id": "f1", "intercepted": false, "is_replay": nil, "marked": "",
		"metadata": map[string]any{}, "comment": "", "timestamp_created": 1.7e9, "client_conn": client, "server_conn": server,
		"websocket": nil, "error": nil, "response": nil,
		"request": map[string]any{
			"host": "api.anthropic.com", "port": 443, "method": []byte("POST"), "scheme": []byte("https"),
			"authority": []byte(""), "path": []byte("/v1/messages"), "http_version": []byte("HTTP/1.1"),
			"headers":  []any{[]any{[]byte("x-api-key"), []byte("sk-ant-api03-secret")}, []any{[]byte("content-type"), []byte("application/json")}},
			"content":  []byte(`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`),
			"trailers": nil, "timestamp_start": 1.7e9 + 0.001, "timestamp_end": 1.7e9 + 0.002,
		},
	}
	if resp != nil {
		f["response"] = resp
	}
	if errv != nil {
		f["error"] = errv
	}
	return f
}

func okResponse() map[string]any {
	return map[string]any{
		"http_version": []byte("HTTP/1.1"), "status_code": 200, "reason": []byte("OK"),
		"headers":  []any{[]any{[]byte("content-type"), []byte("application/json")}},
		"content":  []byte(`{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`),
		"trailers": nil, "timestamp_start": 1.7e9 + 0.5, "timestamp_end": 1.7e9 + 0.6,
	}
}

// TestVersions reads flows of every format version from mitmproxy 8 to 12.
func TestVersions(t *testing.T) {
	for _, v := range []int{14, 15, 16, 17, 18, 19, 20, 21, 22} {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			res, err := Read(bytes.NewReader(enc(flow(v, okResponse(), nil))))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Exchanges) != 1 {
				t.Fatalf("%d exchanges", len(res.Exchanges))
			}
			ex := res.Exchanges[0]
			if ex.URL != "https://api.anthropic.com/v1/messages" || ex.Status != 200 || ex.State != exchange.StateComplete {
				t.Errorf("url %q status %d state %s", ex.URL, ex.Status, ex.State)
			}
			if strings.Contains(ex.ReqHeader("x-api-key"), "secret") {
				t.Error("credential kept")
			}
			if (res.Newer > 0) != (v > NewestVersion) {
				t.Errorf("Newer = %d for version %d", res.Newer, v)
			}
		})
	}
}

func TestErrorsAndDamage(t *testing.T) {
	var in []byte
	in = append(in, enc(flow(21, nil, map[string]any{"msg": []byte("Client disconnected."), "timestamp": 1.7e9 + 1}))...)
	in = append(in, enc(flow(21, nil, map[string]any{"msg": []byte("Server disconnected."), "timestamp": 1.7e9 + 1}))...)
	in = append(in, enc(map[string]any{"version": 21, "type": "tcp", "id": "t"})...)
	in = append(in, enc(flow(21, okResponse(), nil))...)
	whole := len(in)
	in = append(in, enc(flow(21, okResponse(), nil))...)
	res, err := Read(bytes.NewReader(in[:whole+100]))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 3 || res.NonHTTP != 1 || !strings.Contains(res.Damage, "cut off in flow 5") {
		t.Fatalf("got %d exchanges, %d non-HTTP, damage %q", len(res.Exchanges), res.NonHTTP, res.Damage)
	}
	if s := res.Exchanges[0].State; s != exchange.StateClientAborted {
		t.Errorf("client disconnect: state %s", s)
	}
	if s, e := res.Exchanges[1].State, res.Exchanges[1].Error; s != exchange.StateUpstreamFailed || !strings.Contains(e, "Server disconnected") {
		t.Errorf("server disconnect: state %s error %q", s, e)
	}
}

func TestNotFlows(t *testing.T) {
	for _, in := range []string{"hello", "5:hello,", `{"log":{}}`, "3:abc"} {
		if _, err := Read(strings.NewReader(in)); !errors.Is(err, ErrNotFlows) {
			t.Errorf("Read(%q) = %v, want ErrNotFlows", in, err)
		}
	}
}

func FuzzRead(f *testing.F) {
	b, _ := os.ReadFile(recorded)
	f.Add(b)
	f.Add(enc(flow(21, okResponse(), nil)))
	f.Add(enc(flow(20, nil, map[string]any{"msg": []byte("x")})))
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := Read(bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, ex := range res.Exchanges {
			if ex.State == "" || ex.Method == "" {
				t.Fatalf("exchange without state or method: %+v", ex)
			}
			for _, h := range ex.ReqHeaders {
				if exchange.IsCredential(h.Name) && !strings.HasPrefix(h.Value, exchange.FingerprintPrefix) {
					t.Fatalf("credential %s kept", h.Name)
				}
			}
		}
	})
}
