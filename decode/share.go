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
