// Package httpflow turns the two byte streams of a TCP connection, with the time
// each piece of data arrived, into the HTTP/1.1 exchanges they carried. It
// is shared by the importers: the pcap reader hands it reassembled (and, for
// TLS, decrypted) streams.
//
// Requests and responses are read with net/http's own parsers, the same ones
// the recorder's proxy uses, so an imported exchange has the same headers and
// bodies as one recorded live: bodies are de-chunked, content codings are
// kept in RespBody and removed in RespBodyDecoded.
package httpflow

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/contentcoding"
	"github.com/tsinspect/tsinspect/exchange"
)

// Segment is a piece of one direction of a connection and the time it
// arrived (the capture time of the packet, or of the TLS record, that made
// it readable).
type Segment struct {
	Data []byte
	At   time.Time
}

// Stream is one direction of a connection: its data in order.
type Stream struct {
	Segments []Segment
	// Closed is set when the sender closed its side (FIN or RST).
	Closed bool
	// Lost is set when data was missing after the last segment (a hole in
	// the capture, or data that could not be decrypted): the stream stops
	// there.
	Lost bool
}

// Append adds a copy of data, arrived at at, to the stream. Consecutive
// appends with the same time are merged.
func (s *Stream) Append(data []byte, at time.Time) {
	if len(data) == 0 {
		return
	}
	if n := len(s.Segments); n > 0 && s.Segments[n-1].At.Equal(at) {
		s.Segments[n-1].Data = append(s.Segments[n-1].Data, data...)
		return
	}
	s.Segments = append(s.Segments, Segment{Data: append([]byte(nil), data...), At: at})
}

// Len returns the number of bytes in the stream.
func (s *Stream) Len() int {
	n := 0
	for _, seg := range s.Segments {
		n += len(seg.Data)
	}
	return n
}

// Prefix returns up to n bytes from the start of the stream.
func (s *Stream) Prefix(n int) []byte {
	var out []byte
	for _, seg := range s.Segments {
		if len(out) >= n {
			break
		}
		out = append(out, seg.Data[:min(len(seg.Data), n-len(out))]...)
	}
	return out
}

// From returns the part of the stream after its first off bytes.
func (s *Stream) From(off int64) Stream {
	out := Stream{Closed: s.Closed, Lost: s.Lost}
	for _, seg := range s.Segments {
		if off >= int64(len(seg.Data)) {
			off -= int64(len(seg.Data))
			continue
		}
		out.Segments = append(out.Segments, Segment{Data: seg.Data[off:], At: seg.At})
		off = 0
	}
	return out
}

// Conn is one connection, in plaintext.
type Conn struct {
	Client, Server Stream
	// Scheme is "http", or "https" when the connection was TLS.
	Scheme string
	// ServerAddr is the address the client connected to (host:port),
	// used when a request has no Host header.
	ServerAddr string
}

// Result is what Parse found on a connection.
type Result struct {
	Exchanges []exchange.Exchange
	// Problem, when not empty, says why parsing stopped before the end of
	// the connection's data.
	Problem string
	// Tunnel, when not nil, is what followed an accepted CONNECT: the
	// tunnelled bytes of both directions (usually TLS), to be parsed as a
	// connection of their own, its ServerAddr the CONNECT target.
	Tunnel *Conn
}

// LooksLikeHTTP reports whether b starts like an HTTP/1.x request line.
func LooksLikeHTTP(b []byte) bool {
	sp := bytes.IndexByte(b, ' ')
	if sp <= 0 || sp > 16 {
		return false
	}
	for _, c := range b[:sp] {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// Parse reads the exchanges of c in order. Each exchange gets the given
// source. Whatever could be read is returned, also when parsing stopped
// early (Result.Problem says why).
func Parse(c *Conn, source string) Result {
	var res Result
	cl, sv := newSide(&c.Client), newSide(&c.Server)

	for n := 1; ; n++ {
		if _, err := cl.br.Peek(1); err != nil {
			return res // no more requests
		}
		startOff := cl.consumed()
		req, err := http.ReadRequest(cl.br)
		if err != nil {
			res.Problem = fmt.Sprintf("request %d: not a readable HTTP/1.1 request: %v", n, err)
			return res
		}
		ex := exchange.Exchange{
			Source:     source,
			Start:      cl.timeAt(startOff),
			Method:     req.Method,
			URL:        requestURL(req, c),
			Host:       hostOnly(requestHost(req, c)),
			ReqHeaders: exchange.SafeHeaders(req.Header),
			State:      exchange.StateInFlight,
		}
		body, berr := io.ReadAll(req.Body)
		ex.ReqBody = body
		if berr != nil {
			ex.Error = "request body cut off: " + berr.Error()
			ex.State = endState(&c.Client, exchange.StateClientAborted)
			res.Exchanges = append(res.Exchanges, ex)
			res.Problem = fmt.Sprintf("request %d: body cut off", n)
			return res
		}

		resp, respStart, err := readResponse(sv, req)
		if err != nil {
			ex.Error = "no response: " + err.Error()
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				switch {
				case c.Server.Lost:
					ex.State, ex.Error = exchange.StateUpstreamFailed, "the capture lost the response"
				case c.Server.Closed:
					ex.State, ex.Error = exchange.StateUpstreamFailed, "the server closed the connection before responding"
				case c.Client.Closed:
					ex.State, ex.Error = exchange.StateClientAborted, "client closed the connection before the response ended"
				default:
					ex.Error = "the capture ended before the response"
				}
				res.Exchanges = append(res.Exchanges, ex)
				return res
			}
			res.Exchanges = append(res.Exchanges, ex)
			res.Problem = fmt.Sprintf("response %d: not a readable HTTP/1.1 response: %v", n, err)
			return res
		}
		ex.FirstByte = sv.timeAt(respStart)
		ex.Status = resp.StatusCode
		ex.RespHeaders = exchange.SafeHeaders(resp.Header)
		if req.Method == http.MethodConnect && resp.StatusCode/100 == 2 {
			// What follows is the tunnel, not a body nor HTTP on this
			// connection.
			ex.RespBody, ex.State, ex.End = []byte{}, exchange.StateComplete, ex.FirstByte
			res.Exchanges = append(res.Exchanges, ex)
			res.Tunnel = &Conn{Client: c.Client.From(cl.consumed()), Server: c.Server.From(sv.consumed()), Scheme: "https", ServerAddr: req.Host}
			return res
		}
		readBody(&ex, resp, sv)
		if ex.End.IsZero() {
			ex.End = sv.timeAt(sv.consumed() - 1)
		}
		res.Exchanges = append(res.Exchanges, ex)
		if ex.State != exchange.StateComplete {
			return res
		}
	}
}

// readResponse reads the response to req, skipping interim (1xx)
// responses, and returns where it started in the stream.
func readResponse(sv *side, req *http.Request) (*http.Response, int64, error) {
	for {
		if _, err := sv.br.Peek(1); err != nil {
			return nil, 0, err
		}
		start := sv.consumed()
		resp, err := http.ReadResponse(sv.br, req)
		if err != nil {
			return nil, 0, err
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		return resp, start, nil
	}
}

// readBody reads the response body into ex with a chunk per arrival time,
// and sets its end, state and decoded body.
func readBody(ex *exchange.Exchange, resp *http.Response, sv *side) {
	s := sv.r.s
	defer resp.Body.Close()
	var body bytes.Buffer
	buf := make([]byte, 32<<10)
	var err error
	for {
		var n int
		n, err = resp.Body.Read(buf)
		if n > 0 {
			at := sv.timeAt(sv.consumed() - 1)
			if k := len(ex.Chunks); k > 0 && ex.Chunks[k-1].At.Equal(at) {
				ex.Chunks[k-1].Size += n
			} else {
				ex.Chunks = append(ex.Chunks, exchange.Chunk{Offset: int64(body.Len()), Size: n, At: at})
			}
			body.Write(buf[:n])
			ex.End = at
		}
		if err != nil {
			break
		}
	}
	ex.RespBody = body.Bytes()
	if ex.RespBody == nil {
		ex.RespBody = []byte{}
	}
	switch {
	case err == io.EOF && closeDelimited(resp) && !s.Closed:
		// The body ends with the connection; the capture stopped first.
		ex.State = exchange.StateInFlight
		ex.Error = "the capture ended before the response did"
		if s.Lost {
			ex.State, ex.Error = exchange.StateUpstreamFailed, "the capture lost part of the response"
		}
	case err == io.EOF:
		ex.State = exchange.StateComplete
	case s.Lost:
		ex.State = exchange.StateUpstreamFailed
		ex.Error = "the capture lost part of the response"
	case s.Closed:
		ex.State = exchange.StateUpstreamFailed
		ex.Error = "response body broke off: " + err.Error()
	default:
		ex.State = exchange.StateInFlight
		ex.Error = "the capture ended before the response did"
	}
	if ce := ex.RespHeader("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		if dec, derr := contentcoding.Decode(ce, ex.RespBody); derr == nil {
			ex.RespBodyDecoded = dec
		} else if ex.State == exchange.StateComplete {
			ex.Error = "recorded body could not be decoded: " + derr.Error()
		}
	}
}

// closeDelimited reports whether the response body is ended by the
// connection closing rather than by a length or the last chunk.
func closeDelimited(resp *http.Response) bool {
	return resp.ContentLength < 0 && len(resp.TransferEncoding) == 0 && resp.Request != nil &&
		resp.Request.Method != http.MethodHead && resp.StatusCode != http.StatusNoContent &&
		resp.StatusCode != http.StatusNotModified
}

func endState(s *Stream, closed exchange.State) exchange.State {
	if s.Closed || s.Lost {
		return closed
	}
	return exchange.StateInFlight
}

func requestHost(req *http.Request, c *Conn) string {
	if req.URL.IsAbs() && req.URL.Host != "" {
		return req.URL.Host
	}
	if req.Host != "" {
		return req.Host
	}
	return c.ServerAddr
}

// requestURL is the absolute URL the client addressed.
func requestURL(req *http.Request, c *Conn) string {
	if req.Method == http.MethodConnect {
		return req.Host
	}
	if req.URL.IsAbs() {
		return req.URL.String() // a forward proxy request
	}
	scheme := c.Scheme
	if scheme == "" {
		scheme = "http"
	}
	return scheme + "://" + requestHost(req, c) + req.RequestURI
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// side is one direction being parsed: a buffered reader over the stream,
// which knows how far the parser has got.
type side struct {
	r  *reader
	br *bufio.Reader
}

func newSide(s *Stream) *side {
	r := newReader(s)
	return &side{r: r, br: bufio.NewReaderSize(r, 64<<10)}
}

// consumed returns the stream offset of the next byte the parser will
// read.
func (s *side) consumed() int64 { return s.r.pos - int64(s.br.Buffered()) }

// timeAt returns the arrival time of the byte at offset off.
func (s *side) timeAt(off int64) time.Time { return s.r.timeAt(off) }

// reader reads a Stream one segment at a time, so that the position it has
// delivered tells which segments a parser has seen.
type reader struct {
	s      *Stream
	i, off int
	pos    int64   // bytes delivered
	starts []int64 // absolute offset of each segment
}

func newReader(s *Stream) *reader {
	r := &reader{s: s, starts: make([]int64, len(s.Segments))}
	var off int64
	for i, seg := range s.Segments {
		r.starts[i] = off
		off += int64(len(seg.Data))
	}
	return r
}

func (r *reader) Read(p []byte) (int, error) {
	for r.i < len(r.s.Segments) && r.off >= len(r.s.Segments[r.i].Data) {
		r.i++
		r.off = 0
	}
	if r.i >= len(r.s.Segments) {
		return 0, io.EOF
	}
	n := copy(p, r.s.Segments[r.i].Data[r.off:])
	r.off += n
	r.pos += int64(n)
	return n, nil
}

// timeAt returns the arrival time of the byte at offset off.
func (r *reader) timeAt(off int64) time.Time {
	if len(r.starts) == 0 {
		return time.Time{}
	}
	i := sort.Search(len(r.starts), func(i int) bool { return r.starts[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	return r.s.Segments[i].At
}
