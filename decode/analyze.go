package decode

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/internal/sharing"
)

// Texts Claude Code writes in the tool results it makes, which the
// readers of a session look for (the decoder, the session files' listing,
// the flags, the redaction's safe phrases).
const (
	// NoMatchText opens Claude Code's answer to a search that found
	// nothing.
	NoMatchText = "No matching deferred tools found"
	// NoSuchToolText is Claude Code's refusal of a call of a tool it does
	// not have.
	NoSuchToolText = "No such tool available"
	// InputValidationText names Claude Code's refusal of a call whose
	// input does not fit the tool's schema, or whose schema was not sent.
	InputValidationText = "InputValidationError"
)

// The texts Claude Code announces deferred tools with.
const (
	announcePrefix = "The following deferred tools are now available via"
	removePrefix   = "The following deferred tools are no longer available"
	availableOpen  = "<available-deferred-tools>"
	availableClose = "</available-deferred-tools>"
	toolLoadedText = "Tool loaded"
	// mcpSearchTool is Claude Code 2.0's search tool, for MCP tools only.
	mcpSearchTool  = "MCPSearch"
	catalogKeyword = "deferred tools"
	availableTag   = "available-deferred-tools"
)

// analyze computes the catalog, working set, searches, tool calls and the
// last user message summary from the decoded request and response.
func analyze(t *Turn) {
	h := t.cache.historyOf(t.Request.Messages)
	catalog(t, h)
	workingSet(t, h)
	searches(t, h)
	toolCalls(t)
	lastUser(t)
}

// textAnnouncement is one announcement found in a text.
type textAnnouncement struct {
	pos    int
	end    int // just past its last name line (or closing tag)
	form   string
	remove bool
	names  []string
}

// scanAnnouncements finds every deferred-tool announcement and removal in
// a text, in text order.
func scanAnnouncements(text string) []textAnnouncement {
	if !strings.Contains(text, catalogKeyword) && !strings.Contains(text, availableTag) {
		return nil
	}
	var out []textAnnouncement
	for _, p := range []struct {
		prefix string
		remove bool
	}{{announcePrefix, false}, {removePrefix, true}} {
		for from := 0; ; {
			i := strings.Index(text[from:], p.prefix)
			if i < 0 {
				break
			}
			i += from
			from = i + len(p.prefix)
			if i > 0 && text[i-1] != '\n' && text[i-1] != '>' {
				continue // quoted mid-line, not an announcement
			}
			names, n := namesAfterHeader(text[from:])
			out = append(out, textAnnouncement{pos: i, end: from + n, form: "reminder", remove: p.remove, names: names})
		}
	}
	for from := 0; ; {
		i := strings.Index(text[from:], availableOpen)
		if i < 0 {
			break
		}
		i += from
		from = i + len(availableOpen)
		// Names, one per line, up to the closing (or another opening) tag.
		body := text[from:]
		end := len(text)
		if j := strings.Index(body, availableTag+">"); j >= 0 {
			body = body[:j]
			end = from + j + len(availableTag) + 1
		}
		var names []string
		for _, line := range strings.Split(body, "\n") {
			if name := strings.TrimSpace(line); isToolName(name) {
				names = append(names, name)
			}
		}
		out = append(out, textAnnouncement{pos: i, end: end, form: "available-deferred-tools", names: names})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].pos < out[b].pos })
	return out
}

// maxHeaderLine bounds the search for the end of an announcement's header
// line, so that a text made of headers stays linear to scan.
const maxHeaderLine = 4096

// namesAfterHeader reads the names listed one per line after the rest of
// an announcement's header line, up to a blank line, a tag line, a line
// that is not a name, or the end. n is how many bytes of s the header's
// rest and the names take (up to the end of the last name's line).
func namesAfterHeader(s string) (names []string, n int) {
	head := s
	if len(head) > maxHeaderLine {
		head = head[:maxHeaderLine]
	}
	nl := strings.IndexByte(head, '\n')
	if nl < 0 {
		return nil, len(head)
	}
	n = nl
	for at := nl + 1; at < len(s); {
		line, next := s[at:], len(s)
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line, next = line[:j], at+j+1
		}
		name := strings.TrimSpace(line)
		if !isToolName(name) {
			break
		}
		names = append(names, name)
		n = at + len(line)
		at = next
	}
	return names, n
}

// isToolName reports whether a line can be a tool name: no blanks and no
// markup.
func isToolName(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t\r<>")
}

// catalog collects the catalog events in message order and applies them.
func catalog(t *Turn, h historyView) {
	r := &t.Request
	events := h.events
	// Made of the history's events alone, the catalog of the events a
	// turn before had is that turn's.
	alone := len(events) > 0 && !hasServerSearch(r.Tools)
	if alone {
		if evs, cat, ok := t.cache.catalogFor(events); ok {
			t.CatalogEvents, t.Catalog = evs, cat
			return
		}
	}
	// The deferred entries of tools are the catalog of a server-side
	// search, and of any client that announces nothing in the messages.
	// Claude Code sends only loaded deferred tools there, already in its
	// announcements.
	if hasServerSearch(r.Tools) || len(events) == 0 {
		var names []string
		for _, tool := range r.Tools {
			if tool.DeferLoading && !tool.Placeholder && tool.Name != "" {
				names = append(names, tool.Name)
			}
		}
		if len(names) > 0 {
			events = append([]CatalogEvent{{Message: -1, Block: -1, Form: "tools", Names: names}}, events...)
		}
	}
	set := map[string]bool{}
	for _, e := range events {
		for _, n := range e.Names {
			if e.Remove {
				delete(set, n)
			} else {
				set[n] = true
			}
		}
	}
	t.CatalogEvents = events
	t.Catalog = sortedKeys(set)
	if t.cache != nil {
		t.CatalogEvents = share(t.cache, &t.cache.catalogEvents, t.CatalogEvents, sameCatalogEvent)
		t.Catalog = share(t.cache, &t.cache.catalogs, t.Catalog, sharing.Equal[string])
		if alone {
			t.cache.keepCatalog(events, t.CatalogEvents, t.Catalog)
		}
	}
}

// isCached reports whether message i is a cached part.
func (t *Turn) isCached(i int) bool {
	return i >= 0 && i < len(t.cached) && t.cached[i]
}

func hasServerSearch(tools []Tool) bool {
	for _, tool := range tools {
		if tool.ServerSearch {
			return true
		}
	}
	return false
}

// isClientSearchModel reports whether the request follows Claude Code's
// client-side model, where deferred tools are sent in tools only once
// loaded.
func isClientSearchModel(tools []Tool) bool {
	if hasServerSearch(tools) {
		return false
	}
	for _, tool := range tools {
		if tool.Placeholder || tool.Name == ClientSearchTool {
			return true
		}
	}
	return false
}

// workingSet computes the working set from tools and the references in
// the history.
func workingSet(t *Turn, h historyView) {
	r := &t.Request
	loaded := map[string]string{}
	for _, e := range h.loads {
		if e.via == "" {
			delete(loaded, e.name)
		} else {
			loaded[e.name] = e.via
		}
	}
	if r.Transcript != nil {
		// The tools sent are not recorded: the working set known is the
		// deferred tools loaded, by a reference or before a compaction.
		names := make([]string, 0, len(loaded))
		for n := range loaded {
			names = append(names, n)
		}
		sort.Strings(names)
		// A tool the catalog no longer lists (its MCP server went) is no
		// longer sent, loaded or not.
		gone := func(n string) bool { return r.Transcript.CatalogRecorded && !containsSorted(t.Catalog, n) }
		for _, n := range names {
			if !gone(n) {
				t.WorkingSet = append(t.WorkingSet, WorkingTool{Name: n, Via: loaded[n], Deferred: true})
			}
		}
		for _, n := range r.Transcript.Restored {
			if loaded[n] == "" && !gone(n) {
				loaded[n] = ViaRestored
				t.WorkingSet = append(t.WorkingSet, WorkingTool{Name: n, Via: ViaRestored, Deferred: true})
			}
		}
		return
	}
	clientModel := isClientSearchModel(r.Tools)
	inTools := map[string]bool{}
	for _, tool := range r.Tools {
		if tool.Name == "" || inTools[tool.Name] {
			continue
		}
		inTools[tool.Name] = true
		switch {
		case tool.Placeholder:
		case !tool.DeferLoading:
			t.WorkingSet = append(t.WorkingSet, WorkingTool{Name: tool.Name, Via: ViaAlways})
		case loaded[tool.Name] != "":
			t.WorkingSet = append(t.WorkingSet, WorkingTool{Name: tool.Name, Via: loaded[tool.Name], Deferred: true})
		default:
			t.Unreferenced = append(t.Unreferenced, tool.Name)
			if clientModel {
				t.WorkingSet = append(t.WorkingSet, WorkingTool{Name: tool.Name, Via: ViaRestored, Deferred: true})
			}
		}
	}
	var missing []string
	for n := range loaded {
		if !inTools[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	t.MissingReferences = missing
}

// resultRef is where a tool_use's result was found.
type resultRef struct {
	loc   Location
	block *Block
}

// searches finds the client and server tool searches of the history and
// the response, and links each to its result.
func searches(t *Turn, h historyView) {
	r := &t.Request
	last := lastUserIndex(r.Messages)
	// Every result block by tool_use_id; the first one wins: the
	// history's, then the response's.
	history := h.results
	var inResponse map[string]resultRef
	for j := range t.Response.Content {
		b := &t.Response.Content[j]
		if b.Type == "tool_search_tool_result" && b.ToolUseID != "" {
			if inResponse == nil {
				inResponse = map[string]resultRef{}
			}
			if _, dup := inResponse[b.ToolUseID]; !dup {
				inResponse[b.ToolUseID] = resultRef{Location{Response: true, Message: -1, Block: j}, b}
			}
		}
	}
	results := func(id string) (resultRef, bool) {
		if res, ok := history(id); ok {
			return res, true
		}
		res, ok := inResponse[id]
		return res, ok
	}
	// The client search tools the request offers besides ToolSearch
	// (another client's, such as pydantic-ai's search_tools).
	clientTools := otherClientSearchTools(r.Tools)
	// A call of ToolSearch where the request offers tools but not it (tool
	// search off) is a call of an absent tool, not a search: the client
	// refuses it ("No such tool available") and nothing is looked for.
	absent := len(r.Tools) > 0 && !offers(r.Tools, ClientSearchTool)
	serverSearch := map[string]string{} // tool name -> mode
	for _, tool := range r.Tools {
		switch {
		case strings.HasPrefix(tool.Type, "tool_search_tool_regex"):
			serverSearch[tool.Name] = ModeRegex
		case strings.HasPrefix(tool.Type, "tool_search_tool_bm25"):
			serverSearch[tool.Name] = ModeBM25
		}
	}
	var list []Search
	consider := func(b *Block, call Location) {
		var s Search
		switch b.Type {
		case "tool_use":
			res, ok := results(b.ID)
			referenced := ok && res.block.Type == "tool_result" && len(res.block.References) > 0
			if b.Name != ClientSearchTool && b.Name != mcpSearchTool && !clientTools[b.Name] && !referenced {
				return
			}
			if b.Name == ClientSearchTool && absent && !referenced {
				return
			}
			if ok && len(res.block.References) == 0 && res.block.ResultContains(NoSuchToolText) {
				return // refused: the client has no such tool (tool search off)
			}
			s = t.cache.clientSearch(b, !call.Response && t.isCached(call.Message))
		case "server_tool_use":
			mode := serverSearch[b.Name]
			switch {
			case mode != "":
			case strings.HasPrefix(b.Name, "tool_search_tool_regex"):
				mode = ModeRegex
			case strings.HasPrefix(b.Name, "tool_search_tool_bm25"):
				mode = ModeBM25
			default:
				return
			}
			s = serverSearchOf(b, mode)
		default:
			return
		}
		s.Call = call
		if res, ok := results(b.ID); ok {
			s.HasResult = true
			s.Result = res.loc
			s.IsError = res.block.IsError
			s.ErrorCode = res.block.ErrorCode
			s.Results = res.block.References
			switch {
			case s.Server:
				s.New = res.loc.Response
			case !res.loc.Response:
				s.Text = t.cache.resultText(res.block, t.isCached(res.loc.Message))
				s.NoMatch = noMatchText(s.Text)
				s.ToolLoaded = hasToolLoadedText(r.Messages[res.loc.Message].Blocks)
				s.New = res.loc.Message == last
				if len(s.Results) == 0 && !s.NoMatch {
					// A search tool answering in text (not tool_reference
					// blocks) may name what it found in JSON.
					if names, ok := namedInText(s.Text); ok {
						s.Results, s.NoMatch = names, len(names) == 0
					}
				}
			}
		}
		list = append(list, s)
		if s.New {
			t.NewSearches = append(t.NewSearches, s)
		}
	}
	// The history's calls that may be searches (any other is none).
	for _, at := range h.calls {
		consider(&r.Messages[at.Message].Blocks[at.Block], at)
	}
	for j := range t.Response.Content {
		consider(&t.Response.Content[j], Location{Response: true, Message: -1, Block: j})
	}
	t.Searches = t.cache.searchPointers(list)
}

// offers reports whether tools holds one named name.
func offers(tools []Tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// noMatchTexts start the text results of client searches that found
// nothing: Claude Code's ToolSearch, and pydantic-ai's search_tools (now
// and in earlier releases).
var noMatchTexts = []string{NoMatchText, "No matching tools found", "No tools found"}

func noMatchText(text string) bool {
	text = strings.TrimSpace(text)
	for _, p := range noMatchTexts {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// otherClientSearchTools names the tools of a request that are another
// client's tool search, known by name and input: pydantic-ai's
// search_tools, whose input is a list of queries (or a query string in
// its first releases). A tool merely named like a search (a web search, a
// code search) is not one.
func otherClientSearchTools(tools []Tool) map[string]bool {
	var out map[string]bool
	for _, tool := range tools {
		if tool.Name != "search_tools" || tool.Type != "" || len(tool.Raw) == 0 {
			continue
		}
		var def struct {
			InputSchema struct {
				Properties map[string]struct {
					Type string `json:"type"`
				} `json:"properties"`
			} `json:"input_schema"`
		}
		if json.Unmarshal(tool.Raw, &def) != nil {
			continue
		}
		p := def.InputSchema.Properties
		if p["queries"].Type == "array" || p["query"].Type == "string" || p["keywords"].Type == "string" {
			if out == nil {
				out = map[string]bool{}
			}
			out[tool.Name] = true
		}
	}
	return out
}

// namedInText reads the tools a search tool's text result names, when it
// is a JSON object listing them: {"discovered_tools": [{"name": ...}]}
// (pydantic-ai) or {"tools": [{"name": ...}]}. ok is false for any other
// text; names is empty when the list is.
func namedInText(text string) (names []string, ok bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "{") {
		return nil, false
	}
	var res struct {
		Discovered *[]struct {
			Name string `json:"name"`
		} `json:"discovered_tools"`
		Tools *[]struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if json.Unmarshal([]byte(text), &res) != nil {
		return nil, false
	}
	list := res.Discovered
	if list == nil {
		list = res.Tools
	}
	if list == nil {
		return nil, false
	}
	names = []string{}
	for _, t := range *list {
		if t.Name != "" {
			names = append(names, t.Name)
		}
	}
	return names, true
}

// clientSearch reads a client search call's input.
func clientSearch(b *Block) Search {
	s := Search{ToolUseID: b.ID, Tool: b.Name, Input: b.Input}
	var in struct {
		Query      json.RawMessage `json:"query"`
		Queries    []string        `json:"queries"`
		Keywords   json.RawMessage `json:"keywords"`
		MaxResults json.RawMessage `json:"max_results"`
	}
	if len(b.Input) > 0 && json.Unmarshal(b.Input, &in) == nil {
		if json.Unmarshal(in.Query, &s.Query) != nil {
			if len(in.Queries) > 0 {
				s.Query = strings.Join(in.Queries, " ")
			} else {
				json.Unmarshal(in.Keywords, &s.Query)
			}
		}
		s.MaxResults = jsonInt(in.MaxResults)
	}
	s.Mode, s.Selected = QueryMode(s.Query)
	return s
}

// serverSearchOf reads a server search call's input.
func serverSearchOf(b *Block, mode string) Search {
	s := Search{Server: true, ToolUseID: b.ID, Tool: b.Name, Input: b.Input, Mode: mode}
	var in struct {
		Pattern json.RawMessage `json:"pattern"`
		Query   json.RawMessage `json:"query"`
		Limit   json.RawMessage `json:"limit"`
	}
	if len(b.Input) > 0 && json.Unmarshal(b.Input, &in) == nil {
		if mode == ModeRegex {
			_ = json.Unmarshal(in.Pattern, &s.Query)
		} else {
			_ = json.Unmarshal(in.Query, &s.Query)
		}
		s.MaxResults = jsonInt(in.Limit)
	}
	return s
}

// QueryMode classifies a ToolSearch query: "select:A,B" (returning the
// names), a "+required" term, a lone mcp__server prefix, or keywords.
func QueryMode(q string) (mode string, selected []string) {
	q = strings.TrimSpace(q)
	if rest, ok := strings.CutPrefix(q, "select:"); ok {
		for _, n := range strings.Split(rest, ",") {
			if n = strings.TrimSpace(n); n != "" {
				selected = append(selected, n)
			}
		}
		return ModeSelect, selected
	}
	terms := strings.Fields(q)
	for _, term := range terms {
		if strings.HasPrefix(term, "+") {
			return ModeRequired, nil
		}
	}
	if len(terms) == 1 && IsMCP(terms[0]) {
		return ModePrefix, nil
	}
	return ModeKeyword, nil
}

func jsonInt(raw json.RawMessage) int64 {
	var n int64
	if isNull(raw) || json.Unmarshal(raw, &n) != nil {
		var f float64
		if json.Unmarshal(raw, &f) == nil && f == float64(int64(f)) {
			return int64(f)
		}
		return 0
	}
	return n
}

func hasToolLoadedText(blocks []Block) bool {
	for _, b := range blocks {
		if b.Type == "text" && strings.HasPrefix(strings.TrimSpace(b.Text), toolLoadedText) {
			return true
		}
	}
	return false
}

// toolCalls lists the response's tool calls against the request's working
// set, and the tools loaded by server searches earlier in the response.
func toolCalls(t *Turn) {
	via := map[string]string{}
	for _, w := range t.WorkingSet {
		via[w.Name] = w.Via
	}
	inResponse := map[string]bool{}
	for j, b := range t.Response.Content {
		switch b.Type {
		case "tool_search_tool_result":
			for _, n := range b.References {
				inResponse[n] = true
			}
		case "tool_use", "server_tool_use", "mcp_tool_use":
			c := ToolCall{ID: b.ID, Name: b.Name, Input: b.Input, Block: j, Server: b.Type != "tool_use"}
			if v, ok := via[b.Name]; ok {
				c.Loaded, c.Via = true, v
			} else if inResponse[b.Name] {
				c.Loaded, c.Via = true, ViaResponseSearch
			}
			c.InCatalog = containsSorted(t.Catalog, b.Name)
			if !c.Loaded && !c.InCatalog && t.Request.Transcript != nil {
				c.Loaded, c.Via = true, ViaUnrecorded
			}
			t.ToolCalls = append(t.ToolCalls, c)
		}
	}
}

func lastUserIndex(ms []*Message) int {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role == "user" {
			return i
		}
	}
	return -1
}

// lastUser summarises the last user message.
func lastUser(t *Turn) {
	lu := LastUser{Message: lastUserIndex(t.Request.Messages)}
	if lu.Message >= 0 {
		m := t.Request.Messages[lu.Message]
		for j, b := range m.Blocks {
			if b.Type == "tool_result" {
				lu.ToolResults = append(lu.ToolResults, ToolResult{ToolUseID: b.ToolUseID, IsError: b.IsError, raw: b.Raw, References: b.References, Block: j})
				if len(b.References) > 0 {
					lu.HasToolReference = true
				}
			}
		}
		lu.ToolLoaded = hasToolLoadedText(m.Blocks)
	}
	t.LastUser = lu
}

func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func containsSorted(list []string, s string) bool {
	i := sort.SearchStrings(list, s)
	return i < len(list) && list[i] == s
}
