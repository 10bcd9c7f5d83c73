package sessionfiles

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/internal/jsonvalid"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
)

// Summary is what the session listing shows of one session, read in one
// fast pass over its files: the transcript's reading that opening the
// session rests on (see Summarize), without rebuilding the requests.
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
	Breaks        []Break `json:"breaks,omitempty"`
	BlindCalls    int     `json:"blind_calls"`
	Searches      int     `json:"searches"`
	EmptySearches int     `json:"empty_searches"`
	// PartialSearches counts the searches that named tools and loaded
	// some but not all of them (the timeline's search_partial);
	// PartialMissing names the tools they left out, once each.
	PartialSearches int      `json:"partial_searches,omitempty"`
	PartialMissing  []string `json:"partial_missing,omitempty"`
	// CatalogRecorded: the files announce the deferred-tool catalog
	// (deferred_tools_delta); without it no call can be told to be blind.
	CatalogRecorded bool     `json:"catalog_recorded"`
	Unknown         []string `json:"unknown_records,omitempty"`
	// BadLines counts the lines that are not JSON records, FirstBadLine
	// names the first ("FILE line N: ...").
	BadLines     int    `json:"bad_lines,omitempty"`
	FirstBadLine string `json:"first_bad_line,omitempty"`
	// UsageProblems counts the answers whose usage could not be read
	// whole (a member of the wrong type, a negative count: counted as 0),
	// FirstUsageProblem says the first: the cost counts what could be.
	UsageProblems     int    `json:"usage_problems,omitempty"`
	FirstUsageProblem string `json:"first_usage_problem,omitempty"`
	// SubagentsOnly: the main file is absent; the session is read from
	// its subagents' files alone.
	SubagentsOnly bool `json:"subagents_only,omitempty"`
	// OutputPlaceholders counts the answers whose output tokens are the
	// placeholder Claude Code wrote when the message began (no record of
	// theirs carries a stop reason: 1.x and 2.1.7–2.1.52 write no final
	// count): their output, and the cost, are lower bounds.
	OutputPlaceholders int `json:"output_placeholders,omitempty"`
}

// TurnUsage is one answer's final usage.
type TurnUsage struct {
	Model        string `json:"model"`
	Input        int64  `json:"input"`
	Output       int64  `json:"output"`
	CacheRead    int64  `json:"cache_read"`
	CacheWrite5m int64  `json:"cache_write_5m"`
	CacheWrite1h int64  `json:"cache_write_1h"`
	// At is the answer's timestamp (its bucket in 'sessions --by'); Speed
	// and WebSearches are usage.speed and server_tool_use's
	// web_search_requests, which its price depends on.
	At          time.Time `json:"at"`
	Speed       string    `json:"speed,omitempty"`
	WebSearches int64     `json:"web_searches,omitempty"`
}

// Break is a cache break: Usage[Turn] is the turn's usage.
type Break struct {
	Turn int   `json:"turn"`
	Lost int64 `json:"lost"`
}

// Summarize reads the session whose main file is e.Path in one pass: the
// transcript's reading (see transcript.go) that opening the session rests
// on, without rebuilding the requests.
func Summarize(e Entry) (*Summary, error) {
	s, _, _, err := summarize(e, nil, false)
	return s, err
}

// summarize is Summarize going on from where from stopped (nil: from the
// start; a from that does not fit the files is read afresh: resumed says
// which); with keep it also returns what a later call needs to go on from
// here.
func summarize(e Entry, from *Resume, keep bool) (s *Summary, res *Resume, resumed bool, err error) {
	s = &Summary{ID: e.ID, Path: e.Path, Project: e.Project, Subagents: len(e.Agents)}
	tr := newTranscript(nil)
	tr.agentIDs = agentIDsOf(e.Agents)
	unknown := map[string]int{}
	var marks map[string]FileMark
	if from != nil {
		var ok bool
		if marks, ok = resumeFiles(e, from); !ok {
			from, marks = nil, nil
		}
	}
	resumed = from != nil
	if keep {
		res = &Resume{}
	}
	fileIndex := map[string]int{}
	if from != nil {
		// What the files said before, and the transcript's records so
		// far, read again.
		s.Start, s.End, s.Version, s.Cwd = timeOf(from.Start), timeOf(from.End), from.Version, from.Cwd
		s.BadLines, s.FirstBadLine = from.BadLines, from.FirstBadLine
		for k, n := range from.Unknown {
			unknown[k] = n
		}
		for _, l := range from.Log {
			if l.File < 0 || l.File >= len(from.Files) {
				continue
			}
			r := l.R
			if res != nil {
				res.Log = append(res.Log, Logged{File: l.File, R: r})
			}
			tr.record(&r, from.Files[l.File].Path)
		}
		if res != nil {
			res.Files = append(res.Files, from.Files...)
			for i, f := range from.Files {
				fileIndex[f.Path] = i
			}
		}
	}
	for fi, p := range append([]string{e.Path}, e.Agents...) {
		mark := marks[p]
		data, err := readFrom(p, mark.Offset)
		if err != nil {
			if fi == 0 && mainAbsent(e.Agents, err) {
				s.SubagentsOnly = true
				continue
			}
			if fi == 0 {
				return nil, nil, false, err
			}
			continue
		}
		n := mark.Lines
		consumed := mark.Offset
		tr.expect(bytes.Count(data, []byte{'\n'}) + 1)
		for len(data) > 0 {
			var line []byte
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				line, data = data[:i], data[i+1:]
				consumed += int64(i) + 1
			} else {
				line, data = data, nil
				if !json.Valid(line) {
					break // still being written
				}
				consumed += int64(len(line))
			}
			n++
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var r record
			if !lightRecord(line, &r) {
				s.BadLines++
				if s.FirstBadLine == "" {
					s.FirstBadLine = Problem{File: p, Line: n, What: "not a JSON record"}.String()
				}
				continue
			}
			if !knownTypes[r.Type] {
				unknown[r.Type]++
			}
			if r.Cwd != "" && s.Cwd == "" {
				s.Cwd = r.Cwd
			}
			s.note(r.Timestamp, r.Version)
			if res != nil && logged(&r) && len(res.Log) < maxResumeLog {
				i, ok := fileIndex[p]
				if !ok {
					i = len(res.Files)
					fileIndex[p] = i
					res.Files = append(res.Files, FileMark{Path: p})
				}
				res.Log = append(res.Log, Logged{File: i, R: trimmed(&r, tr)})
			}
			tr.record(&r, p)
		}
		if res != nil {
			i, ok := fileIndex[p]
			if !ok {
				i = len(res.Files)
				fileIndex[p] = i
				res.Files = append(res.Files, FileMark{Path: p})
			}
			res.Files[i].Offset, res.Files[i].Lines = consumed, n
			res.Files[i].Head = fileHead(p, consumed)
		}
	}
	tr.endRound(true)
	s.summarise(tr)
	for k, n := range unknown {
		s.Unknown = append(s.Unknown, k+" ×"+strconv.Itoa(n))
	}
	sort.Strings(s.Unknown)
	if res != nil {
		if len(res.Log) >= maxResumeLog {
			res = nil
		} else {
			res.Start, res.End, res.Version, res.Cwd = unixOf(s.Start), unixOf(s.End), s.Version, s.Cwd
			res.Unknown, res.BadLines, res.FirstBadLine = unknown, s.BadLines, s.FirstBadLine
		}
	}
	return s, res, resumed, nil
}

// logged reports whether the transcript reads r: a record of a type it
// reads, or any record that is a link of the chain (progress records and
// others with a UUID, which later records may name as their parent).
func logged(r *record) bool {
	switch r.Type {
	case "user", "assistant", "attachment", "system", "api-request":
		return true
	}
	return r.UUID != "" && r.ParentUUID.Set
}

func timeOf(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// compactionAgentPrefix names the file Claude Code keeps a compaction's
// summary request in, among the subagents' files.
const compactionAgentPrefix = "agent-acompact"

func unixOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// summarise works out the listing's figures from the transcript's
// requests: the rules are the timeline's (a search is counted on the
// request that first carries its result; a call is blind when the catalog
// lists the tool and nothing loaded it; a cache break is measured against
// the latest answered request of the conversation).
func (s *Summary) summarise(tr *transcript) {
	s.Turns = len(tr.reqs)
	s.CatalogRecorded = tr.catalogSeen
	models := map[string]bool{}
	usage := map[*request]int{}
	empty := map[*request]bool{}
	var lastSummary *request // the latest compaction summary request
	// In the order they were sent, as the timeline has them, whatever
	// order the files were read in: by time, then the main file's first,
	// then each file's own order.
	reqs := slices.Clone(tr.reqs)
	sort.SliceStable(reqs, func(i, j int) bool {
		a, b := reqs[i], reqs[j]
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		if a.file != b.file {
			if a.file == s.Path || b.file == s.Path {
				return a.file == s.Path
			}
			return a.file < b.file
		}
		return a.seq < b.seq
	})
	queries := map[string]string{} // search calls' queries, by tool_use ID
	for _, q := range reqs {
		if !q.transcript {
			s.Requests = true
		}
		for _, res := range q.results {
			name := tr.calls[res.id]
			// A search's result, or one that loaded tools whose call was
			// read (its name lost to damage), on the request that carries
			// the call too.
			_, called := tr.calls[res.id]
			if ((name == searchToolName || name == mcpSearchToolName) && !res.none || len(res.refs) > 0 && called) && !res.offChain {
				s.Searches++
				if len(res.refs) == 0 {
					s.EmptySearches++
				}
				s.partial(q.state(), res, queries[res.id])
			}
			if res.none {
				if st := q.state(); st == nil || !st.catalog[name] {
					s.BlindCalls++ // a call of a tool that does not exist
				}
			}
		}
		if len(q.answer) == 0 {
			continue
		}
		a := readAnswer(q.answer, q.read)
		for _, m := range q.read {
			searchQueries(m, queries)
		}
		if a.model != "" {
			models[a.model] = true
		}
		if len(a.problems) > 0 {
			s.UsageProblems++
			if s.FirstUsageProblem == "" {
				s.FirstUsageProblem = "answer " + messageID(q.answer[len(q.answer)-1].Message) + ": " + strings.Join(a.problems, "; ")
			}
		}
		if a.usage == nil {
			continue
		}
		st := q.state()
		for _, name := range a.calls {
			if st != nil && st.catalog[name] && !st.loaded[name] && !slices.Contains(st.restored, name) {
				s.BlindCalls++
			}
		}
		if q.transcript && !a.stopped {
			// timeline.Turn.OutputPlaceholder: no final count written.
			s.OutputPlaceholders++
		}
		usage[q] = len(s.Usage)
		empty[q] = a.empty
		s.Usage = append(s.Usage, *a.usage)
		if strings.HasPrefix(filepathBase(q.file), compactionAgentPrefix) && !a.empty {
			lastSummary = q
		}
		if a.empty || st == nil {
			continue
		}
		// Up the chain past the turns whose answers were empty. A
		// damaged file can chain a request back to one already passed
		// (an answer's ID repeated): there are no more empty turns to
		// pass than are known, and no base then.
		base := st.prev
		for passed := 0; base != nil && empty[base]; passed++ {
			if passed == len(empty) {
				base = nil
				break
			}
			base = base.state().prev
		}
		bi, ok := usage[base]
		if base == nil || !ok {
			continue
		}
		if st.compacted && lastSummary != nil && lastSummary.at.After(base.at) && lastSummary.at.Before(q.at) {
			// The compaction's own summary request (its subagent file)
			// came between: it wrote the prefix this turn reads, and the
			// timeline measures this turn against it.
			if si, ok := usage[lastSummary]; ok {
				bi = si
			}
		}
		bu, u := &s.Usage[bi], &s.Usage[usage[q]]
		if st.compacted && !timeline.CompactionBreak(bu.Model, u.Model) {
			continue // the timeline's rule: a compaction is no break
		}
		if lost, ok := timeline.CacheBreak(bu.CacheRead, bu.CacheWrite5m+bu.CacheWrite1h, u.CacheRead, u.Input+u.CacheRead+u.CacheWrite5m+u.CacheWrite1h); ok {
			s.Breaks = append(s.Breaks, Break{Turn: usage[q], Lost: lost})
		}
	}
	for m := range models {
		s.Models = append(s.Models, m)
	}
	sort.Strings(s.Models)
}

// partial counts a search whose result res, read from state st, left out
// tools its query named: the timeline's rule (timeline.SearchLeftOut),
// with what the transcript tells of the tools known (the catalog, the
// tools loaded, Claude Code's own).
func (s *Summary) partial(st *tnode, res tresult, query string) {
	if st == nil || query == "" {
		return
	}
	sr := decode.Search{Query: query, HasResult: true, IsError: res.isError, Results: res.refs}
	sr.Mode, sr.Selected = decode.QueryMode(query)
	had := func(n string) bool { return st.loaded[n] || slices.Contains(st.restored, n) }
	known := func(n string) bool { return st.catalog[n] || had(n) || timeline.ClaudeCodeTool(n) }
	if _, missing := timeline.SearchLeftOut(sr, known, had); len(missing) > 0 {
		s.PartialSearches++
		for _, n := range missing {
			if !slices.Contains(s.PartialMissing, n) {
				s.PartialMissing = append(s.PartialMissing, n)
			}
		}
	}
}

// searchQueries notes the query of each search call of answer m.
func searchQueries(m lightMessage, into map[string]string) {
	for i, b := range m.blocks {
		if b.typ != "tool_use" || b.name != searchToolName && b.name != mcpSearchToolName || i >= len(m.content) {
			continue
		}
		var call struct {
			Input struct {
				Query string `json:"query"`
			} `json:"input"`
		}
		if json.Unmarshal(m.content[i], &call) == nil && call.Input.Query != "" {
			into[b.id] = call.Input.Query
		}
	}
}

// answer is what the listing reads of an answer: the model, the final
// usage (its last record's), the tools it called, whether it was empty,
// and what of its usage could not be read (decode.ParseUsage's problems).
type answer struct {
	model    string
	usage    *TurnUsage
	calls    []string
	empty    bool
	problems []string
	// stopped: the last record carries the stop reason (see
	// timeline.Turn.OutputPlaceholder).
	stopped bool
}

// readAnswer reads an answer from what the transcript read of its
// records (ms) and their records (rs): the last record's usage, through
// decode.ParseUsage, the parser the timeline uses.
func readAnswer(rs []*record, ms []lightMessage) answer {
	a := answer{empty: true}
	for i, m := range ms {
		if m.model != "" {
			a.model = m.model
		}
		if len(m.blocks) > 0 {
			a.empty = false
		}
		for _, b := range m.blocks {
			if b.typ == "tool_use" {
				a.calls = append(a.calls, b.name)
			}
		}
		if len(m.usage) == 0 || string(m.usage) == "null" {
			continue
		}
		du, problems := decode.ParseUsage(m.usage)
		u := &TurnUsage{Input: du.InputTokens, Output: du.OutputTokens, CacheRead: du.CacheReadInputTokens,
			At: parseTime(rs[i].Timestamp), Speed: du.Speed, WebSearches: du.WebSearchRequests}
		var e5m, e1h int64
		if d := du.CacheCreation; d != nil {
			e5m, e1h = d.Ephemeral5m, d.Ephemeral1h
		}
		u.CacheWrite5m, u.CacheWrite1h = pricing.SplitCacheWrites(du.CacheCreationInputTokens, e5m, e1h)
		// The last record's usage is the final one, problems and all.
		a.usage, a.problems = u, problems
	}
	a.stopped = len(ms) > 0 && ms[len(ms)-1].stopped
	if a.usage != nil {
		a.usage.Model = a.model
	}
	return a
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

// jsonString is the value of the JSON string literal b (quotes included).
func jsonString(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		return string(b[1 : len(b)-1])
	}
	var s string
	_ = json.Unmarshal(b, &s)
	return s
}

// eachMember calls fn with each member's key and the index of its value,
// in the object that starts at b[i]; fn returns the index after the value
// (-1: stop). It returns the index after the object, or -1.
func eachMember(b []byte, i int, fn func(key []byte, v int) int) int {
	return eachMemberWith(b, i, jsonvalid.StringEnd, fn)
}

// eachMemberWith is eachMember finding the end of each key with keyEnd
// (jsonvalid.StringEndValid to check them).
func eachMemberWith(b []byte, i int, keyEnd func(b []byte, i int) int, fn func(key []byte, v int) int) int {
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	if i = jsonvalid.SkipSpace(b, i+1); i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		e := keyEnd(b, i)
		if e < 0 {
			return -1
		}
		key := b[i+1 : e-1]
		if i = jsonvalid.SkipSpace(b, e); i >= len(b) || b[i] != ':' {
			return -1
		}
		if i = jsonvalid.SkipSpace(b, i+1); i >= len(b) {
			return -1
		}
		if i = fn(key, i); i < 0 {
			return -1
		}
		switch i = jsonvalid.SkipSpace(b, i); {
		case i >= len(b):
			return -1
		case b[i] == '}':
			return i + 1
		case b[i] != ',':
			return -1
		}
		i = jsonvalid.SkipSpace(b, i+1)
	}
}

// eachElement calls fn with the index of each element of the array that
// starts at b[i]; fn returns the index after the element (-1: stop). It
// returns the index after the array, or -1.
func eachElement(b []byte, i int, fn func(v int) int) int {
	if i >= len(b) || b[i] != '[' {
		return -1
	}
	if i = jsonvalid.SkipSpace(b, i+1); i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		if i >= len(b) {
			return -1
		}
		if i = fn(i); i < 0 {
			return -1
		}
		switch i = jsonvalid.SkipSpace(b, i); {
		case i >= len(b):
			return -1
		case b[i] == ']':
			return i + 1
		case b[i] != ',':
			return -1
		}
		i = jsonvalid.SkipSpace(b, i+1)
	}
}

// member is what encoding/json decodes into a struct field named name
// from the object b, which must be valid JSON (every record's members
// are: their lines were validated whole): the value of the last member
// whose key is name in any case. ok is false when b is not an object, or
// when a key is escaped or not ASCII (left to encoding/json); v is nil
// when no member is so named.
func member(b []byte, name string) (v []byte, ok bool) {
	ok = true
	end := eachMember(b, jsonvalid.SkipSpace(b, 0), func(key []byte, at int) int {
		e := jsonvalid.ValueEnd(b, at)
		for _, c := range key {
			if c == '\\' || c >= 0x80 {
				ok = false
			}
		}
		if e >= 0 && len(key) == len(name) && strings.EqualFold(string(key), name) {
			v = b[at:e]
		}
		return e
	})
	if end < 0 || !ok {
		return nil, false
	}
	return v, true
}
