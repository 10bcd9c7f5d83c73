package sessionfiles

import (
	"bytes"
	"encoding/json"

	"github.com/tsinspect/tsinspect/internal/jsonvalid"
)

// lightRecord reads what the listing needs of one record: its type, its
// place in the transcript and the members the transcript reads, as spans
// of line (no copy), without decoding the large members it does not need
// (a request's blobs and shapes, a tool result's full output, snapshots).
// It walks the record's structure only, so it does not check the syntax
// of the members it skips. ok is false for a line that is not a JSON
// object.
func lightRecord(line []byte, r *record) (ok bool) {
	ok, _ = readFrame(line, r, nil)
	return ok
}

// frameRecord reads a whole record as decoding it with encoding/json would
// (scanRecords), at the cost of lightRecord checking the syntax as it
// walks, when it can: a valid JSON object of a type whose members the
// frame reader reads, each of the JSON type the record's field has, no
// key differing only in case from a field's. It reports false, with r
// undefined, when the record must be decoded.
func frameRecord(line []byte, r *record, c *jsonvalid.Checker) bool {
	if ok, whole := readFrame(line, r, c); !ok || !whole {
		return false
	}
	ownMembers(r)
	return true
}

// ownMembers makes the members a record keeps of its line copies, as
// decoding makes them: the line (with what the record holds besides, a
// tool's whole output) is not kept alive by them, and may be a reader's
// buffer.
func ownMembers(r *record) {
	for _, m := range []*json.RawMessage{&r.Message, &r.Attachment, &r.CompactMetadata, &r.Error, &r.Params, &r.Data} {
		if *m != nil {
			*m = bytes.Clone(*m)
		}
	}
}

// decodedKeys are the record's members the frame reader leaves to
// encoding/json (a request record's), folded to lower case.
var decodedKeys = [...]string{"shapehash", "shape", "hash", "querysource", "base", "keep", "tail", "cachecontrol",
	"requestdigest", "cutrequestdigest", "cut", "withheld", "retryattempt", "maxretries", "retryinms"}

// framedKeys are the members readFrame reads, folded to lower case: a key
// that differs from one only in case is read by encoding/json (which
// matches keys in any case) and not by the frame reader.
var framedKeys = [...]string{"type", "subtype", "sessionid", "agentid", "timestamp", "version", "entrypoint", "cwd", "uuid",
	"parentuuid", "logicalparentuuid", "issidechain", "isapierrormessage", "requestsessionid", "id", "requestref", "requestid",
	"message", "attachment", "data", "compactmetadata", "error", "params"}

// readFrame is lightRecord; strict, with a checker, it checks the line's
// syntax as jsonvalid.Valid does (ok is false when it is not valid), and
// whole says whether it read the record as encoding/json would (see
// frameRecord).
func readFrame(line []byte, r *record, checker *jsonvalid.Checker) (ok, whole bool) {
	strict := checker != nil
	*r = record{}
	whole = true
	i := jsonvalid.SkipSpace(line, 0)
	// Claude Code writes a record's type first: the request blobs and
	// shapes (most of a session's bytes when it writes them) are known
	// without walking them.
	for _, t := range [...]string{"api-request-blob", "api-request-shape"} {
		if bytes.HasPrefix(line[i:], []byte(`{"type":"`+t+`"`)) {
			r.Type = t
			return true, false
		}
	}
	keyEnd, valueEnd := jsonvalid.StringEnd, jsonvalid.ValueEnd
	if strict {
		// The record is one container deep.
		keyEnd, valueEnd = jsonvalid.StringEndValid, func(b []byte, i int) int { return checker.ValueEnd(b, i, 1) }
	}
	end := eachMemberWith(line, i, keyEnd, func(key []byte, v int) int {
		e := valueEnd(line, v)
		if e < 0 {
			return -1
		}
		val := line[v:e]
		str := func(dst *string) {
			switch {
			case line[v] == '"':
				*dst = jsonString(val)
			case string(val) != "null":
				whole = false
			}
		}
		flag := func(dst *bool) {
			switch string(val) {
			case "true":
				*dst = true
			case "false", "null":
			default:
				whole = false
			}
		}
		if strict && bytes.IndexByte(key, '\\') >= 0 {
			whole = false // an escaped key: encoding/json reads it unescaped
		}
		switch string(key) {
		case "type":
			str(&r.Type)
		case "subtype":
			str(&r.Subtype)
		case "sessionId":
			str(&r.SessionID)
		case "agentId":
			str(&r.AgentID)
		case "timestamp":
			str(&r.Timestamp)
		case "version":
			str(&r.Version)
		case "entrypoint":
			str(&r.Entrypoint)
		case "cwd":
			str(&r.Cwd)
		case "uuid":
			str(&r.UUID)
		case "parentUuid":
			r.ParentUUID.Set = true
			str(&r.ParentUUID.UUID)
		case "logicalParentUuid":
			str(&r.LogicalParentUUID)
		case "isSidechain":
			flag(&r.IsSidechain)
		case "isApiErrorMessage":
			flag(&r.IsAPIErrorMessage)
		case "requestSessionId":
			str(&r.RequestSessionID)
		case "id":
			str(&r.ID)
		case "requestRef":
			str(&r.RequestRef)
		case "requestId":
			str(&r.RequestID)
		case "message":
			r.Message = val
		case "attachment":
			r.Attachment = val
		case "data":
			if bytes.Contains(val, []byte(`"agent_progress"`)) {
				r.Data = val
			}
		case "compactMetadata":
			r.CompactMetadata = val
		case "error":
			r.Error = val
		case "params":
			r.Params = val
		default:
			if strict && whole {
				whole = !foldsToField(key)
			}
		}
		return e
	})
	if strict && end >= 0 && jsonvalid.SkipSpace(line, end) != len(line) {
		return false, false // more than white space after the record
	}
	return end >= 0, whole
}

// lightMessage is what the transcript reads of an answer's record: its
// message's ID and model, its content blocks as written with their type,
// ID and name, and its usage as written.
type lightMessage struct {
	id, model string
	content   [][]byte
	blocks    []lightBlock
	usage     []byte
	// stopped: the record carries a stop reason (the answer's last
	// record, in releases that write one).
	stopped bool
}

// lightBlock is a content block's type, ID and name.
type lightBlock struct {
	typ, id, name string
}

// readMessage walks an answer's message the way lightRecord walks a
// record; ok is false when it is not a JSON object.
func readMessage(msg []byte) (m lightMessage, ok bool) {
	end := eachMember(msg, jsonvalid.SkipSpace(msg, 0), func(key []byte, v int) int {
		e := jsonvalid.ValueEnd(msg, v)
		if e < 0 {
			return -1
		}
		switch string(key) {
		case "id":
			if msg[v] == '"' {
				m.id = jsonString(msg[v:e])
			}
		case "model":
			if msg[v] == '"' {
				m.model = jsonString(msg[v:e])
			}
		case "usage":
			m.usage = msg[v:e]
		case "stop_reason":
			m.stopped = msg[v] == '"'
		case "content":
			if msg[v] != '[' {
				return e
			}
			m.content, m.blocks = m.content[:0], m.blocks[:0]
			eachElement(msg, v, func(b int) int {
				be := jsonvalid.ValueEnd(msg, b)
				if be < 0 {
					return -1
				}
				var lb lightBlock
				eachMember(msg, b, func(key []byte, v int) int {
					e := jsonvalid.ValueEnd(msg, v)
					if e >= 0 && msg[v] == '"' {
						switch string(key) {
						case "type":
							lb.typ = jsonString(msg[v:e])
						case "id":
							lb.id = jsonString(msg[v:e])
						case "name":
							lb.name = jsonString(msg[v:e])
						}
					}
					return e
				})
				m.content = append(m.content, msg[b:be])
				m.blocks = append(m.blocks, lb)
				return be
			})
		}
		return e
	})
	return m, end >= 0
}

// foldsToField reports whether key, not one the frame reader reads as it
// is, is a record field's name in another case (encoding/json matches
// keys in any case) or a member the frame reader leaves to encoding/json.
func foldsToField(key []byte) bool {
	for _, names := range [...][]string{decodedKeys[:], framedKeys[:]} {
		for _, name := range names {
			if len(name) == len(key) && lowerIs(key, name) {
				return true
			}
		}
	}
	return false
}

// lowerIs reports whether key, its ASCII letters lowered, is name.
func lowerIs(key []byte, name string) bool {
	for i, c := range key {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}
