package sessionfiles

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// resultRecord is a user record holding tool results: its blocks (when
// requests are rebuilt), its results and its time.
type resultRecord struct {
	blocks  [][]byte
	results []tresult
	at      time.Time
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
	if len(calls) == 0 {
		return n
	}
	carried := func(id string) bool {
		return slices.ContainsFunc(n.results, func(r tresult) bool { return r.id == id })
	}
	var side []*resultRecord
	for _, id := range calls {
		if rr := tr.resultRec[id]; rr != nil && !carried(id) && !slices.Contains(side, rr) {
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
			if slices.ContainsFunc(m.results, func(r tresult) bool { return r.id == res.id }) {
				continue
			}
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
