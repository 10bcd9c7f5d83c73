package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/timeline"
)

// Raw is a foldable view of a turn's exchange: request and response with
// their headers and JSON bodies pretty-printed as a tree, the response
// message rebuilt from its events, and the SSE events with their arrival
// times. Nodes are parsed when first opened, so a large body costs little
// until it is looked at. What is open is remembered by path across turns,
// so moving to the next turn keeps the same parts open.
type Raw struct {
	roots []*node
	open  map[string]bool
	lines []RawLine
	width int
	valid bool
}

// RawLine is one line of a Raw view.
type RawLine struct {
	Path     string // the node's path, e.g. "request/body/messages/3"
	Depth    int
	Foldable bool
	Open     bool
	Text     Line // indent and fold mark included
}

// kinds of node
const (
	kLabel  = iota // a heading with lazily built children
	kObject        // a JSON object
	kArray         // a JSON array
	kString        // a JSON string
	kScalar        // a JSON number, true, false or null
	kText          // a line of text
)

type node struct {
	path    string
	key     string
	note    string // shown after the key, dim
	kind    int
	raw     []byte // JSON value (objects, arrays, scalars)
	str     string // string value or text
	defOpen bool
	build   func() []*node // kLabel children
	kids    []*node
	built   bool
	count   int // items of an array, keys of an object; -1 unknown
}

// inlineString is the longest string shown on its key's line; longer ones,
// and any with a newline, fold.
const inlineString = 96

// NewRaw returns an empty Raw view.
func NewRaw() *Raw { return &Raw{open: map[string]bool{}} }

// SetTurn shows t's exchange (nil for nothing).
func (r *Raw) SetTurn(t *timeline.Turn) {
	r.roots = nil
	r.valid = false
	if t == nil || t.Exchange == nil {
		return
	}
	ex, err := t.Load()
	d := decoded(t)
	problems := d.Problems
	if err != nil {
		// Shown without bodies, and said so: an empty request is not
		// what was sent.
		ex = t.Exchange
		problems = append([]string{"the bodies could not be read back from the capture: " + err.Error()}, problems...)
	}
	r.roots = append(r.roots, requestNode(ex))
	r.roots = append(r.roots, responseNode(ex, d)...)
	if len(problems) > 0 {
		r.roots = append(r.roots, textList("problems", fmt.Sprintf("(%d)", len(problems)), problems, true))
	}
}

// Toggle opens or closes the node at path.
func (r *Raw) Toggle(path string) {
	for _, l := range r.Lines(r.width) {
		if l.Path == path && l.Foldable {
			r.open[path] = !l.Open
			r.valid = false
			return
		}
	}
}

// SetOpen opens or closes the node at path, whether or not it is visible
// (what is inside a closed node shows when that node opens).
func (r *Raw) SetOpen(path string, open bool) {
	r.open[path] = open
	r.valid = false
}

// Lines returns the visible lines; long strings are cut to width.
func (r *Raw) Lines(width int) []RawLine {
	if r.valid && width == r.width {
		return r.lines
	}
	r.width, r.valid = width, true
	r.lines = r.lines[:0]
	for _, n := range r.roots {
		r.emit(n, 0)
	}
	return r.lines
}

func (r *Raw) isOpen(n *node) bool {
	if o, ok := r.open[n.path]; ok {
		return o
	}
	return n.defOpen
}

func (r *Raw) emit(n *node, depth int) {
	foldable := n.kind == kLabel || n.kind == kObject || n.kind == kArray ||
		n.kind == kString && (len(n.str) > inlineString || strings.Contains(n.str, "\n"))
	open := foldable && r.isOpen(n)
	var l Line
	l.add(RoleText, strings.Repeat("  ", depth))
	switch {
	case !foldable:
		l.add(RoleText, "  ")
	case open:
		l.add(RoleDim, "▾ ")
	default:
		l.add(RoleDim, "▸ ")
	}
	switch n.kind {
	case kLabel:
		l.add(RoleTitle, n.key)
	case kText:
		l.add(RoleText, n.str)
	default:
		if n.key != "" {
			l.add(RoleKey, n.key)
			if !open || n.kind == kArray || n.kind == kString {
				l.add(RoleDim, ": ")
			}
		}
	}
	switch n.kind {
	case kObject:
		if !open {
			l.add(RoleDim, "{…}")
		}
	case kArray:
		l.addf(RoleDim, "[%d]", n.items())
	case kScalar:
		l.add(RoleText, string(n.raw))
	case kString:
		if !foldable {
			l.add(RoleString, quote(n.str))
		} else {
			if !open {
				l.add(RoleString, quote(preview(n.str)+"…"))
			}
			l.addf(RoleDim, "  %s, %s", numfmt.Bytes(int64(len(n.str))), numfmt.Count(strings.Count(n.str, "\n")+1, "line", "lines"))
		}
	}
	if n.note != "" {
		l.add(RoleDim, "  "+n.note)
	}
	r.lines = append(r.lines, RawLine{Path: n.path, Depth: depth, Foldable: foldable, Open: open, Text: l})
	if !open {
		return
	}
	if n.kind == kString {
		indent := strings.Repeat("  ", depth+2)
		w := max(r.width-len(indent), 20)
		for i, line := range strings.Split(n.str, "\n") {
			for k, chunk := range chunks(line, w) {
				var l Line
				l.add(RoleText, indent)
				l.add(RoleString, chunk)
				r.lines = append(r.lines, RawLine{Path: fmt.Sprintf("%s#%d.%d", n.path, i, k), Depth: depth + 1, Text: l})
			}
		}
		return
	}
	for _, k := range n.children() {
		r.emit(k, depth+1)
	}
}

// quote renders s as a JSON string (without escaping <, > and &).
func quote(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// preview is the start of a long string, up to its first newline.
func preview(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 60 {
		cut := 60
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// chunks cuts s into pieces of at most w runes.
func chunks(s string, w int) []string {
	if utf8.RuneCountInString(s) <= w {
		return []string{s}
	}
	var out []string
	for len(s) > 0 {
		i, n := 0, 0
		for i < len(s) && n < w {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			n++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

func (n *node) children() []*node {
	if n.built {
		return n.kids
	}
	n.built = true
	switch n.kind {
	case kLabel:
		if n.build != nil {
			n.kids = n.build()
		}
	case kObject:
		n.kids = objectKids(n.path, n.raw)
	case kArray:
		n.kids = arrayKids(n.path, n.raw)
	}
	return n.kids
}

func (n *node) items() int {
	if n.built {
		return len(n.kids)
	}
	if n.count < 0 {
		var items []json.RawMessage
		if json.Unmarshal(n.raw, &items) == nil {
			n.count = len(items)
		} else {
			n.count = 0
		}
	}
	return n.count
}

// jsonNode makes the node of a JSON value.
func jsonNode(path, key string, raw []byte) *node {
	raw = bytes.TrimSpace(raw)
	n := &node{path: path, key: key, raw: raw, count: -1}
	switch {
	case len(raw) == 0:
		n.kind, n.str = kText, "(empty)"
	case raw[0] == '{':
		n.kind = kObject
	case raw[0] == '[':
		n.kind = kArray
	case raw[0] == '"':
		n.kind = kString
		if json.Unmarshal(raw, &n.str) != nil {
			n.str = string(raw)
		}
	default:
		n.kind = kScalar
	}
	return n
}

// bodyNode makes the node of a body: JSON when it parses, else text.
func bodyNode(path, key string, body []byte, open bool) *node {
	var n *node
	if json.Valid(body) {
		n = jsonNode(path, key, body)
	} else {
		n = &node{path: path, key: key, kind: kLabel, note: numfmt.Bytes(int64(len(body))), build: func() []*node {
			return textKids(path, strings.Split(string(body), "\n"))
		}}
	}
	n.defOpen = open
	return n
}

func objectKids(path string, raw []byte) []*node {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	var out []*node
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break
		}
		out = append(out, jsonNode(path+"/"+key, key, v))
	}
	return out
}

func arrayKids(path string, raw []byte) []*node {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	out := make([]*node, 0, len(items))
	for i, v := range items {
		n := jsonNode(fmt.Sprintf("%s/%d", path, i), fmt.Sprintf("[%d]", i), v)
		if n.kind == kObject {
			n.note = summary(v)
		}
		out = append(out, n)
	}
	return out
}

// summary names an array element by its role, type and name fields.
func summary(raw []byte) string {
	var f struct {
		Role     string          `json:"role"`
		Type     string          `json:"type"`
		Name     string          `json:"name"`
		ToolName string          `json:"tool_name"`
		Content  json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return ""
	}
	var parts []string
	for _, s := range []string{f.Role, f.Type, f.Name, f.ToolName} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if f.Role != "" {
		var blocks []json.RawMessage
		if json.Unmarshal(f.Content, &blocks) == nil {
			parts = append(parts, numfmt.Count(len(blocks), "block", "blocks"))
		}
	}
	return strings.Join(parts, " ")
}

func textKids(path string, lines []string) []*node {
	out := make([]*node, 0, len(lines))
	for i, s := range lines {
		out = append(out, &node{path: fmt.Sprintf("%s#%d", path, i), kind: kText, str: s})
	}
	return out
}

func textList(path, note string, lines []string, open bool) *node {
	return &node{path: path, key: path, note: note, kind: kLabel, defOpen: open, build: func() []*node {
		return textKids(path, lines)
	}}
}

func headerList(path string, hs []exchange.Header) *node {
	lines := make([]string, len(hs))
	for i, h := range hs {
		lines[i] = h.Name + ": " + h.Value
	}
	n := textList(path, fmt.Sprintf("(%d)", len(hs)), lines, false)
	n.key = "headers"
	return n
}

func requestNode(ex *exchange.Exchange) *node {
	target := ex.URL
	if u, err := url.Parse(ex.URL); err == nil && u.Path != "" {
		target = u.RequestURI()
	}
	return &node{path: "request", key: "request", kind: kLabel, defOpen: true,
		note: fmt.Sprintf("%s %s  %s", ex.Method, target, numfmt.Bytes(int64(len(ex.ReqBody)))),
		build: func() []*node {
			return []*node{headerList("request/headers", ex.ReqHeaders), bodyNode("request/body", "body", ex.ReqBody, true)}
		}}
}

func responseNode(ex *exchange.Exchange, d *decode.Turn) []*node {
	body := ex.Body()
	note := []string{}
	if ex.Status != 0 {
		note = append(note, strconv.Itoa(ex.Status))
	}
	if ct := ex.RespHeader("Content-Type"); ct != "" {
		note = append(note, ct)
	}
	note = append(note, numfmt.Bytes(int64(len(body))))
	if !ex.End.IsZero() && !ex.Start.IsZero() {
		note = append(note, ex.End.Sub(ex.Start).Round(time.Millisecond).String())
	}
	if ex.State != "" && ex.State != exchange.StateComplete {
		note = append(note, string(ex.State))
	}
	resp := &node{path: "response", key: "response", kind: kLabel, defOpen: true, note: strings.Join(note, "  "),
		build: func() []*node {
			kids := []*node{headerList("response/headers", ex.RespHeaders)}
			if !d.Response.Streamed {
				return append(kids, bodyNode("response/body", "body", body, true))
			}
			if msg := rebuilt(d.Response); msg != nil {
				n := jsonNode("response/message", "message", msg)
				n.note, n.defOpen = "rebuilt from the events", true
				kids = append(kids, n)
			}
			return append(kids, eventsNode(ex, d.Response, body))
		}}
	out := []*node{resp}
	if ex.Error != "" {
		out = append(out, &node{path: "error", kind: kText, str: "error: " + ex.Error})
	}
	return out
}

// rebuilt is the response message as JSON, rebuilt from the SSE events.
func rebuilt(r decode.Response) []byte {
	content := make([]json.RawMessage, 0, len(r.Content))
	for _, b := range r.Content {
		raw := b.Raw
		if len(raw) == 0 {
			raw, _ = json.Marshal(b)
		}
		content = append(content, raw)
	}
	msg := struct {
		ID           string            `json:"id,omitempty"`
		Model        string            `json:"model,omitempty"`
		Role         string            `json:"role,omitempty"`
		StopReason   string            `json:"stop_reason,omitempty"`
		StopSequence *string           `json:"stop_sequence,omitempty"`
		Usage        json.RawMessage   `json:"usage,omitempty"`
		Content      []json.RawMessage `json:"content"`
		Error        *decode.APIError  `json:"error,omitempty"`
	}{r.ID, r.Model, r.Role, r.StopReason, r.StopSequence, r.Usage.Raw, content, r.Error}
	out, err := json.Marshal(msg)
	if err != nil {
		return nil
	}
	return out
}

// eventsNode lists the SSE events with their arrival times relative to the
// request start; each opens to its data.
func eventsNode(ex *exchange.Exchange, r decode.Response, body []byte) *node {
	evs := r.Events
	return &node{path: "response/events", key: "events", kind: kLabel, note: fmt.Sprintf("(%d) arrival time from the request start", len(evs)),
		build: func() []*node {
			out := make([]*node, 0, len(evs))
			for i, ev := range evs {
				end := int64(len(body))
				if i+1 < len(evs) {
					end = evs[i+1].Offset
				}
				var data []byte
				if ev.Offset >= 0 && ev.Offset <= end && end <= int64(len(body)) {
					data = sseData(body[ev.Offset:end])
				}
				at := "      ?"
				if !ev.At.IsZero() && !ex.Start.IsZero() {
					at = fmt.Sprintf("%+7.3fs", ev.At.Sub(ex.Start).Seconds())
				}
				path := fmt.Sprintf("response/events/%d", i)
				n := jsonNode(path, at+"  "+ev.Name, data)
				if n.kind != kObject {
					n = &node{path: path, kind: kText, str: at + "  " + ev.Name + "  " + string(data)}
				}
				out = append(out, n)
			}
			return out
		}}
}

// sseData joins the data: lines of one event.
func sseData(ev []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			out = append(out, bytes.TrimPrefix(v, []byte(" ")))
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// searchText is what Find looks for q in: the node's key, note and value.
func (n *node) searchText() string {
	switch n.kind {
	case kLabel:
		return n.key + " " + n.note
	case kText:
		return n.str
	case kString:
		return n.key + ": " + n.str
	case kScalar:
		return n.key + ": " + string(n.raw)
	}
	return n.key
}

// walk calls f on every node in display order, folded ones included, with
// the paths of the nodes above it; f returns false to stop.
func (r *Raw) walk(f func(n *node, above []string) bool) {
	var visit func(n *node, above []string) bool
	visit = func(n *node, above []string) bool {
		if !f(n, above) {
			return false
		}
		if n.kind == kString || n.kind == kScalar || n.kind == kText {
			return true
		}
		above = append(above, n.path)
		for _, k := range n.children() {
			if !visit(k, above) {
				return false
			}
		}
		return true
	}
	for _, n := range r.roots {
		if !visit(n, nil) {
			return
		}
	}
}

// Find looks for q (any case) in the whole tree, folded parts included,
// from the node at path from (the node itself unless next is set; the top
// when from is "" or not found), wrapping around at the end. It opens the
// nodes above the match (and a long string that holds it) and returns the
// path of the match's line.
func (r *Raw) Find(q, from string, next bool) (string, bool) {
	q = strings.ToLower(q)
	if q == "" {
		return "", false
	}
	if i := strings.IndexByte(from, '#'); i >= 0 {
		from = from[:i] // a line of a long string: its node
	}
	type hit struct {
		n     *node
		above []string
	}
	var all []hit
	start := -1
	r.walk(func(n *node, above []string) bool {
		if n.path == from && start < 0 {
			start = len(all)
		}
		all = append(all, hit{n, append([]string(nil), above...)})
		return true
	})
	if len(all) == 0 {
		return "", false
	}
	if start < 0 {
		start, next = 0, false
	}
	if next {
		start++
	}
	for k := 0; k < len(all); k++ {
		h := all[(start+k)%len(all)]
		if !strings.Contains(strings.ToLower(h.n.searchText()), q) {
			continue
		}
		for _, p := range h.above {
			r.open[p] = true
		}
		if h.n.kind == kString && strings.Contains(strings.ToLower(h.n.str), q) && (len(h.n.str) > inlineString || strings.Contains(h.n.str, "\n")) {
			r.open[h.n.path] = true
		}
		r.valid = false
		return h.n.path, true
	}
	return "", false
}

// ExpandAll opens every node of the turn shown (long strings included);
// CollapseAll brings every node back to its default.
func (r *Raw) ExpandAll() {
	r.walk(func(n *node, _ []string) bool {
		if n.kind == kLabel || n.kind == kObject || n.kind == kArray || n.kind == kString {
			r.open[n.path] = true
		}
		return true
	})
	r.valid = false
}

// CollapseAll forgets what was opened or closed: every node is back to its
// default.
func (r *Raw) CollapseAll() {
	r.open = map[string]bool{}
	r.valid = false
}
