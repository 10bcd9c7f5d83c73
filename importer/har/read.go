package har

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/contentcoding"
	"github.com/tsinspect/tsinspect/exchange"
)

func httpStatusText(code int) string { return http.StatusText(code) }

// MaxDecodedTotal bounds the decoded response bodies one Read keeps for a
// HAR whose bodies were saved compressed: a few kilobytes of gzip can
// stand for hundreds of megabytes, and a whole HAR is held in memory until
// it is imported. Past it, bodies are kept only as sent.
const MaxDecodedTotal = 256 << 20

// Result is what Read found.
type Result struct {
	Exchanges []exchange.Exchange
	// Entries is the number of entries read, including skipped ones.
	Entries int
	// Invalid counts entries that could not be made into an exchange, and
	// FirstInvalid says what was wrong with the first.
	Invalid      int
	FirstInvalid string
	// Damage, when not empty, says where the JSON stopped being readable;
	// the entries before it were imported.
	Damage string
}

// Read reads a HAR log. It fails (with an error wrapping ErrNotHAR) only
// when nothing can be read: r is not JSON or has no log.entries. A file cut
// off or broken part way keeps the entries before the damage.
func Read(r io.Reader) (*Result, error) {
	dec := json.NewDecoder(r)
	res := &Result{}
	budget := int64(MaxDecodedTotal)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, fmt.Errorf("har: %w: %v", ErrNotHAR, jsonError(err, dec))
	}
	found := false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return damaged(res, found, err, dec)
		}
		if key != "log" {
			if err := skipValue(dec); err != nil {
				return damaged(res, found, err, dec)
			}
			continue
		}
		if err := expectDelim(dec, '{'); err != nil {
			return damaged(res, found, err, dec)
		}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return damaged(res, found, err, dec)
			}
			if key != "entries" {
				if err := skipValue(dec); err != nil {
					return damaged(res, found, err, dec)
				}
				continue
			}
			found = true
			if err := expectDelim(dec, '['); err != nil {
				return damaged(res, found, err, dec)
			}
			for dec.More() {
				var e entry
				err := dec.Decode(&e)
				var te *json.UnmarshalTypeError
				if err != nil && !errors.As(err, &te) {
					return damaged(res, found, err, dec)
				}
				res.Entries++
				if err != nil {
					res.invalid(fmt.Sprintf("entry %d: %v", res.Entries, err))
					continue
				}
				ex, err := fromEntry(&e, &budget)
				if err != nil {
					res.invalid(fmt.Sprintf("entry %d: %v", res.Entries, err))
					continue
				}
				res.Exchanges = append(res.Exchanges, ex)
			}
			if _, err := dec.Token(); err != nil { // ]
				return damaged(res, found, err, dec)
			}
		}
		if _, err := dec.Token(); err != nil { // }
			return damaged(res, found, err, dec)
		}
	}
	if !found {
		return nil, fmt.Errorf("har: %w: no log.entries in it", ErrNotHAR)
	}
	return res, nil
}

func (r *Result) invalid(msg string) {
	r.Invalid++
	if r.FirstInvalid == "" {
		r.FirstInvalid = msg
	}
}

// damaged ends reading at broken JSON: fatal if no entries list was
// reached, else the entries so far are kept.
func damaged(res *Result, found bool, err error, dec *json.Decoder) (*Result, error) {
	if !found {
		return nil, fmt.Errorf("har: %w: %v", ErrNotHAR, jsonError(err, dec))
	}
	res.Damage = fmt.Sprintf("the JSON breaks after entry %d: %v", res.Entries, jsonError(err, dec))
	return res, nil
}

func jsonError(err error, dec *json.Decoder) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Sprintf("the file is cut off at byte %d", dec.InputOffset())
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v at byte %d", se, se.Offset)
	}
	return err.Error()
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, found %v", string(want), tok)
	}
	return nil
}

func skipValue(dec *json.Decoder) error {
	var raw json.RawMessage
	return dec.Decode(&raw)
}

// fromEntry makes an exchange of a HAR entry, exactly from the
// "_tsinspect" field when there is one.
//
// budget is what is left of MaxDecodedTotal: a compressed body is kept
// decoded only while it lasts.
func fromEntry(e *entry, budget *int64) (exchange.Exchange, error) {
	ex := exchange.Exchange{Source: Source, Method: e.Request.Method, URL: e.Request.URL, Status: e.Response.Status}
	if ex.Method == "" || ex.URL == "" {
		return ex, errors.New("no request method or URL")
	}
	u, err := url.Parse(ex.URL)
	if err != nil {
		return ex, fmt.Errorf("request URL: %w", err)
	}
	ex.Host = u.Host
	if h, _, err := net.SplitHostPort(u.Host); err == nil {
		ex.Host = h
	}
	if x := e.Tsinspect; x != nil && (x.Version == 1 || x.Version == extensionVersion) {
		return exact(ex, x, e)
	}

	if ex.Start, err = parseTime(e.StartedDateTime); err != nil {
		return ex, fmt.Errorf("startedDateTime: %w", err)
	}
	ex.ReqHeaders = append([]exchange.Header{}, headers(e.Request.Headers)...)
	ex.RespHeaders = append([]exchange.Header{}, headers(e.Response.Headers)...)
	if pd := e.Request.PostData; pd != nil {
		ex.ReqBody = []byte(pd.Text)
		if pd.Encoding == "base64" {
			if ex.ReqBody, err = base64.StdEncoding.DecodeString(pd.Text); err != nil {
				return ex, fmt.Errorf("request body: %w", err)
			}
		}
	} else {
		ex.ReqBody = []byte{}
	}
	body := []byte(e.Response.Content.Text)
	if e.Response.Content.Encoding == "base64" {
		if body, err = base64.StdEncoding.DecodeString(e.Response.Content.Text); err != nil {
			return ex, fmt.Errorf("response body: %w", err)
		}
	}
	ex.RespBody = body
	if ce := ex.RespHeader("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") && len(body) > 0 {
		if dec, err := contentcoding.Decode(ce, body); err == nil {
			// The HAR kept the body as sent. Its decoded form is kept
			// while the budget lasts; past it, readers decode it when
			// they need it, one body at a time.
			if int64(len(dec)) <= *budget {
				ex.RespBodyDecoded = dec
				*budget -= int64(len(dec))
			}
		} else {
			ex.RespBodyDecoded = bytes.Clone(body) // the usual: kept decoded
		}
	}
	// Timings, in ms; -1 means "does not apply".
	t := e.Timings
	pre := 0.0
	for _, v := range []float64{t.Blocked, t.DNS, t.Connect, t.Send, t.Wait} {
		if v > 0 {
			pre += v
		}
	}
	ex.FirstByte = ex.Start.Add(msDuration(pre))
	ex.End = ex.Start.Add(msDuration(max(e.Time, pre)))
	if len(ex.RespBody) > 0 {
		ex.Chunks = []exchange.Chunk{{Offset: 0, Size: len(ex.RespBody), At: ex.End}}
	}
	ex.State = exchange.StateComplete
	herr := strings.TrimSpace(e.Response.Error)
	switch {
	case ex.Status == 0:
		ex.State = abortState(herr, exchange.StateUpstreamFailed)
		ex.FirstByte = time.Time{}
		ex.Error = "no response in the HAR"
		if herr != "" {
			ex.Error += ": " + herr
		}
	case herr != "":
		// A response that started, then broke off: mitmproxy and browsers
		// write what ended it in _error. Without a word on who did, the
		// client, which the recorder faced, is taken to have hung up.
		ex.State = abortState(herr, exchange.StateClientAborted)
		ex.Error = herr
	}
	return ex, nil
}

// abortState says who ended an exchange, from a HAR _error text: the
// client ("Client disconnected.", net::ERR_ABORTED, a cancelled request),
// the upstream (a refused, reset or timed-out connection to the server),
// or def when the text does not tell.
func abortState(msg string, def exchange.State) exchange.State {
	m := strings.ToLower(msg)
	for _, w := range []string{"client disconnected", "client closed", "client hung up", "err_aborted", "aborted", "cancel"} {
		if strings.Contains(m, w) {
			return exchange.StateClientAborted
		}
	}
	for _, w := range []string{"server", "upstream", "refused", "reset", "timed out", "timeout", "err_connection", "err_name", "err_empty_response", "unreachable", "dns"} {
		if strings.Contains(m, w) {
			return exchange.StateUpstreamFailed
		}
	}
	return def
}

// exact rebuilds an exchange from tsinspect's own extension, and from the
// entry's own bodies when the extension does not copy them.
func exact(ex exchange.Exchange, x *extension, e *entry) (exchange.Exchange, error) {
	var err error
	for _, f := range []struct {
		dst *time.Time
		s   string
	}{{&ex.Start, x.Start}, {&ex.FirstByte, x.FirstByte}, {&ex.End, x.End}} {
		if *f.dst, err = parseTime(f.s); err != nil {
			return ex, fmt.Errorf("_tsinspect times: %w", err)
		}
	}
	ex.State, ex.Error, ex.Status = exchange.State(x.State), x.Error, x.Status
	ex.ReqHeaders = headers(x.ReqHeaders)
	ex.RespHeaders = headers(x.RespHeaders)
	if x.ReqBody != nil {
		if ex.ReqBody, err = base64.StdEncoding.DecodeString(*x.ReqBody); err != nil {
			return ex, fmt.Errorf("_tsinspect request body: %w", err)
		}
	} else {
		ex.ReqBody = []byte{}
		if pd := e.Request.PostData; pd != nil {
			ex.ReqBody = []byte(pd.Text)
			if pd.Encoding == "base64" {
				if ex.ReqBody, err = base64.StdEncoding.DecodeString(pd.Text); err != nil {
					return ex, fmt.Errorf("request body: %w", err)
				}
			}
		}
	}
	chunks := true
	if x.RespBody != nil {
		if ex.RespBody, err = base64.StdEncoding.DecodeString(*x.RespBody); err != nil {
			return ex, fmt.Errorf("_tsinspect response body: %w", err)
		}
		if x.RespDecoded != nil {
			if ex.RespBodyDecoded, err = base64.StdEncoding.DecodeString(*x.RespDecoded); err != nil {
				return ex, fmt.Errorf("_tsinspect decoded body: %w", err)
			}
		}
	} else {
		body := []byte(e.Response.Content.Text)
		if e.Response.Content.Encoding == "base64" {
			if body, err = base64.StdEncoding.DecodeString(e.Response.Content.Text); err != nil {
				return ex, fmt.Errorf("response body: %w", err)
			}
		}
		ex.RespBody = body
		if ce := ex.RespHeader("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") && len(body) > 0 {
			// HAR keeps a response decoded: what crossed the wire was
			// compressed, and is not in the file. The chunks counted the
			// compressed bytes; the body arrives as one.
			ex.RespBodyDecoded = bytes.Clone(body)
			chunks = false
			if len(body) > 0 {
				ex.Chunks = []exchange.Chunk{{Offset: 0, Size: len(body), At: ex.End}}
			}
		}
	}
	for _, c := range x.Chunks {
		if !chunks {
			break
		}
		at, err := parseTime(c.At)
		if err != nil {
			return ex, fmt.Errorf("_tsinspect chunk: %w", err)
		}
		ex.Chunks = append(ex.Chunks, exchange.Chunk{Offset: c.Offset, Size: c.Size, At: at})
	}
	return ex, nil
}

// headers converts HAR headers, leaving out HTTP/2 pseudo-headers and
// fingerprinting credentials.
func headers(nv []nameValue) []exchange.Header {
	if nv == nil {
		return nil
	}
	out := make([]exchange.Header, 0, len(nv))
	for _, h := range nv {
		if strings.HasPrefix(h.Name, ":") {
			continue
		}
		out = append(out, exchange.Header{Name: h.Name, Value: h.Value})
	}
	return exchange.Scrub(out)
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
