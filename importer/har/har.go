// Package har reads and writes HAR 1.2 files (HTTP Archive: browsers'
// "Save all as HAR", mitmproxy's HAR dumps, and tsinspect's own export).
//
// A HAR keeps response bodies decoded, and times in milliseconds, so a
// HAR written by another tool cannot give back the bytes as they crossed
// the wire: its bodies are imported as given (RespBody and RespBodyDecoded
// both hold the decoded text when a Content-Encoding header says the body
// was compressed) and its response arrives as one chunk. The HARs tsinspect
// writes carry, in each entry's "_tsinspect" field (custom fields start
// with an underscore in HAR 1.2), the exact times, chunks, states and
// headers; the bodies are the HAR's own request postData and response
// content, once each. That gives back every exchange exactly except a
// response that was compressed on the wire, which HAR keeps decoded. With
// [Options.Exact] the extension also holds every body as it crossed the
// wire, in base64 (about twice the size), so that exporting and importing
// again loses nothing at all. Credentials are never written: request and
// response headers keep only the fingerprints the capture stores.
package har

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/exchange"
)

// Source is the Source of every exchange this package imports.
const Source = "import:har"

// extensionVersion is the version of the "_tsinspect" entry field: 2
// keeps the body copies only when written with Options.Exact (version 1
// always had them; both are read).
const extensionVersion = 2

// ErrNotHAR is returned for input that is not JSON, or JSON without
// log.entries.
var ErrNotHAR = errors.New("not a HAR file")

type nameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type postData struct {
	MimeType string      `json:"mimeType"`
	Text     string      `json:"text"`
	Params   []nameValue `json:"params,omitempty"`
	// Encoding is not in HAR 1.2; some tools write it for binary bodies.
	Encoding string `json:"_encoding,omitempty"`
}

type request struct {
	Method      string      `json:"method"`
	URL         string      `json:"url"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []nameValue `json:"cookies"`
	Headers     []nameValue `json:"headers"`
	QueryString []nameValue `json:"queryString"`
	PostData    *postData   `json:"postData,omitempty"`
	HeadersSize int         `json:"headersSize"`
	BodySize    int         `json:"bodySize"`
}

type content struct {
	Size        int    `json:"size"`
	Compression int    `json:"compression,omitempty"`
	MimeType    string `json:"mimeType"`
	Text        string `json:"text,omitempty"`
	Encoding    string `json:"encoding,omitempty"`
}

type response struct {
	Status      int         `json:"status"`
	StatusText  string      `json:"statusText"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []nameValue `json:"cookies"`
	Headers     []nameValue `json:"headers"`
	Content     content     `json:"content"`
	RedirectURL string      `json:"redirectURL"`
	HeadersSize int         `json:"headersSize"`
	BodySize    int         `json:"bodySize"`
	// Error is what browsers write for a request that got no response.
	Error string `json:"_error,omitempty"`
}

type timings struct {
	Blocked float64 `json:"blocked"`
	DNS     float64 `json:"dns"`
	Connect float64 `json:"connect"`
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
	SSL     float64 `json:"ssl"`
}

// chunkJSON is one response chunk in the extension.
type chunkJSON struct {
	Offset int64  `json:"offset"`
	Size   int    `json:"size"`
	At     string `json:"at,omitempty"`
}

// extension is the "_tsinspect" field: what HAR cannot hold exactly.
type extension struct {
	Version   int    `json:"version"`
	Source    string `json:"source,omitempty"`
	Start     string `json:"start,omitempty"`
	FirstByte string `json:"firstByte,omitempty"`
	End       string `json:"end,omitempty"`
	State     string `json:"state"`
	Error     string `json:"error,omitempty"`
	Status    int    `json:"status"`
	// The bodies as they crossed the wire, base64; absent (version 2
	// without Options.Exact) when the HAR's own fields hold them.
	ReqBody     *string     `json:"requestBody,omitempty"`
	RespBody    *string     `json:"responseBody,omitempty"`        // as received
	RespDecoded *string     `json:"responseBodyDecoded,omitempty"` // absent when not encoded
	Chunks      []chunkJSON `json:"chunks"`
	// Headers as stored, in case a HAR reader reorders the standard ones.
	ReqHeaders  []nameValue `json:"requestHeaders"`
	RespHeaders []nameValue `json:"responseHeaders"`
}

type entry struct {
	StartedDateTime string     `json:"startedDateTime"`
	Time            float64    `json:"time"`
	Request         request    `json:"request"`
	Response        response   `json:"response"`
	Cache           struct{}   `json:"cache"`
	Timings         timings    `json:"timings"`
	ServerIPAddress string     `json:"serverIPAddress,omitempty"`
	Tsinspect       *extension `json:"_tsinspect,omitempty"`
}

type creator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type logJSON struct {
	Version string  `json:"version"`
	Creator creator `json:"creator"`
	Entries []entry `json:"entries"`
}

// Options tune what a HAR holds.
type Options struct {
	// Exact also writes every body as it crossed the wire (base64, in the
	// "_tsinspect" field), so that a compressed response comes back byte
	// for byte on import. The file is then about twice as large.
	Exact bool
}

// Write writes exchanges as a HAR 1.2 log, with creator as the creating
// application's version. Credential headers keep their fingerprints (and a
// credential that somehow was not fingerprinted is fingerprinted here).
func Write(w io.Writer, exs []exchange.Exchange, creatorVersion string, opts Options) error {
	hw, err := NewWriter(w, creatorVersion, opts)
	if err != nil {
		return err
	}
	for i := range exs {
		if err := hw.Add(&exs[i]); err != nil {
			return err
		}
	}
	return hw.Close()
}

// Writer writes a HAR 1.2 log one entry at a time, so that exporting a
// capture holds one exchange in memory, not all of them. Its output is the
// same as Write's.
type Writer struct {
	w       io.Writer
	opts    Options
	entries int
	buf     bytes.Buffer
	enc     *json.Encoder
}

// NewWriter starts a HAR log on w; Add each exchange, then Close.
func NewWriter(w io.Writer, creatorVersion string, opts Options) (*Writer, error) {
	c, err := json.MarshalIndent(creator{Name: "tsinspect", Version: creatorVersion}, "    ", "  ")
	if err != nil {
		return nil, fmt.Errorf("har: write: %w", err)
	}
	if _, err := fmt.Fprintf(w, "{\n  \"log\": {\n    \"version\": \"1.2\",\n    \"creator\": %s,\n    \"entries\": [", c); err != nil {
		return nil, fmt.Errorf("har: write: %w", err)
	}
	hw := &Writer{w: w, opts: opts}
	// Bodies are mostly JSON and text with < and >: escaped for HTML they
	// would take six bytes each.
	hw.enc = json.NewEncoder(&hw.buf)
	hw.enc.SetEscapeHTML(false)
	hw.enc.SetIndent("      ", "  ")
	return hw, nil
}

// Add writes one exchange as the next entry.
func (hw *Writer) Add(ex *exchange.Exchange) error {
	hw.buf.Reset()
	if err := hw.enc.Encode(toEntry(ex, hw.opts)); err != nil {
		return fmt.Errorf("har: write: %w", err)
	}
	b := bytes.TrimSuffix(hw.buf.Bytes(), []byte("\n"))
	sep := ",\n      "
	if hw.entries == 0 {
		sep = "\n      "
	}
	hw.entries++
	if _, err := io.WriteString(hw.w, sep); err != nil {
		return fmt.Errorf("har: write: %w", err)
	}
	if _, err := hw.w.Write(b); err != nil {
		return fmt.Errorf("har: write: %w", err)
	}
	return nil
}

// Close ends the log. It does not close the underlying writer.
func (hw *Writer) Close() error {
	end := "]\n  }\n}\n"
	if hw.entries > 0 {
		end = "\n    ]\n  }\n}\n"
	}
	if _, err := io.WriteString(hw.w, end); err != nil {
		return fmt.Errorf("har: write: %w", err)
	}
	return nil
}

// harError is the _error text of an exchange that did not complete, in
// words other HAR readers understand; "" for one that did.
func harError(ex *exchange.Exchange) string {
	var who string
	switch ex.State {
	case exchange.StateClientAborted:
		who = "Client disconnected."
	case exchange.StateUpstreamFailed:
		who = "Upstream failed."
	default:
		return ""
	}
	if ex.Error != "" {
		who += " " + ex.Error
	}
	return who
}

func toEntry(ex *exchange.Exchange, opts Options) entry {
	reqH := safe(ex.ReqHeaders)
	respH := safe(ex.RespHeaders)
	e := entry{
		StartedDateTime: formatTime(ex.Start),
		Request: request{
			Method:      ex.Method,
			URL:         ex.URL,
			HTTPVersion: "HTTP/1.1",
			Cookies:     []nameValue{},
			Headers:     reqH,
			QueryString: query(ex.URL),
			HeadersSize: -1,
			BodySize:    len(ex.ReqBody),
		},
		Response: response{
			Status:      ex.Status,
			StatusText:  statusText(ex.Status),
			HTTPVersion: "HTTP/1.1",
			Cookies:     []nameValue{},
			Headers:     respH,
			RedirectURL: ex.RespHeader("Location"),
			HeadersSize: -1,
			BodySize:    len(ex.RespBody),
			Error:       harError(ex),
		},
		Timings: timings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1},
	}
	if len(ex.ReqBody) > 0 || ex.Method == "POST" || ex.Method == "PUT" || ex.Method == "PATCH" {
		pd := &postData{MimeType: ex.ReqHeader("Content-Type")}
		if utf8.Valid(ex.ReqBody) {
			pd.Text = string(ex.ReqBody)
		} else {
			pd.Text, pd.Encoding = base64.StdEncoding.EncodeToString(ex.ReqBody), "base64"
		}
		e.Request.PostData = pd
	}
	body := ex.Body()
	e.Response.Content = content{Size: len(body), MimeType: ex.RespHeader("Content-Type"), Compression: len(body) - len(ex.RespBody)}
	if utf8.Valid(body) {
		e.Response.Content.Text = string(body)
	} else {
		e.Response.Content.Text, e.Response.Content.Encoding = base64.StdEncoding.EncodeToString(body), "base64"
	}
	if !ex.Start.IsZero() {
		first, end := ex.FirstByte, ex.End
		if first.IsZero() {
			first = end
		}
		if !first.IsZero() {
			e.Timings.Wait = ms(first.Sub(ex.Start))
		}
		if !end.IsZero() && !first.IsZero() {
			e.Timings.Receive = ms(end.Sub(first))
		}
		if !end.IsZero() {
			e.Time = ms(end.Sub(ex.Start))
		}
	}
	x := &extension{
		Version:     extensionVersion,
		Source:      ex.Source,
		Start:       formatTime(ex.Start),
		FirstByte:   formatTime(ex.FirstByte),
		End:         formatTime(ex.End),
		State:       string(ex.State),
		Error:       ex.Error,
		Status:      ex.Status,
		Chunks:      make([]chunkJSON, 0, len(ex.Chunks)),
		ReqHeaders:  keepNil(ex.ReqHeaders, reqH),
		RespHeaders: keepNil(ex.RespHeaders, respH),
	}
	if opts.Exact {
		b64 := func(b []byte) *string { s := base64.StdEncoding.EncodeToString(b); return &s }
		x.ReqBody, x.RespBody = b64(ex.ReqBody), b64(ex.RespBody)
		if ex.RespBodyDecoded != nil {
			x.RespDecoded = b64(ex.RespBodyDecoded)
		}
	}
	for _, c := range ex.Chunks {
		x.Chunks = append(x.Chunks, chunkJSON{Offset: c.Offset, Size: c.Size, At: formatTime(c.At)})
	}
	e.Tsinspect = x
	return e
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// safe converts headers, fingerprinting any credential left in clear.
func safe(hs []exchange.Header) []nameValue {
	c := exchange.Scrub(append([]exchange.Header(nil), hs...))
	out := make([]nameValue, len(c))
	for i, h := range c {
		out[i] = nameValue{h.Name, h.Value}
	}
	return out
}

// keepNil returns nil for headers that were nil (an exchange with no
// response yet), so that the extension gives them back as they were.
func keepNil(orig []exchange.Header, conv []nameValue) []nameValue {
	if orig == nil {
		return nil
	}
	return conv
}

func query(raw string) []nameValue {
	out := []nameValue{}
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		uk, err1 := url.QueryUnescape(k)
		uv, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			uk, uv = k, v
		}
		out = append(out, nameValue{uk, uv})
	}
	return out
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func statusText(code int) string {
	if code == 0 {
		return ""
	}
	return httpStatusText(code)
}

// WriteScan writes the exchanges scan yields as one HAR log on w (see
// NewWriter), each passed through edit first when edit is not nil, and
// returns how many it wrote and, when scan went through, what it could
// not read ("" for nothing).
func WriteScan(w io.Writer, creatorVersion string, opts Options, scan func(func(*exchange.Exchange) error) (string, error), edit func(*exchange.Exchange) *exchange.Exchange) (n int, problems string, err error) {
	hw, err := NewWriter(w, creatorVersion, opts)
	if err != nil {
		return 0, "", err
	}
	problems, err = scan(func(ex *exchange.Exchange) error {
		n++
		if edit != nil {
			ex = edit(ex)
		}
		return hw.Add(ex)
	})
	if err != nil {
		return n, "", err
	}
	return n, problems, hw.Close()
}
