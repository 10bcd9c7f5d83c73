// Package replayserver serves a capture back: each request is answered with the
// recorded response of the request it matches, streamed with the recorded
// timing (or at once), so that a client session can be reproduced against
// the same client without the API.
//
// Matching is by thread and order. A Messages API request (POST
// /v1/messages, and count_tokens) goes to the first unused recorded request
// of the same path with the same conversation position: the same number of
// messages and the same first user message; failing that, the same number
// of messages; failing that, the first unused one in recorded order. Other
// recorded endpoints are answered in order too, the last answer repeating
// once they run out. Anything else gets a 404 API error. For each request
// one line is logged: which recorded exchange answered it and which
// top-level fields and messages differ from the recorded request.
package replayserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tsinspect/tsinspect/contentcoding"
	"github.com/tsinspect/tsinspect/exchange"
)

// Options tune a Server. The zero Options replay with the recorded timing
// and log nothing.
type Options struct {
	// Fast sends each response at once instead of with its recorded
	// timing.
	Fast bool
	// Log gets one line per request.
	Log io.Writer
}

// Match is what the server did with one request.
type Match struct {
	N      int    // 1 for the first request served
	Method string // of the request
	Path   string // with query
	// Recorded is the ID of the exchange that answered, 0 when none did
	// (a 404).
	Recorded int64
	// Differences name what differs from the recorded request: top-level
	// fields, "messages[i]", "body", "query". Empty when identical.
	Differences []string
}

// Server answers requests from recorded exchanges. It is an http.Handler
// and safe for concurrent use.
type Server struct {
	opts     Options
	recorded []recorded
	mu       sync.Mutex
	used     []bool
	last     map[string]int // method+path -> index of the last answer given
	matches  []Match
}

// recorded is an exchange with what matching needs.
type recorded struct {
	ex   exchange.Exchange
	key  string // method + " " + path
	body *request
}

// request is the part of a Messages API body matching looks at.
type request struct {
	fields    map[string]json.RawMessage
	messages  []json.RawMessage
	firstUser string // compact JSON of the first user message's content
}

// New makes a server that answers from exs, in their ID order. Exchanges
// without a response (nothing recorded past the request) are left out.
func New(exs []exchange.Exchange, opts Options) *Server {
	s := &Server{opts: opts, last: map[string]int{}}
	sorted := append([]exchange.Exchange(nil), exs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	for _, ex := range sorted {
		if ex.Status == 0 && (ex.State == exchange.StateInFlight || ex.State == exchange.StateInterrupted) {
			continue
		}
		u, err := url.Parse(ex.URL)
		if err != nil {
			continue
		}
		s.recorded = append(s.recorded, recorded{ex: ex, key: ex.Method + " " + u.Path, body: parseRequest(ex.ReqBody)})
	}
	s.used = make([]bool, len(s.recorded))
	return s
}

// Len returns the number of exchanges the server can answer with.
func (s *Server) Len() int { return len(s.recorded) }

// Matches returns what the server did with each request so far.
func (s *Server) Matches() []Match {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Match(nil), s.matches...)
}

func parseRequest(body []byte) *request {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return nil
	}
	r := &request{fields: fields}
	if json.Unmarshal(fields["messages"], &r.messages) != nil {
		r.messages = nil
	}
	for _, m := range r.messages {
		var msg struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m, &msg) == nil && msg.Role == "user" {
			r.firstUser = compact(msg.Content)
			break
		}
	}
	return r
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// isMessages reports whether a path is a Messages API call whose body
// places it in a conversation.
func isMessages(path string) bool {
	return path == "/v1/messages" || path == "/v1/messages/count_tokens"
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 256<<20))
	if ce := r.Header.Get("Content-Encoding"); ce != "" {
		if dec, err := contentcoding.Decode(ce, body); err == nil {
			body = dec
		}
	}
	s.mu.Lock()
	i := s.choose(r.Method, r.URL.Path, parseRequest(body))
	m := Match{N: len(s.matches) + 1, Method: r.Method, Path: r.URL.RequestURI()}
	var rec *recorded
	if i >= 0 {
		rec = &s.recorded[i]
		m.Recorded = rec.ex.ID
		m.Differences = differences(rec, r.URL, body)
	}
	s.matches = append(s.matches, m)
	s.mu.Unlock()
	s.logMatch(m)
	if rec == nil {
		writeNotFound(w, r)
		return
	}
	s.respond(w, r, &rec.ex)
}

// choose picks the recorded exchange that answers a request and marks it
// used; -1 when none does. s.mu is held.
func (s *Server) choose(method, path string, req *request) int {
	key := method + " " + path
	best, bestScore := -1, -1
	for i := range s.recorded {
		rec := &s.recorded[i]
		if s.used[i] || rec.key != key {
			continue
		}
		score := 0
		if isMessages(path) && req != nil && rec.body != nil {
			if len(req.messages) == len(rec.body.messages) {
				score = 2
				if req.firstUser == rec.body.firstUser {
					score = 3
				}
			}
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best >= 0 {
		s.used[best] = true
		s.last[key] = best
		return best
	}
	if path == "/v1/messages" {
		return -1 // a conversation turn the capture does not have
	}
	if i, ok := s.last[key]; ok {
		return i // side endpoints: the last answer again
	}
	return -1
}

// differences names what differs between the recorded request and this
// one.
func differences(rec *recorded, u *url.URL, body []byte) []string {
	var out []string
	if ru, err := url.Parse(rec.ex.URL); err == nil && ru.RawQuery != u.RawQuery {
		out = append(out, "query")
	}
	req := parseRequest(body)
	if req == nil || rec.body == nil {
		if !bytes.Equal(body, rec.ex.ReqBody) {
			out = append(out, "body")
		}
		return out
	}
	keys := map[string]bool{}
	for k := range req.fields {
		keys[k] = true
	}
	for k := range rec.body.fields {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		a, inA := req.fields[k]
		b, inB := rec.body.fields[k]
		switch {
		case !inA:
			out = append(out, k+" (missing)")
		case !inB:
			out = append(out, k+" (added)")
		case k == "messages":
			if len(req.messages) != len(rec.body.messages) {
				out = append(out, fmt.Sprintf("messages (%d, recorded %d)", len(req.messages), len(rec.body.messages)))
				continue
			}
			for i := range req.messages {
				if compact(req.messages[i]) != compact(rec.body.messages[i]) {
					out = append(out, fmt.Sprintf("messages[%d]", i))
				}
			}
		default:
			if compact(a) != compact(b) {
				out = append(out, k)
			}
		}
	}
	return out
}

func (s *Server) logMatch(m Match) {
	if s.opts.Log == nil {
		return
	}
	what := "no recorded response: 404"
	if m.Recorded != 0 {
		what = fmt.Sprintf("recorded #%d, same request", m.Recorded)
		if len(m.Differences) > 0 {
			what = fmt.Sprintf("recorded #%d, differs in %s", m.Recorded, strings.Join(m.Differences, ", "))
		}
	}
	fmt.Fprintf(s.opts.Log, "replay: %d %s %s -> %s\n", m.N, m.Method, m.Path, what)
}

func writeNotFound(w http.ResponseWriter, r *http.Request) {
	msg := fmt.Sprintf("tsinspect replay: no recorded response for %s %s", r.Method, r.URL.Path)
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": "not_found_error", "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	w.Write(b)
}

// respond writes the recorded response with its timing.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, ex *exchange.Exchange) {
	if ex.Status == 0 {
		panic(http.ErrAbortHandler) // the recorded client got no response
	}
	body := ex.RespBody
	dropEncoding := false
	if ce := ex.RespHeader("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		if _, err := contentcoding.Decode(ce, body); err != nil {
			// Kept decoded (a HAR import): send it without the coding.
			body, dropEncoding = ex.Body(), true
		}
	}
	h := w.Header()
	// Hop-by-hop fields and the length are not replayed: the server sets
	// its own framing.
	var connection []string
	for _, hd := range ex.RespHeaders {
		if strings.EqualFold(hd.Name, "Connection") {
			connection = append(connection, hd.Value)
		}
	}
	options := exchange.ConnectionOptions(connection)
	for _, hd := range ex.RespHeaders {
		name := strings.ToLower(hd.Name)
		if exchange.IsHop(name, options) || name == "content-length" || exchange.IsCredential(name) || (dropEncoding && name == "content-encoding") {
			continue
		}
		h.Add(hd.Name, hd.Value)
	}
	h.Set("X-Tsinspect-Replay", fmt.Sprint(ex.ID))
	cut := ex.State != exchange.StateComplete && ex.RespHeader("X-Tsinspect-Error") == ""
	if ex.RespHeader("Content-Length") != "" && !cut {
		h.Set("Content-Length", fmt.Sprint(len(body)))
	}
	if !s.opts.Fast && !ex.FirstByte.IsZero() && !ex.Start.IsZero() {
		if !sleep(r, ex.FirstByte.Sub(ex.Start)) {
			return
		}
	}
	w.WriteHeader(ex.Status)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	if r.Method != http.MethodHead {
		s.writeBody(w, r, rc, ex, body, dropEncoding)
	}
	if cut {
		panic(http.ErrAbortHandler) // the recorded response broke off
	}
}

// writeBody sends the body chunk by chunk, each when it arrived relative to
// the first byte (all at once with Fast, or when the body was re-coded).
func (s *Server) writeBody(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, ex *exchange.Exchange, body []byte, recoded bool) {
	if s.opts.Fast || recoded || len(ex.Chunks) == 0 {
		w.Write(body)
		return
	}
	start := time.Now()
	origin := ex.FirstByte
	if origin.IsZero() {
		origin = ex.Chunks[0].At
	}
	sent := int64(0)
	for _, c := range ex.Chunks {
		end := min(c.Offset+int64(c.Size), int64(len(body)))
		if c.Offset < sent || end <= c.Offset {
			continue
		}
		if wait := c.At.Sub(origin) - time.Since(start); wait > 0 {
			if !sleep(r, wait) {
				return
			}
		}
		if _, err := w.Write(body[c.Offset:end]); err != nil {
			return
		}
		_ = rc.Flush()
		sent = end
	}
	if sent < int64(len(body)) {
		w.Write(body[sent:])
	}
}

// sleep waits d, capped at a minute, unless the client goes away.
func sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(min(d, time.Minute))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}
