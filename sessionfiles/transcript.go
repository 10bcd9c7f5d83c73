package sessionfiles

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"time"

	"github.com/tsinspect/tsinspect/decode"
)

// The transcript is the one reading of a session's conversation records
// that both the listing (Summarize) and the timeline (Session) rest on:
// each record of a conversation (user, assistant, attachment, system)
// names the record before it (parentUuid), so a session is a tree of
// chains, one per conversation (the main agent, each subagent, a branch
// after an edit), restarted at each compaction. Walking a record's chain
// tells what the request sent from it held: its messages, the deferred
// tools announced (deferred_tools_delta attachments) and loaded
// (tool_reference results, and those a compaction kept), and the search
// and tool results in its last user message. Each request of the session
// is one [request]: from its api-request record when the files hold one
// (2.1.300 and later), else made from the transcript.

// The texts a made-up request announces deferred tools with: those Claude
// Code sends for the same attachments.
const (
	announceText = "<system-reminder>\nThe following deferred tools are now available via ToolSearch:\n"
	removeText   = "<system-reminder>\nThe following deferred tools are no longer available in this session:\n"
	reminderEnd  = "</system-reminder>"
)

// Texts of the tool results the listing tells apart.
const (
	noMatchText    = decode.NoMatchText
	noSuchToolText = decode.NoSuchToolText
	searchToolName = "ToolSearch"
	// mcpSearchToolName is Claude Code 2.0's search tool, for MCP tools
	// only.
	mcpSearchToolName = "MCPSearch"
	syntheticModel    = "<synthetic>"
	transcriptIDTag   = "transcript:"
)

// tnode is the state of a conversation after one of its records: what a
// request sent from there would hold. A node is not changed once a child
// is made from it (but for runMsg, made once when first needed); a child
// shares what it does not change.
type tnode struct {
	// msgs are the request's messages before the open one, newest first,
	// as the nodes that hold them open; run is the open message's content
	// blocks as written (kept only when requests are rebuilt), role its
	// role ("" for none), asst the open assistant message's ID; runMsg is
	// run's index among the session's messages once made (-1 before).
	msgs   *mlist
	run    [][]byte
	role   string
	asst   string
	runMsg int32
	// prevAsst is the ID of the assistant message the open user message
	// answers: the results of its calls go to the API in that message,
	// wherever their records hang (see withSideResults).
	prevAsst string
	// asstNode is the node of that assistant message's last record before
	// the open user message; held the user content (tool results, as
	// blocks and as results) written between records of one answer
	// (Claude Code runs a call while the answer still streams), which goes
	// to the API at the start of the user message after the whole answer.
	asstNode    *tnode
	held        [][]byte
	heldResults []tresult
	// catalog and loaded are the deferred tools announced, and loaded by
	// a tool_reference, since the conversation (or its last compaction)
	// began; restored those a compaction kept loaded.
	catalog, loaded map[string]bool
	restored        []string
	// results are the tool results in the open user message.
	results []tresult
	// prev is the latest answered request up the chain, across
	// compactions: the one a cache break is measured against; compacted
	// is set from a compaction to the next answer.
	prev      *request
	compacted bool
	at        time.Time
}

// tresult is a tool_result block: the call it answers, the tools its
// tool_reference blocks name, and whether it is an error, "No matching
// deferred tools found" or "No such tool available".
type tresult struct {
	id                     string
	refs                   []string
	isError, noMatch, none bool
	// offChain: the call it answers was made by another answer than the
	// one its user message follows (its chain was cut, in a damaged
	// file): no request carries the call with it.
	offChain bool
}

// mlist is a persistent list of closed messages, newest first: each the
// node whose open message it was.
type mlist struct {
	prev *mlist
	node *tnode
	n    int
	// made is the list of the messages (their indexes, oldest first) once
	// a request's list was made of them (messagesOf).
	made []int32
}

func (l *mlist) push(node *tnode) *mlist {
	n := 1
	if l != nil {
		n = l.n + 1
	}
	return &mlist{prev: l, node: node, n: n}
}

// transcript reads the conversation records of a session's files, in
// order, and pairs requests with their answers, errors and empty replies.
type transcript struct {
	// add indexes a canonical message and returns its index; nil when the
	// requests are not rebuilt (the listing).
	add func(canon []byte) int32
	// hashed reports whether request records may name the messages made
	// here by their hash (the files hold request records); nil: no.
	hashed func() bool
	nodes  map[string]*tnode
	// tip is each file's newest node: the parent of a record that names
	// none (formats without parentUuid), and the state a request record is
	// sent from.
	tip map[string]*tnode
	// last is each file's newest request, to pair errors and empty
	// replies with; clock the time of the file's latest record, which a
	// request made from the transcript takes as the time it was sent.
	last  map[string]*request
	clock map[string]time.Time
	// fileSeq numbers each file's requests.
	fileSeq map[string]int
	// answers are the requests by the message ID of their answer;
	// records the requests by the ID of their api-request record.
	answers map[string]*request
	records map[string]*request
	calls   map[string]string // tool_use ID -> tool name
	// callsOf are the tool_use IDs of each answer (by message ID), in
	// order; resultRec the user record that holds each call's result.
	callsOf   map[string][]string
	resultRec map[string]*resultRecord
	// times are the records' times by UUID: a request made from the
	// transcript was sent at the time of the record it continues.
	times map[string]time.Time
	// callRecord is the UUID of the record of each tool_use (by its ID),
	// callAnswer the message ID of the answer that made it.
	callRecord, callAnswer map[string]string
	// merged are the nodes made by withSideResults, by the node they
	// were made from.
	merged map[*tnode]mergedNode
	// asstBlocks are each answer's content blocks as read, by message ID,
	// and whole the nodes of answers with blocks on side branches made
	// whole (when requests are rebuilt).
	asstBlocks map[string][][]byte
	whole      map[*tnode]*tnode
	// searches are the ToolSearch calls whose result was not read yet.
	searches map[string]bool
	// counted are the tool_use IDs whose result a request carried.
	counted map[string]bool
	seen    map[string]bool // record UUIDs read
	// reqs are the requests, in the order they were read; made counts
	// those made from the transcript.
	reqs []*request
	made int
	// catalogSeen: some record announced deferred tools (releases before
	// 2.1.150 wrote none).
	catalogSeen bool
	// dups counts records read twice (the same UUID).
	dups int
	// root is the state of a conversation before its first record.
	root *tnode
	// onRequest, when set, is told of each new request.
	onRequest func(q *request)
	// waiting are the records whose parent was not read yet, by the
	// parent's UUID (Claude Code writes the results of parallel calls
	// before the last of the calls' records), each with the round of
	// reading it came in.
	waiting map[string][]waitingRecord
	round   int
	// agentIDs are the subagents whose own files the session has: their
	// messages embedded in the main file's progress records are copies.
	agentIDs map[string]bool
	// compactedAway are the records a compact_boundary names as its
	// logical parent: a manual /compact writes its own command's records
	// after the boundary as children of that record, yet they follow the
	// summary in what is sent.
	compactedAway map[string]bool
}

// waitingRecord is a record read before its parent.
type waitingRecord struct {
	r     *record
	file  string
	round int
}

func newTranscript(add func([]byte) int32) *transcript {
	return &transcript{root: &tnode{runMsg: -1}, add: add, nodes: map[string]*tnode{}, tip: map[string]*tnode{}, last: map[string]*request{}, clock: map[string]time.Time{}, fileSeq: map[string]int{},
		answers: map[string]*request{}, records: map[string]*request{}, calls: map[string]string{},
		counted: map[string]bool{}, seen: map[string]bool{}, searches: map[string]bool{}, waiting: map[string][]waitingRecord{},
		callsOf: map[string][]string{}, resultRec: map[string]*resultRecord{}, times: map[string]time.Time{}, merged: map[*tnode]mergedNode{}, callRecord: map[string]string{}, callAnswer: map[string]string{},
		asstBlocks: map[string][][]byte{}, whole: map[*tnode]*tnode{}}
}

// parentOf is the node a record continues: the one its parentUuid names,
// a new conversation's root for null, the file's tip for a record with no
// parentUuid field, or (a parent not read: a resumed or damaged file) the
// root.
func (tr *transcript) parentOf(r *record, file string) *tnode {
	if !r.ParentUUID.Set {
		if n := tr.tip[file]; n != nil {
			return n
		}
		return tr.root
	}
	if r.ParentUUID.UUID == "" {
		return tr.root
	}
	if n := tr.nodes[r.ParentUUID.UUID]; n != nil {
		if t := tr.tip[file]; tr.compactedAway[r.ParentUUID.UUID] && t != nil && t.compacted {
			return t
		}
		return n
	}
	return tr.root
}

// record reads one record of file, or keeps it until its parent is read.
func (tr *transcript) record(r *record, file string) {
	if p := r.ParentUUID.UUID; p != "" && tr.nodes[p] == nil && !tr.seen[p] && r.Type != "api-request" && (r.UUID == "" || !tr.seen[r.UUID]) {
		tr.waiting[p] = append(tr.waiting[p], waitingRecord{r, file, tr.round})
		return
	}
	tr.read(r, file)
	// The records that waited for this one, and theirs in turn.
	for queue := []string{r.UUID}; len(queue) > 0; queue = queue[1:] {
		u := queue[0]
		if u == "" {
			continue
		}
		for _, w := range tr.waiting[u] {
			tr.read(w.r, w.file)
			queue = append(queue, w.r.UUID)
		}
		delete(tr.waiting, u)
	}
}

// endRound ends a round of reading (a file read whole, or what a
// followed file appended): records that waited a whole round for a parent
// that never came are read as they are (their chain starts afresh: a
// file whose first record names a parent outside it, a resumed or cut
// file), and the records waiting for them in turn follow them as their
// children. With all true every waiting record is.
func (tr *transcript) endRound(all bool) {
	for len(tr.waiting) > 0 {
		ready := tr.readyWaiting(all, true)
		if len(ready) == 0 {
			// Records waiting for one another (a loop of parents): each
			// starts afresh.
			ready = tr.readyWaiting(all, false)
		}
		if len(ready) == 0 {
			break
		}
		sort.SliceStable(ready, func(i, j int) bool { return ready[i].r.Timestamp < ready[j].r.Timestamp })
		for _, w := range ready {
			if w.r.UUID != "" && tr.seen[w.r.UUID] {
				tr.dups++
				continue
			}
			// A tool result hangs under its call: one whose parent is
			// gone continues from the record that made the call.
			w.r.ParentUUID = parentRef{Set: true, UUID: tr.callRecordOf(w.r)}
			tr.record(w.r, w.file)
		}
	}
	tr.round++
}

// callRecordOf is the UUID of the record that made a call r (a user
// record) holds the result of, "" for none read.
func (tr *transcript) callRecordOf(r *record) string {
	if r.Type != "user" || !bytes.Contains(r.Message, []byte(`"tool_result"`)) {
		return ""
	}
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(r.Message, &m) != nil {
		return ""
	}
	for _, res := range toolResults(m.Content) {
		if u := tr.callRecord[res.id]; u != "" && u != r.UUID {
			return u
		}
	}
	return ""
}

// readyWaiting takes out of tr.waiting the records to read as they are:
// those that waited a whole round (every one with all), and with roots
// only those whose parent is not itself waiting (it will bring them).
func (tr *transcript) readyWaiting(all, roots bool) []waitingRecord {
	var waitingUUID map[string]bool
	if roots {
		waitingUUID = map[string]bool{}
		for _, ws := range tr.waiting {
			for _, w := range ws {
				if w.r.UUID != "" {
					waitingUUID[w.r.UUID] = true
				}
			}
		}
	}
	var ready []waitingRecord
	for p, ws := range tr.waiting {
		if waitingUUID[p] {
			continue
		}
		var keep []waitingRecord
		for _, w := range ws {
			if all || w.round < tr.round {
				ready = append(ready, w)
			} else {
				keep = append(keep, w)
			}
		}
		if len(keep) == 0 {
			delete(tr.waiting, p)
		} else {
			tr.waiting[p] = keep
		}
	}
	return ready
}

// read reads one record of file whose parent (if any) was read.
func (tr *transcript) read(r *record, file string) {
	at := parseTime(r.Timestamp)
	defer func() {
		if at.After(tr.clock[file]) {
			tr.clock[file] = at
		}
	}()
	if r.UUID != "" {
		if tr.seen[r.UUID] {
			tr.dups++
			return
		}
		tr.seen[r.UUID] = true
		if !at.IsZero() {
			tr.times[r.UUID] = at
		}
	}
	switch r.Type {
	case "api-request":
		if r.ID == "" || tr.records[r.ID] != nil {
			if r.ID != "" {
				tr.dups++
			}
			return
		}
		q := &request{rec: r, file: file, at: at, from: tr.withSideResults(tr.tip[file])}
		tr.records[r.ID] = q
		tr.newRequest(q)
		return
	case "user", "assistant", "attachment", "system":
	default:
		// Every other record of the chain (progress of a tool, a hook or a
		// subagent, and types of newer releases) is a link of it: the
		// records after it continue the conversation through it.
		if r.UUID != "" && r.ParentUUID.Set {
			tr.nodes[r.UUID] = tr.parentOf(r, file)
		}
		if r.Type == "progress" && len(r.Data) > 0 {
			tr.embedded(r, file)
		}
		return
	}
	parent := tr.parentOf(r, file)
	n := parent
	switch r.Type {
	case "user":
		n = tr.user(r, parent, file)
	case "assistant":
		n = tr.assistant(r, parent, file)
	case "attachment":
		n = tr.attachment(r, parent)
	case "system":
		n = tr.system(r, parent, file)
	}
	if n != parent && !at.IsZero() && !laterInMessage(parent, n, at) {
		n.at = at
	}
	if r.UUID != "" {
		tr.nodes[r.UUID] = n
	}
	tr.tip[file] = n
}

// laterInMessage reports whether n, made from parent by a record of time
// at, continues the open user message of parent, which holds a record
// written after at. A request goes after every record it carries, so
// such a record does not take the message's time back: the prompt of a
// skill or command is stamped when it was called, and follows the call's
// result, written seconds later.
func laterInMessage(parent, n *tnode, at time.Time) bool {
	return parent != nil && parent.role == "user" && n.role == "user" && parent.at.After(at)
}

// expect makes room, in a transcript that has read nothing yet, for n
// records in the maps every record with a UUID enters (grown a record at
// a time, their rehashing was a twentieth of a session's reading).
func (tr *transcript) expect(n int) {
	if n <= 0 || len(tr.seen) > 0 {
		return
	}
	tr.seen, tr.times, tr.nodes = make(map[string]bool, n), make(map[string]time.Time, n), make(map[string]*tnode, n)
}

// newRequest adds q, counting the results its last user message carries.
func (tr *transcript) newRequest(q *request) {
	if q.from != nil {
		for _, res := range q.from.results {
			if tr.counted[res.id] {
				continue
			}
			tr.counted[res.id] = true
			q.results = append(q.results, res)
		}
	}
	tr.fileSeq[q.file]++
	q.seq = tr.fileSeq[q.file]
	tr.reqs = append(tr.reqs, q)
	tr.last[q.file] = q
	if tr.onRequest != nil {
		tr.onRequest(q)
	}
}

// madeRequest is a request made from the transcript, sent from n, that
// record r tells of.
func (tr *transcript) madeRequest(n *tnode, file string, r *record) *request {
	tr.made++
	at := tr.sentAt(n, r, file)
	rec := &record{ID: transcriptIDTag + strconv.Itoa(tr.made), Timestamp: r.Timestamp, Version: r.Version, SessionID: r.SessionID}
	if r.IsSidechain || r.AgentID != "" {
		// A subagent's request, as Claude Code names their query source.
		rec.QuerySource = "agent:" + r.AgentID
	}
	if n.prev != nil {
		rec.Base = n.prev.rec.ID
	}
	return &request{rec: rec, file: file, at: at, from: n, transcript: true}
}
