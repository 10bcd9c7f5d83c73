// Package rawbodies reads the directory Claude Code writes its API bodies
// into when OTEL_LOG_RAW_API_BODIES=file:DIR is set: for each request it
// makes, <uuid>.request.json (the request body as built), and for each answer
// <request-id>.response.json (the final message, not the stream) and a line
// of index.jsonl naming both files with the time, session_id, query_source
// (sdk, repl_main_thread, an agent's name...), model, request_id and
// message_id.
//
// A Dir can be read once, after the fact (tsinspect import DIR), or again
// and again while Claude Code writes to it (tsinspect record --mode bodies):
// each Scan returns what is new or changed since the last one. A request
// file that no index line names is a request still under way, or at the end
// one that got no answer (an HTTP error, a retried attempt, an abort: the
// files do not say which).
//
// The files carry no HTTP headers, so the exchanges made of them carry only
// what the index tells (Request-Id, the session id, the query source); any
// credential found in a body all the same is replaced by its fingerprint.
package rawbodies

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/importer/recon"
)

// IndexFile is the name of the index Claude Code writes.
const IndexFile = "index.jsonl"

// URL is the URL the exchanges get: the files do not tell where the request
// went.
const URL = "https://api.anthropic.com/v1/messages"

// QuerySourceHeader is the request header the query_source of the index is
// kept in; SessionHeader the one the session_id is kept in, as Claude Code
// sends it on the wire.
const (
	QuerySourceHeader = exchange.QuerySourceHeader
	SessionHeader     = exchange.SessionHeader
)

// ErrNotRawBodies is returned for a directory with neither an index.jsonl
// nor a *.request.json file.
var ErrNotRawBodies = errors.New("not a Claude Code raw-bodies directory (no index.jsonl nor *.request.json in it)")

// Entry is one line of index.jsonl.
type Entry struct {
	Timestamp    string `json:"timestamp"`
	SessionID    string `json:"session_id"`
	QuerySource  string `json:"query_source"`
	Model        string `json:"model"`
	RequestID    string `json:"request_id"`
	MessageID    string `json:"message_id"`
	RequestFile  string `json:"request_file"`
	ResponseFile string `json:"response_file"`
}

// Change is an exchange that is new or changed since the last Scan. Key
// names it across scans (the request file).
type Change struct {
	Key      string
	Exchange exchange.Exchange
}

// Options tune a Dir.
type Options struct {
	// Source is the Source of the exchanges (default
	// exchange.SourceRawBodies).
	Source string
	// Secrets are credential values to look for in the bodies (such as the
	// API key the command was given); they and anything shaped like an
	// Anthropic key are replaced by their fingerprints.
	Secrets []string
}

// Dir reads one raw-bodies directory.
type Dir struct {
	path string
	opts Options

	indexOff int64
	done     map[string]bool // request files answered (complete exchange given)
	pending  map[string]bool // request files given as in flight
	named    map[string]bool // request files the index names
	// namedResp holds the response files the index names.
	namedResp map[string]bool
	waiting   []Entry // index lines whose files were not complete yet

	// BadLines counts index lines that could not be read or whose files
	// were missing or broken, and FirstBad says what was wrong with the
	// first.
	BadLines int
	FirstBad string
	// Redacted counts credentials found in bodies and replaced.
	Redacted int

	// stale is set once a request file's modification time is found far
	// from its index timestamp: the directory was copied, and file times
	// say nothing.
	stale bool
	// answered maps the hash of each answered request body to its start, to
	// place an unanswered attempt with the same body (a retry resends it)
	// when file times cannot.
	answered map[[sha256.Size]byte]time.Time
}

// Open returns a Dir for path; the directory need not hold anything yet.
func Open(path string, opts Options) *Dir {
	if opts.Source == "" {
		opts.Source = exchange.SourceRawBodies
	}
	return &Dir{path: path, opts: opts, done: map[string]bool{}, pending: map[string]bool{}, named: map[string]bool{}, namedResp: map[string]bool{}, answered: map[[sha256.Size]byte]time.Time{}}
}

// Looks reports whether the directory at path looks like a raw-bodies
// directory.
func Looks(path string) bool {
	if _, err := os.Stat(filepath.Join(path, IndexFile)); err == nil {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(path, "*.request.json"))
	return len(m) > 0
}

// Scan reads what was added to the directory since the last Scan. With
// final set, request files still without an answer are given as failed
// (nothing will answer them any more) and a last index line without a
// newline is read too.
func (d *Dir) Scan(final bool) ([]Change, error) {
	var out []Change
	lines, err := d.readIndex(final)
	if err != nil {
		return nil, err
	}
	lines = append(d.waiting, lines...)
	d.waiting = nil
	for _, l := range lines {
		c, err := d.pair(l, final)
		if err != nil {
			if !final {
				// Claude Code may write the index line before it has
				// finished the response file: try again next time.
				d.waiting = append(d.waiting, l)
				continue
			}
			d.bad(err.Error())
			continue
		}
		out = append(out, c)
	}
	reqs, err := filepath.Glob(filepath.Join(d.path, "*.request.json"))
	if err != nil {
		return nil, fmt.Errorf("rawbodies: %w", err)
	}
	sort.Strings(reqs)
	var lastAnswer map[string]string
	if final {
		lastAnswer = d.lastAnswer(reqs)
	}
	for _, p := range reqs {
		name := filepath.Base(p)
		if d.done[name] || d.named[name] || (d.pending[name] && !final) {
			continue
		}
		if resp, ok := lastAnswer[name]; ok {
			c, err := d.pair(Entry{RequestFile: name, ResponseFile: resp}, true)
			if err == nil {
				out = append(out, c)
				continue
			}
		}
		c, ok := d.unanswered(p, final)
		if !ok {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

func (d *Dir) bad(msg string) {
	d.BadLines++
	if d.FirstBad == "" {
		d.FirstBad = msg
	}
}

// readIndex returns the complete index lines added since the last call.
func (d *Dir) readIndex(final bool) ([]Entry, error) {
	f, err := os.Open(filepath.Join(d.path, IndexFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rawbodies: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(d.indexOff, io.SeekStart); err != nil {
		return nil, fmt.Errorf("rawbodies: %w", err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("rawbodies: %w", err)
	}
	end := bytes.LastIndexByte(b, '\n') + 1
	if final {
		end = len(b)
	}
	d.indexOff += int64(end)
	var out []Entry
	for i, line := range bytes.Split(b[:end], []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			d.bad(fmt.Sprintf("index line %d: %v", i+1, err))
			continue
		}
		if e.RequestFile == "" || strings.ContainsAny(e.RequestFile, `/\`) || strings.ContainsAny(e.ResponseFile, `/\`) {
			d.bad(fmt.Sprintf("index line %d: no usable request_file", i+1))
			continue
		}
		d.named[e.RequestFile] = true
		d.namedResp[e.ResponseFile] = true
		out = append(out, e)
	}
	return out, nil
}

// pair makes the exchange of an index line. A response file that is not
// complete is waited for, unless final: then the exchange is given without
// its response, and the file counted as bad.
func (d *Dir) pair(e Entry, final bool) (Change, error) {
	req, reqAt, err := d.readJSON(e.RequestFile)
	if err != nil {
		return Change{}, fmt.Errorf("%s: %w", e.RequestFile, err)
	}
	var resp []byte
	var respAt time.Time
	var respErr error
	if e.ResponseFile != "" {
		if resp, respAt, respErr = d.readJSON(e.ResponseFile); respErr != nil {
			if !final {
				return Change{}, fmt.Errorf("%s: %w", e.ResponseFile, respErr)
			}
			d.bad(fmt.Sprintf("%s: %v", e.ResponseFile, respErr))
		}
	}
	start := recon.ParseTime(e.Timestamp)
	if e.Timestamp == "" && !reqAt.IsZero() {
		start = reqAt // a pair the index does not name (see lastAnswer)
	}
	if start.IsZero() {
		return Change{}, fmt.Errorf("%s: timestamp %q is not a time", e.RequestFile, e.Timestamp)
	}
	// The request file is written as the request is sent: a time far
	// from the index's means the files were copied since.
	if off := reqAt.Sub(start); e.Timestamp != "" && (reqAt.IsZero() || off < -5*time.Second || off > 5*time.Second) {
		d.stale = true
	}
	end := start
	// The response file is written when the answer is complete: its time
	// is the end, unless the file times are stale.
	if !d.stale && !respAt.IsZero() && !respAt.Before(start) {
		end = respAt
	}
	if h := sha256.Sum256(req); d.answered[h].IsZero() {
		d.answered[h] = start
	}
	p := d.parts(req, e)
	p.Start, p.End = start, end
	if resp != nil {
		p.Status = 200
		p.RespHeaders = []exchange.Header{{Name: "Content-Type", Value: "application/json"}}
		if e.RequestID != "" {
			p.RespHeaders = append(p.RespHeaders, exchange.Header{Name: "Request-Id", Value: e.RequestID})
		}
		p.RespBody = resp
	} else if respErr != nil {
		p.Error = "the response file could not be read (cut off as Claude Code exited?): " + respErr.Error()
	} else {
		p.Error = "Claude Code wrote no response file for this request"
	}
	d.done[e.RequestFile] = true
	delete(d.pending, e.RequestFile)
	return Change{Key: e.RequestFile, Exchange: recon.Exchange(p)}, nil
}

// lastAnswer finds, at the end, the answer Claude Code wrote without its
// index line: it may exit between writing the last response file and
// appending the line that names it. The newest response file no line names
// answers the newest request no line names, when file times can be
// trusted and put the response after the request. It returns request file
// → response file.
func (d *Dir) lastAnswer(reqs []string) map[string]string {
	if d.stale {
		return nil
	}
	resps, _ := filepath.Glob(filepath.Join(d.path, "*.response.json"))
	newest := func(paths []string, skip func(string) bool) (string, time.Time) {
		var best string
		var at time.Time
		for _, p := range paths {
			name := filepath.Base(p)
			if skip(name) {
				continue
			}
			st, err := os.Stat(p)
			if err != nil {
				continue
			}
			if best == "" || st.ModTime().After(at) {
				best, at = name, st.ModTime()
			}
		}
		return best, at
	}
	resp, respAt := newest(resps, func(n string) bool { return d.namedResp[n] })
	req, reqAt := newest(reqs, func(n string) bool { return d.done[n] || d.named[n] })
	if resp == "" || req == "" || respAt.Before(reqAt) {
		return nil
	}
	return map[string]string{req: resp}
}

// unanswered makes the exchange of a request file no index line names: in
// flight, or failed when final. It returns false for a file still being
// written.
func (d *Dir) unanswered(path string, final bool) (Change, bool) {
	name := filepath.Base(path)
	req, at, err := d.readJSON(name)
	if err != nil {
		if final {
			d.bad(fmt.Sprintf("%s: %v", name, err))
			d.done[name] = true
		}
		return Change{}, false
	}
	p := d.parts(req, Entry{})
	p.Start, p.End = at, at
	if d.stale {
		// File times say nothing: an attempt whose retry was answered
		// came just before it.
		if t, ok := d.answered[sha256.Sum256(req)]; ok {
			p.Start, p.End = t.Add(-time.Millisecond), t.Add(-time.Millisecond)
		}
	}
	if final {
		p.Error = "no response: Claude Code wrote no answer for this request (an HTTP error, a retried attempt or an abort; the files do not say which)"
		d.done[name] = true
	} else {
		p.State = exchange.StateInFlight
		d.pending[name] = true
	}
	ex := recon.Exchange(p)
	if !final {
		ex.End = time.Time{}
	}
	return Change{Key: name, Exchange: ex}, true
}

// parts is the request side of an exchange.
func (d *Dir) parts(req []byte, e Entry) recon.Parts {
	hs := []exchange.Header{{Name: "Content-Type", Value: "application/json"}}
	var top struct {
		Betas []string `json:"betas"`
	}
	if json.Unmarshal(req, &top) == nil && len(top.Betas) > 0 {
		hs = append(hs, exchange.Header{Name: "Anthropic-Beta", Value: strings.Join(top.Betas, ",")})
	}
	if e.SessionID != "" {
		hs = append(hs, exchange.Header{Name: SessionHeader, Value: e.SessionID})
	}
	if e.QuerySource != "" {
		hs = append(hs, exchange.Header{Name: QuerySourceHeader, Value: e.QuerySource})
	}
	return recon.Parts{Source: d.opts.Source, Method: "POST", URL: URL, ReqHeaders: hs, ReqBody: req}
}

// readJSON reads a file of the directory that must hold one JSON value, and
// returns it with credentials removed and its modification time.
func (d *Dir) readJSON(name string) ([]byte, time.Time, error) {
	if name != filepath.Base(name) || name == "." || name == ".." {
		return nil, time.Time{}, errors.New("not a file name")
	}
	p := filepath.Join(d.path, name)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, time.Time{}, err
	}
	if !json.Valid(b) {
		return nil, time.Time{}, errors.New("not complete JSON")
	}
	var at time.Time
	if st, err := os.Stat(p); err == nil {
		at = st.ModTime().UTC()
	}
	return d.scrub(b), at, nil
}

// anthropicKey matches Anthropic API keys and OAuth tokens.
var anthropicKey = regexp.MustCompile(`sk-ant-[A-Za-z0-9]{2,8}-[A-Za-z0-9_-]{16,}`)

// scrub replaces credentials in b by their fingerprints.
func (d *Dir) scrub(b []byte) []byte {
	for _, s := range d.opts.Secrets {
		if len(s) < 8 {
			continue
		}
		if n := bytes.Count(b, []byte(s)); n > 0 {
			d.Redacted += n
			b = bytes.ReplaceAll(b, []byte(s), []byte(exchange.Fingerprint(s)))
		}
	}
	return anthropicKey.ReplaceAllFunc(b, func(m []byte) []byte {
		d.Redacted++
		return []byte(exchange.Fingerprint(string(m)))
	})
}

// Settled reports whether every request file seen so far has been
// answered: none is in flight and no index line waits for its files.
func (d *Dir) Settled() bool { return len(d.pending) == 0 && len(d.waiting) == 0 }
