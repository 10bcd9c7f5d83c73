package view

// Tab is a detail tab.
type Tab int

// The detail tabs, in display order.
const (
	TabWorkingSet   Tab = iota // the tools the model can call
	TabCatalog                 // the deferred tools it was told about
	TabSearches                // tool searches, what they loaded, what was called
	TabCache                   // prompt-cache figures across the thread
	TabFlags                   // what went wrong, why it matters, what to do
	TabRaw                     // request, response and SSE events
	TabConversation            // the messages the turn added, and its response
	NumTabs                    // the number of tabs
)

// String returns the tab's title.
func (t Tab) String() string {
	switch t {
	case TabWorkingSet:
		return "Working set"
	case TabCatalog:
		return "Catalog"
	case TabSearches:
		return "Searches"
	case TabCache:
		return "Cache"
	case TabFlags:
		return "Flags"
	case TabRaw:
		return "Raw"
	case TabConversation:
		return "Conversation"
	case TabCompare:
		return compareTitle(false)
	}
	return "?"
}

// Short returns the tab's title for a narrow screen.
func (t Tab) Short() string {
	switch t {
	case TabWorkingSet:
		return "Working"
	case TabSearches:
		return "Search"
	case TabConversation:
		return "Talk"
	case TabCompare:
		return compareTitle(true)
	}
	return t.String()
}
