package sessionfiles

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/tsinspect/tsinspect/pricing"
)

// Summary is what the session listing shows of one session, read in one
// fast pass over its files: the request records' lineage, the answers'
// usage and tool calls, and the results of ToolSearch calls. Requests are
// not rebuilt; the cache-break and blind-call rules are the timeline's,
// applied to what the records say (see Summarize).
type Summary struct {
	ID      string    `json:"id"`
	Path    string    `json:"path"`
	Project string    `json:"project"`
	Cwd     string    `json:"cwd,omitempty"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Version string    `json:"version,omitempty"`
	// Requests reports whether the files hold request records.
	Requests  bool     `json:"requests"`
	Turns     int      `json:"turns"`
	Subagents int      `json:"subagents"`
	Models    []string `json:"models"`
	// Usage is each answered turn's model and usage, for pricing.
	Usage []TurnUsage `json:"usage"`
	// Breaks are the cache breaks: the turn's usage index and the tokens
	// lost.
	Breaks        []Break  `json:"breaks,omitempty"`
	BlindCalls    int      `json:"blind_calls"`
	Searches      int      `json:"searches"`
	EmptySearches int      `json:"empty_searches"`
	Unknown       []string `json:"unknown_records,omitempty"`
	BadLines      int      `json:"bad_lines,omitempty"`
}

// TurnUsage is one answer's final usage.
type TurnUsage struct {
	Model        string `json:"model"`
	Input        int64  `json:"input"`
	Output       int64  `json:"output"`
	CacheRead    int64  `json:"cache_read"`
	CacheWrite5m int64  `json:"cache_write_5m"`
	CacheWrite1h int64  `json:"cache_write_1h"`
}

// Break is a cache break: Usage[Turn] is the turn's usage.
type Break struct {
	Turn int   `json:"turn"`
	Lost int64 `json:"lost"`
}

// knownMarkers are `"type":"T"` for each known record type T.
// The commonest come first.
var knownMarkers = func() [][]byte {
	first := []string{"attachment", "system", "last-prompt", "atis-latch", "queue-operation", "tools-used", "cost-state"}
	var out [][]byte
	for _, t := range first {
		out = append(out, []byte(`"type":"`+t+`"`))
	}
	var rest []string
	for t := range knownTypes {
		if !slices.Contains(first, t) {
			rest = append(rest, t)
		}
	}
	sort.Strings(rest)
	for _, t := range rest {
		out = append(out, []byte(`"type":"`+t+`"`))
	}
	return out
}()

// Cache-break thresholds, as the timeline's rule has them.
const (
	breakRatio     = 0.95
	breakMinTokens = 2000
)

type sumReq struct {
	// base is the request this one continues (its base record, or the one
	// a resumed session continues), from, when set, the base record's
	// request whose first keep messages this one's begin with. Both are
	// earlier requests, so the lineage has no cycle.
	base, from *sumReq
	keep       int
	tail       []string
	count      int      // messages in the request
	chain      [32]byte // a hash over the request's message hashes, in order
	model      string
	usage      *TurnUsage
	empty      bool // the answer had no content
	usageIdx   int
	id         string
	deferred   map[string]bool // the shape's deferred tools
	inline     map[string]bool
	file       int
}

type sumShape struct {
	inline, deferred map[string]bool
}

// Summarize reads the session whose main file is e.Path in one pass.
func Summarize(e Entry) (*Summary, error) {
	s := &Summary{ID: e.ID, Path: e.Path, Project: e.Project, Subagents: len(e.Agents)}
	shapes := map[string]*sumShape{}
	reqs := map[string]*sumReq{}
	var order []*sumReq
	models := map[string]bool{}
	unknown := map[string]int{}
	for fi, p := range append([]string{e.Path}, e.Agents...) {
		data, err := readWhole(p)
		if err != nil {
			if fi == 0 {
				return nil, err
			}
			continue
		}
		// Per file: the tools loaded by references so far, the pending
		// ToolSearch calls, the last request and the answers' messages.
		loaded := map[string]bool{}
		pending := map[string]bool{}
		var last *sumReq
		answers := map[string]*TurnUsage{} // message id -> usage (last record wins)
		answerEmpty := map[string]bool{}
		var answerOrder []string
		answerReq := map[string]*sumReq{}
		for len(data) > 0 {
			var line []byte
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				line, data = data[:i], data[i+1:]
			} else {
				line, data = data, nil
				if !json.Valid(line) {
					break // still being written
				}
			}
			if len(line) < 2 {
				continue
			}
			switch {
			case bytes.HasPrefix(line, []byte(`{"type":"api-request-blob"`)):
				continue
			case bytes.HasPrefix(line, []byte(`{"type":"api-request-shape"`)):
				hash, sh, ok := readShape(line)
				if !ok {
					s.BadLines++
					continue
				}
				shapes[hash] = sh
				continue
			case bytes.HasPrefix(line, []byte(`{"type":"api-request"`)):
				var r struct {
					ID        string   `json:"id"`
					Timestamp string   `json:"timestamp"`
					Version   string   `json:"version"`
					ShapeHash string   `json:"shapeHash"`
					Base      string   `json:"base"`
					Keep      int      `json:"keep"`
					Tail      []string `json:"tail"`
					Params    struct {
						Model string `json:"model"`
					} `json:"params"`
				}
				if json.Unmarshal(line, &r) != nil {
					s.BadLines++
					continue
				}
				s.Requests = true
				s.Turns++
				q := &sumReq{keep: r.Keep, tail: r.Tail, model: r.Params.Model, usageIdx: -1, file: fi}
				if b := reqs[r.Base]; b != nil && r.Base != "" {
					q.base, q.from = b, b
					q.keep = min(max(r.Keep, 0), b.count)
					q.count, q.chain = q.keep+len(r.Tail), extendChain(chainAt(b, q.keep), r.Tail)
				} else {
					q.keep = 0
					q.count, q.chain = len(r.Tail), extendChain([32]byte{}, r.Tail)
					// A request that starts afresh (a resumed session)
					// continues the latest one whose messages it extends,
					// as the timeline links them.
					q.base = continues(order, q, fi)
				}
				if sh := shapes[r.ShapeHash]; sh != nil {
					q.inline, q.deferred = sh.inline, sh.deferred
				}
				q.id = r.ID
				reqs[r.ID] = q
				order = append(order, q)
				last = q
				s.note(r.Timestamp, r.Version)
				continue
			}
			var r struct {
				Type       string `json:"type"`
				Timestamp  string `json:"timestamp"`
				Version    string `json:"version"`
				Cwd        string `json:"cwd"`
				RequestRef string `json:"requestRef"`
				// A forked session copies the original's answers, with
				// the original's ID here: they were billed to it.
				SessionID        string `json:"sessionId"`
				RequestSessionID string `json:"requestSessionId"`
				Message          struct {
					ID      string `json:"id"`
					Model   string `json:"model"`
					Content []struct {
						Type  string `json:"type"`
						ID    string `json:"id"`
						Name  string `json:"name"`
						Input struct {
							Query string `json:"query"`
						} `json:"input"`
					} `json:"content"`
					Usage *struct {
						Input         int64 `json:"input_tokens"`
						Output        int64 `json:"output_tokens"`
						CacheRead     int64 `json:"cache_read_input_tokens"`
						CacheCreation int64 `json:"cache_creation_input_tokens"`
						Detail        *struct {
							M5 int64 `json:"ephemeral_5m_input_tokens"`
							H1 int64 `json:"ephemeral_1h_input_tokens"`
						} `json:"cache_creation"`
					} `json:"usage"`
				} `json:"message"`
			}
			isAssistant := bytes.Contains(line, []byte(`"type":"assistant"`))
			if !isAssistant && bytes.Contains(line, []byte(`"type":"user"`)) {
				// Only tool results matter here: a ToolSearch's, and any
				// that reference tools.
				if bytes.Contains(line, []byte(`"tool_reference"`)) || len(pending) > 0 && bytes.Contains(line, []byte(`"tool_result"`)) {
					markSearchResults(line, pending, loaded, s)
				}
				continue
			}
			if !isAssistant {
				s.other(line, unknown)
				continue
			}
			if json.Unmarshal(line, &r) != nil {
				s.BadLines++
				continue
			}
			if r.Type != "assistant" {
				s.other(line, unknown)
				continue
			}
			if r.RequestSessionID != "" && r.SessionID != "" && r.RequestSessionID != r.SessionID {
				continue // copied from the session this one forked
			}
			s.note(r.Timestamp, r.Version)
			if s.Cwd == "" {
				s.Cwd = r.Cwd
			}
			m := &r.Message
			if m.Model != "" && m.Model != "<synthetic>" {
				models[m.Model] = true
			}
			q := reqs[r.RequestRef]
			if q == nil {
				q = last
			}
			for _, c := range m.Content {
				if c.Type != "tool_use" {
					continue
				}
				if c.Name == "ToolSearch" {
					s.Searches++
					pending[c.ID] = true
					continue
				}
				if q != nil && q.inline != nil && !q.inline[c.Name] && !loaded[c.Name] {
					s.BlindCalls++
				}
			}
			if m.Usage != nil && m.ID != "" {
				u := &TurnUsage{Model: m.Model, Input: m.Usage.Input, Output: m.Usage.Output, CacheRead: m.Usage.CacheRead}
				if d := m.Usage.Detail; d != nil && d.M5+d.H1 == m.Usage.CacheCreation {
					u.CacheWrite5m, u.CacheWrite1h = d.M5, d.H1
				} else {
					u.CacheWrite5m = m.Usage.CacheCreation
				}
				if _, ok := answers[m.ID]; !ok {
					answerOrder = append(answerOrder, m.ID)
					answerEmpty[m.ID] = true
				}
				if len(m.Content) > 0 {
					answerEmpty[m.ID] = false
				}
				answers[m.ID] = u
				if q != nil {
					answerReq[m.ID] = q
				}
			}
		}
		var prev *TurnUsage
		for _, id := range answerOrder {
			u := answers[id]
			if !s.Requests && prev != nil && !answerEmpty[id] {
				// Without request records the answers of a file follow one
				// another: the break rule compares each with the one before.
				if lost, ok := breakLost(prev, u); ok {
					s.Breaks = append(s.Breaks, Break{Turn: len(s.Usage), Lost: lost})
				}
			}
			if !answerEmpty[id] {
				prev = u
			}
			if q := answerReq[id]; q != nil {
				if q.model != "" {
					u.Model = q.model
				}
				q.usage, q.empty = u, answerEmpty[id]
				q.usageIdx = len(s.Usage)
			}
			s.Usage = append(s.Usage, *u)
			if !s.Requests {
				s.Turns++
			}
		}
	}
	// Cache breaks, along each request's lineage (its base).
	for _, q := range order {
		if q.usage == nil || q.base == nil {
			continue
		}
		b := q.base
		for b != nil && (b.usage == nil || b.empty) {
			b = b.base
		}
		if b == nil {
			continue
		}
		if lost, ok := breakLost(b.usage, q.usage); ok {
			s.Breaks = append(s.Breaks, Break{Turn: q.usageIdx, Lost: lost})
		}
	}
	for m := range models {
		s.Models = append(s.Models, m)
	}
	sort.Strings(s.Models)
	for k, n := range unknown {
		s.Unknown = append(s.Unknown, k+" ×"+strconv.Itoa(n))
	}
	sort.Strings(s.Unknown)
	return s, nil
}

// breakLost applies the timeline's cache-break rule to a turn's usage u
// after its baseline's bu: the tokens lost, and whether it is a break.
func breakLost(bu, u *TurnUsage) (int64, bool) {
	due := min(bu.CacheRead+bu.CacheWrite5m+bu.CacheWrite1h, u.Input+u.CacheRead+u.CacheWrite5m+u.CacheWrite1h)
	if float64(u.CacheRead) < breakRatio*float64(due) && due-u.CacheRead >= breakMinTokens {
		return due - u.CacheRead, true
	}
	return 0, false
}

// extendChain hashes more message hashes onto a chain.
func extendChain(c [32]byte, hashes []string) [32]byte {
	for _, h := range hashes {
		c = sha256.Sum256(append(c[:], h...))
	}
	return c
}

// chainAt is the chain of the first k messages of request q.
func chainAt(q *sumReq, k int) [32]byte {
	for q != nil {
		switch {
		case k == q.count:
			return q.chain
		case k > q.keep && k <= q.count:
			var c [32]byte
			if q.from != nil {
				c = chainAt(q.from, q.keep)
			}
			return extendChain(c, q.tail[:k-q.keep])
		case q.from == nil:
			return extendChain([32]byte{}, q.tail[:min(k, len(q.tail))])
		}
		q = q.from
	}
	return [32]byte{}
}

// continues finds the earlier request of the same file that q, which
// starts afresh (a resumed session), continues, as the timeline links
// them: the latest whose messages q's extend, else the latest that added
// a message q's history holds (a session resumed on another model has
// some of its history rewritten). It returns nil for none.
func continues(order []*sumReq, q *sumReq, file int) *sumReq {
	if len(q.tail) < 2 {
		return nil
	}
	prefix := map[[32]byte]int{}
	has := map[string]bool{}
	c := [32]byte{}
	for i, h := range q.tail {
		has[h] = true
		if i < len(q.tail)-1 {
			c = sha256.Sum256(append(c[:], h...))
			prefix[c] = i + 1
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		p := order[i]
		if p.file != file || p.count == 0 {
			continue
		}
		if n, ok := prefix[p.chain]; ok && n == p.count {
			return p
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		p := order[i]
		if p.file != file || len(p.tail) == 0 {
			continue
		}
		for _, h := range p.tail {
			if has[h] {
				return p
			}
		}
	}
	return nil
}

func (s *Summary) note(ts, version string) {
	if t := parseTime(ts); !t.IsZero() {
		if s.Start.IsZero() || t.Before(s.Start) {
			s.Start = t
		}
		if t.After(s.End) {
			s.End = t
		}
	}
	if version != "" {
		s.Version = version
	}
}

// markSearchResults reads a user record holding tool results: a pending
// ToolSearch's result counts as empty when it references nothing.
func markSearchResults(line []byte, pending, loaded map[string]bool, s *Summary) {
	var r struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &r) != nil {
		s.BadLines++
		return
	}
	var blocks []struct {
		Type      string          `json:"type"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
	}
	if json.Unmarshal(r.Message.Content, &blocks) != nil {
		return
	}
	for _, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		var inner []struct {
			Type     string `json:"type"`
			ToolName string `json:"tool_name"`
		}
		_ = json.Unmarshal(b.Content, &inner)
		refs := 0
		for _, c := range inner {
			if c.Type == "tool_reference" {
				loaded[c.ToolName] = true
				refs++
			}
		}
		if pending[b.ToolUseID] {
			delete(pending, b.ToolUseID)
			if refs == 0 {
				s.EmptySearches++
			}
		}
	}
}

// other reads a record that is neither a request nor an answer: its type
// (counted when unknown) and the session's directory. A line that holds
// a known type's marker is taken as that type without being parsed
// (attachments hold whole tool definitions); opening the session reads
// every record properly.
func (s *Summary) other(line []byte, unknown map[string]int) {
	if s.Cwd == "" && bytes.Contains(line, []byte(`"cwd":`)) {
		var c struct {
			Cwd string `json:"cwd"`
		}
		if json.Unmarshal(line, &c) == nil {
			s.Cwd = c.Cwd
		}
	}
	for _, m := range knownMarkers {
		if bytes.Contains(line, m) {
			return
		}
	}
	var t struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(line, &t) != nil {
		s.BadLines++
		return
	}
	if !knownTypes[t.Type] {
		unknown[t.Type]++
	}
}

// Cost prices the session's answers and its cache breaks with tab: the
// whole cost, what the breaks cost (their lost tokens billed again
// instead of read), whether every answered turn had a price, and the
// models priced as another of their family (estimated), "model as other".
func (s *Summary) Cost(tab *pricing.Table) (usd, breaks float64, ok bool, estimated []string) {
	ok = true
	for _, u := range s.Usage {
		c, p, priced := tab.Cost(u.Model, u.pricing())
		if !priced {
			ok = false
			continue
		}
		if e := u.Model + " as " + p.Model.Model; p.Estimated && !slices.Contains(estimated, e) {
			estimated = append(estimated, e)
		}
		usd += c.Total
	}
	for _, b := range s.Breaks {
		if b.Turn < 0 || b.Turn >= len(s.Usage) {
			continue
		}
		u := s.Usage[b.Turn]
		if c, priced := tab.BreakCost(u.Model, u.pricing(), b.Lost); priced {
			breaks += c
		}
	}
	return usd, breaks, ok, estimated
}

func (u TurnUsage) pricing() pricing.Usage {
	return pricing.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite5m: u.CacheWrite5m, CacheWrite1h: u.CacheWrite1h}
}

// Tokens sums the usage: input, output, cache reads and cache writes.
func (s *Summary) Tokens() (in, out, read, write int64) {
	for _, u := range s.Usage {
		in += u.Input
		out += u.Output
		read += u.CacheRead
		write += u.CacheWrite5m + u.CacheWrite1h
	}
	return
}

// readShape reads a shape record's hash and its tools' names, inline or
// deferred, without decoding the rest: the system prompt and the tools'
// schemas are most of a shape's bytes (80 KB a record in Claude Code
// 2.1.328, a shape per change of the tool set), and decoding them took
// half of a first listing's time. It walks the record's structure only,
// and reports false for a record whose structure it cannot follow or
// whose tools are not an array; unlike a decoder it does not check the
// rest of the record's syntax (opening the session does).
func readShape(line []byte) (hash string, sh *sumShape, ok bool) {
	sh = &sumShape{inline: map[string]bool{}, deferred: map[string]bool{}}
	end := eachMember(line, skipSpace(line, 0), func(key []byte, v int) int {
		switch string(key) {
		case "shapeHash":
			e := valueEnd(line, v)
			if e >= 0 && line[v] == '"' {
				hash = jsonString(line[v:e])
			}
			return e
		case "shape":
			if line[v] != '{' {
				return valueEnd(line, v)
			}
			return eachMember(line, v, func(key []byte, v int) int {
				if e := valueEnd(line, v); string(key) != "tools" || e >= 0 && string(line[v:e]) == "null" {
					return e
				}
				return eachElement(line, v, func(v int) int {
					if line[v] != '{' {
						return -1
					}
					var name string
					deferred := false
					e := eachMember(line, v, func(key []byte, v int) int {
						e := valueEnd(line, v)
						switch {
						case e < 0:
						case string(key) == "name" && line[v] == '"':
							name = jsonString(line[v:e])
						case string(key) == "defer_loading":
							deferred = string(line[v:e]) == "true"
						}
						return e
					})
					if e >= 0 {
						if deferred {
							sh.deferred[name] = true
						} else {
							sh.inline[name] = true
						}
					}
					return e
				})
			})
		}
		return valueEnd(line, v)
	})
	return hash, sh, end >= 0
}

// jsonString is the value of the JSON string literal b (quotes included).
func jsonString(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b[1 : len(b)-1])
	}
	var s string
	_ = json.Unmarshal(b, &s)
	return s
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index after the string literal that starts at b[i], or
// -1.
func stringEnd(b []byte, i int) int {
	for i++; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		k := i + j
		n := 0
		for m := k - 1; m >= i && b[m] == '\\'; m-- {
			n++
		}
		if n%2 == 0 {
			return k + 1
		}
		i = k + 1
	}
}

// valueEnd is the index after the JSON value that starts at b[i], or -1
// when it does not end.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = stringEnd(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	start := i
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	if i == start {
		return -1
	}
	return i
}

// eachMember calls fn with each member's key and the index of its value,
// in the object that starts at b[i]; fn returns the index after the value
// (-1: stop). It returns the index after the object, or -1.
func eachMember(b []byte, i int, fn func(key []byte, v int) int) int {
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	if i = skipSpace(b, i+1); i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		e := stringEnd(b, i)
		if e < 0 {
			return -1
		}
		key := b[i+1 : e-1]
		if i = skipSpace(b, e); i >= len(b) || b[i] != ':' {
			return -1
		}
		if i = skipSpace(b, i+1); i >= len(b) {
			return -1
		}
		if i = fn(key, i); i < 0 {
			return -1
		}
		switch i = skipSpace(b, i); {
		case i >= len(b):
			return -1
		case b[i] == '}':
			return i + 1
		case b[i] != ',':
			return -1
		}
		i = skipSpace(b, i+1)
	}
}

// eachElement calls fn with the index of each element of the array that
// starts at b[i]; fn returns the index after the element (-1: stop). It
// returns the index after the array, or -1.
func eachElement(b []byte, i int, fn func(v int) int) int {
	if i >= len(b) || b[i] != '[' {
		return -1
	}
	if i = skipSpace(b, i+1); i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		if i >= len(b) {
			return -1
		}
		if i = fn(i); i < 0 {
			return -1
		}
		switch i = skipSpace(b, i); {
		case i >= len(b):
			return -1
		case b[i] == ']':
			return i + 1
		case b[i] != ',':
			return -1
		}
		i = skipSpace(b, i+1)
	}
}
