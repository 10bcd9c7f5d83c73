package sessionfiles

import (
	"bytes"
	"encoding/json"
)

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

// lightParams is the model of an api-request record's params.
func lightModel(params json.RawMessage) string {
	if len(params) == 0 {
		return ""
	}
	var p struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Model
}
