package sessionfiles

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/jsonvalid"
)

// lightFields are the members lightRecord reads, for comparing it with
// decoding the record whole.
func lightFields(r *record) []string {
	return []string{r.Type, r.Subtype, r.SessionID, r.AgentID, r.Timestamp, r.Version, r.Cwd, r.UUID,
		boolText(r.ParentUUID.Set), r.ParentUUID.UUID, r.LogicalParentUUID, boolText(r.IsSidechain), boolText(r.IsAPIErrorMessage),
		r.RequestSessionID, r.ID, r.RequestRef, r.RequestID, compactJSON(r.Message), compactJSON(r.Attachment),
		compactJSON(r.CompactMetadata), compactJSON(r.Error), compactJSON(r.Params), compactJSON(agentProgress(r.Data))}
}

// agentProgress is a progress record's data as the listing keeps it: only
// a subagent's (agent_progress).
func agentProgress(data []byte) []byte {
	if !bytes.Contains(data, []byte(`"agent_progress"`)) {
		return nil
	}
	return data
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func compactJSON(b []byte) string {
	var buf bytes.Buffer
	if len(b) == 0 || json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

// checkLight fails when lightRecord reads a valid record otherwise than
// decoding it does.
func checkLight(t *testing.T, line []byte) {
	t.Helper()
	// The frame reader checks the syntax as it walks: what it reads whole
	// is valid JSON, and what is not is left to decoding, which says so.
	var framed record
	if frameRecord(line, &framed, &jsonvalid.Checker{}) && !json.Valid(line) {
		t.Fatalf("frameRecord read an invalid line whole: %q", line)
	}
	var want record
	if json.Unmarshal(line, &want) != nil || bytes.HasPrefix(line, []byte(`{"type":"api-request-`)) {
		return // not a record; blobs and shapes are not walked
	}
	if t := bytes.TrimSpace(line); len(t) == 0 || t[0] != '{' {
		return // null decodes into a record as nothing: no record either
	}
	if foldedKeys(line) {
		return // encoding/json matches keys in any case; Claude Code writes them in one
	}
	if frameRecord(line, &framed, &jsonvalid.Checker{}) {
		// Read whole by the frame reader: every field as decoded.
		if w, g := append(lightFields(&want), want.Entrypoint, string(want.Data)), append(lightFields(&framed), framed.Entrypoint, framedData(&want, &framed)); !slices.Equal(w, g) {
			t.Errorf("frameRecord of %s:\n got %q\nwant %q", line, g, w)
		}
	}
	var got record
	if !lightRecord(line, &got) {
		t.Fatalf("lightRecord refuses a valid record: %s", line)
	}
	w, g := lightFields(&want), lightFields(&got)
	for i := range w {
		if w[i] != g[i] {
			t.Errorf("%s:\nfield %d: light %q, decoded %q", line, i, g[i], w[i])
		}
	}
}

// foldedKeys reports whether a top-level key of line differs only in case
// from one a record has.
func foldedKeys(line []byte) bool {
	known := []string{"type", "subtype", "sessionId", "agentId", "timestamp", "version", "cwd", "uuid", "parentUuid", "logicalParentUuid",
		"isSidechain", "isApiErrorMessage", "requestSessionId", "id", "requestRef", "requestId", "message", "attachment", "compactMetadata",
		"error", "params", "entrypoint", "shapeHash", "shape", "hash", "querySource", "base", "keep", "tail", "cacheControl", "requestDigest",
		"cutRequestDigest", "cut", "withheld", "data"}
	folded := false
	eachMember(line, jsonvalid.SkipSpace(line, 0), func(key []byte, v int) int {
		for _, k := range known {
			if string(key) != k && strings.EqualFold(string(key), k) {
				folded = true
			}
		}
		return jsonvalid.ValueEnd(line, v)
	})
	return folded
}

func TestLightRecordAgreesWithDecoding(t *testing.T) {
	for _, line := range []string{
		`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"say \"uuid\":\"x\" {["},"uuid":"u1","timestamp":"2026-11-20T10:00:00.000Z"}`,
		`{ "parentUuid" : "u1" , "type" : "assistant" , "message" : { "id" : "m\u0041" , "content" : [ ] } , "uuid" : "u2" , "isApiErrorMessage" : true }`,
		`{"type":"system","subtype":"compact_boundary","parentUuid":null,"logicalParentUuid":"u2","compactMetadata":{"preCompactDiscoveredTools":["a"]},"uuid":"u3"}`,
		`{"type":"api-request","id":"r1","params":{"model":"m","betas":["b"]},"keep":-1,"extra":[{"a":[-1.5e3,true,null]}]}`,
		`{"type":"attachment","attachment":{"type":"deferred_tools_delta","addedNames":["x"]},"parentUuid":"u3","uuid":"u4","requestSessionId":"s"}`,
	} {
		checkLight(t, []byte(line))
	}
}

// FuzzLightRecord holds lightRecord to decoding on every valid record.
func FuzzLightRecord(f *testing.F) {
	for _, l := range twoTurns(&testing.T{}).lines {
		f.Add([]byte(l))
	}
	f.Add([]byte(`{"type":"user","parentUuid":null,"message":{"content":[{"type":"tool_result","content":"\\\""}]}}`))
	// Damaged lines the walk alone would take for records.
	for _, l := range []string{
		`{"type":"user","uuid":"u1","message":{"content":"a` + "\x01" + `b"}}`,
		`{"type":"user","uuid":"u1","message":{"content":"\q"}}`,
		`{"type":"user","uuid":"u1","message":{"n":01}}`,
		`{"type":"user","uuid":"u1","message":{"a":tru}}`,
		`{"type":"user","uuid":"u1","message":{"a":[1,]}}`,
		`{"type":"user","uuid":"u1","message":{"a" 1}}`,
		`{"type":"user","ke` + "\x02" + `y":1}`,
		`{"type":"user","uuid":"u1"} x`,
		`{"type":"user","uuid":"u1","message":{"content":"\u12G4"}}`,
	} {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkLight(t, line)
	})
}

// framedData is the data member as frameRecord keeps it: a subagent's
// progress whole (the only data the transcript reads), and else what
// decoding kept, for the comparison.
func framedData(want, got *record) string {
	if agentProgress(want.Data) == nil {
		return string(want.Data)
	}
	return string(got.Data)
}

// TestResultBlocksAgreeWithDecoding: what resultBlocks reads of a user
// message's content, when it reads it, is what decoding it gives, on
// hand-made contents and on every user message of the public sessions.
func TestResultBlocksAgreeWithDecoding(t *testing.T) {
	contents := []string{
		`[{"type":"tool_result","tool_use_id":"t1","content":"ok","is_error":true}]`,
		`[ {"type":"text","text":"x"} , {"tool_use_id":"t2","type":"tool_result","content":[{"type":"tool_reference","tool_name":"A"}]} ]`,
		`[{"type":"tool_result","tool_use_id":"t\u0033","content":null,"is_error":null}]`,
		`[{"Type":"tool_result","tool_use_id":"t4"}]`,
		`[{"type":5,"tool_use_id":"t5"}]`,
		`[1,2]`, `[]`, `null`, `"text"`,
	}
	files, _ := filepath.Glob(filepath.Join("..", "source", "testdata", "public", "*", "*.jsonl"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			var r struct {
				Type    string `json:"type"`
				Message struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			if json.Unmarshal(line, &r) == nil && r.Type == "user" && len(r.Message.Content) > 0 {
				contents = append(contents, string(r.Message.Content))
			}
		}
	}
	read := 0
	for _, c := range contents {
		got, ok := resultBlocks([]byte(c))
		if !ok {
			continue
		}
		read++
		var want []resultBlock
		if err := json.Unmarshal([]byte(c), &want); err != nil {
			t.Errorf("resultBlocks read %.80s, which does not decode: %v", c, err)
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%.80s: %d blocks, decoded %d", c, len(got), len(want))
			continue
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.Type != w.Type || g.ToolUseID != w.ToolUseID || g.IsError != w.IsError || !bytes.Equal(g.Content, w.Content) {
				t.Errorf("%.80s: block %d %+v, decoded %+v", c, i, g, w)
			}
		}
	}
	if read < 500 {
		t.Errorf("resultBlocks read %d of %d contents", read, len(contents))
	}
}

// TestFoldsToField checks the keys that send a record to encoding/json:
// a field's name in any case, a member left to it, and no other key.
func TestFoldsToField(t *testing.T) {
	for _, k := range []string{"Type", "SESSIONID", "parentUUID", "logicalParentUuid", "retryInMs", "Shape", "cacheControl", "CUT"} {
		if !foldsToField([]byte(k)) {
			t.Errorf("%q: not taken for a field", k)
		}
	}
	for _, k := range []string{"isMeta", "userType", "gitBranch", "toolUseResult", "sourceToolAssistantUUID", "typ", "types", "", "messages"} {
		if foldsToField([]byte(k)) {
			t.Errorf("%q: taken for a field", k)
		}
	}
}
