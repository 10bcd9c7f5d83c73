package ui

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"

	"github.com/tsinspect/tsinspect/timeline/view"
)

// keyRow is one row of the key table: keys, where they work, how the
// footer and the help show them, and what they do. The table drives the
// dispatch of keys (app.key and the Raw pane), the footer's key line, the
// help overlay and the key list in docs/timeline.md (TestREADMEKeys).
type keyRow struct {
	// presses are keys and also, parsed (keyTable fills them).
	presses []press
	// keys are the keys as the help writes them, separated by spaces: a
	// character, a range such as 1-7, or a name (Tab, Shift-Tab, Esc,
	// Enter, space, PgUp, PgDn, ← → ↑ ↓). They are the keys the row binds.
	keys string
	// also binds more keys that the help does not show (> and < beside
	// + and -); docs/timeline.md names them.
	also string
	// where is where the keys work.
	where scope
	// help is the row's text in the help overlay; a "\n" goes on to the
	// next line, under the text. A row with no help and no cont is left
	// out of the overlay.
	help string
	// cont puts the row on the help line of the row above: its keys after
	// two spaces, its help after sep.
	cont bool
	sep  string
	// doc is the row's text in docs/timeline.md (Markdown), when it says more
	// than help; "" means help.
	doc string
	// foot places the row in the footer's key line.
	foot footSlot
	// do is what the keys do; ev is the key pressed, one of the row's.
	// Rows of keys that tview's widgets handle themselves have none.
	do func(a *app, ev *tcell.EventKey)
}

// footSlot is a row's place in the footer's key line: its label, and its
// position when browsing and when replaying (1 first; 0 not shown).
type footSlot struct {
	label          string
	browse, replay int
}

// scope is where a row's keys work.
type scope int

const (
	// everywhere: whichever pane has the focus.
	everywhere scope = iota
	// inWidget: the turn list or the tab with the focus handles the keys
	// itself (tview's list and text); the row only documents them.
	inWidget
	// inRawPane: the Raw tab, when it has the focus; the Raw pane
	// dispatches these rows (rawPane.InputHandler).
	inRawPane
	// outsideRawPane: the turn list, or a tab other than Raw.
	outsideRawPane
	// onConversation: the Conversation tab is open.
	onConversation
	// inReplay: a replay is running.
	inReplay
)

// String names the scope in docs/timeline.md.
func (s scope) String() string {
	switch s {
	case everywhere:
		return "everywhere"
	case inWidget:
		return "turn list, tab"
	case inRawPane:
		return "Raw pane"
	case outsideRawPane:
		return "turn list, other tabs"
	case onConversation:
		return "Conversation tab"
	case inReplay:
		return "replay"
	}
	return fmt.Sprintf("scope(%d)", int(s))
}

// holds reports whether the scope's keys work now. inRawPane holds
// because only the Raw pane, with the focus, dispatches its rows.
func (s scope) holds(a *app) bool {
	switch s {
	case everywhere, inRawPane:
		return true
	case outsideRawPane:
		return a.m.Tab() != view.TabRaw || !a.detailFocused()
	case onConversation:
		return a.m.Tab() == view.TabConversation
	case inReplay:
		return a.m.Replaying()
	}
	return false
}

// keyTable is the table of the keys, in the order the help lists them.
func keyTable() []keyRow {
	rows := []keyRow{
		{keys: "↑ ↓  j k", where: inWidget, help: "move in the turn list, or scroll the tab"},
		{keys: "PgUp PgDn  g G", where: inWidget, help: "page, first, last"},
		{keys: "Tab", also: "Shift-Tab", where: everywhere, help: "switch between the turn list and the tab",
			foot: footSlot{"pane", 7, 8}, do: (*app).switchPane},
		{keys: "Enter", where: inWidget, help: "open the tab (list); open/close a node (Raw)"},
		{keys: "Esc", where: everywhere,
			doc: "clear the filter of the turn list or of the tab with the focus; with none, move the focus back to the turn list, or clear the status line",
			do:  (*app).escape},
		{keys: view.TabKeys(view.Tabs()), where: everywhere, help: tabsHelp(),
			doc:  "open tab " + view.TabsHelp(func(s string) string { return "`" + s + "`" }),
			foot: footSlot{"tab", 8, 0},
			do: func(a *app, ev *tcell.EventKey) {
				if t, ok := view.TabOfKey(ev.Rune()); ok {
					a.m.SetTab(t)
				}
			}},
		{keys: "← →  [ ]", where: everywhere, cont: true, doc: "the previous / next tab",
			do: func(a *app, ev *tcell.EventKey) {
				if ev.Key() == tcell.KeyLeft || ev.Rune() == '[' {
					a.m.NextTab(-1)
				} else {
					a.m.NextTab(1)
				}
			}},
		{keys: "/", where: everywhere,
			help: "filter turns: words, flag:K tool:T cost>N body:T, and/or\n/not (↑ last filter); the tab with the focus; Raw: find",
			doc: "filter the turn list with the filter language below, or the tab with the focus (the prompt opens empty, so " +
				"what is typed replaces the filter; `↑` brings the last one back, `Esc` restores it; an expression that does not " +
				"parse is refused in the status line, in the words `turns --filter` uses); in the Raw tab, find text in folded " +
				"nodes too (opening them; Enter on an empty prompt goes to the next match)",
			foot: footSlot{"search", 3, 6},
			do:   func(a *app, _ *tcell.EventKey) { a.search.start() }},
		{keys: "e E", where: inRawPane, help: "Raw: open all, defaults",
			doc: "open every node; bring them back to their defaults",
			do:  func(a *app, ev *tcell.EventKey) { a.raw.expand(ev.Rune() == 'e') }},
		{keys: "s S", where: inRawPane, cont: true, sep: ", ", help: "save, save all",
			doc: "`s` saves the request body (or the response body, when the selected line is in the response) to " +
				"`turn-N-request.json` (`turn-N-response.json` or `.sse`) in the working directory, and `S` the whole " +
				"exchange as one JSON object (`turn-N.json`; credential headers are in the capture as fingerprints only)",
			do: func(a *app, ev *tcell.EventKey) {
				if ev.Rune() == 'S' {
					a.save("turn")
				} else {
					a.save(a.raw.selectedPart())
				}
			}},
		{keys: "s S", where: outsideRawPane,
			doc: "on the Raw tab, from the turn list: `s` saves the request body and `S` the whole exchange; on another tab, say where they work",
			do:  (*app).saveFromList},
		{keys: "a", where: onConversation, cont: true, sep: "; ", help: "Talk: history",
			doc: "show every message of the request instead of what the turn added, and back",
			do: func(a *app, _ *tcell.EventKey) {
				a.wholeHistory = !a.wholeHistory
				a.text.invalidate()
			}},
		{keys: "n  N", where: everywhere, help: "next / previous flagged turn",
			foot: footSlot{"flag", 4, 7},
			do: func(a *app, ev *tcell.EventKey) {
				if ev.Rune() == 'n' {
					a.m.NextFlag()
				} else {
					a.m.PrevFlag()
				}
			}},
		{keys: "t", where: everywhere, help: "cycle threads: all, main, each subagent, side queries",
			foot: footSlot{"thread", 5, 0},
			do:   func(a *app, _ *tcell.EventKey) { a.m.CycleThread() }},
		{keys: "f", where: everywhere, help: "flagged turns only, or all",
			foot: footSlot{"flagged", 6, 0},
			do:   func(a *app, _ *tcell.EventKey) { a.m.ToggleFlagged() }},
		{keys: "space", where: inReplay, help: "replay: pause, then step one turn at a time",
			doc:  "pause, then step one turn at a time",
			foot: footSlot{"pause", 0, 1},
			do:   func(a *app, _ *tcell.EventKey) { a.m.PauseOrStep() }},
		{keys: "p", where: inReplay, help: "replay: play / pause",
			doc:  "play / pause",
			foot: footSlot{"play", 0, 2},
			do:   func(a *app, _ *tcell.EventKey) { a.m.TogglePlay() }},
		{keys: "+ -", also: "> <", where: inReplay, cont: true, sep: ", ", help: "faster, slower",
			doc:  "twice as fast, half as fast",
			foot: footSlot{"speed", 0, 3},
			do: func(a *app, ev *tcell.EventKey) {
				if r := ev.Rune(); r == '+' || r == '>' {
					a.m.SetSpeed(a.m.Replay().Speed * 2)
				} else {
					a.m.SetSpeed(a.m.Replay().Speed / 2)
				}
			}},
		{keys: "?", where: everywhere, help: "this help (any key closes it)",
			foot: footSlot{"help", 2, 5},
			do:   func(a *app, _ *tcell.EventKey) { a.showHelp() }},
		{keys: "q", where: everywhere, help: "quit",
			foot: footSlot{"quit", 1, 4},
			do:   func(a *app, _ *tcell.EventKey) { a.tv.Stop() }},
	}
	// Parsed once here, not on every key press.
	for i := range rows {
		shown, _ := parseKeys(rows[i].keys) // the table's keys parse: TestKeyTable
		hidden, _ := parseKeys(rows[i].also)
		rows[i].presses = append(shown, hidden...)
	}
	return rows
}

// tabsHelp is the help overlay's text of the tab keys, from the tab
// table: the tabs' titles, and the Compare tab's, wrapped to the help's
// width.
func tabsHelp() string {
	var plain, compared []string
	for _, r := range view.Tabs() {
		if r.Compared {
			compared = append(compared, r.Title)
		} else {
			plain = append(plain, r.Title)
		}
	}
	text := strings.Join(plain, ", ")
	if len(compared) > 0 {
		text += ", and " + strings.Join(compared, ", ") + " with open --compare"
	}
	return wrapWords("tabs: "+text, helpWidth)
}

// wrapWords breaks text into lines of at most width runes at spaces,
// joined by "\n" (the help's line break).
func wrapWords(text string, width int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width:
			lines = append(lines, line)
			line = w
		default:
			line += " " + w
		}
	}
	return strings.Join(append(lines, line), "\n")
}

// press is one key a row binds: a special key, or a character.
type press struct {
	key tcell.Key
	r   rune
}

// parseKeys reads the keys of a row, as keyRow.keys writes them.
func parseKeys(s string) ([]press, error) {
	var out []press
	for _, name := range strings.Fields(s) {
		switch name {
		case "Tab":
			out = append(out, press{key: tcell.KeyTab})
		case "Shift-Tab":
			out = append(out, press{key: tcell.KeyBacktab})
		case "Esc":
			out = append(out, press{key: tcell.KeyEscape})
		case "Enter":
			out = append(out, press{key: tcell.KeyEnter})
		case "PgUp":
			out = append(out, press{key: tcell.KeyPgUp})
		case "PgDn":
			out = append(out, press{key: tcell.KeyPgDn})
		case "←":
			out = append(out, press{key: tcell.KeyLeft})
		case "→":
			out = append(out, press{key: tcell.KeyRight})
		case "↑":
			out = append(out, press{key: tcell.KeyUp})
		case "↓":
			out = append(out, press{key: tcell.KeyDown})
		case "space":
			out = append(out, press{key: tcell.KeyRune, r: ' '})
		default:
			r := []rune(name)
			switch {
			case len(r) == 1:
				out = append(out, press{key: tcell.KeyRune, r: r[0]})
			case len(r) == 3 && r[1] == '-' && r[0] < r[2]:
				for c := r[0]; c <= r[2]; c++ {
					out = append(out, press{key: tcell.KeyRune, r: c})
				}
			default:
				return nil, fmt.Errorf("parse keys %q: no key %q", s, name)
			}
		}
	}
	return out, nil
}

// binds reports whether ev is one of the row's keys, shown or not.
func (r *keyRow) binds(ev *tcell.EventKey) bool {
	for _, p := range r.presses {
		if p.key == ev.Key() && (p.key != tcell.KeyRune || p.r == ev.Rune()) {
			return true
		}
	}
	return false
}

// dispatch runs the row that binds ev where it is pressed: the Raw pane's
// rows when pane is set, the others when not. It reports whether a row
// took the key.
func (a *app) dispatch(ev *tcell.EventKey, pane bool) bool {
	for i := range a.keyRows {
		r := &a.keyRows[i]
		if r.do == nil || (r.where == inRawPane) != pane || !r.where.holds(a) || !r.binds(ev) {
			continue
		}
		r.do(a, ev)
		return true
	}
	return false
}

// The help overlay's columns: the keys' width, from the indent to the
// text, and the text's, which keeps the overlay within 80 columns.
const (
	column    = 18
	helpWidth = 80 - 2 - column - 2
)

// helpKeys is the key list of the help overlay: a line per row, or per
// group of rows when some go on the line of the row above.
func helpKeys(rows []keyRow) string {
	type line struct{ keys, text string }
	var lines []line
	for _, r := range rows {
		switch {
		case r.cont && len(lines) > 0:
			l := &lines[len(lines)-1]
			l.keys += "  " + r.keys
			if r.help != "" {
				l.text += r.sep + r.help
			}
		case r.help != "":
			lines = append(lines, line{r.keys, r.help})
		}
	}
	var b strings.Builder
	for _, l := range lines {
		for i, text := range strings.Split(l.text, "\n") {
			keys := ""
			if i == 0 {
				keys = l.keys
			}
			pad := max(column-utf8.RuneCountInString(keys), 2)
			b.WriteString("  " + keys + strings.Repeat(" ", pad) + text + "\n")
		}
	}
	return b.String()
}

// keyLine is the last line: the status message, or the main keys. While
// replaying, the replay's keys come first, with only the most used others,
// so that the line fits 80 columns (? lists them all).
func keyLine(a *app) view.Line {
	if s := a.m.Status(); s != "" {
		return view.Line{{Text: " " + s, Role: view.RoleWarning}}
	}
	replay := a.m.Replaying()
	type item struct {
		at           int
		keys, action string
	}
	var items []item
	for _, r := range a.keyRows {
		at := r.foot.browse
		if replay {
			at = r.foot.replay
		}
		if at > 0 {
			items = append(items, item{at, strings.Join(strings.Fields(r.keys), "/"), r.foot.label})
		}
	}
	slices.SortFunc(items, func(x, y item) int { return x.at - y.at })
	var l view.Line
	for _, k := range items {
		l = append(l, view.Span{Text: " " + k.keys, Role: view.RoleTitle}, view.Span{Text: " " + k.action + " ", Role: view.RoleDim})
	}
	return l
}
