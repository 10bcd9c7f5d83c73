// Package ui is tsinspect's terminal interface: a list of the turns of a
// session and, under it, tabs about the selected turn (working set,
// catalog, searches, cache, flags, raw exchange). It browses a capture,
// replays one in recorded time, or follows one while it is being recorded.
//
// The package is a thin layer over the view model of package
// timeline/view: the turn list is a virtual tview.TableContent that asks the
// model for the rows on screen, the tabs' text is made by the view package,
// and keys become model calls. Goroutines other than tview's (the replay
// clock, the live poller) reach the model only through
// Application.QueueUpdateDraw. Nothing is kept at package level.
package ui

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/tsinspect/tsinspect/internal/crash"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// Options configure a run. The zero value draws on the terminal, in colour
// unless NO_COLOR is set, with times in the local time zone.
type Options struct {
	// Title names what is shown (a file name, "demo") in the header.
	Title string
	// Screen is drawn on instead of the terminal (tests).
	Screen tcell.Screen
	// NoColor draws without colour; so does a non-empty NO_COLOR variable.
	NoColor bool
	// Location is the time zone of the times shown; nil means local.
	Location *time.Location
	// Speed is the replay speed factor; 0 means 1.
	Speed float64
	// Clock is the replay clock; nil means the wall clock.
	Clock view.Clock
	// Poll is how often RunLive looks at the capture; 0 means 250 ms.
	Poll time.Duration
	// Explain says why a flag kind matters and what to do; nil means
	// timeline.Explain.
	Explain view.Explainer
	// Prices prices the turns in US dollars; nil means the built-in table.
	Prices *pricing.Table
	// SaveDir is where the Raw tab's s and S save; "" means the working
	// directory.
	SaveDir string
	// Compare, when set, is the session shown beside the one opened
	// (open A --compare B): the turn list marks the turns that differ
	// and the Compare tab shows the differences. CompareName names it.
	Compare     *timeline.Session
	CompareName string
	// Notes, for RunLive, brings news from the caller to show in the
	// header as it arrives, such as "claude exited with status 0"; each
	// note replaces the last.
	Notes <-chan string
	// Wake, for RunLive, tells it the capture has just been written: it
	// looks at once instead of at its next poll. A recorder in the same
	// process sends on it after each write (without blocking: a wake
	// already pending is enough).
	Wake <-chan struct{}
}

// tick is how often a replay's clock is read.
const tick = 100 * time.Millisecond

// Run shows s until the user quits or ctx is done.
func Run(ctx context.Context, s *timeline.Session, opts Options) error {
	a := newApp(view.New(s), opts)
	return a.run(ctx, nil)
}

// Replay plays the turns of s back in recorded order and timing,
// opts.Speed times faster, until the user quits or ctx is done. Space
// pauses, then steps one turn at a time; p plays on.
func Replay(ctx context.Context, s *timeline.Session, opts Options) error {
	m := view.New(s)
	m.StartReplay(opts.Clock, opts.Speed)
	a := newApp(m, opts)
	return a.run(ctx, func(done <-chan struct{}) {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				a.tv.QueueUpdate(func() {
					if a.m.Tick() != 0 {
						a.tv.ForceDraw()
					}
				})
			}
		}
	})
}

// app is one running interface: the model, the widgets over it, and the
// tview application that owns them.
type app struct {
	tv      *tview.Application
	m       *view.Model
	th      theme
	loc     *time.Location
	explain view.Explainer
	title   string
	prices  *pricing.Table
	// deferral caches what deferral saved, per turn, for the Catalog tab.
	deferral view.Deferral
	// note is the latest of Options.Notes, shown in the header.
	note string
	// loading, while a session is read, says how far the reading is; the
	// header shows it instead of the counts and dollars of the session
	// not yet there.
	loading string
	// saveDir is where the Raw tab saves.
	saveDir string

	pages  *tview.Pages // "main" and "help"
	header *headerView
	list   *turnList
	tabs   *tabBar
	detail *tview.Pages // "text" or "raw"
	text   *detailText
	raw    *rawPane
	footer *tview.Pages // "keys" or "search"
	keys   *tview.TextView
	search *searchBar

	// keyRows is the key table (keyTable).
	keyRows []keyRow

	// inDetail is set while the detail pane has the focus.
	inDetail bool
	// wholeHistory shows every message of the request in the
	// Conversation tab, not only what the turn added ('a').
	wholeHistory bool
	// syncing is set while the widgets are being brought in line with
	// the model, so that their callbacks do not call the model back.
	syncing bool
}

// newApp builds the interface over m without starting it.
func newApp(m *view.Model, opts Options) *app {
	a := &app{
		tv:      tview.NewApplication(),
		m:       m,
		th:      theme{mono: opts.NoColor || os.Getenv("NO_COLOR") != ""},
		loc:     opts.Location,
		explain: opts.Explain,
		title:   opts.Title,
		prices:  opts.Prices,
		saveDir: opts.SaveDir,
		keyRows: keyTable(),
	}
	if a.prices == nil {
		a.prices = pricing.Default()
	}
	m.SetPrices(a.prices)
	if a.loc == nil {
		a.loc = time.Local
	}
	if a.explain == nil {
		a.explain = timeline.Explain
	}
	if opts.Screen != nil {
		a.tv.SetScreen(opts.Screen)
	}
	a.header = &headerView{TextView: a.line(), a: a}
	a.list = newTurnList(a)
	a.tabs = newTabBar(a)
	a.text = newDetailText(a)
	a.raw = newRawPane(a)
	a.list.SetFocusFunc(func() { a.inDetail = false })
	a.text.SetFocusFunc(func() { a.inDetail = true })
	a.raw.SetFocusFunc(func() { a.inDetail = true })
	a.detail = tview.NewPages().AddPage("text", a.text, true, true).AddPage("raw", a.raw, true, false)
	a.keys = a.line()
	a.search = newSearchBar(a)
	a.footer = tview.NewPages().AddPage("keys", a.keys, true, true).AddPage("search", a.search, true, false)

	body := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(a.header, 1, 0, false).
		AddItem(a.list, 0, 2, true).
		AddItem(a.tabs, 1, 0, false).
		AddItem(a.detail, 0, 3, false).
		AddItem(a.footer, 1, 0, false)
	a.pages = tview.NewPages().AddPage("main", body, true, true).AddPage("help", newHelp(a), true, false)
	a.tv.SetRoot(a.pages, true).SetFocus(a.list).EnableMouse(true)
	a.tv.SetInputCapture(a.key)
	a.tv.SetMouseCapture(func(ev *tcell.EventMouse, action tview.MouseAction) (*tcell.EventMouse, tview.MouseAction) {
		if a.helpShown() && action == tview.MouseLeftClick {
			a.hideHelp()
			return nil, action
		}
		return ev, action
	})
	m.SetListener(view.ListenerFunc(a.changed))
	a.changed(view.ChangeRows | view.ChangeSelection | view.ChangeTab | view.ChangeStatus)
	return a
}

// headerView is the header line; it is laid out again when its width
// changes, as what it shows depends on the room.
type headerView struct {
	*tview.TextView
	a     *app
	width int // inner width at the last draw, 0 before the first
}

// Draw lays the header out for its width, then draws it.
func (h *headerView) Draw(screen tcell.Screen) {
	if _, _, w, _ := h.GetInnerRect(); w != h.width {
		h.width = w
		h.SetText(h.a.th.tagged(headerLine(h.a)))
	}
	h.TextView.Draw(screen)
}

// line makes a one-line text view.
func (a *app) line() *tview.TextView {
	tv := tview.NewTextView().SetDynamicColors(true).SetWrap(false).SetTextStyle(a.th.base())
	a.th.box(tv.Box)
	return tv
}

// run starts the interface and the optional background task, and returns
// when the user quits or ctx is done.
func (a *app) run(ctx context.Context, background func(done <-chan struct{})) error {
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			a.stop()
		case <-done:
		}
	}()
	// A panic in the background (reading or following the session) ends
	// the interface, which gives the terminal back, and is returned as
	// one error; one in the event loop itself is tview's to undo (it
	// restores the screen before the panic goes on).
	crashed := make(chan error, 1)
	if background != nil {
		go func() {
			defer func() {
				if r := recover(); r != nil {
					crashed <- crash.Error("ui", r)
					a.stop()
				}
			}()
			background(done)
		}()
	}
	if err := a.tv.Run(); err != nil {
		return fmt.Errorf("ui: start the terminal: %w", err)
	}
	select {
	case err := <-crashed:
		return err
	default:
		return nil
	}
}

// stop ends the event loop from another goroutine. It goes through the
// loop itself: stopping a screen that failed to start would panic in
// tcell, and a loop that never ran has nothing to stop.
func (a *app) stop() { a.tv.QueueUpdate(a.tv.Stop) }

// changed brings the widgets in line with the model.
func (a *app) changed(c view.Change) {
	if c&view.ChangeRows != 0 {
		a.list.content.reset()
	}
	if c&(view.ChangeRows|view.ChangeSelection) != 0 {
		a.list.sync(a)
		a.text.invalidate()
		a.raw.invalidate()
	}
	if c&view.ChangeTab != 0 {
		a.text.invalidate()
		if a.m.Tab() == view.TabRaw {
			a.detail.SwitchToPage("raw")
		} else {
			a.detail.SwitchToPage("text")
		}
		if a.detailFocused() && !a.search.active {
			a.focusDetail()
		}
	}
	a.chrome()
}

// chrome refreshes the header and key line. (The tab bar refreshes itself
// when drawn, as focus can move by mouse.)
func (a *app) chrome() {
	a.header.SetText(a.th.tagged(headerLine(a)))
	a.keys.SetText(a.th.tagged(keyLine(a)))
}

// headerLine is the first line: what is shown, which filters are on, and
// the session's dollars. It fits the header's width: parts give way in
// order of importance (the client, the "all threads" note, the file name,
// the thread count, then the rest), shortened where they can be, so that
// the dollars stay on screen at any width.
func headerLine(a *app) view.Line {
	m := a.m
	s := m.Session()
	var parts []headerPart
	add := func(keep int, short view.Line, spans ...view.Span) {
		parts = append(parts, headerPart{line: spans, short: short, keep: keep})
	}
	span := func(r view.Role, f string, args ...any) view.Span {
		return view.Span{Text: fmt.Sprintf(f, args...), Role: r}
	}
	add(100, nil, span(view.RoleTitle, " tsinspect"))
	if a.title != "" {
		add(20, nil, span(view.RoleText, " %s", a.title))
	}
	if a.note != "" {
		add(60, view.Line{span(view.RoleWarning, "  %s", shorten(a.note, 24))}, span(view.RoleWarning, "  %s", a.note))
	}
	if m.Replaying() {
		add(90, nil, span(view.RoleTitle, "  %s", m.Replay()))
	}
	if a.loading != "" {
		add(70, nil, span(view.RoleWarning, "  %s", a.loading))
		return fitHeader(a, parts)
	}
	flags := span(view.RoleDim, "no flags")
	if n := m.Flags(); n > 0 {
		flags = span(view.RoleWarning, "%s", numfmt.Count(n, "flag", "flags"))
	}
	add(70, view.Line{span(view.RoleDim, "  %s · ", numfmt.Count(len(s.Turns), "turn", "turns")), flags},
		span(view.RoleDim, "  %s · %s · ", numfmt.Count(len(s.Turns), "turn", "turns"), numfmt.Count(len(s.Threads), "thread", "threads")), flags)
	th := m.ShownThread()
	if th != nil {
		l := view.Line{span(view.RoleText, "  thread "), span(view.RoleMatch, "%s", th.ID)}
		short := slices.Clone(l)
		if th.Kind != th.ID {
			l = append(l, span(view.RoleDim, " (%s)", th.Kind))
		}
		add(85, short, l...)
	} else if len(s.Threads) > 1 {
		add(10, nil, span(view.RoleDim, "  all threads"))
	}
	if m.FlaggedOnly() {
		add(85, view.Line{span(view.RoleMatch, "  flagged")}, span(view.RoleMatch, "  flagged only"))
	}
	if q := m.Query(); q != "" {
		shown := span(view.RoleDim, " %d shown", m.Len())
		add(88, view.Line{span(view.RoleText, "  "), span(view.RoleMatch, "/%s", shorten(q, 12)), shown},
			span(view.RoleText, "  "), span(view.RoleMatch, "/%s", q), shown)
	}
	c := clientsText(s)
	if th != nil {
		c = th.Client.String()
	}
	if c != "" {
		add(15, nil, span(view.RoleDim, "  %s", c))
	}
	// The dollars, last and kept to the end.
	thread, where := "", "in all"
	if th != nil {
		thread, where = th.ID, "in "+th.ID
	}
	if usd, est, ok := view.SessionCost(s, thread, a.prices); ok {
		approx := ""
		if est {
			approx = "≈"
		}
		dollars := approx + pricing.Format(usd, true)
		add(99, view.Line{span(view.RoleDim, "  %s", dollars)}, span(view.RoleDim, "  %s %s", dollars, where))
	}
	return fitHeader(a, parts)
}

// headerPart is a part of the header line: its text, what it shortens to
// before it is dropped, and how long it stays (the higher, the longer).
type headerPart struct {
	line  view.Line
	short view.Line
	keep  int
}

// fitHeader joins the parts of the header line, shortened and dropped
// from the least important until they fit the header's width.
func fitHeader(a *app, parts []headerPart) view.Line {
	width := func() int {
		n := 0
		for _, p := range parts {
			n += p.line.Width()
		}
		return n
	}
	// Shorten, then drop, the least important part until the line fits.
	for w := a.header.width; w > 0 && width() > w; {
		least := -1
		for i, p := range parts {
			if p.keep < 100 && p.keep != 99 && (least < 0 || p.keep < parts[least].keep) {
				least = i
			}
		}
		if least < 0 {
			// Only the name and the dollars are left: shorten the dollars.
			for i := range parts {
				if parts[i].short != nil {
					parts[i].line, parts[i].short = parts[i].short, nil
				}
			}
			break
		}
		if parts[least].short != nil {
			parts[least].line, parts[least].short = parts[least].short, nil
			parts[least].keep-- // shortened once; dropped the next time
			continue
		}
		parts = slices.Delete(parts, least, least+1)
	}
	var l view.Line
	for _, p := range parts {
		l = append(l, p.line...)
	}
	return l
}

// shorten cuts s to n runes, ending with "…" when it was longer.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// clientsText names the client of the session's threads and its version,
// or counts the clients when the threads have several.
func clientsText(s *timeline.Session) string {
	var names []string
	for _, th := range s.Threads {
		if c := th.Client.String(); !slices.Contains(names, c) {
			names = append(names, c)
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return fmt.Sprintf("%d clients (t shows each thread's)", len(names))
}
