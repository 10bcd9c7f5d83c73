// Package sessionfiles reads Claude Code's own session files
// (~/.claude/projects/<project>/<session-id>.jsonl and the subagents'
// files beside it) as a source of exchanges: since release 2.1.300 they
// hold every Messages request Claude Code sent (its system blocks and tools
// under a shape hash, its messages as content-addressed blobs or as the
// transcript's own records) and every answer, API error and retry. Requests
// are rebuilt from those records and checked against the digest the files
// keep of each; answers are paired with them. Files of older releases hold
// the transcript only, and say so (see [File.Requests]).
//
// Nothing here writes into Claude Code's directory.
package sessionfiles

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/jsonvalid"
)

// record is one line of a session file: the fields of every record type
// tsinspect reads, by type.
type record struct {
	Type       string `json:"type"`
	Subtype    string `json:"subtype"`
	SessionID  string `json:"sessionId"`
	AgentID    string `json:"agentId"`
	Timestamp  string `json:"timestamp"`
	Version    string `json:"version"`
	Entrypoint string `json:"entrypoint"`
	Cwd        string `json:"cwd"`
	UUID       string `json:"uuid"`

	// The transcript's chain: each record names the one before it in its
	// conversation (null for a conversation's first, and for a compaction
	// boundary, which names the record before it as its logical parent).
	ParentUUID        parentRef `json:"parentUuid"`
	LogicalParentUUID string    `json:"logicalParentUuid"`
	// IsSidechain marks a subagent's records (inline in the main file
	// before 2.x); IsAPIErrorMessage Claude Code's own message for a
	// request that failed (model "<synthetic>": no API answer);
	// RequestSessionID, on an answer a forked session copied, the session
	// that was billed for it.
	IsSidechain       bool   `json:"isSidechain"`
	IsAPIErrorMessage bool   `json:"isApiErrorMessage"`
	RequestSessionID  string `json:"requestSessionId"`
	// system compact_boundary
	CompactMetadata json.RawMessage `json:"compactMetadata"`

	// api-request-shape
	ShapeHash string `json:"shapeHash"`
	Shape     *struct {
		System json.RawMessage `json:"system"`
		Tools  json.RawMessage `json:"tools"`
	} `json:"shape"`
	// api-request-blob (and user, assistant: the message)
	Hash    string          `json:"hash"`
	Message json.RawMessage `json:"message"`
	// api-request
	ID               string          `json:"id"`
	QuerySource      string          `json:"querySource"`
	Params           json.RawMessage `json:"params"`
	Base             string          `json:"base"`
	Keep             int             `json:"keep"`
	Tail             []string        `json:"tail"`
	CacheControl     []mark          `json:"cacheControl"`
	RequestDigest    string          `json:"requestDigest"`
	CutRequestDigest string          `json:"cutRequestDigest"`
	Cut              json.RawMessage `json:"cut"`
	Withheld         json.RawMessage `json:"withheld"`
	// assistant
	RequestID  string `json:"requestId"`
	RequestRef string `json:"requestRef"`
	// system api_error: the error, and Claude Code's retry of it
	Error        json.RawMessage `json:"error"`
	RetryAttempt int             `json:"retryAttempt"`
	MaxRetries   int             `json:"maxRetries"`
	RetryInMs    float64         `json:"retryInMs"`
	// attachment
	Attachment json.RawMessage `json:"attachment"`
	// progress: what a tool, a hook or (2.1.37–2.1.81) a subagent did;
	// agent_progress carries the subagent's messages (see
	// transcript.embedded).
	Data json.RawMessage `json:"data"`
}

// parentRef is a record's parentUuid: Set when the record has the field
// (null for a conversation's first record), so that files of formats
// without it can be told apart.
type parentRef struct {
	Set  bool
	UUID string
}

// UnmarshalJSON reads a UUID or null.
func (p *parentRef) UnmarshalJSON(b []byte) error {
	p.Set = true
	if string(b) == "null" {
		p.UUID = ""
		return nil
	}
	return json.Unmarshal(b, &p.UUID)
}

// mark is a cache_control mark of a request: where it goes and its value.
type mark struct {
	Path  []any           `json:"path"`
	Value json.RawMessage `json:"value"`
}

// knownTypes are the record types of the releases tsinspect was checked
// against; others are counted and named (a newer release's format).
var knownTypes = map[string]bool{
	"user": true, "assistant": true, "attachment": true, "system": true,
	"queue-operation": true, "last-prompt": true, "tools-used": true,
	"atis-latch": true, "cost-state": true, "summary": true,
	"file-history-snapshot": true, "custom-title": true, "tag": true,
	"api-request": true, "api-request-blob": true, "api-request-shape": true,
	"progress": true, "pr-link": true, "agent-name": true, "mode": true,
	"isolation-latch": true, "permission-mode": true, "ai-title": true,
}

// NewestKnown is the newest Claude Code release whose session files
// tsinspect was checked against: a record type it does not know in a file
// of a later release is that release's news.
const NewestKnown = "2.1.332"

// Problem is a part of the files that could not be read: the file, the
// line (0: the whole file) and what was wrong.
type Problem struct {
	File string
	Line int
	What string
}

func (p Problem) String() string {
	if p.Line == 0 {
		return filepath.Base(p.File) + ": " + p.What
	}
	return fmt.Sprintf("%s line %d: %s", filepath.Base(p.File), p.Line, p.What)
}

// scanned is what one file held.
type scanned struct {
	path string
	// records are the records read, in chunks (add): they are not moved
	// as more come, and ingest holds pointers to them.
	records  [][]record
	problems []Problem
	more     int // problems past maxProblems
	unknown  map[string]int
	// check checks the syntax of the records the frame reader reads.
	check jsonvalid.Checker
	// partial: the last line had no newline and did not parse (Claude
	// Code is still writing it); it is not consumed.
	partial  bool
	consumed int64
	// at is where the read started and ends: the lines before it (so that
	// problems name a line of the whole file) and an over-long line being
	// skipped.
	at cursor
	// limit is the longest line read (0: maxLine); buffer the size of
	// the read buffer (0: maxBuffer).
	limit, buffer int
}

// cursor is how far a file was read: its offset, the lines before it,
// and whether it stands inside an over-long line, named already, whose
// rest is skipped up to its newline.
type cursor struct {
	offset   int64
	lines    int
	skipping bool
}

// maxLine bounds one record (a request's blob holds a whole tool result).
// A longer line is named and skipped; the rest of the file is read.
const maxLine = 256 << 20

// scanFileFrom reads the records of one session file from at on, up to
// the size the file had when opened (what is appended while it is read is
// left for the next read), with lines of at most limit bytes (0:
// maxLine). Lines that do not parse, and longer ones, are problems; the
// rest is read. It returns what the opened file is, to tell a file
// replaced or cut since the last read.
//
// A ctx that is not nil stops the reading with its error once it is done.
func scanFileFrom(ctx context.Context, path string, at cursor, limit int) (*scanned, fs.FileInfo, error) {
	f, info, err := openRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	s := &scanned{path: path, unknown: map[string]int{}, at: at, limit: limit}
	if info.Size() < at.offset {
		return s, info, nil // cut: the caller starts over
	}
	if at.offset > 0 {
		if _, err := f.Seek(at.offset, io.SeekStart); err != nil {
			return nil, nil, err
		}
	}
	var r io.Reader = io.LimitReader(f, info.Size()-at.offset)
	if ctx != nil {
		r = ctxReader{ctx, r}
	}
	s.buffer = bufferFor(info.Size() - at.offset)
	err = scanRecords(r, s)
	return s, info, err
}

// maxBuffer is the largest read buffer: a line that does not fit is read
// in parts and copied.
const maxBuffer = 64 << 10

// bufferFor is the read buffer for n bytes: no larger than they need (a
// directory of small sessions read one after another allocated a
// megabyte each), no larger than maxBuffer.
func bufferFor(n int64) int {
	return int(max(min(n+1, maxBuffer), 4096))
}

// ctxReader reads from r until ctx is done, then fails with its error.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// scanRecords reads records from r into s, from where s.at stands;
// s.consumed and s.at say how far it got.
func scanRecords(r io.Reader, s *scanned) error {
	size := s.buffer
	if size <= 0 {
		size = maxBuffer
	}
	br := bufio.NewReaderSize(r, size)
	limit := s.limit
	if limit <= 0 {
		limit = maxLine
	}
	// One record read into, its value kept (s.add copies it): a record
	// made for each line went to the heap as well.
	var rec record
	for {
		if s.at.skipping {
			n, found, err := skipLine(br)
			s.consumed += n
			s.at.offset += n
			if found {
				s.at.skipping = false
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			continue
		}
		line, err := readLine(br, limit)
		if len(line) > limit {
			// Too long to hold: named once, by its line, and skipped
			// to its newline, now or in the reads that follow.
			s.at.lines++
			s.problem(Problem{s.path, s.at.lines, fmt.Sprintf("a line longer than %s: left out", sizeName(limit))})
			s.consumed += int64(len(line))
			s.at.offset += int64(len(line))
			s.at.skipping = line[len(line)-1] != '\n'
			continue
		}
		if len(line) > 0 {
			complete := line[len(line)-1] == '\n'
			trimmed := bytes.TrimSpace(line)
			rec = record{}
			var uerr error
			if !frameRecord(trimmed, &rec, &s.check) {
				rec = record{}
				uerr = json.Unmarshal(trimmed, &rec)
			}
			if uerr != nil && complete && json.Valid(trimmed) {
				// A record with a member of an unexpected type costs that
				// member only.
				var bad []string
				rec, bad = lenientRecord(trimmed)
				uerr = nil
				if len(bad) > 0 {
					s.problem(Problem{s.path, s.at.lines + 1, "left out, of an unexpected type: " + strings.Join(bad, ", ")})
				}
			}
			switch {
			case len(trimmed) == 0:
			case uerr != nil && !complete:
				// Still being written: left for the next read.
				s.partial = true
				return nil
			case uerr != nil && lightRecord(trimmed, &rec) && rec.Type != "":
				ownMembers(&rec) // the line is the reader's buffer
				// Damaged inside a member (a bad escape, a stray byte): the
				// record's frame still reads, as the listing reads it; what
				// the damaged member held is lost with it.
				s.problem(Problem{s.path, s.at.lines + 1, "damaged (" + shortErr(uerr) + "): read as far as its frame goes"})
				if rec.Type == "assistant" && !json.Valid(rec.Message) {
					// What the listing reads of it: the answer's ID,
					// model, blocks and usage.
					rec.Message = answerGist(rec.Message)
				}
				if !knownTypes[rec.Type] {
					s.unknown[rec.Type]++
				}
				s.add(rec)
			case uerr != nil:
				s.problem(Problem{s.path, s.at.lines + 1, "not a JSON record: " + shortErr(uerr)})
			default:
				if !knownTypes[rec.Type] {
					s.unknown[rec.Type]++
				}
				s.add(rec)
			}
			if complete {
				s.at.lines++
			}
			s.consumed += int64(len(line))
			s.at.offset += int64(len(line))
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// lenientRecord decodes a record member by member, leaving out the
// members whose type is not the one tsinspect reads (named in bad).
func lenientRecord(line []byte) (rec record, bad []string) {
	var members map[string]json.RawMessage
	if json.Unmarshal(line, &members) != nil {
		return rec, nil
	}
	keep := map[string]json.RawMessage{}
	for k, v := range members {
		var one record
		b, err := json.Marshal(map[string]json.RawMessage{k: v})
		if err == nil && json.Unmarshal(b, &one) == nil {
			keep[k] = v
		} else {
			bad = append(bad, k)
		}
	}
	sort.Strings(bad)
	b, err := json.Marshal(keep)
	if err == nil {
		_ = json.Unmarshal(b, &rec)
	}
	return rec, bad
}

// readLine reads one line with its newline. It stops once the line is
// longer than limit: the caller tells so by its length. The line is valid
// until the next read of br: a line that fits br's buffer is returned
// there, not copied.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	chunk, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) || len(chunk) > limit {
		return chunk, err
	}
	out := make([]byte, len(chunk), max(2*len(chunk), 64<<10))
	copy(out, chunk)
	for {
		chunk, err := br.ReadSlice('\n')
		if need := len(out) + len(chunk); need > cap(out) {
			// Doubling, but never past what the limit needs: a line
			// at the limit holds about its size, not twice it.
			grown := make([]byte, len(out), min(max(2*cap(out), need), max(limit+br.Size(), need)))
			copy(grown, out)
			out = grown
		}
		out = append(out, chunk...)
		if len(out) > limit {
			return out, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return out, err
		}
	}
}

// add keeps a record read: in a chunk of its own once the last is full,
// each twice the one before up to maxChunk records (a record is large:
// a list grown by copying cost twice its records again).
func (s *scanned) add(r record) {
	if n := len(s.records); n == 0 || len(s.records[n-1]) == cap(s.records[n-1]) {
		size := 16
		if n > 0 {
			size = min(2*cap(s.records[n-1]), maxChunk)
		}
		s.records = append(s.records, make([]record, 0, size))
	}
	last := &s.records[len(s.records)-1]
	*last = append(*last, r)
}

// maxChunk is the most records a chunk of scanned.records holds.
const maxChunk = 1024

// problem notes a problem of the scan, up to maxProblems; the rest are
// counted.
func (s *scanned) problem(p Problem) {
	if len(s.problems) < maxProblems {
		s.problems = append(s.problems, p)
	} else {
		s.more++
	}
}

// skipLine reads past the rest of a line without keeping it: n bytes,
// found when its newline was among them.
func skipLine(br *bufio.Reader) (n int64, found bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		n += int64(len(chunk))
		if err == nil {
			return n, true, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return n, false, err
		}
	}
}

// sizeName is a byte count for a message: "256 MB", or "64 kB" for the
// small limits of tests.
func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d kB", n>>10)
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// UnknownSummary names the record types tsinspect does not know, with
// counts: "2 records of types tsinspect does not know: foo ×1, bar ×1",
// suggesting a newer Claude Code only when version (the release that
// wrote them) is newer than NewestKnown.
func UnknownSummary(unknown map[string]int, version string) string {
	if len(unknown) == 0 {
		return ""
	}
	names := make([]string, 0, len(unknown))
	total := 0
	for k, n := range unknown {
		names = append(names, fmt.Sprintf("%s ×%d", k, n))
		total += n
	}
	sort.Strings(names)
	noun := "records"
	if total == 1 {
		noun = "record"
	}
	why := " (left out)"
	if version != "" && exchange.CompareVersions(version, NewestKnown) > 0 {
		why = " (a release newer than " + NewestKnown + ", which tsinspect was checked against)"
	}
	return fmt.Sprintf("%d %s of types tsinspect does not know%s: %s", total, noun, why, strings.Join(names, ", "))
}
