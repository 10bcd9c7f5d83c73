package decode

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

// smallStream is a complete stream: a text block and a tool_use block.
const smallStream = `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":5,"cache_creation":{"ephemeral_5m_input_tokens":5,"ephemeral_1h_input_tokens":0},"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"ToolSearch","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"sel"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ect:A,B\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}

event: message_stop
data: {"type":"message_stop"}

`

// smallStreamBr and smallStreamZstd are smallStream encoded with brotli
// and zstd.
const (
	smallStreamBr   = "GwEGAASeaj/1Z9SfpzfA7bpWdXxd4EJwFIIdOJ34zPej0HbOt+4FOe/ZAAPQQEKMMM0CwMzZpOD6iCDpxczGVymFdbSiSR4uudktaa3eTIO5RgG4CK0FfbNbPg+dN76FsIQIriIaP2vSbsYGxf+CvFwFlEWYXZer2gNhUbmSDseCuxW/PIKFJhlNZlOHPbWrFuVUrhefEe1ntNUUQkV+Z+fSA7idXVptV06omb2DlPKUVdmu4uo0C74XeToQyVrbTNOEROlQo2pmzjmeMV7yoRvA/f1gEUIWxKBNuUiFGV56NQ1ZXi8VBMeVXdpIMis6FkI5qs6BoGDdjab2UIqDMqp9198qYJIPDHkj022oMGzmIvZNAppoqyXn4K/nUUWNOZImXW8gzWLuP+cwoUqWQfEp6Nvci9Oi0538MXEM7WV2uuxmoaMN5T2iBv+iEVqNOAd89Fr9IavFRX/kd4SlAaLF1sr+FnUDJrGgu+p1xbtf7Zu0vVd1udNtmzZ9DerqT2HOAQ=="
	smallStreamZstd = "KLUv/WQCBWUNADJVOyFAa9sAPakiycXN7aF2vCxJ+iBEjN6sJur0niN+KIoNOxHH8TxA4HnyXCFAA9hKE76C4JUGp49xxTl+JdMuG1teSBx8v6ZQLtVg7R40yd7abXTll9Zu0ra5bfOupQXH7KXLE4xpRxKMaT+id0Mbf8A3dGHM0Rdql0I6jud5+u3Rc1AkDSKtdNqooukdPIIt06lOpSXVJVWoVEeHBM9MF9upX2NPFdPHUF7rMTxbTnWpbfNRAgK+mTZbdfQGgC4vlzp+6bIsmxnmPF7XuqOjJynBzfELcwePfry2hr6DYHYuR7tsTppIZm0QbKYMGkogQEJAUJV1Xw6mlQK8By7GLqQHP2LcPiKDE/CuhO9ooR45QBLjgI4Ymw8rhcBt9wwQxcodsHct/FDAia2NQl53ALyb2qLQhrZ4Lsgx6u7Vczmcwxv6KG4MALsxuSESHDZGjiksJKBT1lAtVDWguAGnBc4HjAbgl4F9p/kynMOGfJ3gwgx9FNsUNDDCD4WbJ8FvqvhngKdMj/wwdAxuwdTbMXILnUOLAAjywsvFIRyshL5tIN/BkGgERyADa9k2YQ=="
)

func streamExchange(body []byte, headers ...exchange.Header) *exchange.Exchange {
	return &exchange.Exchange{
		Method:      "POST",
		URL:         "https://api.anthropic.com/v1/messages",
		ReqBody:     []byte(`{"model":"claude-x","max_tokens":10,"stream":true,"tools":[{"name":"ToolSearch","input_schema":{}}],"messages":[{"role":"user","content":"hi"}]}`),
		Status:      200,
		RespHeaders: headers,
		RespBody:    body,
		State:       exchange.StateComplete,
	}
}

// checkSmall checks a decoded smallStream.
func checkSmall(t *testing.T, name string, turn *Turn) {
	t.Helper()
	noProblems(t, name, turn)
	r := turn.Response
	if !r.Streamed || r.Incomplete || r.ID != "msg_1" || r.StopReason != "tool_use" {
		t.Fatalf("%s: streamed=%v incomplete=%v id=%q stop=%q", name, r.Streamed, r.Incomplete, r.ID, r.StopReason)
	}
	if len(r.Content) != 2 || r.Content[0].Text != "Hello" || !jsonEqual(r.Content[1].Input, []byte(`{"query":"select:A,B"}`)) {
		t.Fatalf("%s: content %+v", name, r.Content)
	}
	u := r.Usage
	if u.InputTokens != 10 || u.OutputTokens != 42 || u.CacheReadInputTokens != 100 || u.CacheCreationInputTokens != 5 || u.CacheCreation == nil || u.CacheCreation.Ephemeral5m != 5 || u.TotalInput() != 115 {
		t.Errorf("%s: usage %+v", name, u)
	}
	if len(turn.ToolCalls) != 1 || !turn.ToolCalls[0].Loaded {
		t.Errorf("%s: calls %+v", name, turn.ToolCalls)
	}
	// The ToolSearch call of the response is a pending search.
	if len(turn.Searches) != 1 || turn.Searches[0].HasResult || !turn.Searches[0].Call.Response || turn.Searches[0].Mode != ModeSelect || !reflect.DeepEqual(turn.Searches[0].Selected, []string{"A", "B"}) {
		t.Errorf("%s: searches %+v", name, turn.Searches)
	}
}

func TestStreamBasic(t *testing.T) {
	turn := Decode(streamExchange([]byte(smallStream), exchange.Header{Name: "Content-Type", Value: "text/event-stream"}))
	checkSmall(t, "basic", turn)
	if n := len(turn.Response.Events); n != 12 {
		t.Errorf("%d events, want 12", n)
	}
}

func TestStreamCRLFAndPadding(t *testing.T) {
	body := strings.ReplaceAll(smallStream, "\n", "\r\n")
	body = strings.ReplaceAll(body, "data: ", "data:   ")
	body = strings.ReplaceAll(body, "}}\r\n", "}}     \r\n")
	checkSmall(t, "crlf+padding", Decode(streamExchange([]byte(body))))
	// Bare CR line ends, and no space after the colon.
	body = strings.ReplaceAll(strings.ReplaceAll(smallStream, "data: ", "data:"), "\n", "\r")
	checkSmall(t, "cr", Decode(streamExchange([]byte(body))))
}

func TestStreamWithoutEventLines(t *testing.T) {
	var lines []string
	for _, l := range strings.Split(smallStream, "\n") {
		if !strings.HasPrefix(l, "event:") {
			lines = append(lines, l)
		}
	}
	turn := Decode(streamExchange([]byte(strings.Join(lines, "\n"))))
	checkSmall(t, "no event lines", turn)
	if turn.Response.Events[0].Name != "message_start" {
		t.Errorf("event name from data type: %q", turn.Response.Events[0].Name)
	}
}

func TestStreamMultiLineData(t *testing.T) {
	// Split each data JSON over lines at a comma.
	body := strings.ReplaceAll(smallStream, `,"index"`, "\ndata: ,\"index\"")
	if !strings.Contains(body, "\ndata: ,") {
		t.Fatal("no multi-line data built")
	}
	checkSmall(t, "multi-line data", Decode(streamExchange([]byte(body))))
}

func TestStreamEncoded(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(smallStream))
	w.Close()
	br, err := base64.StdEncoding.DecodeString(smallStreamBr)
	if err != nil {
		t.Fatal(err)
	}
	zs, err := base64.StdEncoding.DecodeString(smallStreamZstd)
	if err != nil {
		t.Fatal(err)
	}
	for coding, body := range map[string][]byte{"gzip": gz.Bytes(), "br": br, "zstd": zs} {
		ex := streamExchange(body, exchange.Header{Name: "Content-Type", Value: "text/event-stream"}, exchange.Header{Name: "Content-Encoding", Value: coding})
		// Chunk times count encoded bytes: they must not be used.
		ex.Chunks = []exchange.Chunk{{Offset: 0, Size: len(body), At: time.Unix(100, 0)}}
		turn := Decode(ex)
		checkSmall(t, coding, turn)
		if turn.Response.Size != len(smallStream) || turn.Response.ContentEncoding != coding {
			t.Errorf("%s: size %d encoding %q", coding, turn.Response.Size, turn.Response.ContentEncoding)
		}
		if !turn.Response.Events[0].At.IsZero() {
			t.Errorf("%s: event time taken from encoded offsets", coding)
		}
	}
	// Already decoded by the recorder.
	ex := streamExchange(gz.Bytes(), exchange.Header{Name: "Content-Encoding", Value: "gzip"})
	ex.RespBodyDecoded = []byte(smallStream)
	checkSmall(t, "pre-decoded", Decode(ex))
	// A corrupt encoded body is a problem, not a panic.
	bad := Decode(streamExchange([]byte("\x1f\x8b\x08garbage"), exchange.Header{Name: "Content-Encoding", Value: "gzip"}))
	if len(bad.Problems) == 0 || !strings.Contains(bad.Problems[0], "response body") {
		t.Errorf("corrupt gzip: problems %v", bad.Problems)
	}
}

func TestStreamErrorAfter200(t *testing.T) {
	cut := smallStream[:strings.Index(smallStream, "event: content_block_stop")]
	body := cut + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},\"request_id\":\"req_9\"}\n\n"
	turn := Decode(streamExchange([]byte(body)))
	noProblems(t, "error event", turn)
	r := turn.Response
	if r.Status != 200 || r.Error == nil || !r.Error.Event || r.Error.Type != "overloaded_error" || r.Error.Message != "Overloaded" || r.Error.RequestID != "req_9" {
		t.Fatalf("error %+v", r.Error)
	}
	if !r.Incomplete || len(r.Content) != 1 || r.Content[0].Text != "Hello" {
		t.Errorf("incomplete=%v content %+v", r.Incomplete, r.Content)
	}
	if last := r.Events[len(r.Events)-1]; last.Name != "error" {
		t.Errorf("last event %q", last.Name)
	}
}

func TestStreamCut(t *testing.T) {
	// Cut inside the second input_json_delta's data line.
	i := strings.Index(smallStream, `"partial_json":"ect`)
	turn := Decode(streamExchange([]byte(smallStream[:i])))
	noProblems(t, "cut", turn)
	r := turn.Response
	if !r.Incomplete || r.StopReason != "" {
		t.Fatalf("incomplete=%v stop=%q", r.Incomplete, r.StopReason)
	}
	if len(r.Content) != 2 || r.Content[0].Text != "Hello" || r.Content[1].PartialInput != `{"query": "sel` || r.Content[1].Input != nil {
		t.Errorf("content %+v", r.Content)
	}
	// The tool call is still listed, without input.
	if len(turn.ToolCalls) != 1 || turn.ToolCalls[0].Input != nil {
		t.Errorf("calls %+v", turn.ToolCalls)
	}
	if _, err := json.Marshal(turn); err != nil {
		t.Errorf("cut turn does not marshal: %v", err)
	}

	// Cut after a whole event but before message_stop.
	j := strings.Index(smallStream, "event: message_delta")
	turn = Decode(streamExchange([]byte(smallStream[:j])))
	noProblems(t, "cut before message_delta", turn)
	if !turn.Response.Incomplete || len(turn.Response.Content) != 2 {
		t.Errorf("cut before message_delta: %+v", turn.Response)
	}

	// A client that went away: complete-looking body, state says not.
	ex := streamExchange([]byte(smallStream))
	ex.State = exchange.StateClientAborted
	if turn := Decode(ex); !turn.Response.Incomplete {
		t.Error("aborted exchange not incomplete")
	}
}

func TestStreamUnknownEvents(t *testing.T) {
	extra := "event: future_thing\ndata: {\"type\":\"future_thing\",\"x\":1}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"sparkle_delta\",\"s\":\"*\"}}\n\n" +
		": a comment line\n\n" +
		"id: 7\nretry: 10\nevent: ping\ndata: {\"type\":\"ping\"}\n\n"
	i := strings.Index(smallStream, "event: content_block_stop")
	body := smallStream[:i] + extra + smallStream[i:]
	turn := Decode(streamExchange([]byte(body)))
	checkSmall(t, "unknown events", turn)
	u := turn.Response.UnknownEvents
	if len(u) != 2 || u[0].Name != "future_thing" || !jsonEqual(u[0].Data, []byte(`{"type":"future_thing","x":1}`)) || u[1].Name != "content_block_delta:sparkle_delta" {
		t.Errorf("unknown events %+v", u)
	}
}

func TestStreamMalformed(t *testing.T) {
	cases := map[string]string{
		"bad json":           strings.Replace(smallStream, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}`, `{"type":"content_block_delta",`, 1),
		"bad input json":     strings.Replace(smallStream, `ect:A,B\"}`, `ect:A,B`, 1),
		"delta no block":     strings.Replace(smallStream, `"index":0,"delta":{"type":"text_delta","text":"lo"}`, `"index":9,"delta":{"type":"text_delta","text":"lo"}`, 1),
		"index not number":   strings.Replace(smallStream, `"type":"content_block_stop","index":0`, `"type":"content_block_stop","index":"zero"`, 1),
		"text not string":    strings.Replace(smallStream, `"text":"lo"`, `"text":5`, 1),
		"usage not object":   strings.Replace(smallStream, `"usage":{"output_tokens":42}`, `"usage":[42]`, 1),
		"no message_start":   smallStream[strings.Index(smallStream, "event: content_block_start"):],
		"start twice":        strings.Replace(smallStream, `"index":1,"content_block"`, `"index":0,"content_block"`, 1),
		"data-less event":    strings.Replace(smallStream, "event: ping\ndata: {\"type\": \"ping\"}", "event: content_block_delta", 1),
		"message not object": strings.Replace(smallStream, `"message":{"id":"msg_1"`, `"message":["x"],"m":{"id":"msg_1"`, 1),
	}
	for name, body := range cases {
		if body == smallStream {
			t.Fatalf("%s: case not built", name)
		}
		turn := Decode(streamExchange([]byte(body)))
		if len(turn.Problems) == 0 {
			t.Errorf("%s: no problem reported", name)
		}
		if _, err := json.Marshal(turn); err != nil {
			t.Errorf("%s: turn does not marshal: %v", name, err)
		}
	}
}

func TestEventTimes(t *testing.T) {
	body := []byte(smallStream)
	split := strings.Index(smallStream, "event: content_block_stop")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ex := streamExchange(body)
	ex.Chunks = []exchange.Chunk{
		{Offset: 0, Size: split - 1, At: t0},
		{Offset: int64(split - 1), Size: len(body) - split + 1, At: t0.Add(time.Second)},
	}
	turn := Decode(ex)
	checkSmall(t, "timed", turn)
	var before, after int
	for _, e := range turn.Response.Events {
		switch {
		case e.Offset < int64(split) && e.At.Equal(t0):
			before++
		case e.Offset >= int64(split) && e.At.Equal(t0.Add(time.Second)):
			after++
		default:
			t.Errorf("event %s at %d has time %v", e.Name, e.Offset, e.At)
		}
	}
	if before != 5 || after != 7 {
		t.Errorf("before=%d after=%d", before, after)
	}
	// An event straddling two chunks arrives with the later one.
	ex.Chunks[1].Offset = int64(split + 10)
	ex.Chunks[0].Size = split + 10
	turn = Decode(ex)
	for _, e := range turn.Response.Events {
		if e.Offset == int64(split) && !e.At.Equal(t0.Add(time.Second)) {
			t.Errorf("straddling event at %v", e.At)
		}
	}
}

func TestJSONResponses(t *testing.T) {
	errBody := `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"},"request_id":"req_1"}`
	ex := streamExchange([]byte(errBody), exchange.Header{Name: "Content-Type", Value: "application/json"})
	ex.Status = 429
	turn := Decode(ex)
	noProblems(t, "429", turn)
	if e := turn.Response.Error; e == nil || e.Type != "rate_limit_error" || e.Event || e.RequestID != "req_1" || turn.Response.Streamed {
		t.Errorf("error %+v", e)
	}
	// Declared an event stream, but a JSON error body.
	ex = streamExchange([]byte(errBody), exchange.Header{Name: "Content-Type", Value: "text/event-stream"})
	if turn := Decode(ex); turn.Response.Error == nil || turn.Response.Streamed {
		t.Errorf("json error under an SSE content type: %+v", turn.Response)
	}

	msg := `{"id":"msg_2","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"x"}],"stop_reason":"stop_sequence","stop_sequence":"END","usage":{"input_tokens":1,"output_tokens":2},"diagnostics":{"cache_miss_reason":{"type":"tools_changed","cache_missed_input_tokens":1234}}}`
	turn = Decode(streamExchange([]byte(msg)))
	noProblems(t, "message", turn)
	r := turn.Response
	if r.StopSequence == nil || *r.StopSequence != "END" || r.CacheMissReason == nil || r.CacheMissReason.Type != "tools_changed" || r.CacheMissReason.CacheMissedInputTokens != 1234 {
		t.Errorf("message %+v", r)
	}

	if turn := Decode(streamExchange([]byte(`{"id": "msg_3", "content": [`))); len(turn.Problems) == 0 {
		t.Error("truncated JSON body: no problem")
	}
	ex = streamExchange([]byte(`{"id": "msg_3", "content": [`))
	ex.State = exchange.StateUpstreamFailed
	if turn := Decode(ex); len(turn.Problems) != 0 || !turn.Response.Incomplete {
		t.Errorf("broken-off body: problems %v incomplete %v", turn.Problems, turn.Response.Incomplete)
	}
	ex = streamExchange(nil)
	ex.Status = 0
	ex.State = exchange.StateInFlight
	if turn := Decode(ex); len(turn.Problems) != 0 || !turn.Response.Incomplete {
		t.Errorf("in flight: problems %v", turn.Problems)
	}
}
