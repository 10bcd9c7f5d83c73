package source

// An independent reading of Claude Code's session files, written from the
// record format alone. It shares no code with tsinspect's reader (no
// sessionfiles, decode, timeline or exchange here: the standard library
// only) so that TestIndependentReadingAgrees (independent_compare_test.go)
// can hold tsinspect's timeline to a second opinion
// (TSINSPECT_CHECK=<part of a path> runs it on the files that match).
//
// What it implements, in short (each function says more):
//
//   - every line is a record; every record with a uuid is a link of its
//     conversation's chain through parentUuid, whatever its type;
//   - an answer is the assistant records sharing one message.id; each id
//     (model not "<synthetic>") is one answered turn, met at its first
//     record;
//   - a turn's request is the chain from its answer's first record's
//     parent back to the conversation's start or to a compact_boundary,
//     plus every tool_result, wherever it hangs, that answers a tool_use
//     of an answer on that chain (parallel results);
//   - the working set is the tool_reference names of those results plus
//     the compaction's preCompactDiscoveredTools;
//   - a ToolSearch (MCPSearch in 2.0) belongs to the first turn of its
//     thread whose request carries its result (unless that result is
//     Claude Code's "No such tool available" refusal);
//   - a blind call is a call of a catalogued deferred tool (announced by
//     deferred_tools_delta attachments) not in the working set;
//   - the main thread is the main file's records with isSidechain false;
//     each subagents/agent-*.jsonl file (or 2.0's agent-*.jsonl beside
//     the main file, naming its session) is one subagent thread, and so
//     is each inline sidechain conversation (1.0.x) and each agentId of
//     2.1.37–2.1.81's agent_progress records;
//   - a turn's time is the timestamp of the record its answer continues.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// ckRecord is one line of a session file, reduced to what the checker
// reads:
//
//	{"type":"assistant","uuid":"…","parentUuid":"…"|null,"timestamp":"…",
//	 "isSidechain":false,"agentId":"…","sessionId":"…",
//	 "message":{"id":"msg_…","model":"…","role":"assistant","content":[…]}}
//	{"type":"system","subtype":"compact_boundary","parentUuid":null,
//	 "compactMetadata":{"preCompactDiscoveredTools":["WebFetch"]}}
//	{"type":"attachment","attachment":{"type":"deferred_tools_delta",
//	 "addedNames":[…],"readdedNames":[…],"removedNames":[…]}}
//	{"type":"progress","data":{"type":"agent_progress","agentId":"…",
//	 "message":{…a record of the subagent…}}}
type ckRecord struct {
	Type              string          `json:"type"`
	Subtype           string          `json:"subtype"`
	UUID              string          `json:"uuid"`
	ParentUUID        string          `json:"parentUuid"`
	Timestamp         string          `json:"timestamp"`
	IsSidechain       bool            `json:"isSidechain"`
	AgentID           string          `json:"agentId"`
	SessionID         string          `json:"sessionId"`
	IsAPIErrorMessage bool            `json:"isApiErrorMessage"`
	Error             json.RawMessage `json:"error"`
	Message           *ckMessage      `json:"message"`
	Attachment        *ckAttachment   `json:"attachment"`
	CompactMetadata   *ckCompactMeta  `json:"compactMetadata"`
	Data              json.RawMessage `json:"data"`

	line   int    // 0-based position in its file (embedded records: their carrier's)
	thread string // the checker's thread key, set by ckSplitThreads
}

type ckMessage struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type ckAttachment struct {
	Type         string   `json:"type"`
	AddedNames   []string `json:"addedNames"`
	ReaddedNames []string `json:"readdedNames"`
	RemovedNames []string `json:"removedNames"`
}

type ckCompactMeta struct {
	PreCompactDiscoveredTools []string `json:"preCompactDiscoveredTools"`
}

// ckBlock is a content block of a message: tool_use {id, name, input},
// tool_result {tool_use_id, content: string | [blocks]}, tool_reference
// {tool_name}, text, thinking...
type ckBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
	ToolName  string          `json:"tool_name"`
}

// ckBlocks returns a message content's blocks; a string content has
// none.
func ckBlocks(raw json.RawMessage) []ckBlock {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil
	}
	var bs []ckBlock
	if json.Unmarshal(raw, &bs) != nil {
		// One bad block should not hide the others.
		var rs []json.RawMessage
		if json.Unmarshal(raw, &rs) != nil {
			return nil
		}
		for _, r := range rs {
			var b ckBlock
			if json.Unmarshal(r, &b) == nil {
				bs = append(bs, b)
			}
		}
	}
	return bs
}

// ckReferences returns the tool names of the tool_reference blocks in a
// tool_result's content:
//
//	{"type":"tool_result","tool_use_id":"toolu_…",
//	 "content":[{"type":"tool_reference","tool_name":"WebFetch"}]}
func ckReferences(content json.RawMessage) []string {
	var names []string
	for _, b := range ckBlocks(content) {
		if b.Type == "tool_reference" && b.ToolName != "" {
			names = append(names, b.ToolName)
		}
	}
	return names
}

// ckReadLines reads a JSONL file's records; lines that are not JSON
// objects are skipped (a torn last line, a stray byte).
func ckReadLines(path string) ([]*ckRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []*ckRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for n := 0; sc.Scan(); n++ {
		var r ckRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		r.line = n
		recs = append(recs, &r)
	}
	return recs, sc.Err()
}

// ckFile is one file of a session and its records.
type ckFile struct {
	path string
	// agent is set for a subagent's file: every record in it is of the
	// one thread "file:<base name>".
	agent bool
	recs  []*ckRecord
}

// ckSessionFiles lists the files of the session whose main file is path:
// the file itself, then <session>/subagents/agent-*.jsonl beside it, then
// (Claude Code 2.0) agent-*.jsonl files in the same directory whose first
// record with a sessionId names the session. A path that is itself named
// agent-*.jsonl is read alone, as a subagent's file.
func ckSessionFiles(path string) []ckFile {
	base := filepath.Base(path)
	if strings.HasPrefix(base, "agent-") {
		return []ckFile{{path: path, agent: true}}
	}
	files := []ckFile{{path: path}}
	session := strings.TrimSuffix(base, ".jsonl")
	subs, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents", "agent-*.jsonl"))
	legacy, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "agent-*.jsonl"))
	for _, l := range legacy {
		recs, err := ckReadLines(l)
		if err != nil {
			continue
		}
		for _, r := range recs {
			if r.SessionID != "" {
				if r.SessionID == session {
					subs = append(subs, l)
				}
				break
			}
		}
	}
	sort.Strings(subs)
	for _, s := range subs {
		files = append(files, ckFile{path: s, agent: true})
	}
	return files
}

// CkTurn is one answered turn as the checker reads it.
type CkTurn struct {
	MessageID string
	// Thread is the checker's thread key: "main", "file:agent-x.jsonl"
	// (a subagent's file, or its agent_progress records), or
	// "inline:<root uuid>".
	Thread string
	Kind   string // "main" or "subagent"
	// Time is the timestamp of the record the answer continues (else the
	// answer's own); zero if neither parses.
	Time       time.Time
	WorkingSet []string   // sorted, distinct
	Searches   []CkSearch // the searches this turn is the first to carry
	Calls      []CkCall   // the answer's tool_use blocks, in order
	// CatalogRecorded is set when the thread's file announces deferred
	// tools (deferred_tools_delta); without it no call can be called blind.
	CatalogRecorded bool

	file  string
	first *ckRecord // the answer's first record met
}

// CkSearch is one ToolSearch call and what its result loaded.
type CkSearch struct {
	ToolUseID string
	Tool      string
	Query     string
	Loaded    []string // tool_reference names of its result, in order
}

// CkCall is one tool_use of an answer.
type CkCall struct {
	Name   string
	Loaded bool // its name is in the turn's working set
	Blind  bool // a catalogued deferred tool called while not loaded
}

// CkSession is what the checker read of one session.
type CkSession struct {
	Turns []*CkTurn
	// Failed counts failed requests: system records of subtype api_error
	// (one per failed attempt) and assistant records with
	// isApiErrorMessage set (the error Claude Code gave up on), but for one
	// that follows an api_error record naming its request ID (the same
	// request told twice).
	Failed int
	// Searches counts ToolSearch calls whose result some turn carried.
	Searches int
}

// ckToldBefore reports whether Claude Code's error message r names the
// request ID its parent, an api_error record, named.
func ckToldBefore(r, parent *ckRecord) bool {
	if parent == nil || parent.Type != "system" || parent.Subtype != "api_error" || r.Message == nil {
		return false
	}
	var e struct {
		RequestID string `json:"requestID"`
	}
	if json.Unmarshal(parent.Error, &e) != nil || e.RequestID == "" {
		return false
	}
	return bytes.Contains(r.Message.Content, []byte(`\"request_id\":\"`+e.RequestID+`\"`))
}

// ckIsSearch reports whether a tool_use is a client tool search: the
// ToolSearch tool, MCPSearch in Claude Code 2.0.
func ckIsSearch(name string) bool { return name == "ToolSearch" || name == "MCPSearch" }

// CheckSession reads the session whose main file is path the checker's
// way.
func CheckSession(path string) (*CkSession, error) {
	out := &CkSession{}
	seen := map[string]bool{} // answer message ids met, across files
	all := ckSessionFiles(path)
	// Subagents' files first: an answer also embedded in the main file's
	// agent_progress records is read from its own file.
	files := append(append([]ckFile(nil), all[1:]...), all[0])
	for _, f := range files {
		recs, err := ckReadLines(f.path)
		if err != nil && !f.agent && len(all) > 1 && errors.Is(err, fs.ErrNotExist) {
			continue // a session kept as its subagents' files alone
		}
		if err != nil {
			return nil, err
		}
		f.recs = recs
		byUUID := map[string]*ckRecord{}
		for _, r := range recs {
			if r.UUID != "" {
				byUUID[r.UUID] = r
			}
		}
		for _, r := range recs {
			if r.Type == "system" && r.Subtype == "api_error" {
				out.Failed++
			}
			if r.Type == "assistant" && r.IsAPIErrorMessage && !ckToldBefore(r, byUUID[r.ParentUUID]) {
				out.Failed++
			}
			// Claude Code's nudge after an answer with nothing in it: the
			// request before it came back empty.
			if r.Type == "user" && r.Message != nil && bytes.Contains(r.Message.Content, []byte("Your previous response had no visible output")) {
				out.Failed++
			}
		}
		turns, searches := ckReadFile(f, seen)
		out.Turns = append(out.Turns, turns...)
		out.Searches += searches
	}
	return out, nil
}

// ckEmbedded returns the subagent records carried by progress records of
// data.type "agent_progress" (Claude Code 2.1.37–2.1.81):
//
//	{"type":"progress","parentUuid":"…","data":{"type":"agent_progress",
//	 "agentId":"a1b2c3","message":{"type":"assistant","uuid":"…",
//	 "message":{"id":"msg_…",…},"timestamp":"…"}}}
//
// Each becomes a record of the subagent's thread, "file:agent-<agentId>.jsonl"
// (that of its own file, if the session has it), at its carrier's line. data.message may also be the bare API message (role, content);
// it is then wrapped in a record of its role's type.
func ckEmbedded(recs []*ckRecord) []*ckRecord {
	var out []*ckRecord
	for _, r := range recs {
		if r.Type != "progress" || len(r.Data) == 0 {
			continue
		}
		var d struct {
			Type    string          `json:"type"`
			AgentID string          `json:"agentId"`
			Message json.RawMessage `json:"message"`
		}
		if json.Unmarshal(r.Data, &d) != nil || d.Type != "agent_progress" || len(d.Message) == 0 {
			continue
		}
		var e ckRecord
		if json.Unmarshal(d.Message, &e) != nil {
			continue
		}
		if e.Message == nil {
			var m ckMessage
			if json.Unmarshal(d.Message, &m) != nil || m.Role == "" {
				continue
			}
			e = ckRecord{Type: m.Role, Message: &m, Timestamp: r.Timestamp}
		}
		if e.Timestamp == "" {
			e.Timestamp = r.Timestamp
		}
		e.line = r.line
		// The thread of the subagent's own file, when it has one.
		e.thread = "file:agent-" + d.AgentID + ".jsonl"
		out = append(out, &e)
	}
	return out
}

// ckSplitThreads sets each record's thread. In a subagent's file every
// record is of the file's thread. In the main file a record with
// isSidechain false is of "main" (whatever its root: a resumed session, a
// compaction, a first record whose parent is in another file); a record
// with isSidechain true (1.0.x inline subagents) is of the conversation
// of its root, the record reached by following parentUuid while the
// parent is in the file: one thread per root.
func ckSplitThreads(f ckFile, byUUID map[string]*ckRecord) {
	if f.agent {
		key := "file:" + filepath.Base(f.path)
		if strings.HasPrefix(filepath.Base(f.path), "agent-acompact") {
			// The compaction's summary request, which Claude Code keeps as
			// a subagent's file: the main conversation asked to summarise
			// itself (its prefix, its cache), not an agent of its own.
			key = "main"
		}
		for _, r := range f.recs {
			r.thread = key
		}
		return
	}
	roots := map[string]string{}
	rootOf := func(r *ckRecord) string {
		var path []*ckRecord
		cur := r
		root := ""
		for steps := 0; ; steps++ {
			if cur.UUID != "" {
				if k, ok := roots[cur.UUID]; ok {
					root = k
					break
				}
			}
			path = append(path, cur)
			p := byUUID[cur.ParentUUID]
			if cur.ParentUUID == "" || p == nil || p == cur || steps > len(byUUID) {
				root = cur.UUID
				break
			}
			cur = p
		}
		for _, q := range path {
			if q.UUID != "" {
				roots[q.UUID] = root
			}
		}
		return root
	}
	for _, r := range f.recs {
		if !r.IsSidechain {
			r.thread = "main"
			continue
		}
		r.thread = "inline:" + rootOf(r)
	}
}

// ckResult is a tool_result block and the record holding it.
type ckResult struct {
	rec  *ckRecord
	refs []string
	// noSuchTool is set for Claude Code's refusal of a call of a tool it
	// does not have: {"type":"tool_result","is_error":true,"content":
	// "<tool_use_error>Error: No such tool available: ToolSearch</tool_use_error>"}.
	// A ToolSearch so answered (1.0.x has none) searched nothing.
	noSuchTool bool
}

// ckReadFile reads the answered turns of one file (its threads, and the
// subagents embedded in its progress records). seen holds the message ids
// of answers already met (in this file or an earlier one): an answer is
// one turn, at the first record of it met.
//
// For each answer (assistant records sharing message.id, model not
// "<synthetic>") it works out:
//
//   - the request's chain: from the parent of the answer's first record,
//     following parentUuid through records of every type, to a record
//     with no parent (or one not in the file) or to a system record of
//     subtype compact_boundary, whose
//     compactMetadata.preCompactDiscoveredTools stay loaded;
//   - the answers on the chain (their message ids) and every tool_use of
//     them; each tool_result block in the file (written before the
//     answer) whose tool_use_id is one of these is in the request,
//     wherever its record hangs: Claude Code writes parallel results as
//     one user record each, hung off their own tool_use record or off one
//     another, and sends them in one user message;
//   - the working set: the tool_reference names of those results, plus
//     the compaction's tools;
//   - the searches: the ToolSearch/MCPSearch tool_uses of the chain's
//     answers whose result the request carries, those no earlier turn of
//     the thread (in file order) carried, less those refused as a tool
//     that does not exist; what a search loaded is the tool_reference
//     names of its (first) result;
//   - the calls: the tool_use blocks of the answer's records;
//   - the catalog: the deferred_tools_delta attachments of the thread
//     before the answer (removedNames taken out, then addedNames and
//     readdedNames put in); a call of a catalogued tool not in the
//     working set is blind.
func ckReadFile(f ckFile, seen map[string]bool) ([]*CkTurn, int) {
	byUUID := map[string]*ckRecord{}
	for _, r := range f.recs {
		if r.UUID != "" && byUUID[r.UUID] == nil {
			byUUID[r.UUID] = r
		}
	}
	ckSplitThreads(f, byUUID)
	all := append(append([]*ckRecord(nil), f.recs...), ckEmbedded(f.recs)...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].line < all[j].line })
	for _, r := range all {
		// Embedded records chain among themselves; a file's own come first.
		if r.UUID != "" && byUUID[r.UUID] == nil {
			byUUID[r.UUID] = r
		}
	}

	msgRecs := map[string][]*ckRecord{} // answer id -> its records, in order
	useOf := map[string]ckBlock{}       // tool_use id -> the block
	results := map[string][]ckResult{}  // tool_use id -> results answering it
	for _, r := range all {
		if r.Message == nil {
			continue
		}
		switch r.Type {
		case "assistant":
			if r.Message.ID != "" {
				msgRecs[r.Message.ID] = append(msgRecs[r.Message.ID], r)
			}
			for _, b := range ckBlocks(r.Message.Content) {
				if b.Type == "tool_use" && b.ID != "" {
					if _, dup := useOf[b.ID]; !dup {
						useOf[b.ID] = b
					}
				}
			}
		case "user":
			for _, b := range ckBlocks(r.Message.Content) {
				if b.Type == "tool_result" && b.ToolUseID != "" {
					res := ckResult{rec: r, refs: ckReferences(b.Content)}
					res.noSuchTool = b.IsError && bytes.Contains(b.Content, []byte("No such tool available"))
					results[b.ToolUseID] = append(results[b.ToolUseID], res)
				}
			}
		}
	}
	usesOf := func(msgID string) []ckBlock {
		var out []ckBlock
		for _, r := range msgRecs[msgID] {
			for _, b := range ckBlocks(r.Message.Content) {
				if b.Type == "tool_use" {
					out = append(out, b)
				}
			}
		}
		return out
	}

	catalogRecorded := map[string]bool{}
	for _, r := range all {
		if r.Type == "attachment" && r.Attachment != nil && r.Attachment.Type == "deferred_tools_delta" {
			catalogRecorded[r.thread] = true
		}
	}
	catalogs := map[string]map[string]bool{} // thread -> catalog so far
	carried := map[string]map[string]bool{}  // thread -> search ids carried

	var turns []*CkTurn
	searches := 0
	for _, r := range all {
		if r.Type == "attachment" && r.Attachment != nil && r.Attachment.Type == "deferred_tools_delta" {
			c := catalogs[r.thread]
			if c == nil {
				c = map[string]bool{}
				catalogs[r.thread] = c
			}
			for _, n := range r.Attachment.RemovedNames {
				delete(c, n)
			}
			for _, n := range append(append([]string(nil), r.Attachment.AddedNames...), r.Attachment.ReaddedNames...) {
				c[n] = true
			}
			continue
		}
		if r.Type == "system" && r.Subtype == "compact_boundary" {
			// The history restarts, and Claude Code announces the catalog
			// again after it.
			delete(catalogs, r.thread)
			continue
		}
		if r.Type != "assistant" || r.Message == nil || r.Message.ID == "" || r.Message.Model == "<synthetic>" || r.IsAPIErrorMessage || seen[r.Message.ID] {
			continue
		}
		seen[r.Message.ID] = true
		t := &CkTurn{MessageID: r.Message.ID, Thread: r.thread, Kind: "subagent", CatalogRecorded: catalogRecorded[r.thread], file: f.path, first: r}
		if r.thread == "main" {
			t.Kind = "main"
		}

		// Time: the record the answer continues, else the answer's own;
		// but no earlier than any user record (or catalog change, which
		// Claude Code sends as user text) the request sends, those on the
		// chain back to the answer before it: a skill's prompt or a hook's
		// progress can be stamped before a record it follows.
		parent := byUUID[r.ParentUUID]
		if r.ParentUUID == "" {
			parent = nil
		}
		t.Time = ckTime(r.Timestamp)
		if parent != nil {
			if pt := ckTime(parent.Timestamp); !pt.IsZero() {
				t.Time = pt
			}
		}
		seenUser := map[*ckRecord]bool{}
		for cur := parent; cur != nil && !seenUser[cur] && cur.Type != "assistant"; cur = byUUID[cur.ParentUUID] {
			seenUser[cur] = true
			sent := cur.Type == "user" || cur.Type == "attachment" && cur.Attachment != nil && cur.Attachment.Type == "deferred_tools_delta"
			if at := ckTime(cur.Timestamp); sent && at.After(t.Time) {
				t.Time = at
			}
			if cur.ParentUUID == "" || (cur.Type == "system" && cur.Subtype == "compact_boundary") {
				break
			}
		}

		// The chain and the answers on it.
		ws := map[string]bool{}
		chainAnswers := map[string]bool{}
		visited := map[*ckRecord]bool{}
		for cur := parent; cur != nil && !visited[cur]; {
			visited[cur] = true
			if cur.Type == "system" && cur.Subtype == "compact_boundary" {
				if cur.CompactMetadata != nil {
					for _, n := range cur.CompactMetadata.PreCompactDiscoveredTools {
						ws[n] = true
					}
				}
				break
			}
			if cur.Type == "assistant" && cur.Message != nil && cur.Message.ID != "" && cur.Message.ID != r.Message.ID {
				chainAnswers[cur.Message.ID] = true
			}
			if cur.ParentUUID == "" {
				break
			}
			cur = byUUID[cur.ParentUUID]
		}

		// The results the request carries, and the searches among them.
		ids := make([]string, 0, len(chainAnswers))
		for id := range chainAnswers {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return msgRecs[ids[i]][0].line < msgRecs[ids[j]][0].line })
		th := carried[r.thread]
		if th == nil {
			th = map[string]bool{}
			carried[r.thread] = th
		}
		for _, id := range ids {
			for _, u := range usesOf(id) {
				var got []ckResult
				for _, res := range results[u.ID] {
					if res.rec.line <= r.line {
						got = append(got, res)
					}
				}
				if len(got) == 0 {
					continue
				}
				for _, res := range got {
					for _, n := range res.refs {
						ws[n] = true
					}
				}
				if ckIsSearch(u.Name) && !th[u.ID] && !got[0].noSuchTool {
					th[u.ID] = true
					var in struct {
						Query string `json:"query"`
					}
					json.Unmarshal(u.Input, &in)
					t.Searches = append(t.Searches, CkSearch{ToolUseID: u.ID, Tool: u.Name, Query: in.Query, Loaded: got[0].refs})
					searches++
				}
			}
		}
		// A tool the catalog does not list (its MCP server not connected,
		// or gone) is not sent, loaded or not.
		cat := catalogs[r.thread]
		for n := range ws {
			if t.CatalogRecorded && !cat[n] {
				continue
			}
			t.WorkingSet = append(t.WorkingSet, n)
		}
		sort.Strings(t.WorkingSet)

		// The request went when the last result it carries was written.
		if last := ckLastAnswer(parent, byUUID, r.Message.ID); last != "" {
			for _, u := range usesOf(last) {
				for _, res := range results[u.ID] {
					if at := ckTime(res.rec.Timestamp); res.rec.line <= r.line && at.After(t.Time) && parent != nil {
						t.Time = at
					}
				}
			}
		}

		// The calls.
		for _, u := range usesOf(r.Message.ID) {
			c := CkCall{Name: u.Name, Loaded: slices.Contains(t.WorkingSet, u.Name)}
			c.Blind = t.CatalogRecorded && cat[u.Name] && !c.Loaded
			t.Calls = append(t.Calls, c)
		}
		turns = append(turns, t)
	}
	return turns, searches
}

// ckLastAnswer is the message id of the last answer on the chain from
// parent (other than self): the one whose results the request carries.
func ckLastAnswer(parent *ckRecord, byUUID map[string]*ckRecord, self string) string {
	seen := map[*ckRecord]bool{}
	for cur := parent; cur != nil && !seen[cur]; cur = byUUID[cur.ParentUUID] {
		seen[cur] = true
		if cur.Type == "system" && cur.Subtype == "compact_boundary" {
			return ""
		}
		if cur.Type == "assistant" && cur.Message != nil && cur.Message.ID != "" && cur.Message.ID != self {
			return cur.Message.ID
		}
		if cur.ParentUUID == "" {
			return ""
		}
	}
	return ""
}

// ckTime parses a record's timestamp (RFC 3339, UTC "Z"); zero if it
// does not parse.
func ckTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// TestIndependentCheckerRules holds the checker itself to the rules on a
// made-up session: parallel results hung off their own tool_use records,
// a hook progress record in the chain, a compaction, an inline sidechain,
// a subagent embedded in agent_progress records and a rewound prompt.
func TestIndependentCheckerRules(t *testing.T) {
	lines := []string{
		`{"type":"user","uuid":"u1","parentUuid":null,"isSidechain":false,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"go"}}`,
		`{"type":"attachment","uuid":"at1","parentUuid":"u1","isSidechain":false,"timestamp":"2026-01-01T00:00:00Z","attachment":{"type":"deferred_tools_delta","addedNames":["X","Y","Z"]}}`,
		`{"type":"assistant","uuid":"a1","parentUuid":"at1","isSidechain":false,"timestamp":"2026-01-01T00:00:05Z","message":{"id":"msg_A","model":"m","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ToolSearch","input":{"query":"select:X"}}]}}`,
		`{"type":"assistant","uuid":"a2","parentUuid":"a1","isSidechain":false,"timestamp":"2026-01-01T00:00:06Z","message":{"id":"msg_A","model":"m","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{}}]}}`,
		`{"type":"user","uuid":"r1","parentUuid":"a1","isSidechain":false,"timestamp":"2026-01-01T00:00:07Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"tool_reference","tool_name":"X"}]}]}}`,
		`{"type":"user","uuid":"r2","parentUuid":"a2","isSidechain":false,"timestamp":"2026-01-01T00:00:10Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]}}`,
		`{"type":"assistant","uuid":"b1","parentUuid":"r2","isSidechain":false,"timestamp":"2026-01-01T00:00:15Z","message":{"id":"msg_B","model":"m","role":"assistant","content":[{"type":"tool_use","id":"t3","name":"X","input":{}},{"type":"tool_use","id":"t4","name":"Y","input":{}}]}}`,
		`{"type":"progress","uuid":"p1","parentUuid":"b1","isSidechain":false,"timestamp":"2026-01-01T00:00:16Z","data":{"type":"hook_progress"}}`,
		`{"type":"user","uuid":"r3","parentUuid":"p1","isSidechain":false,"timestamp":"2026-01-01T00:00:20Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","content":"ok"},{"type":"tool_result","tool_use_id":"t4","content":"ok"}]}}`,
		`{"type":"assistant","uuid":"c1","parentUuid":"r3","isSidechain":false,"timestamp":"2026-01-01T00:00:25Z","message":{"id":"msg_C","model":"m","role":"assistant","content":[{"type":"text","text":"done"}]}}`,
		`{"type":"system","subtype":"compact_boundary","uuid":"cb","parentUuid":null,"logicalParentUuid":"c1","isSidechain":false,"timestamp":"2026-01-01T00:01:00Z","compactMetadata":{"preCompactDiscoveredTools":["Z"]}}`,
		`{"type":"user","uuid":"s1","parentUuid":"cb","isSidechain":false,"timestamp":"2026-01-01T00:01:01Z","message":{"role":"user","content":"summary"}}`,
		`{"type":"attachment","uuid":"at2","parentUuid":"s1","isSidechain":false,"timestamp":"2026-01-01T00:01:01Z","attachment":{"type":"deferred_tools_delta","addedNames":["X","Y","Z"]}}`,
		`{"type":"assistant","uuid":"d1","parentUuid":"at2","isSidechain":false,"timestamp":"2026-01-01T00:01:05Z","message":{"id":"msg_D","model":"m","role":"assistant","content":[{"type":"tool_use","id":"t5","name":"X","input":{}}]}}`,
		`{"type":"user","uuid":"q1","parentUuid":null,"isSidechain":true,"timestamp":"2026-01-01T00:02:00Z","message":{"role":"user","content":"task"}}`,
		`{"type":"assistant","uuid":"e1","parentUuid":"q1","isSidechain":true,"timestamp":"2026-01-01T00:02:05Z","message":{"id":"msg_E","model":"m","role":"assistant","content":[{"type":"text","text":"sub"}]}}`,
		`{"type":"progress","uuid":"p2","parentUuid":"d1","isSidechain":false,"timestamp":"2026-01-01T00:03:00Z","data":{"type":"agent_progress","agentId":"abc","message":{"type":"assistant","uuid":"f1","parentUuid":null,"timestamp":"2026-01-01T00:03:00Z","message":{"id":"msg_F","model":"m","role":"assistant","content":[{"type":"text","text":"hi"}]}}}}`,
		`{"type":"user","uuid":"w1","parentUuid":"u1","isSidechain":false,"timestamp":"2026-01-01T00:04:00Z","message":{"role":"user","content":"again"}}`,
		`{"type":"assistant","uuid":"g1","parentUuid":"w1","isSidechain":false,"timestamp":"2026-01-01T00:04:05Z","message":{"id":"msg_G","model":"m","role":"assistant","content":[{"type":"text","text":"x"}]}}`,
		`{"type":"assistant","uuid":"g2","parentUuid":"g1","isSidechain":false,"timestamp":"2026-01-01T00:04:06Z","isApiErrorMessage":true,"message":{"id":"e","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"API Error"}]}}`,
		// A retried error, then the message for the same request (told
		// twice: one failure), then another retried error and the message
		// for the attempt after it (two).
		`{"type":"system","subtype":"api_error","uuid":"x1","parentUuid":"g2","isSidechain":false,"timestamp":"2026-01-01T00:05:00Z","error":{"status":529,"requestID":"req_1"},"retryAttempt":1}`,
		`{"type":"assistant","uuid":"x2","parentUuid":"x1","isSidechain":false,"timestamp":"2026-01-01T00:05:01Z","isApiErrorMessage":true,"message":{"id":"e2","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"API Error: 529 {\"request_id\":\"req_1\"}"}]}}`,
		`{"type":"system","subtype":"api_error","uuid":"x3","parentUuid":"x2","isSidechain":false,"timestamp":"2026-01-01T00:06:00Z","error":{"status":529,"requestID":"req_2"},"retryAttempt":1}`,
		`{"type":"assistant","uuid":"x4","parentUuid":"x3","isSidechain":false,"timestamp":"2026-01-01T00:06:01Z","isApiErrorMessage":true,"message":{"id":"e4","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"API Error: 529 {\"request_id\":\"req_3\"}"}]}}`,
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := CheckSession(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tu := range s.Turns {
		line := fmt.Sprintf("%s %s %s %s ws=%v", tu.MessageID, tu.Thread, tu.Kind, tu.Time.Format("15:04:05"), tu.WorkingSet)
		for _, sr := range tu.Searches {
			line += fmt.Sprintf(" search(%q→%v)", sr.Query, sr.Loaded)
		}
		for _, c := range tu.Calls {
			line += fmt.Sprintf(" call(%s loaded=%v blind=%v)", c.Name, c.Loaded, c.Blind)
		}
		got = append(got, line)
	}
	got = append(got, fmt.Sprintf("failed=%d searches=%d", s.Failed, s.Searches))
	want := []string{
		`msg_A main main 00:00:00 ws=[] call(ToolSearch loaded=false blind=false) call(Bash loaded=false blind=false)`,
		`msg_B main main 00:00:10 ws=[X] search("select:X"→[X]) call(X loaded=true blind=false) call(Y loaded=false blind=true)`,
		`msg_C main main 00:00:20 ws=[X]`,
		`msg_D main main 00:01:01 ws=[Z] call(X loaded=false blind=true)`,
		`msg_E inline:q1 subagent 00:02:00 ws=[]`,
		`msg_F file:agent-abc.jsonl subagent 00:03:00 ws=[]`,
		`msg_G main main 00:04:00 ws=[]`,
		`failed=4 searches=1`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
