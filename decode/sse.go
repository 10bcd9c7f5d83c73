package decode

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

// sseEvent is one event as framed on the wire.
type sseEvent struct {
	name string
	data []byte
	// start and end are the byte offsets of the event's first field line
	// and of the end of its last one.
	start, end int
	// terminated is set when a blank line ended the event.
	terminated bool
}

// splitSSE frames an event stream. It is lenient: lines may end in CRLF,
// LF or CR; field lines may be indented; a line holding only blanks ends
// an event; an event left open at the end of the body is kept (and marked
// unterminated).
func splitSSE(body []byte) []sseEvent {
	var out []sseEvent
	var cur sseEvent
	open := false
	dataLines := 0
	var data []byte
	dispatch := func(terminated bool) {
		if open {
			cur.data = data
			cur.terminated = terminated
			out = append(out, cur)
		}
		cur = sseEvent{}
		open = false
		dataLines = 0
		data = nil
	}
	pos := 0
	for pos < len(body) {
		lineStart := pos
		var line []byte
		if i := bytes.IndexAny(body[pos:], "\r\n"); i < 0 {
			line = body[pos:]
			pos = len(body)
		} else {
			line = body[pos : pos+i]
			pos += i + 1
			if body[pos-1] == '\r' && pos < len(body) && body[pos] == '\n' {
				pos++
			}
		}
		trimmed := bytes.TrimLeft(line, " \t")
		if len(bytes.TrimSpace(trimmed)) == 0 {
			dispatch(true)
			continue
		}
		if trimmed[0] == ':' {
			continue // comment
		}
		field, value := trimmed, []byte(nil)
		if i := bytes.IndexByte(trimmed, ':'); i >= 0 {
			field, value = trimmed[:i], trimmed[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(bytes.TrimSpace(field)) {
		case "event":
			cur.name = string(bytes.TrimSpace(value))
		case "data":
			if dataLines > 0 {
				data = append(data, '\n')
			}
			data = append(data, value...)
			dataLines++
		default:
			// id, retry and unknown fields carry nothing we use, but
			// they still belong to the event.
		}
		if !open {
			cur.start = lineStart
			open = true
		}
		cur.end = lineStart + len(line)
	}
	dispatch(false)
	return out
}

// blockBuild accumulates one content block of a stream.
type blockBuild struct {
	index  int
	fields object // content_block_start's block
	typ    string

	text, thinking, signature, partial             strings.Builder
	hasText, hasThinking, hasSignature, hasPartial bool

	citations    [][]byte
	hasCitations bool

	compaction, encrypted       strings.Builder
	hasCompaction, hasEncrypted bool

	stopped bool
}

// stream is the state of a stream being rebuilt.
type stream struct {
	t       *Turn
	blocks  map[int]*blockBuild
	started bool           // message_start seen
	stopped bool           // message_stop seen
	usage   object         // merged usage, in first-seen key order
	usageAt map[string]int // index of each key in usage; nil until one is seen
}

// decodeStream rebuilds the final message from an SSE body. chunks, when
// not nil, give the arrival time of the body's bytes.
func decodeStream(t *Turn, body []byte, chunks []exchange.Chunk) {
	r := &t.Response
	r.Streamed = true
	evs := splitSSE(body)
	times := newChunkClock(chunks)
	s := &stream{t: t, blocks: map[int]*blockBuild{}}
	r.Events = make([]Event, 0, len(evs))
	for k, ev := range evs {
		s.event(ev, k == len(evs)-1, times)
	}
	if !s.stopped {
		r.Incomplete = true
	}
	if !s.started && r.Error == nil && len(evs) > 0 {
		t.problem("stream has no message_start")
	}
	s.finish()
}

func (s *stream) event(ev sseEvent, last bool, times chunkClock) {
	t, r := s.t, &s.t.Response
	name := ev.name
	var w object
	var typ string
	data := bytes.TrimSpace(ev.data)
	if len(data) > 0 {
		if err := validJSON(data); err != nil {
			if last && !ev.terminated {
				// The stream broke off inside this event.
				r.Incomplete = true
				return
			}
			t.problem("event at byte %d (%s): malformed data: %v", ev.start, orDash(name), err)
			return
		}
		var ok bool
		if w, ok = parseObject(data); !ok {
			t.problem("event at byte %d (%s): data is not an object", ev.start, orDash(name))
			return
		}
		if raw := w.get("type"); !isNull(raw) {
			getString(t, raw, "event type", &typ)
		}
	}
	if typ == "" {
		typ = name
	}
	if name == "" {
		name = typ
	}
	r.Events = append(r.Events, Event{Name: name, Offset: int64(ev.start), At: times.at(int64(ev.end) - 1)})
	if len(data) == 0 && typ != "ping" && typ != "message_stop" {
		if typ == "" {
			t.problem("event at byte %d has neither a name nor data", ev.start)
		} else {
			t.problem("event at byte %d (%s) has no data", ev.start, typ)
		}
		return
	}
	if s.stopped && typ != "ping" {
		t.problem("event at byte %d (%s) after message_stop", ev.start, typ)
	}
	switch typ {
	case "ping":
	case "message_start":
		s.messageStart(w.get("message"), ev.start)
	case "content_block_start":
		s.blockStart(w, ev.start)
	case "content_block_delta":
		s.blockDelta(w, data, ev.start)
	case "content_block_stop":
		if b := s.block(w.get("index"), ev.start, typ); b != nil {
			if b.stopped {
				t.problem("event at byte %d: block %d stopped twice", ev.start, b.index)
			}
			b.stopped = true
		}
	case "message_delta":
		if raw := w.get("delta"); !isNull(raw) {
			d, ok := parseObject(raw)
			if !ok {
				t.problem("event at byte %d: message_delta delta is not an object", ev.start)
			}
			setStop(t, d)
		}
		s.mergeUsage(w.get("usage"), ev.start)
		if raw := w.get("diagnostics"); !isNull(raw) {
			setDiagnostics(t, raw)
		}
	case "message_stop":
		s.stopped = true
	case "error":
		e := parseError(t, w.get("error"))
		e.Event = true
		getString(t, w.get("request_id"), "error request_id", &e.RequestID)
		r.Error = e
	default:
		r.UnknownEvents = append(r.UnknownEvents, UnknownEvent{Name: name, Data: validOrNil(data)})
	}
}

func (s *stream) messageStart(raw []byte, at int) {
	t := s.t
	if s.started {
		t.problem("event at byte %d: second message_start", at)
	}
	s.started = true
	m, ok := parseObject(raw)
	if !ok {
		t.problem("event at byte %d: message_start without a message object", at)
		return
	}
	decodeMessageFields(t, m)
	if u := m.get("usage"); !isNull(u) {
		t.Response.StartUsage = u
		s.mergeUsage(u, at)
	}
	// The API starts with empty content; keep any blocks sent anyway.
	if raw := m.get("content"); !isNull(raw) {
		items, _ := parseArray(raw)
		for i, item := range items {
			f, ok := parseObject(item)
			if !ok {
				t.problem("event at byte %d: message_start content %d is not an object", at, i)
				continue
			}
			s.addBlock(i, f, at).stopped = true
		}
	}
}

func (s *stream) addBlock(index int, f object, at int) *blockBuild {
	if _, dup := s.blocks[index]; dup {
		s.t.problem("event at byte %d: block %d started twice", at, index)
	}
	b := &blockBuild{index: index, fields: f}
	if raw := f.get("type"); !isNull(raw) {
		getString(s.t, raw, "block type", &b.typ)
	}
	s.blocks[index] = b
	return b
}

func (s *stream) blockStart(w object, at int) {
	idx, ok := s.index(w.get("index"), at, "content_block_start")
	if !ok {
		return
	}
	f, ok := parseObject(w.get("content_block"))
	if !ok {
		s.t.problem("event at byte %d: content_block_start without a content_block object", at)
		f = object{}
	}
	s.addBlock(idx, f, at)
}

func (s *stream) index(raw []byte, at int, what string) (int, bool) {
	n, ok := parseInt(raw)
	if isNull(raw) || !ok || n < 0 || n > 1<<31 {
		s.t.problem("event at byte %d: %s without a valid index", at, what)
		return 0, false
	}
	return int(n), true
}

func (s *stream) block(raw []byte, at int, what string) *blockBuild {
	idx, ok := s.index(raw, at, what)
	if !ok {
		return nil
	}
	b := s.blocks[idx]
	if b == nil {
		s.t.problem("event at byte %d: %s for block %d, never started", at, what, idx)
	}
	return b
}

func (s *stream) blockDelta(w object, data []byte, at int) {
	t := s.t
	b := s.block(w.get("index"), at, "content_block_delta")
	if b == nil {
		return
	}
	if b.stopped {
		t.problem("event at byte %d: delta for block %d after its stop", at, b.index)
	}
	d, ok := parseObject(w.get("delta"))
	if !ok {
		t.problem("event at byte %d: content_block_delta without a delta object", at)
		return
	}
	var typ string
	getString(t, d.get("type"), "delta type", &typ)
	str := func(field string, dst *strings.Builder, has *bool) {
		raw := d.get(field)
		if isNull(raw) {
			return
		}
		v, ok := unquote(raw)
		if !ok {
			t.problem("event at byte %d: %s %s is not a string", at, typ, field)
			return
		}
		dst.WriteString(v)
		*has = true
	}
	switch typ {
	case "text_delta":
		str("text", &b.text, &b.hasText)
	case "input_json_delta":
		str("partial_json", &b.partial, &b.hasPartial)
	case "thinking_delta":
		str("thinking", &b.thinking, &b.hasThinking)
	case "signature_delta":
		str("signature", &b.signature, &b.hasSignature)
	case "citations_delta":
		c := d.get("citation")
		if isNull(c) {
			t.problem("event at byte %d: citations_delta without a citation", at)
			return
		}
		b.citations = append(b.citations, c)
		b.hasCitations = true
	case "compaction_delta":
		str("content", &b.compaction, &b.hasCompaction)
		str("encrypted_content", &b.encrypted, &b.hasEncrypted)
	default:
		t.Response.UnknownEvents = append(t.Response.UnknownEvents, UnknownEvent{Name: "content_block_delta:" + orDash(typ), Data: validOrNil(data)})
	}
}

// mergeUsage applies a usage object: each non-null field it carries
// overwrites the one held (message_delta usage is cumulative).
func (s *stream) mergeUsage(raw []byte, at int) {
	if isNull(raw) {
		return
	}
	u, ok := parseObject(raw)
	if !ok {
		s.t.problem("event at byte %d: usage is not an object", at)
		return
	}
	if s.usageAt == nil {
		s.usageAt = map[string]int{}
	}
	for _, f := range u {
		if isNull(f.val) {
			continue
		}
		if i, ok := s.usageAt[f.key]; ok {
			s.usage[i].val = f.val
		} else {
			s.usageAt[f.key] = len(s.usage)
			s.usage = append(s.usage, f)
		}
	}
}

// finish builds the final content and usage.
func (s *stream) finish() {
	t, r := s.t, &s.t.Response
	bs := make([]*blockBuild, 0, len(s.blocks))
	for _, b := range s.blocks {
		bs = append(bs, b)
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].index < bs[j].index })
	for _, b := range bs {
		r.Content = append(r.Content, s.buildBlock(b))
	}
	if s.usageAt != nil {
		r.Usage = parseUsage(t, s.usage.marshal())
	}
}

// buildBlock applies a block's deltas to its content_block_start.
func (s *stream) buildBlock(b *blockBuild) Block {
	t := s.t
	complete := s.stopped && !t.Response.Incomplete
	what := "response block " + strconv.Itoa(b.index)
	if !b.stopped && complete {
		t.problem("%s never stopped", what)
	}
	f := b.fields
	prefix := func(key string) string {
		v, _ := unquote(f.get(key))
		return v
	}
	setString := func(key, v string) {
		f = f.set(key, quote(v))
	}
	if b.hasText {
		setString("text", prefix("text")+b.text.String())
	}
	if b.hasThinking {
		setString("thinking", prefix("thinking")+b.thinking.String())
	}
	if b.hasSignature {
		setString("signature", prefix("signature")+b.signature.String())
	}
	if b.hasCompaction {
		setString("content", prefix("content")+b.compaction.String())
	}
	if b.hasEncrypted {
		setString("encrypted_content", prefix("encrypted_content")+b.encrypted.String())
	}
	if b.hasCitations {
		cs, _ := parseArray(f.get("citations"))
		cs = append(cs, b.citations...)
		f = f.set("citations", joinArray(cs))
	}
	partial := ""
	if b.hasPartial {
		p := bytes.TrimSpace([]byte(b.partial.String()))
		switch {
		case len(p) == 0:
			if isNull(f.get("input")) {
				f = f.set("input", []byte("{}"))
			}
		case json.Valid(p):
			f = f.set("input", p)
		default:
			partial = b.partial.String()
			f = f.del("input")
			if complete || b.stopped {
				t.problem("%s: input JSON does not parse: %.80q", what, partial)
			}
		}
	}
	out := parseBlock(t, f.marshal(), what)
	out.PartialInput = partial
	return out
}

// chunkClock maps body offsets to chunk arrival times.
type chunkClock struct {
	chunks []exchange.Chunk
}

func newChunkClock(chunks []exchange.Chunk) chunkClock {
	if len(chunks) == 0 {
		return chunkClock{}
	}
	if !slices.IsSortedFunc(chunks, func(a, b exchange.Chunk) int { return cmpInt64(a.Offset, b.Offset) }) {
		chunks = slices.Clone(chunks)
		slices.SortStableFunc(chunks, func(a, b exchange.Chunk) int { return cmpInt64(a.Offset, b.Offset) })
	}
	return chunkClock{chunks: chunks}
}

// at returns the arrival time of the chunk holding byte off.
func (c chunkClock) at(off int64) time.Time {
	if len(c.chunks) == 0 {
		return time.Time{}
	}
	// The last chunk starting at or before off.
	i := sort.Search(len(c.chunks), func(i int) bool { return c.chunks[i].Offset > off })
	if i == 0 {
		return c.chunks[0].At
	}
	return c.chunks[i-1].At
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func validOrNil(b []byte) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	return json.RawMessage(slices.Clone(b))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
