// Package recon builds exchanges from what tools that are not packet
// captures keep of an HTTP exchange: parsed headers, bodies stored as text or
// re-serialised JSON, a few timestamps. It is shared by the importers of
// such formats (claude-trace, mitmproxy flows, VCR cassettes, claude-tap and
// Claude Code's raw-bodies directories). What each of those formats cannot
// give back is a fact about exchanges, in package exchange (Limits).
package recon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/contentcoding"
	"github.com/tsinspect/tsinspect/exchange"
)

// Parts is what a recorded exchange consists of before it is made into an
// exchange.Exchange.
type Parts struct {
	Source     string
	Start, End time.Time
	// FirstByte is when the response began; zero to use End.
	FirstByte   time.Time
	Method, URL string
	ReqHeaders  []exchange.Header
	ReqBody     []byte
	// Status is 0 when there was no response.
	Status      int
	RespHeaders []exchange.Header
	RespBody    []byte
	// Error says why there was no (complete) response; State, when set,
	// overrides the state Exchange works out.
	Error string
	State exchange.State
}

// Exchange makes an exchange of p: credentials fingerprinted, the host
// taken from the URL, a response body that a Content-Encoding header says
// is compressed but is not (the tools keep it decoded) kept as it is in
// both RespBody and RespBodyDecoded, and the body given as one chunk at End.
func Exchange(p Parts) exchange.Exchange {
	ex := exchange.Exchange{
		Source: p.Source, Start: p.Start, FirstByte: p.FirstByte, End: p.End,
		Method: p.Method, URL: p.URL, Host: hostOf(p.URL),
		ReqHeaders: exchange.Scrub(dropPseudo(p.ReqHeaders)), ReqBody: p.ReqBody,
		Status: p.Status, RespHeaders: exchange.Scrub(dropPseudo(p.RespHeaders)), RespBody: p.RespBody,
		Error: p.Error, State: p.State,
	}
	if ex.Method == "" {
		ex.Method = "POST"
	}
	if ex.ReqBody == nil {
		ex.ReqBody = []byte{}
	}
	if ex.RespBody == nil {
		ex.RespBody = []byte{}
	}
	if ex.ReqHeaders == nil {
		ex.ReqHeaders = []exchange.Header{}
	}
	if ex.End.IsZero() || ex.End.Before(ex.Start) {
		ex.End = ex.Start
	}
	if ex.State == "" {
		switch {
		case ex.Status == 0:
			ex.State = exchange.StateUpstreamFailed
			if ex.Error == "" {
				ex.Error = "no response recorded"
			}
		case ex.Error != "":
			ex.State = exchange.StateUpstreamFailed
		default:
			ex.State = exchange.StateComplete
		}
	}
	if ex.Status == 0 {
		ex.RespHeaders = nil
		ex.FirstByte = time.Time{}
		return ex
	}
	if ex.RespHeaders == nil {
		ex.RespHeaders = []exchange.Header{}
	}
	if ex.FirstByte.IsZero() {
		ex.FirstByte = ex.End
	}
	if ce := ex.RespHeader("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") && len(ex.RespBody) > 0 {
		if dec, err := contentcoding.Decode(ce, ex.RespBody); err == nil {
			ex.RespBodyDecoded = dec
		} else {
			ex.RespBodyDecoded = bytes.Clone(ex.RespBody)
		}
	}
	if len(ex.RespBody) > 0 {
		ex.Chunks = []exchange.Chunk{{Offset: 0, Size: len(ex.RespBody), At: ex.End}}
	}
	return ex
}

func dropPseudo(hs []exchange.Header) []exchange.Header {
	if hs == nil {
		return nil
	}
	out := make([]exchange.Header, 0, len(hs))
	for _, h := range hs {
		if strings.HasPrefix(h.Name, ":") || h.Name == "" {
			continue
		}
		out = append(out, h)
	}
	return out
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if h, _, err := net.SplitHostPort(u.Host); err == nil {
		return h
	}
	return u.Host
}

// HeaderMap converts a JSON object of headers (values strings, or arrays of
// strings) into headers sorted by name. Other values are skipped.
func HeaderMap(raw json.RawMessage) []exchange.Header {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]exchange.Header, 0, len(names))
	for _, k := range names {
		var s string
		if json.Unmarshal(m[k], &s) == nil {
			out = append(out, exchange.Header{Name: k, Value: s})
			continue
		}
		var ss []string
		if json.Unmarshal(m[k], &ss) == nil {
			for _, v := range ss {
				out = append(out, exchange.Header{Name: k, Value: v})
			}
		}
	}
	return out
}

// Body turns a recorded JSON body into bytes: a JSON string is the body's
// text, null or absence an empty body, anything else (an object the tool
// parsed) the value re-serialised compactly.
func Body(raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return []byte{}
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return []byte(s)
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.Bytes()
	}
	return bytes.Clone(raw)
}

// Event is one server-sent event: its type and its data.
type Event struct {
	Event string
	Data  []byte
}

// SSE writes events in the text/event-stream format the API uses.
func SSE(events []Event) []byte {
	var b bytes.Buffer
	for _, e := range events {
		if e.Event != "" {
			b.WriteString("event: " + e.Event + "\n")
		}
		for _, line := range bytes.Split(e.Data, []byte("\n")) {
			b.WriteString("data: ")
			b.Write(line)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// UnixSeconds converts fractional Unix seconds to a time (zero for 0).
func UnixSeconds(s float64) time.Time {
	if s <= 0 {
		return time.Time{}
	}
	sec := int64(s)
	return time.Unix(sec, int64((s-float64(sec))*1e9)).UTC().Round(time.Microsecond)
}

// ParseTime parses an RFC 3339 time (with or without fraction or zone
// offset, as Python's isoformat writes); zero when it does not parse.
func ParseTime(s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// Result is what an importer of this family read.
type Result struct {
	Exchanges []exchange.Exchange
	// Records counts the records read, skipped ones included.
	Records int
	// Invalid counts records that could not be made into an exchange;
	// FirstInvalid says what was wrong with the first.
	Invalid      int
	FirstInvalid string
	// Damage, when not empty, says where the file stopped being readable;
	// the records before it were imported.
	Damage string
}

// Skip counts a record that could not be read.
func (r *Result) Skip(format string, args ...any) {
	r.Invalid++
	if r.FirstInvalid == "" {
		r.FirstInvalid = fmt.Sprintf(format, args...)
	}
}

// Lines calls fn with each non-blank line of r and its 1-based number.
// The last line, when it has no newline, is passed with last set: a JSON
// Lines file cut off mid-record ends so.
func Lines(r io.Reader, fn func(n int, line []byte, last bool)) error {
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		last := err == io.EOF && len(line) > 0
		if t := bytes.TrimSpace(line); len(t) > 0 {
			fn(n, t, last)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
}

// Format describes a log of one JSON record a line, as claude-trace and
// claude-tap write, for JSONLines.
type Format struct {
	// Name prefixes errors ("claudetrace").
	Name string
	// NotOurs is wrapped by the error that refuses the file.
	NotOurs error
	// Looks reports whether a line is a record of this format.
	Looks func(line []byte) bool
	// Decode makes one line into an exchange. It returns nil and no error
	// for a record that holds no exchange (left out quietly), refuse to
	// refuse the file with that text after its line number, or an error
	// for a line that cannot be read. first is set for the file's first
	// record.
	Decode func(line []byte, first bool) (ex *exchange.Exchange, refuse string, err error)
}

// JSONLines reads a log of f's format. It fails (with an error wrapping
// f.NotOurs) only when the first record is not of the format; after that,
// lines that cannot be read are counted and skipped, and a last line cut
// off is reported as damage.
func JSONLines(r io.Reader, f Format) (*Result, error) {
	res := &Result{}
	var refused error
	err := Lines(r, func(n int, line []byte, last bool) {
		if refused != nil {
			return
		}
		res.Records++
		first := res.Records == 1
		ex, refuse, err := f.Decode(line, first)
		switch {
		case refuse != "":
			refused = fmt.Errorf("%s: %w: line %d %s", f.Name, f.NotOurs, n, refuse)
		case err != nil && first && !f.Looks(line):
			refused = fmt.Errorf("%s: %w: line %d: %v", f.Name, f.NotOurs, n, err)
		case err != nil && last:
			res.Damage = fmt.Sprintf("the last line (%d) is cut off", n)
		case err != nil:
			res.Skip("line %d: %v", n, err)
		case ex != nil:
			res.Exchanges = append(res.Exchanges, *ex)
		}
	})
	if refused != nil {
		return nil, refused
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	if res.Records == 0 {
		return nil, fmt.Errorf("%s: %w: the file is empty", f.Name, f.NotOurs)
	}
	return res, nil
}
