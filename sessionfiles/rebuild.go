package sessionfiles

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/canonjson"
	"github.com/tsinspect/tsinspect/internal/crash"
	"github.com/tsinspect/tsinspect/internal/sharing"
)

// URL is the address every rebuilt request gets: the files do not say
// where a request went.
const URL = "https://api.anthropic.com/v1/messages?beta=true"

// emptyReplyText starts the message Claude Code sends after a reply with
// no visible output.
const emptyReplyText = "Your previous response had no visible output"

// Session is one Claude Code session read from its files: the main file
// and its subagents' files.
type Session struct {
	// ID is the session's ID, Path its main file, Agents the subagents'
	// files.
	ID     string
	Path   string
	Agents []string
	// SubagentsOnly: the main file is absent, and the session is read
	// from its subagents' files alone.
	SubagentsOnly bool
	// Requests reports whether the files hold the request records
	// (Claude Code 2.1.300 and later); without them only the transcript
	// can be read.
	Requests bool
	// Version is the Claude Code release that wrote the files (the last
	// seen), Cwd the directory it ran in, Entrypoint how it was started
	// (cli, sdk-cli, ...).
	Version, Cwd, Entrypoint string
	// Confirmed counts the rebuilt requests whose digest matched,
	// Unconfirmed those whose did not (or that had none).
	Confirmed, Unconfirmed int
	// Problems are the parts that could not be read (the first
	// maxProblems; MoreProblems counts the rest); Unknown counts records
	// of types tsinspect does not know, by type.
	Problems     []Problem
	MoreProblems int
	// voids counts the request records that hold nothing (see void),
	// left out by the last Stream; missingShape the requests naming a
	// shape the files do not hold, by shape.
	voids        int
	missingShape map[string]*missing
	saidDups     int
	Unknown      map[string]int
	// Partial: a file's last line was unfinished.
	Partial bool
	// Live: the files are being written, so a request with no answer yet
	// is in flight rather than unanswered.
	Live bool

	msgs  [][]byte
	index map[string]int32
	// msgLists shares the arrays of the requests' lists of messages,
	// each of which extends an earlier one of its conversation.
	msgLists sharing.Ring[int32]
	parts    madeParts
	// users are the user records read, whose messages Release drops;
	// released is set once it has.
	users    []*record
	released bool
	// schemas are the sizes of the deferred tools' definitions the files
	// keep apart (DeferredSchemas).
	schemas map[string]int
	shapes  map[string]*shape
	reqs    []*request
	files   map[string]*fileState
	tr      *transcript
	// newReqs are the requests of records read since the last Refresh.
	newReqs []*request
	rd      readState // how the files are read and followed (refresh.go)
}

type shape struct {
	system, tools []byte // canonical
}

// request is a request of the session, from its api-request record or
// made from the transcript (see transcript.go), and what answered it.
type request struct {
	rec    *record
	file   string
	msgs   []int32
	at     time.Time
	answer []*record      // assistant records of the answer's message
	read   []lightMessage // what the transcript read of each
	errRec *record
	empty  bool // followed by Claude Code's "no visible output" message
	// transcript: made from the transcript (the files hold no api-request
	// record of it); synthetic: what tells of it is Claude Code's own
	// error message (errRec is then that assistant record).
	transcript, synthetic bool
	// from is the transcript's state the request was sent from (nil when
	// no conversation record came before it), answerFrom the state its
	// answer continues; results are the tool results it is the first to
	// carry.
	from, answerFrom *tnode
	results          []tresult
	// hint is the model of a made request that got no answer, when a
	// retry of it did.
	hint string
	// seq numbers the request among its file's; dirty is set when the
	// transcript changed what it knew of the request after it was made.
	seq   int
	dirty bool
}

// state is the transcript's state the request's answer was made in.
func (q *request) state() *tnode {
	if q.answerFrom != nil {
		return q.answerFrom
	}
	return q.from
}

// fileState is how far one file was read, and what pairing needs across
// reads.
type fileState struct {
	path string
	read fileRead // how far it was read, and what it was (refresh.go)
	// partial: the file's last line was unfinished when last read.
	partial bool
	run     []any // the content of the current run of user records
	asst    map[string][]*record
	// pending are the file's messages not yet indexed by hash (see
	// indexFiles), in the order read.
	pending []pendingMsg
}

// pendingMsg is a message of the files that a request record may name by
// its hash: a user record's message (user), the end of a run of user
// records (an assistant record: neither set), or an assistant message
// whose records changed (id, recs: its records then).
type pendingMsg struct {
	user json.RawMessage
	id   string
	recs []*record
}

// Open reads the session whose main file is path, with its subagents'
// files (path without ".jsonl", then subagents/*.jsonl).
func Open(path string) (*Session, error) {
	return openWith(path, 0)
}

// void reports whether a request record holds nothing at all: no shape
// the files hold, no messages, and no answer, error or empty reply
// (Claude Code writes none such; a file of them is damage, and showing
// each as a turn would cost far more than the file).
func (q *request) void(s *Session) bool {
	if q.transcript || len(q.msgs) > 0 || len(q.answer) > 0 || q.errRec != nil || q.empty {
		return false
	}
	_, ok := s.shapes[q.rec.ShapeHash]
	return !ok
}

// ended reports whether the request has its answer, an error or an empty
// reply (nothing more will be written for it).
func (q *request) ended() bool {
	return q.errRec != nil || q.empty || (len(q.answer) > 0 && answerStopped(q.answer[len(q.answer)-1]))
}

// answerStopped reports whether an answer's record carries its stop
// reason (the message is whole).
func answerStopped(r *record) bool {
	var m struct {
		StopReason *string `json:"stop_reason"`
	}
	return json.Unmarshal(r.Message, &m) == nil && m.StopReason != nil
}

// addMessage indexes a canonical message by its hash and returns its
// index.
func (s *Session) addMessage(canon []byte) int32 {
	h := hashOf(canon)
	if i, ok := s.index[h]; ok {
		return i
	}
	i := int32(len(s.msgs))
	s.index[h] = i
	s.msgs = append(s.msgs, canon)
	return i
}

// ingest indexes one file's new records, hands them to the transcript,
// which pairs requests with answers, errors and empty replies, and works
// out each new request's messages.
func (s *Session) ingest(f *fileState, chunks [][]record) {
	var touched []string
	isTouched := map[string]bool{}
	for _, recs := range chunks {
		for i := range recs {
			r := &recs[i]
			if r.Version != "" {
				s.Version = r.Version
			}
			if r.Cwd != "" && s.Cwd == "" {
				s.Cwd = r.Cwd
			}
			if r.Entrypoint != "" {
				s.Entrypoint = r.Entrypoint
			}
			switch r.Type {
			case "api-request-shape":
				if r.Shape != nil {
					sys, err1 := canonValue(orNull(r.Shape.System), false)
					tools, err2 := canonValue(orNull(r.Shape.Tools), false)
					if err1 != nil || err2 != nil {
						s.problem(Problem{File: f.path, What: "request shape " + short(r.ShapeHash) + " does not parse"})
						continue
					}
					s.shapes[r.ShapeHash] = &shape{system: sys, tools: tools}
				}
				r.Shape = nil // kept in its canonical form only
				continue
			case "api-request-blob":
				// Indexed under the hash the record names it by.
				if _, ok := s.index[r.Hash]; !ok {
					if c, err := canonMessage(r.Message); err == nil {
						s.index[r.Hash] = int32(len(s.msgs))
						s.msgs = append(s.msgs, c)
					}
				}
				r.Message = nil
				continue
			case "api-request":
				s.Requests = true
			case "attachment":
				if bytes.Contains(r.Attachment, []byte(`"deferred_tools_record"`)) {
					if s.schemas == nil {
						s.schemas = map[string]int{}
					}
					schemasOf(r.Attachment, s.schemas)
				}
			case "user":
				if len(r.Message) > 0 {
					f.pending = append(f.pending, pendingMsg{user: r.Message})
					s.users = append(s.users, r)
				}
			case "assistant":
				f.pending = append(f.pending, pendingMsg{})
				if id := messageID(r.Message); id != "" {
					if _, ok := f.asst[id]; !ok || !isTouched[id] {
						touched = append(touched, id)
						isTouched[id] = true
					}
					f.asst[id] = append(f.asst[id], r)
				}
			}
			// The transcript keeps what it needs of the record (a user
			// message's blocks, until a request made from it is rebuilt), or
			// the record until its parent is read.
			s.tr.record(r, f.path)
		}
	}
	for _, id := range touched {
		f.pending = append(f.pending, pendingMsg{id: id, recs: slices.Clip(f.asst[id])})
	}
	if s.Requests {
		s.indexFiles()
	}
}

// indexFiles indexes by hash the messages of the files read so far that
// are not yet: those a request record may name (a user record's message,
// a run of user records merged as they go to the API as one message, an
// assistant message's records joined). Files without request records
// (Claude Code before 2.1.300, or with the records off) never need it:
// their requests are made from the transcript, so the work waits for the
// first request record.
func (s *Session) indexFiles() {
	for _, f := range s.files {
		for _, p := range f.pending {
			switch {
			case p.user != nil:
				if c, err := canonMessage(p.user); err == nil {
					s.addMessage(c)
				}
				content := messageContent(p.user)
				if f.run != nil && content != nil {
					f.run = append(f.run, content...)
					if c, err := canonMessage(mustJSON(map[string]any{"role": "user", "content": f.run})); err == nil {
						s.addMessage(c)
					}
				} else {
					f.run = content
				}
			case p.recs != nil:
				if c, err := assistantMessage(p.recs); err == nil {
					s.addMessage(c)
				}
			default:
				f.run = nil
			}
		}
		f.pending = nil
	}
}

// flushRequests works out the messages of the requests made since the
// last call and adds them to the session.
func (s *Session) flushRequests() {
	// The messages of each new request: a request record's are the first
	// keep of its base's, then its tail; a request made from the
	// transcript has those of the chain it was sent from.
	for _, q := range s.newReqs {
		if q.transcript {
			if q.from != nil {
				q.msgs = s.tr.messagesOf(q.from, &s.msgLists)
			}
			continue
		}
		var msgs []int32
		if q.rec.Base != "" {
			b := s.tr.records[q.rec.Base]
			if b == nil {
				s.problem(Problem{File: q.file, What: "request " + short(q.rec.ID) + " builds on request " + short(q.rec.Base) + ", which is not in the files"})
			} else {
				keep := min(max(q.rec.Keep, 0), len(b.msgs))
				if q.rec.Keep < 0 {
					s.problem(Problem{File: q.file, What: fmt.Sprintf("request %s keeps %d messages of request %s: read as none", short(q.rec.ID), q.rec.Keep, short(q.rec.Base))})
				}
				msgs = append(make([]int32, 0, keep+len(q.rec.Tail)), b.msgs[:keep]...)
			}
		}
		for _, h := range q.rec.Tail {
			i, ok := s.index[h]
			if !ok {
				s.problem(Problem{File: q.file, What: "request " + short(q.rec.ID) + ": message " + short(h) + " is not in the files (left out)"})
				continue
			}
			msgs = append(msgs, i)
		}
		q.msgs = s.msgLists.Share(msgs, sharing.Equal[int32])
		if _, ok := s.shapes[q.rec.ShapeHash]; !ok {
			if s.missingShape == nil {
				s.missingShape = map[string]*missing{}
			}
			m := s.missingShape[q.rec.ShapeHash]
			if m == nil {
				m = &missing{file: q.file, first: q.rec.ID}
				s.missingShape[q.rec.ShapeHash] = m
			}
			m.n++
		}
	}
	s.reqs = append(s.reqs, s.newReqs...)
	s.newReqs = s.newReqs[:0]
}

// missing counts the requests that name something the files do not hold:
// the first of them, its file, and how many were said.
type missing struct {
	file, first string
	n, said     int
}

// Voids counts the request records the last Stream left out because they
// hold nothing.
func (s *Session) Voids() int { return s.voids }

// Release drops what only reading more of the files would need: the user
// records' messages and their blocks, which the requests' messages were
// made of (most of a session's bytes are tool results there). The
// requests stay whole (Stream, Get); Refresh reads no more into a session
// released, and says so.
func (s *Session) Release() {
	s.released = true
	for _, r := range s.users {
		r.Message = nil
	}
	s.users = nil
	for _, f := range s.files {
		f.pending, f.run = nil, nil
	}
	release := func(n *tnode) {
		n.run, n.held = nil, nil
	}
	for _, n := range s.tr.nodes {
		release(n)
	}
	for _, n := range s.tr.tip {
		release(n)
	}
	for from, m := range s.tr.merged {
		release(from)
		release(m.node)
	}
	for from, n := range s.tr.whole {
		release(from)
		release(n)
	}
	// And the nodes of the requests' messages (a cell seen once had the
	// rest of its list seen with it).
	seen := map[*mlist]bool{}
	for _, q := range s.reqs {
		for _, n := range [...]*tnode{q.from, q.answerFrom} {
			if n == nil {
				continue
			}
			release(n)
			for e := n.msgs; e != nil && !seen[e]; e = e.prev {
				seen[e] = true
				release(e.node)
			}
		}
	}
	s.tr.resultRec = nil
}

// Len is the number of requests the files hold.
func (s *Session) Len() int { return len(s.reqs) }

// Stream hands fn each request as an exchange, in the order they were
// sent; the exchange and its bodies are fn's only until it returns (the
// buffers are reused). It also works out
// Confirmed and Unconfirmed.
func (s *Session) Stream(ctx context.Context, fn func(*exchange.Exchange) error) (err error) {
	return s.stream(ctx, false, fn)
}

// StreamMade is Stream handing each request made from the transcript as
// the parts it is made of (exchange.Exchange.ReqMade) instead of its body:
// for a reader that keeps what it works out of each message, which then
// has no body written and parsed back for each request.
func (s *Session) StreamMade(ctx context.Context, fn func(*exchange.Exchange) error) (err error) {
	return s.stream(ctx, true, fn)
}

func (s *Session) stream(ctx context.Context, made bool, fn func(*exchange.Exchange) error) (err error) {
	defer crash.Recover("read session "+s.Path, &err)
	s.Confirmed, s.Unconfirmed = 0, 0
	// The last few bodies built: a request's base is usually among them,
	// and its body's buffer is reused once it leaves.
	recent := make([]built, 8)
	next := 0
	void := 0
	defer func() {
		if void > 0 {
			s.voids = void
		}
	}()
	for i := range s.reqs {
		if err := ctx.Err(); err != nil {
			return err
		}
		q := s.reqs[i]
		if !s.Live && q.void(s) {
			void++
			continue
		}
		var base *built
		if q.rec.Base != "" {
			for j := range recent {
				if recent[j].id == q.rec.Base {
					base = &recent[j]
					break
				}
			}
		}
		buf := recent[next].body
		if base == &recent[next] {
			buf = nil // still needed below
		}
		ex, ok, b := s.rebuild(i, buf, base, made)
		switch {
		case q.transcript:
		case ok:
			s.Confirmed++
		default:
			s.Unconfirmed++
		}
		// Name the body, and what it shares with its base request's, so
		// that the decoder reuses what it worked out for those bytes.
		ex.ReqRef = exchange.BodyRef{Key: q.rec.ID}
		if ex.ReqMade != nil {
			ex.ReqRef = exchange.BodyRef{}
		} else if base != nil {
			ex.ReqRef.Base, ex.ReqRef.Prefix = q.rec.Base, commonPrefix(base.body, ex.ReqBody)
		}
		recent[next] = b
		next = (next + 1) % len(recent)
		if err := fn(ex); err != nil {
			return err
		}
	}
	return nil
}

// commonPrefix is the length of the bytes a and b begin with alike,
// compared a block at a time.
func commonPrefix(a, b []byte) int {
	const block = 4096
	n := min(len(a), len(b))
	i := 0
	for i+block <= n && bytes.Equal(a[i:i+block], b[i:i+block]) {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// Exchange rebuilds request i (0 is the first) and its answer, as Stream
// hands it (its ID is i+1), without a body reference.
func (s *Session) Exchange(i int) *exchange.Exchange {
	ex, _ := s.exchange(i)
	return ex
}

// Get rebuilds the exchange with the given ID (1 is the first request).
func (s *Session) Get(id int64) (ex *exchange.Exchange, err error) {
	defer crash.Recover("read session "+s.Path, &err)
	if id < 1 || id > int64(len(s.reqs)) {
		return nil, fmt.Errorf("exchange %d: not in the session (1 to %d)", id, len(s.reqs))
	}
	ex, _ = s.exchange(int(id - 1))
	return ex, nil
}

// exchange rebuilds request i and its answer; ok reports whether the
// rebuilt request matched the digest the files keep of it.
func (s *Session) exchange(i int) (*exchange.Exchange, bool) {
	ex, ok, _ := s.rebuild(i, nil, nil, false)
	return ex, ok
}

// GetMade is Get handing a request made from the transcript as the parts
// it is made of, as StreamMade does.
func (s *Session) GetMade(id int64) (ex *exchange.Exchange, err error) {
	defer crash.Recover("read session "+s.Path, &err)
	if id < 1 || id > int64(len(s.reqs)) {
		return nil, fmt.Errorf("exchange %d: not in the session (1 to %d)", id, len(s.reqs))
	}
	ex, _, _ = s.rebuild(int(id-1), nil, nil, true)
	return ex, nil
}

// rebuild is exchange writing the request body into buf and resuming the
// digest from base (see requestBody); it also returns the body built. With
// made, a request made from the transcript is handed as its parts
// (exchange.Made), without a body.
func (s *Session) rebuild(i int, buf []byte, base *built, made bool) (*exchange.Exchange, bool, built) {
	q := s.reqs[i]
	var b built
	var parts *exchange.Made
	// The answer's parts, read once for the body, its model and the
	// response.
	var a answerParts
	answered := false
	if len(q.answer) > 0 {
		a, answered = answerOf(q.answer)
	}
	src := exchange.SourceSessionFile
	switch {
	case q.transcript && made:
		var read *answerParts
		if answered {
			read = &a
		}
		parts = s.made(q, q.modelWith(read))
		src = exchange.SourceTranscript
	case q.transcript:
		b = built{id: q.rec.ID, body: s.madeBody(q, buf)}
		src = exchange.SourceTranscript
	default:
		b = s.requestBody(q, buf, base)
	}
	body, digest := b.body, b.digest
	ok := digest != "" && (digest == q.rec.RequestDigest || digest == q.rec.CutRequestDigest)
	ex := &exchange.Exchange{
		ID: int64(i + 1), Source: src, Start: q.at,
		Method: "POST", URL: URL, Host: "api.anthropic.com",
		ReqHeaders: s.requestHeaders(q), ReqBody: body, ReqMade: parts, RespBody: []byte{},
	}
	switch {
	case q.synthetic:
		ex.End = parseTime(q.errRec.Timestamp)
		status, body, msg := syntheticError(q.errRec)
		if status == 0 {
			status, body = knownError(msg)
		}
		if status > 0 {
			ex.Status, ex.RespBody = status, body
			ex.RespHeaders = []exchange.Header{{Name: "Content-Type", Value: "application/json"}}
			ex.State = exchange.StateComplete
		} else {
			ex.Error, ex.State = msg, exchange.StateUpstreamFailed
		}
	case len(q.answer) > 0:
		ex.Status = 200
		switch {
		case answered && made && a.message():
			ex.RespMade = (*exchange.MadeAnswer)(&a)
		case answered:
			ex.RespBody = a.body()
		default:
			ex.RespBody = answerBodySlow(q.answer)
		}
		ex.RespHeaders = []exchange.Header{{Name: "Content-Type", Value: "application/json"}}
		if id := q.answer[len(q.answer)-1].RequestID; id != "" {
			ex.RespHeaders = append(ex.RespHeaders, exchange.Header{Name: "Request-Id", Value: id})
		}
		// The answer is written whole: when its first byte came is not
		// known (FirstByte stays zero), so no time to first token is made up.
		ex.End = parseTime(q.answer[len(q.answer)-1].Timestamp)
		ex.State = exchange.StateComplete
	case q.errRec != nil:
		ex.End = parseTime(q.errRec.Timestamp)
		status, body, msg := apiError(q.errRec.Error)
		retry := retryText(q.errRec)
		if status > 0 {
			ex.Status, ex.RespBody = status, body
			ex.RespHeaders = []exchange.Header{{Name: "Content-Type", Value: "application/json"}}
			ex.State = exchange.StateComplete
			if retry != "" {
				ex.RespHeaders = append(ex.RespHeaders, exchange.Header{Name: RetryHeader, Value: retry})
			}
		} else {
			ex.Error = msg
			if retry != "" {
				ex.Error += "; Claude Code's " + retry
			}
			ex.State = exchange.StateUpstreamFailed
		}
	case q.empty:
		ex.Status = 200
		ex.RespBody = []byte(`{"type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null}`)
		ex.RespHeaders = []exchange.Header{{Name: "Content-Type", Value: "application/json"}}
		ex.End, ex.State = q.at, exchange.StateComplete
	case s.Live && s.tr.last[q.file] == q:
		// The newest request of its file, still being answered.
		ex.State = exchange.StateInFlight
	default:
		ex.Error = "Claude Code wrote no answer for this request (it was abandoned, or Claude Code exited)"
		ex.State = exchange.StateUpstreamFailed
		ex.End = q.at
	}
	if ex.End.Before(ex.Start) && ex.State != exchange.StateInFlight {
		ex.End = ex.Start
	}
	if !ex.FirstByte.IsZero() && ex.FirstByte.Before(ex.Start) {
		ex.FirstByte = ex.Start
	}
	if ex.Status != 0 && len(ex.RespBody) > 0 {
		ex.Chunks = []exchange.Chunk{{Offset: 0, Size: len(ex.RespBody), At: ex.End}}
	}
	return ex, ok, b
}

// RetryHeader is the response header a failed attempt read from Claude
// Code's files carries Claude Code's retry in ("attempt 1 of 10, the next
// after 523 ms"): it is not the API's.
const RetryHeader = "X-Tsinspect-Claude-Code-Retry"

// retryText says an api_error record's retry: "attempt 1 of 10, the next
// after 523 ms", "" when the record does not say.
func retryText(r *record) string {
	if r.RetryAttempt == 0 {
		return ""
	}
	s := "attempt " + strconv.Itoa(r.RetryAttempt)
	if r.MaxRetries > 0 {
		s += " of " + strconv.Itoa(r.MaxRetries)
	}
	if r.RetryInMs > 0 {
		s += ", the next after " + strconv.FormatInt(int64(r.RetryInMs+0.5), 10) + " ms"
	}
	return s
}

// requestHeaders are the headers the files tell: the betas, the session,
// the query source and the client's release.
func (s *Session) requestHeaders(q *request) []exchange.Header {
	hs := []exchange.Header{{Name: "Content-Type", Value: "application/json"}}
	var p struct {
		Betas []string `json:"betas"`
	}
	if len(q.rec.Params) > 0 && json.Unmarshal(q.rec.Params, &p) == nil && len(p.Betas) > 0 {
		hs = append(hs, exchange.Header{Name: "Anthropic-Beta", Value: strings.Join(p.Betas, ",")})
	}
	if q.rec.Version != "" {
		entry := s.Entrypoint
		if entry == "" {
			entry = "cli"
		}
		hs = append(hs, exchange.Header{Name: "User-Agent", Value: "claude-cli/" + q.rec.Version + " (external, " + entry + ")"})
	}
	if q.rec.SessionID != "" {
		hs = append(hs, exchange.Header{Name: exchange.SessionHeader, Value: q.rec.SessionID})
	}
	if q.rec.QuerySource != "" {
		hs = append(hs, exchange.Header{Name: exchange.QuerySourceHeader, Value: q.rec.QuerySource})
	}
	return hs
}

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

func orNull(b json.RawMessage) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}

func short(h string) string {
	if len(h) > 8 {
		return h[:8]
	}
	return h
}

// messageContent is a message's content as blocks (a string as one text
// block); nil when it does not parse.
func messageContent(raw json.RawMessage) []any {
	v, err := canonjson.Decode(raw)
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	switch c := m["content"].(type) {
	case string:
		return []any{map[string]any{"type": "text", "text": c}}
	case []any:
		return c
	}
	return nil
}

func mustJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	writeCanon(&buf, v, false)
	return buf.Bytes()
}
