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
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tsinspect/tsinspect/exchange"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
	path     string
	records  []record
	problems []Problem
	more     int // problems past maxProblems
	unknown  map[string]int
	// partial: the last line had no newline and did not parse (Claude
	// Code is still writing it); it is not consumed.
	partial  bool
	consumed int64
}

// maxLine bounds one record (a request's blob holds a whole tool result).
const maxLine = 256 << 20

// scanFileFrom reads the records of one session file from offset on.
// Lines that do not parse are problems; the rest is read.
func scanFileFrom(path string, offset int64) (*scanned, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return nil, err
		}
	}
	s := &scanned{path: path, unknown: map[string]int{}}
	err = scanRecords(f, s)
	return s, err
}

func scanRecords(r io.Reader, s *scanned) error {
	br := bufio.NewReaderSize(r, 1<<20)
	n := 0
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			n++
			complete := line[len(line)-1] == '\n'
			trimmed := bytes.TrimSpace(line)
			var rec record
			uerr := json.Unmarshal(trimmed, &rec)
			if uerr != nil && complete && json.Valid(trimmed) {
				// A record with a member of an unexpected type costs that
				// member only.
				var bad []string
				rec, bad = lenientRecord(trimmed)
				uerr = nil
				if len(bad) > 0 && len(s.problems) < maxProblems {
					s.problems = append(s.problems, Problem{s.path, n, "left out, of an unexpected type: " + strings.Join(bad, ", ")})
				}
			}
			switch {
			case len(trimmed) == 0:
			case uerr != nil && !complete:
				// Still being written: left for the next read.
				s.partial = true
				return nil
			case uerr != nil:
				if len(s.problems) < maxProblems {
					s.problems = append(s.problems, Problem{s.path, n, "not a JSON record: " + shortErr(uerr)})
				} else {
					s.more++
				}
			default:
				if !knownTypes[rec.Type] {
					s.unknown[rec.Type]++
				}
				s.records = append(s.records, rec)
			}
			s.consumed += int64(len(line))
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

// readLine reads one line with its newline; a line over maxLine is an
// error.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > maxLine {
			return nil, fmt.Errorf("a line longer than %d MB", maxLine>>20)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return out, err
		}
	}
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
