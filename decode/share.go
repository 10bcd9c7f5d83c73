package decode

import (
	"bytes"
	"slices"

	"github.com/tsinspect/tsinspect/internal/sharing"
)

// share returns list, or the same entries shared with the earlier lists
// of ring (see package sharing).
func share[T any](c *Parts, ring *sharing.Ring[T], list []T, same func(a, b *T) bool) []T {
	if c == nil {
		return list
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return ring.Share(list, same)
}

// sameTool reports whether a and b are one decoded tool definition.
func sameTool(a, b *Tool) bool {
	return a.Name == b.Name && a.Type == b.Type && a.DeferLoading == b.DeferLoading &&
		a.ServerSearch == b.ServerSearch && a.Placeholder == b.Placeholder &&
		a.CacheControl == b.CacheControl && bytes.Equal(a.Raw, b.Raw)
}

// sameSearch reports whether a and b are equal searches.
func sameSearch(a, b *Search) bool {
	return a.Server == b.Server && a.ToolUseID == b.ToolUseID && a.Tool == b.Tool &&
		a.Query == b.Query && a.MaxResults == b.MaxResults && a.Mode == b.Mode &&
		slices.Equal(a.Selected, b.Selected) && bytes.Equal(a.Input, b.Input) &&
		a.Call == b.Call && a.HasResult == b.HasResult && a.Result == b.Result &&
		a.New == b.New && slices.Equal(a.Results, b.Results) && a.NoMatch == b.NoMatch &&
		a.ToolLoaded == b.ToolLoaded && a.IsError == b.IsError &&
		a.ErrorCode == b.ErrorCode && a.Text == b.Text
}

// sameCatalogEvent reports whether a and b are equal catalog events.
func sameCatalogEvent(a, b *CatalogEvent) bool {
	return a.Message == b.Message && a.Block == b.Block && a.Form == b.Form &&
		a.Remove == b.Remove && a.Len == b.Len && slices.Equal(a.Names, b.Names)
}

// announcements is scanAnnouncements(b.Text), read once per cached block.
func (c *Parts) announcements(b *Block, cached bool) []textAnnouncement {
	if c == nil || !cached {
		return scanAnnouncements(b.Text)
	}
	c.mu.Lock()
	a, ok := c.announced[b]
	c.mu.Unlock()
	if ok {
		return a
	}
	a = scanAnnouncements(b.Text)
	c.mu.Lock()
	c.announced[b] = a
	c.mu.Unlock()
	return a
}

// searchPointers returns the searches of list as pointers. With Parts,
// a search equal to the one at the same place of a recent Turn's list is
// that Turn's: the searches of a conversation's history are listed again
// by each of its turns.
func (c *Parts) searchPointers(list []Search) []*Search {
	if len(list) == 0 {
		return nil
	}
	out := make([]*Search, len(list))
	if c == nil {
		for i := range list {
			out[i] = &list[i]
		}
		return out
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var prev []*Search
	for _, p := range c.searchLists {
		if sameSearch(p[0], &list[0]) {
			prev = p
			break
		}
	}
	fresh := 0
	for i := range list {
		if i < len(prev) && sameSearch(prev[i], &list[i]) {
			out[i] = prev[i]
		} else {
			fresh++
		}
	}
	if fresh > 0 {
		own := make([]Search, 0, fresh)
		for i := range list {
			if out[i] == nil {
				own = append(own, list[i])
				out[i] = &own[len(own)-1]
			}
		}
	}
	c.searchLists = append([][]*Search{out}, c.searchLists...)
	if len(c.searchLists) > sharing.Size {
		c.searchLists = c.searchLists[:sharing.Size]
	}
	return out
}

// resultIndex is where the result blocks of the messages of one shared
// array are, by tool_use_id (the first of each), as far as the array was
// read.
type resultIndex struct {
	first **Message
	n     int
	byID  map[string]resultRef
}

// resultIndexes bounds the arrays whose results Parts keeps.
const resultIndexes = 8

// historyResults returns where the first result block of each tool_use id
// is in ms. With Parts, a list of messages that begins an array an
// earlier turn's began (decode shares them) reads only the messages that
// turn's did not: two lists of one array agree as far as the shorter
// goes, and a result past the end of ms is the first of its id anywhere
// in ms only if there is none in it.
func (c *Parts) historyResults(ms []*Message) func(id string) (resultRef, bool) {
	if c == nil || len(ms) == 0 {
		idx := &resultIndex{byID: map[string]resultRef{}}
		idx.read(ms)
		return func(id string) (resultRef, bool) {
			res, ok := idx.byID[id]
			return res, ok
		}
	}
	c.mu.Lock()
	var idx *resultIndex
	for i, x := range c.results {
		if x.first == &ms[0] {
			idx = x
			copy(c.results[1:i+1], c.results[:i])
			c.results[0] = x
			break
		}
	}
	if idx == nil {
		idx = &resultIndex{first: &ms[0], byID: map[string]resultRef{}}
		c.results = append(c.results, nil)
		copy(c.results[1:], c.results)
		c.results[0] = idx
		if len(c.results) > resultIndexes {
			c.results[resultIndexes] = nil
			c.results = c.results[:resultIndexes]
		}
	}
	idx.read(ms)
	c.mu.Unlock()
	n := len(ms)
	return func(id string) (resultRef, bool) {
		c.mu.Lock()
		res, ok := idx.byID[id]
		c.mu.Unlock()
		return res, ok && res.loc.Message < n
	}
}

// read indexes the messages of ms past those read before.
func (x *resultIndex) read(ms []*Message) {
	for i := x.n; i < len(ms); i++ {
		for j := range ms[i].Blocks {
			b := &ms[i].Blocks[j]
			if (b.Type == "tool_result" || b.Type == "tool_search_tool_result") && b.ToolUseID != "" {
				if _, dup := x.byID[b.ToolUseID]; !dup {
					x.byID[b.ToolUseID] = resultRef{Location{Message: i, Block: j}, b}
				}
			}
		}
	}
	x.n = max(x.n, len(ms))
}
