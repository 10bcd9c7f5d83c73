package sessionfiles

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Resume is what a later listing needs to read only what a session's
// files appended since: how far each file was read (and a check that it
// is still the same file), and the records the transcript read so far,
// trimmed to what the listing's reading uses of them (a few hundred bytes
// a record, against whole tool results and snapshots in the files). A
// session Claude Code is writing grows at its end; reading it again means
// replaying those records and reading the new lines.
type Resume struct {
	Files []FileMark
	// Log holds the trimmed records, each with the index of its file in
	// Files.
	Log []Logged
	// What the files said beside the transcript: Start, End, Version,
	// Cwd, the record types not known, the lines that are not records.
	Start, End   int64
	Version, Cwd string
	Unknown      map[string]int
	BadLines     int
	FirstBadLine string
}

// FileMark is how far a file was read: the bytes taken (up to the end of
// its last whole line), its lines, and the SHA-256 of its first
// headBytes bytes, which tells a file replaced by another.
type FileMark struct {
	Path   string
	Offset int64
	Lines  int
	Head   [32]byte
}

// Logged is one trimmed record of the log and its file.
type Logged struct {
	File int
	R    record
}

// headBytes is how much of a file's start is hashed to tell it is the
// same file.
const headBytes = 4096

// maxResumeLog bounds one session's log: a longer one is not kept (the
// session is read whole when it grows).
const maxResumeLog = 200000

// keepResumes is how many of the most recently written sessions keep a
// Resume in the index: sessions that grow are the ones being written.
const keepResumes = 16

// headHash hashes the first headBytes bytes of data (all of it when
// shorter).
func headHash(data []byte) [32]byte {
	return sha256.Sum256(data[:min(len(data), headBytes)])
}

// trimmed is r cut to what the listing's reading of the transcript uses
// of it, decided as that reading decides (tr in the state it is in before
// r is read): a user message that cannot matter to it is left out, an
// answer's message keeps its ID, model, blocks' type, ID and name, and
// usage, an attachment only a catalog change.
func trimmed(r *record, tr *transcript) record {
	c := *r
	c.Shape, c.Tail, c.CacheControl, c.Cut, c.Withheld = nil, nil, nil, nil, nil
	switch r.Type {
	case "user":
		if len(r.Message) > 0 && !tr.mayMatter(r.Message) {
			c.Message = json.RawMessage(`{}`)
		} else if len(r.Message) > 0 {
			c.Message = userGist(r.Message)
		}
	case "assistant":
		if b := answerGist(r.Message); b != nil {
			c.Message = b
		}
	case "attachment":
		if !bytes.Contains(r.Attachment, []byte(`"deferred_tools_delta"`)) {
			c.Attachment = nil
		}
	case "progress":
		if e, ok := embeddedRecord(r); ok && !tr.agentIDs[e.AgentID] {
			// What the listing reads of the subagent's record, as of any.
			t := trimmed(&e, tr)
			data, _ := json.Marshal(map[string]any{"type": "agent_progress", "agentId": e.AgentID,
				"message": map[string]any{"type": t.Type, "message": t.Message, "uuid": t.UUID, "timestamp": t.Timestamp}})
			c.Data = data
		} else {
			c.Data = nil
		}
	default:
		c.Data = nil
	}
	// Nothing kept points into the file's read buffer: the index keeps
	// these records, and the listing would keep every buffer alive.
	// (The messages and progress data kept were written anew above.)
	if r.Type != "user" && r.Type != "assistant" {
		c.Message = bytes.Clone(c.Message)
	}
	c.Attachment, c.CompactMetadata = bytes.Clone(c.Attachment), bytes.Clone(c.CompactMetadata)
	c.Error, c.Params = bytes.Clone(c.Error), bytes.Clone(c.Params)
	return c
}

// answerGist is what the listing reads of an answer's record, written
// anew: its ID, model, blocks' type, ID and name, stop mark and usage; nil
// when the message does not walk as one.
func answerGist(msg json.RawMessage) json.RawMessage {
	m, ok := readMessage(msg)
	if !ok {
		return nil
	}
	blocks := make([]map[string]string, len(m.blocks))
	for i, b := range m.blocks {
		blocks[i] = map[string]string{"type": b.typ, "id": b.id, "name": b.name}
	}
	out := map[string]any{"id": m.id, "model": m.model, "content": blocks}
	if m.stopped {
		out["stop_reason"] = "stopped"
	}
	if len(m.usage) > 0 && json.Valid(m.usage) {
		out["usage"] = json.RawMessage(m.usage)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}

// userGist is what the listing reads of a user message that may matter to
// it (transcript.mayMatter), written small: each tool result's call, error
// mark, tool_reference names and the texts the listing tells apart, and
// the note after an empty reply.
func userGist(msg json.RawMessage) json.RawMessage {
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return json.RawMessage(`{}`)
	}
	var blocks []any
	for _, res := range toolResults(m.Content) {
		var inner []any
		for _, name := range res.refs {
			inner = append(inner, map[string]string{"type": "tool_reference", "tool_name": name})
		}
		if res.noMatch {
			inner = append(inner, map[string]string{"type": "text", "text": noMatchText})
		}
		if res.none {
			inner = append(inner, map[string]string{"type": "text", "text": noSuchToolText})
		}
		if inner == nil {
			inner = []any{}
		}
		blocks = append(blocks, map[string]any{"type": "tool_result", "tool_use_id": res.id, "is_error": res.isError, "content": inner})
	}
	if bytes.Contains(m.Content, []byte(emptyReplyText)) {
		blocks = append(blocks, map[string]string{"type": "text", "text": emptyReplyText})
	}
	if blocks == nil {
		blocks = []any{}
	}
	b, err := json.Marshal(map[string]any{"role": "user", "content": blocks})
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// resumeFiles checks that the files of e are those r read, grown: it
// returns each file's offset to read from (0 for a file r did not read,
// a subagent's new one), or false when one shrank or was replaced.
func resumeFiles(e Entry, r *Resume) (map[string]FileMark, bool) {
	marks := map[string]FileMark{}
	for _, m := range r.Files {
		marks[m.Path] = m
	}
	for _, p := range append([]string{e.Path}, e.Agents...) {
		m, ok := marks[p]
		if !ok {
			continue
		}
		info, err := os.Stat(p)
		if err != nil || info.Size() < m.Offset {
			return nil, false
		}
		if fileHead(p, m.Offset) != m.Head {
			return nil, false
		}
	}
	return marks, true
}

// fileHead is the hash of the first min(n, headBytes) bytes of the file
// at path (zero when it cannot be read).
func fileHead(path string, n int64) [32]byte {
	f, _, err := openRegular(path)
	if err != nil {
		return [32]byte{}
	}
	defer f.Close()
	head := make([]byte, min(n, headBytes))
	if _, err := io.ReadFull(f, head); err != nil {
		return [32]byte{}
	}
	return headHash(head)
}

// readFrom reads the regular file at path from offset on, up to the size
// it had when it was opened (readWhole from an offset).
func readFrom(path string, offset int64) ([]byte, error) {
	if offset == 0 {
		return readWhole(path)
	}
	f, info, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info.Size() <= offset {
		return nil, nil
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	buf := make([]byte, info.Size()-offset)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:n], nil
}

// String says how far r read, for tests and messages.
func (r *Resume) String() string {
	if r == nil {
		return "no resume"
	}
	s := strconv.Itoa(len(r.Log)) + " records"
	for _, f := range r.Files {
		s += fmt.Sprintf("; %s at %d", f.Path, f.Offset)
	}
	return s
}
