package sessionfiles

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/tsinspect/tsinspect/internal/jsonvalid"
	"github.com/tsinspect/tsinspect/internal/sharing"
)

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
	if c, ok := member(r.Message, "content"); ok {
		m.Content = c
	} else if json.Unmarshal(r.Message, &m) != nil {
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

// resultBlock is what toolResults reads of a content block.
type resultBlock struct {
	Type      string          `json:"type"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

// resultBlocks reads a user message's content blocks (valid JSON: its
// message decoded) by their structure, as decoding them into resultBlocks
// would, when it can: an array of objects whose members toolResults reads
// are of the JSON type their fields have, and no key differs from one of
// them only in case or by an escape. ok is false when the content must
// be decoded instead.
func resultBlocks(content []byte) (blocks []resultBlock, ok bool) {
	c := bytes.TrimSpace(content)
	ok = true
	end := eachElement(c, 0, func(v int) int {
		var b resultBlock
		e := eachMember(c, v, func(key []byte, m int) int {
			e := jsonvalid.ValueEnd(c, m)
			if e < 0 {
				return -1
			}
			val := c[m:e]
			str := func(dst *string) {
				switch {
				case val[0] == '"':
					*dst = jsonString(val)
				case string(val) != "null":
					ok = false
				}
			}
			switch string(key) {
			case "type":
				str(&b.Type)
			case "tool_use_id":
				str(&b.ToolUseID)
			case "is_error":
				switch string(val) {
				case "true":
					b.IsError = true
				case "false", "null":
				default:
					ok = false
				}
			case "content":
				b.Content = val
			default:
				if bytes.IndexByte(key, '\\') >= 0 || bytes.EqualFold(key, []byte("type")) || bytes.EqualFold(key, []byte("tool_use_id")) ||
					bytes.EqualFold(key, []byte("is_error")) || bytes.EqualFold(key, []byte("content")) {
					ok = false
				}
			}
			return e
		})
		blocks = append(blocks, b)
		return e
	})
	if end < 0 || !ok {
		return nil, false
	}
	return blocks, true
}

// mayTell reports whether a result's text, as JSON, may hold what the
// transcript looks for in it (noMatchText, noSuchToolText): written as
// is, or with an escape that could spell them.
func mayTell(raw []byte) bool {
	return bytes.Contains(raw, []byte(noMatchText)) || bytes.Contains(raw, []byte(noSuchToolText)) || bytes.Contains(raw, []byte(`\u`))
}

// rawBlocks is a message's content as blocks, as written: a string is one
// text block.
func rawBlocks(content json.RawMessage) [][]byte {
	var s string
	if c := bytes.TrimSpace(content); len(c) > 0 && c[0] == '"' && json.Unmarshal(c, &s) == nil {
		return [][]byte{mustJSON(map[string]any{"type": "text", "text": s})}
	}
	// The content is valid JSON (its message decoded): its elements are
	// found by their structure, not decoded again.
	var out [][]byte
	c := bytes.TrimSpace(content)
	if eachElement(c, 0, func(v int) int {
		e := jsonvalid.ValueEnd(c, v)
		if e >= 0 {
			out = append(out, c[v:e])
		}
		return e
	}) < 0 {
		return nil
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
		k := len(n.results)
		n.results = append(slices.Clip(n.results), results...)
		for i := k; i < len(n.results); i++ {
			if a, ok := tr.callAnswer[n.results[i].id]; ok && a != n.prevAsst {
				n.results[i].offChain = true
			}
		}
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
		// Written into a buffer of its size: the session keeps it.
		blocks := make([][]byte, 0, len(n.run))
		size := len(`{"content":[],"role":}`) + len(n.role) + 8
		for _, raw := range n.run {
			c, err := tr.blockForm(raw)
			if err != nil {
				continue
			}
			blocks = append(blocks, c)
			size += len(c) + 1
		}
		buf := bytes.NewBuffer(make([]byte, 0, size))
		buf.WriteString(`{"content":[`)
		for k, c := range blocks {
			if k > 0 {
				buf.WriteByte(',')
			}
			buf.Write(c)
		}
		buf.WriteString(`],"role":`)
		writeJSString(buf, n.role)
		buf.WriteByte('}')
		msg := buf.Bytes()
		if cap(msg) > len(msg)+len(msg)/8 {
			msg = bytes.Clone(msg) // the role needed escaping
		}
		n.runMsg = tr.add(msg)
	}
	return n.runMsg
}

// blockForm is a block of a message made from the transcript as the
// request's body holds it: in the hashing form (keys sorted, cache marks
// left out) where request records may name the message by its hash
// (tr.hashed), else as the files wrote it when it carries no cache mark
// (the same block to every reader of the body: canonicalizing every
// block of a long transcript was a quarter of its reading).
func (tr *transcript) blockForm(raw []byte) ([]byte, error) {
	if tr.hashed != nil && tr.hashed() || bytes.Contains(raw, []byte(`"cache_control"`)) {
		return canonValue(raw, true)
	}
	return raw, nil
}

// messagesOf is the messages of a request sent from n, oldest first, a
// list of lists (see package sharing): a request that continues another's
// messages adds its new ones alone (made a message at a time, each
// request's list cost its whole length again).
func (tr *transcript) messagesOf(n *tnode, lists *sharing.Ring[int32]) []int32 {
	open := int32(-1)
	if n.role != "" {
		open = tr.closeRun(n)
	}
	var closed []int32
	if n.msgs != nil {
		closed = tr.closedOf(n.msgs, lists)
	}
	if open < 0 {
		return closed
	}
	return lists.Extend(closed, []int32{open}, sharing.Equal[int32])
}

// closedOf is the messages of l, oldest first: the list made for the
// newest element of l that has one, with the newer messages after it.
func (tr *transcript) closedOf(l *mlist, lists *sharing.Ring[int32]) []int32 {
	if l.made != nil {
		return l.made
	}
	var newer []*mlist // newest first
	e := l
	for ; e != nil && e.made == nil; e = e.prev {
		newer = append(newer, e)
	}
	var prefix []int32
	if e != nil {
		prefix = e.made
	}
	more := make([]int32, len(newer))
	for i, x := range newer {
		more[len(newer)-1-i] = tr.closeRun(x.node)
	}
	l.made = lists.Extend(prefix, more, sharing.Equal[int32])
	return l.made
}

func (tr *transcript) assistant(r *record, parent *tnode, file string) *tnode {
	m, ok := readMessage(r.Message)
	if !ok {
		return parent
	}
	if m.model == syntheticModel {
		// Claude Code's own message: no API answer, and not sent back.
		// One that tells of a request that failed (an HTTP 400 is written
		// only so) stands for that request, unless the record before it
		// told of that request already (sameFailure); others ("No response
		// requested." after a compaction) are no request at all.
		if !r.IsAPIErrorMessage {
			return parent
		}
		parent = tr.withSideResults(parent)
		switch q := tr.last[file]; {
		case q != nil && !q.transcript && len(q.answer) == 0 && q.errRec == nil && !q.empty:
			q.errRec, q.synthetic = r, true // its request record
		case q != nil && q.errRec != nil && q.from == parent && sameFailure(q.errRec, r):
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
			if r.UUID != "" {
				tr.callRecord[b.id] = r.UUID
			}
			if m.id != "" {
				tr.callAnswer[b.id] = m.id
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

// sameFailure reports whether Claude Code's error message r tells of the
// failed request prev, the record before it at the same point of the
// conversation, told of. Claude Code writes an api_error record when it
// is about to try again (every one seen, 2.1.5 to 2.1.299, carries
// retryAttempt and retryInMs), so a message after one tells of a later
// attempt (2.1.5 wrote ten such records in a row, then the message for the
// eleventh attempt, under its own request ID), unless both name one
// request ID; a second message tells of the request the first did.
func sameFailure(prev, r *record) bool {
	if prev.Subtype != "api_error" {
		return true
	}
	id := apiErrorRequestID(prev.Error)
	return id != "" && id == messageRequestID(r)
}

// apiErrorRequestID is the request ID an api_error record's error names,
// or "".
func apiErrorRequestID(raw json.RawMessage) string {
	var e struct {
		RequestID string `json:"requestID"`
	}
	_ = json.Unmarshal(raw, &e)
	return e.RequestID
}

// messageRequestID is the request ID the API's error body in Claude
// Code's error message names, or "".
func messageRequestID(r *record) string {
	_, body, _ := syntheticError(r)
	var e struct {
		RequestID string `json:"request_id"`
	}
	_ = json.Unmarshal(body, &e)
	return e.RequestID
}

// toolResults reads the tool_result blocks of a user message's content.
func toolResults(content json.RawMessage) []tresult {
	blocks, ok := resultBlocks(content)
	if !ok && json.Unmarshal(content, &blocks) != nil {
		return nil
	}
	var out []tresult
	for _, b := range blocks {
		if b.Type != "tool_result" || b.ToolUseID == "" {
			continue
		}
		res := tresult{id: b.ToolUseID, isError: b.IsError}
		var text string
		if c := bytes.TrimSpace(b.Content); len(c) > 0 && c[0] == '"' {
			// A tool's output as text: read only when it may hold what
			// is looked for in it (a tool's whole output, often kilobytes,
			// is not decoded for nothing).
			if mayTell(c) {
				_ = json.Unmarshal(c, &text)
			}
		} else if json.Unmarshal(b.Content, &text) != nil {
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
