package sessionfiles

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
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
	noMatchText    = "No matching deferred tools found"
	noSuchToolText = "No such tool available"
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
}

// mlist is a persistent list of closed messages, newest first: each the
// node whose open message it was.
type mlist struct {
	prev *mlist
	node *tnode
	n    int
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
	add   func(canon []byte) int32
	nodes map[string]*tnode
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

// resultRecord is a user record holding tool results: its blocks (when
// requests are rebuilt), its results and its time.
type resultRecord struct {
	blocks  [][]byte
	results []tresult
	at      time.Time
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
		callsOf: map[string][]string{}, resultRec: map[string]*resultRecord{}, times: map[string]time.Time{}, merged: map[*tnode]mergedNode{},
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
			w.r.ParentUUID = parentRef{Set: true}
			tr.record(w.r, w.file)
		}
	}
	tr.round++
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
	defer func() {
		if at := parseTime(r.Timestamp); at.After(tr.clock[file]) {
			tr.clock[file] = at
		}
	}()
	if r.UUID != "" {
		if tr.seen[r.UUID] {
			tr.dups++
			return
		}
		tr.seen[r.UUID] = true
		if at := parseTime(r.Timestamp); !at.IsZero() {
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
		q := &request{rec: r, file: file, at: parseTime(r.Timestamp), from: tr.withSideResults(tr.tip[file])}
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
	if n != parent {
		if at := parseTime(r.Timestamp); !at.IsZero() {
			n.at = at
		}
	}
	if r.UUID != "" {
		tr.nodes[r.UUID] = n
	}
	tr.tip[file] = n
}

// embeddedRecord is the subagent's record a progress record of Claude
// Code 2.1.37–2.1.81 carries (data.type "agent_progress": data.agentId,
// and data.message {type, message, uuid, timestamp}), as a sidechain
// record of that agent; false for any other progress.
func embeddedRecord(r *record) (record, bool) {
	var d struct {
		Type    string `json:"type"`
		AgentID string `json:"agentId"`
		Message struct {
			Type      string          `json:"type"`
			Message   json.RawMessage `json:"message"`
			UUID      string          `json:"uuid"`
			Timestamp string          `json:"timestamp"`
			RequestID string          `json:"requestId"`
		} `json:"message"`
	}
	if json.Unmarshal(r.Data, &d) != nil || d.Type != "agent_progress" || d.AgentID == "" || len(d.Message.Message) == 0 {
		return record{}, false
	}
	if d.Message.Type != "user" && d.Message.Type != "assistant" {
		return record{}, false
	}
	e := record{Type: d.Message.Type, Message: d.Message.Message, UUID: d.Message.UUID, Timestamp: d.Message.Timestamp,
		RequestID: d.Message.RequestID, IsSidechain: true, AgentID: d.AgentID, SessionID: r.SessionID, Version: r.Version}
	if e.Timestamp == "" {
		e.Timestamp = r.Timestamp
	}
	return e, true
}

// embedded reads the subagent's record progress record r carries, in the
// agent's own conversation (one after the other, as its records name no
// parent), unless the session has the agent's own file.
func (tr *transcript) embedded(r *record, file string) {
	e, ok := embeddedRecord(r)
	if !ok || tr.agentIDs[e.AgentID] {
		return
	}
	tr.record(&e, file+"#agent-"+e.AgentID)
}

// agentIDsOf are the IDs of the subagents whose files are paths
// (agent-<id>.jsonl).
func agentIDsOf(paths []string) map[string]bool {
	ids := map[string]bool{}
	for _, p := range paths {
		if id, ok := strings.CutPrefix(strings.TrimSuffix(filepathBase(p), ".jsonl"), "agent-"); ok {
			ids[id] = true
		}
	}
	return ids
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

func (tr *transcript) user(r *record, parent *tnode, file string) *tnode {
	if len(r.Message) == 0 {
		return parent
	}
	if tr.add == nil && !tr.mayMatter(r.Message) {
		// The listing needs only the tool results that tell of searches,
		// loaded tools and calls of unknown tools, and the empty replies.
		return tr.userContent(parent, nil, nil)
	}
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(r.Message, &m) != nil {
		return parent
	}
	// Claude Code's note after a reply with no visible output: the
	// request sent from the parent got an empty reply.
	if bytes.Contains(m.Content, []byte(emptyReplyText)) {
		if q := tr.last[file]; q != nil && q.rec != nil && !q.transcript && len(q.answer) == 0 && q.errRec == nil && !q.empty {
			q.empty = true
		} else if parent != tr.root {
			q := tr.madeRequest(tr.withSideResults(parent), file, r)
			q.empty = true
			tr.newRequest(q)
		}
	}
	var results []tresult
	if bytes.Contains(m.Content, []byte(`"tool_result"`)) {
		results = toolResults(m.Content)
		for _, res := range results {
			delete(tr.searches, res.id)
		}
	}
	var blocks [][]byte
	if tr.add != nil {
		blocks = rawBlocks(m.Content)
	}
	if len(results) > 0 {
		rr := &resultRecord{blocks: blocks, results: results, at: parseTime(r.Timestamp)}
		for _, res := range results {
			if tr.resultRec[res.id] == nil {
				tr.resultRec[res.id] = rr
			}
		}
	}
	return tr.userContent(parent, blocks, results)
}

// withSideResults is n with the results of every call of the answer its
// open user message answers, wherever their records hang: Claude Code
// writes the results of parallel calls as records of their own, each
// under its own tool_use record (or under one another), and continues
// from one of them, but sends them all in one user message. n itself when
// nothing is missing.
func (tr *transcript) withSideResults(n *tnode) *tnode {
	if n == nil || n.role != "user" || n.prevAsst == "" {
		return n
	}
	calls := tr.callsOf[n.prevAsst]
	have := make(map[string]bool, len(n.results))
	for _, res := range n.results {
		have[res.id] = true
	}
	var side []*resultRecord
	for _, id := range calls {
		if rr := tr.resultRec[id]; rr != nil && !have[id] && !slices.Contains(side, rr) {
			side = append(side, rr)
		}
	}
	if len(side) == 0 {
		return n
	}
	if c, ok := tr.merged[n]; ok && c.side == len(side) {
		// The same state as before: requests sent from it are told apart
		// by the node they were sent from.
		return c.node
	}
	m := *n
	m.runMsg = -1
	m.results = slices.Clip(n.results)
	var blocks [][]byte
	for _, rr := range side {
		for _, res := range rr.results {
			if have[res.id] {
				continue
			}
			have[res.id] = true
			m.results = append(m.results, res)
			if len(res.refs) > 0 {
				m.loaded = cloneSet(m.loaded)
				for _, name := range res.refs {
					m.loaded[name] = true
				}
			}
		}
		if rr.at.After(m.at) {
			m.at = rr.at
		}
		blocks = append(blocks, rr.blocks...)
	}
	if tr.add != nil {
		m.run = resultsInCallOrder(append(slices.Clip(n.run), blocks...), calls)
	}
	tr.merged[n] = mergedNode{node: &m, side: len(side)}
	return &m
}

// wholeAnswer is n, an assistant message's node, with every block of its
// answer read so far: records of one answer may hang on side branches
// (a call whose result the next answer does not continue from), but the
// API got the answer whole. n itself when its chain holds them all.
func (tr *transcript) wholeAnswer(n *tnode) *tnode {
	if n.role != "assistant" || n.asst == "" {
		return n
	}
	all := tr.asstBlocks[n.asst]
	if len(all) <= len(n.run) {
		return n
	}
	if w := tr.whole[n]; w != nil && len(w.run) == len(all) {
		return w
	}
	w := *n
	w.run, w.runMsg = slices.Clip(all), -1
	tr.whole[n] = &w
	return &w
}

// mergedNode is a node with the results of side branches (withSideResults)
// and how many records of them it holds.
type mergedNode struct {
	node *tnode
	side int
}

// resultsInCallOrder is blocks with the tool results first, in the order
// of the calls they answer, each once, and then the other blocks.
func resultsInCallOrder(blocks [][]byte, calls []string) [][]byte {
	order := make(map[string]int, len(calls))
	for i, id := range calls {
		order[id] = i
	}
	byCall := make([][]byte, len(calls))
	var others [][]byte
	for _, b := range blocks {
		var head struct {
			Type      string `json:"type"`
			ToolUseID string `json:"tool_use_id"`
		}
		if json.Unmarshal(b, &head) == nil && head.Type == "tool_result" {
			if i, ok := order[head.ToolUseID]; ok {
				if byCall[i] == nil {
					byCall[i] = b
				}
				continue
			}
		}
		others = append(others, b)
	}
	out := make([][]byte, 0, len(blocks))
	for _, b := range byCall {
		if b != nil {
			out = append(out, b)
		}
	}
	return append(out, others...)
}

// sentAt is when a request made from the transcript, sent from n, was
// sent: the time of the record it continues (the last of its chain, or
// of the results gathered from side branches), else that of r, the record
// that tells of it, else the file's latest time.
func (tr *transcript) sentAt(n *tnode, r *record, file string) time.Time {
	at := time.Time{}
	if p := r.ParentUUID.UUID; p != "" {
		at = tr.times[p]
	}
	if n != nil && n.at.After(at) && !at.IsZero() {
		at = n.at
	}
	if at.IsZero() {
		at = parseTime(r.Timestamp)
	}
	if at.IsZero() {
		at = tr.clock[file]
	}
	return at
}

// rawBlocks is a message's content as blocks, as written: a string is one
// text block.
func rawBlocks(content json.RawMessage) [][]byte {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return [][]byte{mustJSON(map[string]any{"type": "text", "text": s})}
	}
	var raws []json.RawMessage
	if json.Unmarshal(content, &raws) != nil {
		return nil
	}
	out := make([][]byte, len(raws))
	for i, r := range raws {
		out[i] = r
	}
	return out
}

// mayMatter reports whether a user message may hold what the listing
// reads: a tool_reference, the result of a ToolSearch call, an unknown
// tool's refusal or the note after an empty reply.
func (tr *transcript) mayMatter(msg []byte) bool {
	if bytes.Contains(msg, []byte(emptyReplyText)) {
		return true
	}
	if !bytes.Contains(msg, []byte(`"tool_result"`)) {
		return false
	}
	if bytes.Contains(msg, []byte("tool_reference")) || bytes.Contains(msg, []byte(noMatchText)) || bytes.Contains(msg, []byte(noSuchToolText)) {
		return true
	}
	for id := range tr.searches {
		if bytes.Contains(msg, []byte(id)) {
			return true
		}
	}
	return false
}

// userContent is parent with content added to its open user message.
func (tr *transcript) userContent(parent *tnode, blocks [][]byte, results []tresult) *tnode {
	n := tr.open(parent, "user", "")
	if tr.add != nil {
		n.run = append(slices.Clip(n.run), blocks...)
	}
	if len(results) > 0 {
		n.results = append(slices.Clip(n.results), results...)
		for _, res := range results {
			if len(res.refs) == 0 {
				continue
			}
			n.loaded = cloneSet(n.loaded)
			for _, name := range res.refs {
				n.loaded[name] = true
			}
		}
	}
	return n
}

// open is a copy of parent whose open message has role (and assistant
// ID asst): the same one continued, or a new one after closing parent's.
func (tr *transcript) open(parent *tnode, role, asst string) *tnode {
	n := *parent
	if parent.role == role && parent.asst == asst {
		n.runMsg = -1
		return &n
	}
	if parent.role != "" && tr.add != nil {
		n.msgs = n.msgs.push(tr.wholeAnswer(parent))
	}
	n.run, n.role, n.asst, n.runMsg = nil, role, asst, -1
	if role == "user" {
		n.results, n.prevAsst, n.asstNode = nil, "", nil
		if parent.role == "assistant" {
			n.prevAsst, n.asstNode = parent.asst, parent
			// What was held while the answer streamed opens the message.
			n.run, n.results = parent.held, parent.heldResults
		}
		n.held, n.heldResults = nil, nil
	}
	return &n
}

// closeRun is the index of n's open message, made once: its blocks in
// the hashing form (keys sorted), as Claude Code sends consecutive
// records of one role as one message.
func (tr *transcript) closeRun(n *tnode) int32 {
	if n.runMsg < 0 {
		var buf bytes.Buffer
		buf.WriteString(`{"content":[`)
		k := 0
		for _, raw := range n.run {
			c, err := canonValue(raw, true)
			if err != nil {
				continue
			}
			if k > 0 {
				buf.WriteByte(',')
			}
			k++
			buf.Write(c)
		}
		buf.WriteString(`],"role":`)
		writeJSString(&buf, n.role)
		buf.WriteByte('}')
		n.runMsg = tr.add(buf.Bytes())
	}
	return n.runMsg
}

// messagesOf is the messages of a request sent from n.
func (tr *transcript) messagesOf(n *tnode) []int32 {
	total := 0
	if n.msgs != nil {
		total = n.msgs.n
	}
	if n.role != "" {
		total++
	}
	out := make([]int32, total)
	i := total
	if n.role != "" {
		i--
		out[i] = tr.closeRun(n)
	}
	for e := n.msgs; e != nil; e = e.prev {
		i--
		out[i] = tr.closeRun(e.node)
	}
	return out
}

func (tr *transcript) assistant(r *record, parent *tnode, file string) *tnode {
	m, ok := readMessage(r.Message)
	if !ok {
		return parent
	}
	if m.model == syntheticModel {
		// Claude Code's own message: no API answer, and not sent back.
		// One that tells of a request that failed (an HTTP 400 is written
		// only so) stands for that request, unless an api_error record
		// already told of it; others ("No response requested." after a
		// compaction) are no request at all.
		if !r.IsAPIErrorMessage {
			return parent
		}
		parent = tr.withSideResults(parent)
		switch q := tr.last[file]; {
		case q != nil && !q.transcript && len(q.answer) == 0 && q.errRec == nil && !q.empty:
			q.errRec, q.synthetic = r, true // its request record
		case q != nil && q.errRec != nil && q.from == parent:
		default:
			q := tr.madeRequest(parent, file, r)
			q.errRec, q.synthetic = r, true
			tr.newRequest(q)
		}
		return parent
	}
	if m.id != "" && parent.role == "user" && parent.prevAsst == m.id && parent.asstNode != nil {
		// More of an answer after the results of its first calls: one
		// assistant message, the results held for the user message after
		// it.
		base := *parent.asstNode
		base.held = append(slices.Clip(base.held), parent.run...)
		base.heldResults = append(slices.Clip(base.heldResults), parent.results...)
		base.loaded, base.catalog, base.restored, base.at = parent.loaded, parent.catalog, parent.restored, parent.at
		parent = &base
	} else if m.id != "" && tr.answers[m.id] == nil {
		parent = tr.withSideResults(parent)
	}
	if tr.add != nil && m.id != "" {
		tr.asstBlocks[m.id] = append(tr.asstBlocks[m.id], m.content...)
	}
	for _, b := range m.blocks {
		if b.typ == "tool_use" && b.id != "" {
			if _, ok := tr.calls[b.id]; !ok && m.id != "" {
				tr.callsOf[m.id] = append(tr.callsOf[m.id], b.id)
			}
			tr.calls[b.id] = b.name
			if b.name == searchToolName || b.name == mcpSearchToolName {
				tr.searches[b.id] = true
			}
		}
	}
	if r.RequestSessionID != "" && r.SessionID != "" && r.RequestSessionID != r.SessionID {
		// Copied from the session this one was forked from: billed to
		// that one; part of the history, not a request of this session.
	} else if m.id != "" {
		q := tr.answers[m.id]
		if q == nil {
			q = tr.records[r.RequestRef]
			if q == nil || r.RequestRef == "" {
				q = tr.madeRequest(parent, file, r)
				tr.newRequest(q)
				// The failed attempts sent from the same place were this
				// request too: they asked the model that answered it.
				for i := len(tr.reqs) - 2; i >= 0 && tr.reqs[i].from == parent; i-- {
					if p := tr.reqs[i]; p.transcript && len(p.answer) == 0 && p.hint == "" {
						p.hint, p.dirty = m.model, true
					}
				}
			} else if len(q.answer) > 0 && q.read[0].id != m.id {
				q.answer, q.read = q.answer[:0], q.read[:0]
			}
			tr.answers[m.id] = q
			if q.from == nil || q.answerFrom == nil {
				q.answerFrom = parent
			}
		}
		q.answer, q.read = append(q.answer, r), append(q.read, m)
	}
	n := tr.open(parent, "assistant", m.id)
	if tr.add != nil {
		for _, raw := range m.content {
			n.run = append(slices.Clip(n.run), raw)
		}
	}
	if q := tr.answers[m.id]; q != nil {
		n.prev, n.compacted = q, false
	}
	return n
}

func (tr *transcript) attachment(r *record, parent *tnode) *tnode {
	if !bytes.Contains(r.Attachment, []byte(`"deferred_tools_delta"`)) {
		return parent
	}
	var a struct {
		Type    string   `json:"type"`
		Added   []string `json:"addedNames"`
		Readded []string `json:"readdedNames"`
		Removed []string `json:"removedNames"`
	}
	if json.Unmarshal(r.Attachment, &a) != nil || a.Type != "deferred_tools_delta" {
		return parent
	}
	tr.catalogSeen = true
	added := append(slices.Clip(a.Added), a.Readded...)
	var blocks [][]byte
	if len(added) > 0 {
		blocks = append(blocks, mustJSON(map[string]any{"type": "text", "text": announceText + strings.Join(added, "\n") + "\n" + reminderEnd}))
	}
	if len(a.Removed) > 0 {
		blocks = append(blocks, mustJSON(map[string]any{"type": "text", "text": removeText + strings.Join(a.Removed, "\n") + "\n" + reminderEnd}))
	}
	if len(blocks) == 0 {
		return parent
	}
	n := tr.userContent(parent, blocks, nil)
	n.catalog = cloneSet(n.catalog)
	for _, name := range added {
		n.catalog[name] = true
	}
	for _, name := range a.Removed {
		delete(n.catalog, name)
	}
	return n
}

func (tr *transcript) system(r *record, parent *tnode, file string) *tnode {
	switch r.Subtype {
	case "compact_boundary":
		// The history restarts; the tools loaded before stay loaded, and
		// the cache is measured against the last answer before.
		logical := parent
		if r.LogicalParentUUID != "" {
			if p := tr.nodes[r.LogicalParentUUID]; p != nil {
				logical = p
				if tr.compactedAway == nil {
					tr.compactedAway = map[string]bool{}
				}
				tr.compactedAway[r.LogicalParentUUID] = true
			}
		} else if p := tr.tip[file]; p != nil && parent == tr.root {
			logical = p
		}
		var meta struct {
			Tools []string `json:"preCompactDiscoveredTools"`
		}
		_ = json.Unmarshal(r.CompactMetadata, &meta)
		return &tnode{runMsg: -1, restored: meta.Tools, prev: logical.prev, compacted: true}
	case "api_error":
		if q := tr.last[file]; q != nil && !q.transcript && len(q.answer) == 0 && q.errRec == nil && !q.empty {
			q.errRec = r
			return parent
		}
		q := tr.madeRequest(tr.withSideResults(parent), file, r)
		q.errRec = r
		tr.newRequest(q)
	}
	return parent
}

// toolResults reads the tool_result blocks of a user message's content.
func toolResults(content json.RawMessage) []tresult {
	var blocks []struct {
		Type      string          `json:"type"`
		ToolUseID string          `json:"tool_use_id"`
		IsError   bool            `json:"is_error"`
		Content   json.RawMessage `json:"content"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return nil
	}
	var out []tresult
	for _, b := range blocks {
		if b.Type != "tool_result" || b.ToolUseID == "" {
			continue
		}
		res := tresult{id: b.ToolUseID, isError: b.IsError}
		var text string
		if json.Unmarshal(b.Content, &text) != nil {
			var inner []struct {
				Type     string `json:"type"`
				ToolName string `json:"tool_name"`
				Text     string `json:"text"`
			}
			_ = json.Unmarshal(b.Content, &inner)
			for _, c := range inner {
				switch c.Type {
				case "tool_reference":
					if c.ToolName != "" {
						res.refs = append(res.refs, c.ToolName)
					}
				case "text":
					text += c.Text
				}
			}
		}
		res.noMatch = strings.HasPrefix(strings.TrimSpace(text), noMatchText)
		res.none = strings.Contains(text, noSuchToolText)
		out = append(out, res)
	}
	return out
}

func cloneSet(m map[string]bool) map[string]bool {
	c := make(map[string]bool, len(m)+4)
	for k, v := range m {
		c[k] = v
	}
	return c
}

// transcriptNote says what a made-up request lacks.
const transcriptNote = "made by tsinspect from Claude Code's transcript: the messages as the transcript holds them (deferred-tool announcements written as Claude Code sends them); the system prompt, the tools and the other parameters were not recorded"

// madeBody is the body of a request made from the transcript: its model,
// its messages, and the TranscriptMember.
func (s *Session) madeBody(q *request, buf []byte) []byte {
	body := bytes.NewBuffer(buf[:0])
	body.WriteString(`{"messages":[`)
	for i, mi := range q.msgs {
		if i > 0 {
			body.WriteByte(',')
		}
		body.Write(s.msgs[mi])
	}
	body.WriteString(`]`)
	if model := q.model(); model != "" {
		body.WriteString(`,"model":`)
		writeJSString(body, model)
	}
	member := map[string]any{"note": transcriptNote, "catalog_recorded": s.tr.catalogSeen}
	if q.from != nil && len(q.from.restored) > 0 {
		restored := make([]any, len(q.from.restored))
		for i, n := range q.from.restored {
			restored[i] = n
		}
		member["loaded_before_compaction"] = restored
	}
	body.WriteString(`,"` + exchange.TranscriptMember + `":`)
	writeCanon(body, member, false)
	body.WriteByte('}')
	return body.Bytes()
}

// model is the model that answered the request, or the one the answer
// before it in its conversation came from.
func (q *request) model() string {
	if len(q.answer) > 0 {
		if m := messageModel(q.answer[len(q.answer)-1].Message); m != "" {
			return m
		}
	}
	if q.hint != "" {
		return q.hint
	}
	if q.rec != nil && len(q.rec.Params) > 0 {
		var p struct {
			Model string `json:"model"`
		}
		if json.Unmarshal(q.rec.Params, &p) == nil && p.Model != "" {
			return p.Model
		}
	}
	if q.from != nil && q.from.prev != nil && q.from.prev != q {
		return q.from.prev.model()
	}
	return ""
}

func messageModel(raw json.RawMessage) string {
	var m struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(raw, &m)
	if m.Model == syntheticModel {
		return ""
	}
	return m.Model
}

// syntheticError is what Claude Code's own error message says: the HTTP
// status and the API's error body when its text holds them ("API Error:
// 400 {...}"), else the text.
func syntheticError(r *record) (status int, body []byte, msg string) {
	var m struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(r.Message, &m)
	var parts []string
	for _, c := range m.Content {
		if c.Type == "text" && strings.TrimSpace(c.Text) != "" {
			parts = append(parts, strings.TrimSpace(c.Text))
		}
	}
	text := strings.Join(parts, " ")
	if rest, ok := strings.CutPrefix(text, "API Error: "); ok {
		code, tail, _ := strings.Cut(rest, " ")
		if n, err := strconv.Atoi(code); err == nil && n >= 400 && n < 600 {
			if tail = strings.TrimSpace(tail); json.Valid([]byte(tail)) {
				return n, []byte(tail), ""
			}
			b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": "api_error", "message": tail}})
			return n, b, ""
		}
	}
	if text == "" {
		text = "a request that failed"
	}
	return 0, nil, "Claude Code wrote: " + text + " (the files hold no answer from the API for this request)"
}
