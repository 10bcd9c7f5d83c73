package decode

import (
	"slices"
	"sort"
)

// history is what the messages of one array hold that a turn's analysis
// reads, as far as the array was read: the first result of each tool_use
// id, the calls a search may be among, the catalog's announcements and
// the working set's loads. Successive turns of a conversation share one
// array of messages (decode.Parts shares them), and two lists of one
// array agree as far as the shorter goes: a turn takes what its list
// holds from the array's history, and only its new messages are read.
type history struct {
	n int
	// byID is the first result block of each tool_use id; callsOf the
	// calls of each id.
	byID    map[string]resultRef
	callsOf map[string][]Location
	// calls are the blocks of assistant messages searches considers, in
	// order: search tools' calls, server tool calls, and calls whose
	// first result references tools (any other is no search).
	calls     []Location
	candidate map[Location]bool
	events    []CatalogEvent // catalog announcements and removals, in order
	loads     []loadEvent    // working-set loads and removals, in order
}

// loadEvent is a tool the history loads (via) or takes out (via "").
type loadEvent struct {
	message int
	name    string
	via     string
}

// historyView is what a list of messages holds, as its history has it.
type historyView struct {
	results func(id string) (resultRef, bool)
	calls   []Location
	events  []CatalogEvent
	loads   []loadEvent
}

// searchToolNames name the calls that may be searches by their name.
var searchToolNames = [...]string{ClientSearchTool, mcpSearchTool, "search_tools"}

func newHistory() *history {
	return &history{byID: map[string]resultRef{}, callsOf: map[string][]Location{}, candidate: map[Location]bool{}}
}

// historyOf returns what ms holds. With Parts, through the history of the
// array ms begins (read on as far as ms goes); without, read afresh.
func (c *Parts) historyOf(ms []*Message) historyView {
	if c == nil || len(ms) == 0 {
		h := newHistory()
		h.read(ms)
		return h.view(len(ms), func(f func()) { f() })
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.histories.Get(&ms[0], func() *history { return newHistory() })
	h.read(ms)
	return h.view(len(ms), func(f func()) {
		c.mu.Lock()
		defer c.mu.Unlock()
		f()
	})
}

// view is what the first n messages hold; locked runs what reads the
// history's maps.
func (h *history) view(n int, locked func(func())) historyView {
	before := func(msg int) bool { return msg >= n }
	ce := sort.Search(len(h.calls), func(i int) bool { return before(h.calls[i].Message) })
	ee := sort.Search(len(h.events), func(i int) bool { return before(h.events[i].Message) })
	le := sort.Search(len(h.loads), func(i int) bool { return before(h.loads[i].message) })
	return historyView{
		results: func(id string) (res resultRef, ok bool) {
			locked(func() { res, ok = h.byID[id] })
			// A first result past the list is the first of its id
			// anywhere in the list only if the list has none.
			return res, ok && res.loc.Message < n
		},
		calls:  h.calls[:ce:ce],
		events: h.events[:ee:ee],
		loads:  h.loads[:le:le],
	}
}

// read reads the messages of ms past those read before.
func (h *history) read(ms []*Message) {
	for i := h.n; i < len(ms); i++ {
		m := ms[i]
		if m.Role != "assistant" {
			if m.StringContent {
				for _, a := range scanAnnouncements(m.Text) {
					h.events = append(h.events, CatalogEvent{Message: i, Block: -1, Form: a.form, Remove: a.remove, Names: a.names, Len: a.end - a.pos})
				}
			}
			for j := range m.Blocks {
				b := &m.Blocks[j]
				switch b.Type {
				case "text":
					for _, a := range scanAnnouncements(b.Text) {
						h.events = append(h.events, CatalogEvent{Message: i, Block: j, Form: a.form, Remove: a.remove, Names: a.names, Len: a.end - a.pos})
					}
				case "tool_addition", "tool_removal":
					if b.ToolName != "" {
						h.events = append(h.events, CatalogEvent{Message: i, Block: j, Form: b.Type, Remove: b.Type == "tool_removal", Names: []string{b.ToolName}, Len: len(b.Raw)})
					}
				}
			}
		}
		for j := range m.Blocks {
			b := &m.Blocks[j]
			at := Location{Message: i, Block: j}
			switch b.Type {
			case "tool_result", "tool_search_tool_result":
				for _, n := range b.References {
					h.loads = append(h.loads, loadEvent{i, n, ViaSearch})
				}
				if b.ToolUseID == "" {
					break
				}
				if _, dup := h.byID[b.ToolUseID]; !dup {
					h.byID[b.ToolUseID] = resultRef{at, b}
					if len(b.References) > 0 {
						for _, call := range h.callsOf[b.ToolUseID] {
							h.consider(call)
						}
					}
				}
			case "tool_addition":
				if b.ToolName != "" {
					h.loads = append(h.loads, loadEvent{i, b.ToolName, ViaAddition})
				}
			case "tool_removal":
				h.loads = append(h.loads, loadEvent{i, b.ToolName, ""})
			}
			if m.Role != "assistant" {
				continue
			}
			switch b.Type {
			case "server_tool_use":
				h.consider(at)
			case "tool_use":
				h.callsOf[b.ID] = append(h.callsOf[b.ID], at)
				if res, ok := h.byID[b.ID]; slices.Contains(searchToolNames[:], b.Name) || ok && len(res.block.References) > 0 {
					h.consider(at)
				}
			}
		}
	}
	h.n = max(h.n, len(ms))
}

// consider adds a call searches considers, in order.
func (h *history) consider(at Location) {
	if h.candidate[at] {
		return
	}
	h.candidate[at] = true
	k := sort.Search(len(h.calls), func(i int) bool {
		c := h.calls[i]
		return c.Message > at.Message || c.Message == at.Message && c.Block > at.Block
	})
	h.calls = slices.Insert(h.calls, k, at)
}

// catalogMemo is the catalog a turn made of its history's events alone
// (catalog): a turn whose events are the same (the same first event of
// one history, as many) has the same.
type catalogMemo struct {
	first  *CatalogEvent
	n      int
	events []CatalogEvent
	names  []string
}

// catalogFor returns the events and catalog kept for events, if any.
func (c *Parts) catalogFor(events []CatalogEvent) ([]CatalogEvent, []string, bool) {
	if c == nil {
		return nil, nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.catalog
	if m.first == nil || m.first != &events[0] || m.n != len(events) {
		return nil, nil, false
	}
	return m.events, m.names, true
}

// keepCatalog keeps what a turn made of events: its events and catalog.
func (c *Parts) keepCatalog(events, shared []CatalogEvent, names []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.catalog = catalogMemo{first: &events[0], n: len(events), events: shared, names: names}
}
