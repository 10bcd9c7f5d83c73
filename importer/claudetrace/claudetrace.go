// Package claudetrace reads the JSON Lines logs claude-trace
// (@mariozechner/claude-trace) writes to .claude-trace/*.jsonl: one line per
// request and response pair, {"request": {timestamp, method, url, headers,
// body}, "response": {timestamp, status_code, headers, body | body_raw},
// "logged_at"}, or "response": null with a "note" for a request that got no
// answer before Claude Code exited.
//
// claude-trace keeps request bodies parsed (they are re-serialised here),
// streamed responses as their text (body_raw) without the time of each
// event, the time the response began (response.timestamp) and the time the
// pair was logged (logged_at, after the body was read). It shortens
// credential headers; they are fingerprinted all the same.
package claudetrace

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/importer/recon"
)

// ErrNotClaudeTrace is returned for input whose first record is not a
// claude-trace pair.
var ErrNotClaudeTrace = errors.New("not a claude-trace log")

type request struct {
	Timestamp float64         `json:"timestamp"`
	Method    string          `json:"method"`
	URL       string          `json:"url"`
	Headers   json.RawMessage `json:"headers"`
	Body      json.RawMessage `json:"body"`
}

type response struct {
	Timestamp  float64         `json:"timestamp"`
	StatusCode int             `json:"status_code"`
	Headers    json.RawMessage `json:"headers"`
	Body       json.RawMessage `json:"body"`
	BodyRaw    *string         `json:"body_raw"`
}

type pair struct {
	Request  *request  `json:"request"`
	Response *response `json:"response"`
	Note     string    `json:"note"`
	LoggedAt string    `json:"logged_at"`
}

// Looks reports whether line is a claude-trace record.
func Looks(line []byte) bool {
	var p struct {
		Request  map[string]json.RawMessage `json:"request"`
		LoggedAt *string                    `json:"logged_at"`
	}
	return json.Unmarshal(line, &p) == nil && p.Request != nil && p.LoggedAt != nil && p.Request["url"] != nil
}

// Read reads a claude-trace log. It fails (with an error wrapping
// ErrNotClaudeTrace) only when the first record is not a claude-trace pair;
// after that, lines that cannot be read are counted and skipped, and a last
// line cut off is reported as damage.
func Read(r io.Reader) (*recon.Result, error) {
	return recon.JSONLines(r, recon.Format{Name: "claudetrace", NotOurs: ErrNotClaudeTrace, Looks: Looks,
		Decode: func(line []byte, _ bool) (*exchange.Exchange, string, error) {
			var p pair
			if err := json.Unmarshal(line, &p); err != nil {
				return nil, "", err
			}
			if p.Request == nil {
				return nil, "", errors.New("no request")
			}
			ex := exchangeOf(&p)
			return &ex, "", nil
		}})
}

func exchangeOf(p *pair) exchange.Exchange {
	q := p.Request
	parts := recon.Parts{
		Source:     exchange.SourceClaudeTrace,
		Start:      recon.UnixSeconds(q.Timestamp),
		Method:     q.Method,
		URL:        q.URL,
		ReqHeaders: recon.HeaderMap(q.Headers),
		ReqBody:    recon.Body(q.Body),
	}
	logged := recon.ParseTime(p.LoggedAt)
	if s := p.Response; s != nil {
		parts.Status = s.StatusCode
		parts.FirstByte = recon.UnixSeconds(s.Timestamp)
		parts.End = logged
		if parts.End.Before(parts.FirstByte) {
			parts.End = parts.FirstByte
		}
		parts.RespHeaders = recon.HeaderMap(s.Headers)
		switch {
		case s.BodyRaw != nil:
			parts.RespBody = []byte(*s.BodyRaw)
		default:
			parts.RespBody = recon.Body(s.Body)
		}
		if parts.Status == 0 {
			parts.Error = "no status in the log"
		}
	} else {
		parts.End = logged
		// claude-trace logs a request still pending when Claude Code
		// exits so: the client went away first.
		parts.State = exchange.StateClientAborted
		parts.Error = "no response: the request was still under way when the client exited"
		if p.Note != "" {
			parts.Error += " (" + p.Note + ")"
		}
	}
	if len(bytes.TrimSpace(parts.ReqBody)) == 0 {
		parts.ReqBody = []byte{}
	}
	return recon.Exchange(parts)
}
