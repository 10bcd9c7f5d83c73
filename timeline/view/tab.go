package view

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
)

// Tab is a detail tab: its place in the tab table (Tabs), 0 first.
type Tab int

// The detail tabs, in the order of the tab table (TestTabTable holds the
// two to the same order); TabCompare follows them.
const (
	TabWorkingSet   Tab = iota // the tools the model can call
	TabCatalog                 // the deferred tools it was told about
	TabSearches                // tool searches, what they loaded, what was called
	TabCache                   // prompt-cache figures across the thread
	TabFlags                   // what went wrong, why it matters, what to do
	TabRaw                     // request, response and SSE events
	TabConversation            // the messages the turn added, and its response
	NumTabs                    // the number of tabs, the Compare tab left out
)

// TabForm is how a front end draws a tab.
type TabForm int

const (
	// FormLines is the view's styled text: the row's Lines.
	FormLines TabForm = iota
	// FormMessages is the turn's messages and its response
	// (timeline.Session.Conversation): the row's Lines as text, or each
	// message and part folding where the front end can fold them.
	FormMessages
	// FormTree is the request and response as a tree whose nodes open
	// and close (Raw): the row has no Lines.
	FormTree
)

// TabInput is what a tab is drawn from: the turn, its session, and the
// front end's settings.
type TabInput struct {
	Session *timeline.Session
	Turn    *timeline.Turn
	// Query filters the tab's entries ("" for none).
	Query string
	// Width is the width the tab is drawn for, in columns; Height the
	// height of the Cache tab's chart, in lines.
	Width, Height int
	Prices        *pricing.Table
	// Deferral keeps the session's tool-definition figures for the
	// Catalog tab (nil: worked out for this call alone).
	Deferral *Deferral
	// Explain says why a flag kind matters (timeline.Explain).
	Explain Explainer
	// WholeHistory shows every message of the request in the
	// Conversation tab, not only what the turn added.
	WholeHistory bool
	// Comparison is the session set beside this one (the Compare tab).
	Comparison *Comparison
	// Withheld, when set, is said in place of the text of the prompt
	// that changed (the Cache tab of a redacted view).
	Withheld string
	// Charted is set when the front end draws the thread's chart itself
	// (the web view's SVG): the Cache tab leaves its text chart out.
	Charted bool
}

// TabRow is one row of the tab table: what the terminal timeline and the
// web view take a tab's name, key, help and view from.
type TabRow struct {
	Tab Tab
	// Name names the tab in the web view's addresses.
	Name string
	// Key is the key that opens it, in both front ends.
	Key rune
	// Title is its title, Short its title on a narrow screen.
	Title, Short string
	// Shows says in one line of Markdown what it shows (the tab table
	// of docs/timeline.md).
	Shows string
	// Compared: the tab exists only when the session is set beside
	// another (open A --compare B).
	Compared bool
	// Form is how it is drawn; Lines draws it (nil for FormTree).
	Form  TabForm
	Lines func(in TabInput) []Line
	// Tall: the view fits its height (a front end draws it again when
	// the height changes).
	Tall bool
}

// tabTable is the table of the detail tabs, in their order: the terminal
// timeline's tab bar and the web view's list the tabs in this order, open
// them with these keys and draw them with these views. A new tab is a
// row here and its constant above. Nothing writes the table.
var tabTable = [...]TabRow{
	{Tab: TabWorkingSet, Name: "working", Key: '1', Title: "Working set", Short: "Working",
		Shows: "the tools the model could call: always loaded, loaded by search (with the query), restored after compaction; added and removed since the thread's previous turn",
		Lines: func(in TabInput) []Line { return WorkingSet(in.Turn, in.Query) }},
	{Tab: TabCatalog, Name: "catalog", Key: '2', Title: "Catalog", Short: "Catalog",
		Shows: "every deferred tool announced to the model, loaded ones marked; searchable; below, what deferral saved on this request and in its thread up to it, in tokens and dollars (as in the report's tool-definition summary)",
		Lines: func(in TabInput) []Line {
			d := in.Deferral
			if d == nil {
				d = &Deferral{}
			}
			return append(Catalog(in.Turn, in.Query, in.Width), d.Lines(in.Session, in.Turn, in.Prices)...)
		}},
	{Tab: TabSearches, Name: "searches", Key: '3', Title: "Searches", Short: "Search",
		Shows: "each query → the tools it loaded → where the model then called them; numbered, as in `tsinspect searches`, by the turn that carries its result",
		Lines: func(in TabInput) []Line { return Searches(in.Session, in.Turn, in.Query) }},
	{Tab: TabCache, Name: "cache", Key: '4', Title: "Cache", Short: "Cache", Tall: true,
		Shows: "read / created / input tokens across the thread, what filled the selected turn's prompt (system prompt, tool definitions, messages, tool results by tool, thinking: the billed prompt shared by their bytes, never more), the selected break's cause with the flag's whole text (the tab and the flag say the same), and a diff of the two requests where the prefix first differs (for a turn made from a transcript, only the model and messages can be compared); the time since the previous turn started, as the `cache_break` detail gives it",
		Lines: func(in TabInput) []Line {
			return cache(in.Session, in.Turn, in.Width, in.Height, in.Withheld, in.Charted)
		}},
	{Tab: TabFlags, Name: "flags", Key: '5', Title: "Flags", Short: "Flags",
		Shows: "what happened, why it matters, what to do",
		Lines: func(in TabInput) []Line { return Flags(in.Session, in.Turn, in.Query, in.Explain, in.Prices) }},
	{Tab: TabRaw, Name: "raw", Key: '6', Title: "Raw", Short: "Raw", Form: FormTree,
		Shows: "request and response JSON, foldable; SSE events with arrival times"},
	{Tab: TabConversation, Name: "conversation", Key: '7', Title: "Conversation", Short: "Talk", Form: FormMessages,
		Shows: "what the turn's request added to its thread (the prompt, tool results with the tool they answer, reminders) and its response (text, thinking, each tool call with its input), readable; `a` shows every message of the request instead; long parts are cut at 40 lines (Raw has them whole)",
		Lines: func(in TabInput) []Line { return Conversation(in.Session, in.Turn, in.Query, in.WholeHistory) }},
	{Tab: TabCompare, Name: "compare", Key: '8', Title: "Compare", Short: "Diff", Compared: true,
		Shows: "with `open A --compare B`: the turn's counterpart in B and what differs, then the differences in the requests' shape",
		Lines: func(in TabInput) []Line {
			if in.Comparison == nil {
				return nil
			}
			return in.Comparison.Lines(in.Turn)
		}},
}

// Tabs is the tab table, in order (a copy).
func Tabs() []TabRow { return slices.Clone(tabTable[:]) }

// TabsShown is the tabs a session shows, in order: the Compare tab only
// when compared is set.
func TabsShown(compared bool) []TabRow {
	var out []TabRow
	for _, r := range tabTable {
		if !r.Compared || compared {
			out = append(out, r)
		}
	}
	return out
}

// Row is the tab's row of the tab table.
func (t Tab) Row() TabRow {
	if t < 0 || int(t) >= len(tabTable) {
		return TabRow{Tab: t, Title: "?", Short: "?"}
	}
	return tabTable[t]
}

// TabOfKey is the tab key r opens; ok is false when it opens none.
func TabOfKey(r rune) (t Tab, ok bool) {
	for _, row := range tabTable {
		if row.Key == r {
			return row.Tab, true
		}
	}
	return 0, false
}

// TabNamed is the tab of a name of the web view's addresses; ok is false
// when no tab has it.
func TabNamed(name string) (t Tab, ok bool) {
	for _, row := range tabTable {
		if row.Name == name {
			return row.Tab, true
		}
	}
	return 0, false
}

// String returns the tab's title.
func (t Tab) String() string { return t.Row().Title }

// Short returns the tab's title for a narrow screen.
func (t Tab) Short() string { return t.Row().Short }

// Lines draws the tab from in; nil for a tab drawn as a tree (Raw).
func (t Tab) Lines(in TabInput) []Line {
	if r := t.Row(); r.Lines != nil && in.Turn != nil {
		return r.Lines(in)
	}
	return nil
}

// TabKeys is the keys of the tabs rows lists, as a range: "1-7".
func TabKeys(rows []TabRow) string {
	if len(rows) == 0 {
		return ""
	}
	return fmt.Sprintf("%c-%c", rows[0].Key, rows[len(rows)-1].Key)
}

// TabsHelp says which key opens which tab, for the key help: "1 Working
// set, 2 Catalog, …, 6 Raw or 7 Conversation; with open A --compare B, 8
// Compare"; code quotes a command as the help's format does (Markdown's
// backquotes, or none).
func TabsHelp(code func(string) string) string {
	var plain, compared []string
	for _, r := range tabTable {
		s := fmt.Sprintf("%c %s", r.Key, r.Title)
		if r.Compared {
			compared = append(compared, s)
		} else {
			plain = append(plain, s)
		}
	}
	out := orList(plain)
	if len(compared) > 0 {
		out += "; with " + code("open A --compare B") + ", " + orList(compared)
	}
	return out
}

// orList joins items as "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
