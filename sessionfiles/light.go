package sessionfiles

import "bytes"

// lightRecord reads what the listing needs of one record: its type, its
// place in the transcript and the members the transcript reads, as spans
// of line (no copy), without decoding the large members it does not need
// (a request's blobs and shapes, a tool result's full output, snapshots).
// Opening a session decodes every record whole (scanRecords); this walks
// the record's structure only, so it does not check the syntax of the
// members it skips. ok is false for a line that is not a JSON object.
func lightRecord(line []byte, r *record) (ok bool) {
	*r = record{}
	i := skipSpace(line, 0)
	// Claude Code writes a record's type first: the request blobs and
	// shapes (most of a session's bytes when it writes them) are known
	// without walking them.
	for _, t := range [...]string{"api-request-blob", "api-request-shape"} {
		if bytes.HasPrefix(line[i:], []byte(`{"type":"`+t+`"`)) {
			r.Type = t
			return true
		}
	}
	end := eachMember(line, i, func(key []byte, v int) int {
		e := valueEnd(line, v)
		if e < 0 {
			return -1
		}
		val := line[v:e]
		str := func(dst *string) {
			if line[v] == '"' {
				*dst = jsonString(val)
			}
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
			r.IsSidechain = string(val) == "true"
		case "isApiErrorMessage":
			r.IsAPIErrorMessage = string(val) == "true"
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
		}
		return e
	})
	return end >= 0
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
	end := eachMember(msg, skipSpace(msg, 0), func(key []byte, v int) int {
		e := valueEnd(msg, v)
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
				be := valueEnd(msg, b)
				if be < 0 {
					return -1
				}
				var lb lightBlock
				eachMember(msg, b, func(key []byte, v int) int {
					e := valueEnd(msg, v)
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
