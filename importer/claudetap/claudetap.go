// Package claudetap reads the JSON Lines traces claude-tap writes
// (.traces/trace_*.jsonl, or 'claude-tap export' of a session): one record
// per API call, {"timestamp", "request_id", "turn", "duration_ms",
// "request": {method, path, headers, body}, "response": {status, headers,
// body, sse_events}, "upstream_base_url"}.
//
// claude-tap keeps bodies parsed and a streamed response as the message it
// reassembled plus, when it stored them, the stream's events without their
// times: the stream is rebuilt from the events (else the reassembled message
// stands for it), and its timing is lost. The record's timestamp is taken
// when the call ended, duration_ms after it began. claude-tap redacts
// credential headers.
package claudetap

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/importer/recon"
)

// DefaultUpstream is the base URL of records that do not name theirs.
const DefaultUpstream = "https://api.anthropic.com"

// ErrNotClaudeTap is returned for input whose first record is not a
// claude-tap record.
var ErrNotClaudeTap = errors.New("not a claude-tap trace")

type sseEvent struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

type record struct {
	Timestamp  string  `json:"timestamp"`
	RequestID  string  `json:"request_id"`
	Turn       *int    `json:"turn"`
	DurationMS float64 `json:"duration_ms"`
	Request    *struct {
		Method  string          `json:"method"`
		Path    string          `json:"path"`
		Headers json.RawMessage `json:"headers"`
		Body    json.RawMessage `json:"body"`
	} `json:"request"`
	Response *struct {
		Status    int             `json:"status"`
		Headers   json.RawMessage `json:"headers"`
		Body      json.RawMessage `json:"body"`
		SSEEvents []sseEvent      `json:"sse_events"`
	} `json:"response"`
	UpstreamBaseURL string `json:"upstream_base_url"`
}

// Looks reports whether head starts like a claude-tap trace: the fields
// claude-tap writes first.
func Looks(head []byte) bool {
	h := head[:min(len(head), 600)]
	return bytes.HasPrefix(bytes.TrimSpace(h), []byte("{")) && bytes.Contains(h, []byte(`"turn":`)) &&
		bytes.Contains(h, []byte(`"request_id":`)) && (bytes.Contains(h, []byte(`"duration_ms":`)) || bytes.Contains(h, []byte(`"request":`)))
}

// Read reads a claude-tap trace. It fails (with an error wrapping
// ErrNotClaudeTap) only when the first record is not claude-tap's; after
// that, lines that cannot be read are counted and skipped (meta or summary
// records without a request are left out quietly), and a last line cut off
// is reported as damage.
func Read(r io.Reader) (*recon.Result, error) {
	return recon.JSONLines(r, recon.Format{Name: "claudetap", NotOurs: ErrNotClaudeTap, Looks: Looks,
		Decode: func(line []byte, first bool) (*exchange.Exchange, string, error) {
			var rec record
			if err := json.Unmarshal(line, &rec); err != nil {
				return nil, "", err
			}
			if rec.Request == nil {
				if rec.Turn == nil && first && !bytes.Contains(line, []byte(`"kind"`)) {
					return nil, "has no request", nil
				}
				return nil, "", nil // a meta or summary record
			}
			ex := exchangeOf(&rec)
			return &ex, "", nil
		}})
}

func exchangeOf(rec *record) exchange.Exchange {
	q := rec.Request
	base := strings.TrimRight(rec.UpstreamBaseURL, "/")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		base = DefaultUpstream
	} else {
		// A scheme is read in any case (RFC 3986 §3.1) and written in
		// lower case, as every other source writes it.
		base = u.Scheme + base[len(u.Scheme):]
	}
	path := q.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	end := recon.ParseTime(rec.Timestamp)
	p := recon.Parts{
		Source:     exchange.SourceClaudeTap,
		Start:      end.Add(-time.Duration(rec.DurationMS * float64(time.Millisecond))),
		End:        end,
		Method:     q.Method,
		URL:        base + path,
		ReqHeaders: recon.HeaderMap(q.Headers),
		ReqBody:    recon.Body(q.Body),
	}
	s := rec.Response
	if s == nil {
		p.Error = "no response in the trace"
		return recon.Exchange(p)
	}
	p.Status = s.Status
	p.RespHeaders = recon.HeaderMap(s.Headers)
	if len(s.SSEEvents) > 0 {
		events := make([]recon.Event, 0, len(s.SSEEvents))
		for _, e := range s.SSEEvents {
			events = append(events, recon.Event{Event: e.Event, Data: recon.Body(e.Data)})
		}
		p.RespBody = recon.SSE(events)
	} else {
		p.RespBody = recon.Body(s.Body)
	}
	if p.Status == 0 {
		p.Error = "no status in the trace"
	}
	return recon.Exchange(p)
}
