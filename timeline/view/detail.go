package view

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
)

// Explainer says why a flag kind matters and what to do about it
// (timeline.Explain).
type Explainer func(kind string) (why, todo string)

// threadTurns returns the turns of t's thread, in order.
func threadTurns(s *timeline.Session, t *timeline.Turn) []*timeline.Turn {
	for _, th := range s.Threads {
		if th.ID != t.Thread {
			continue
		}
		out := make([]*timeline.Turn, 0, len(th.Turns))
		for _, i := range th.Turns {
			if u := TurnAt(s, i); u != nil {
				out = append(out, u)
			}
		}
		return out
	}
	return []*timeline.Turn{t}
}

// decoded returns t's decoded turn, never nil.
func decoded(t *timeline.Turn) *decode.Turn {
	if t == nil || t.Decoded == nil {
		return &decode.Turn{}
	}
	return t.Decoded
}

// since describes the comparison base: "since #4", "first turn of main"
// or, after a restart, "first turn since main started again".
func since(t *timeline.Turn) string {
	switch {
	case t.Link == timeline.LinkRestart:
		return "first turn since " + t.Thread + " started again"
	case t.Prev == 0:
		return "first turn of " + t.Thread
	}
	return fmt.Sprintf("since #%d", t.Prev)
}

// heading writes the first line of a tab, and the filter, if any, on the
// second; it returns the first for the caller to finish.
func heading(d *doc, t *timeline.Turn, what, q string) *Line {
	d.line()
	if q != "" {
		l := d.line()
		l.add(RoleDim, "filter ")
		l.add(RoleMatch, q)
		l.add(RoleDim, "  (Esc clears)")
	}
	l := &d.lines[0]
	l.addf(RoleTitle, "%s of #%d", what, t.Index)
	l.addf(RoleDim, " (%s)", t.Thread)
	return l
}

// changes writes " +2 −1 since #4".
func changes(l *Line, t *timeline.Turn, added, removed int) {
	if t.Prev == 0 {
		l.addf(RoleDim, ", %s", since(t))
		return
	}
	l.add(RoleText, ", ")
	l.addf(roleIf(added > 0, RoleAdded, RoleDim), "+%d", added)
	l.add(RoleText, " ")
	l.addf(roleIf(removed > 0, RoleRemoved, RoleDim), "−%d", removed)
	l.addf(RoleDim, " %s", since(t))
}

func roleIf(cond bool, yes, no Role) Role {
	if cond {
		return yes
	}
	return no
}

// loadedBy returns the query of the latest search that loaded name.
func loadedBy(d *decode.Turn, name string) string {
	for i := len(d.Searches) - 1; i >= 0; i-- {
		if slices.Contains(d.Searches[i].Results, name) {
			return d.Searches[i].Query
		}
	}
	return ""
}

// WorkingSet describes the tools the model could call in t: those loaded by
// search, added, restored after compaction, removed since the previous turn
// of the thread, and those always loaded. q filters the names.
func WorkingSet(t *timeline.Turn, q string) []Line {
	var d doc
	dt := decoded(t)
	l := heading(&d, t, "Working set", q)
	l.add(RoleText, ": "+numfmt.Count(len(dt.WorkingSet), "tool", "tools"))
	changes(l, t, len(t.WorkingAdded), len(t.WorkingRemoved))
	if dt.Request.Transcript != nil {
		d.text(RoleDim, "Made from Claude Code's transcript, which does not hold the tools sent: these are the deferred tools loaded (by a search, or kept by a compaction); the tools sent whole are not recorded.")
	}
	added := func(name string) bool { return slices.Contains(t.WorkingAdded, name) }

	groups := []struct {
		via, title string
		role       Role
	}{
		{decode.ViaSearch, "Loaded by search", RoleSearch},
		{decode.ViaAddition, "Added by tool_addition", RoleSearch},
		{decode.ViaRestored, "Restored after compaction (no tool_reference left in history)", RoleRestored},
	}
	width := 0
	for _, w := range dt.WorkingSet {
		if w.Via != decode.ViaAlways {
			width = max(width, len(w.Name))
		}
	}
	for _, g := range groups {
		var names []decode.WorkingTool
		for _, w := range dt.WorkingSet {
			if w.Via == g.via && matches(w.Name, q) {
				names = append(names, w)
			}
		}
		if len(names) == 0 {
			continue
		}
		d.blank()
		d.text(RoleTitle, "%s (%d)", g.title, len(names))
		for _, w := range names {
			l := d.line()
			if added(w.Name) {
				l.add(RoleAdded, " + ")
			} else {
				l.add(RoleText, "   ")
			}
			l.addf(g.role, "%-*s", width, w.Name)
			if g.via == decode.ViaSearch {
				if by := loadedBy(dt, w.Name); by != "" {
					l.addf(RoleDim, "  ← %q", by)
				}
			}
		}
	}
	if removed := filterNames(t.WorkingRemoved, q); len(removed) > 0 {
		d.blank()
		d.text(RoleTitle, "Removed %s (%d)", since(t), len(removed))
		for _, n := range removed {
			d.line().add(RoleRemoved, " − "+n)
		}
	}
	if len(dt.MissingReferences) > 0 {
		d.blank()
		l := d.line()
		l.add(RoleError, "Referenced in history but not sent in tools (the API answers 400): ")
		l.add(RoleText, strings.Join(dt.MissingReferences, ", "))
	}
	var always []string
	for _, w := range dt.WorkingSet {
		if w.Via == decode.ViaAlways && matches(w.Name, q) {
			always = append(always, w.Name)
		}
	}
	if len(always) > 0 {
		d.blank()
		d.text(RoleTitle, "Always loaded (%d)", len(always))
		l := d.line()
		l.add(RoleText, "   ")
		for i, n := range always {
			if i > 0 {
				l.add(RoleDim, ", ")
			}
			if added(n) {
				l.add(RoleAdded, "+"+n)
			} else {
				l.add(RoleAlways, n)
			}
		}
	}
	if len(dt.WorkingSet) == 0 && len(t.WorkingRemoved) == 0 {
		d.blank()
		if dt.Request.Transcript != nil {
			d.text(RoleDim, "No deferred tool loaded yet.")
		} else {
			d.text(RoleDim, "No tools in this request.")
		}
	}
	return d.lines
}

func filterNames(names []string, q string) []string {
	var out []string
	for _, n := range names {
		if matches(n, q) {
			out = append(out, n)
		}
	}
	return out
}

// Catalog lists the deferred tools t announces: those loaded into the
// working set first, then the rest in columns to fit width, marking those
// added since the previous turn of the thread, then those removed. q
// filters the names.
func Catalog(t *timeline.Turn, q string, width int) []Line {
	var d doc
	dt := decoded(t)
	var loaded, rest []string
	for _, n := range dt.Catalog {
		if dt.InWorkingSet(n) {
			loaded = append(loaded, n)
		} else {
			rest = append(rest, n)
		}
	}
	l := heading(&d, t, "Catalog", q)
	if tr := dt.Request.Transcript; tr != nil && !tr.CatalogRecorded {
		l.add(RoleText, ": not recorded")
		d.text(RoleDim, "This Claude Code release wrote no deferred-tool catalog in its transcript (deferred_tools_delta records start with 2.1.150), so a call cannot be told to be blind.")
		return d.lines
	}
	l.addf(RoleText, ": %s, %d loaded", numfmt.Count(len(dt.Catalog), "deferred tool", "deferred tools"), len(loaded))
	changes(l, t, len(t.CatalogAdded), len(t.CatalogRemoved))
	if dt.Request.Transcript != nil {
		d.text(RoleDim, "From the transcript's deferred_tools_delta records, written as Claude Code announces them.")
	}
	if len(dt.CatalogEvents) > 0 {
		l := d.line()
		l.add(RoleDim, "announced by ")
		for i, ev := range dt.CatalogEvents {
			if i > 0 {
				l.add(RoleDim, ", ")
			}
			verb := ""
			if ev.Remove {
				verb = "removal "
			}
			where := "tools"
			if ev.Message >= 0 {
				where = fmt.Sprintf("messages[%d]", ev.Message)
			}
			l.addf(RoleDim, "%s%s in %s (%d)", verb, ev.Form, where, len(ev.Names))
		}
	}
	if len(dt.Catalog) == 0 {
		d.blank()
		d.text(RoleDim, "No deferred tools announced in this request.")
	}
	added := func(n string) bool { return t.Prev != 0 && slices.Contains(t.CatalogAdded, n) }
	mark := func(l *Line, n string) {
		if added(n) {
			l.add(RoleAdded, " + ")
		} else {
			l.add(RoleText, "   ")
		}
	}
	if loaded = filterNames(loaded, q); len(loaded) > 0 {
		d.blank()
		d.text(RoleTitle, "Loaded (%d)", len(loaded))
		for _, n := range loaded {
			l := d.line()
			mark(l, n)
			via, _ := dt.WorkingVia(n)
			l.add(RoleSearch, "● "+n)
			l.addf(RoleDim, "  via %s", via)
		}
	}
	if rest = filterNames(rest, q); len(rest) > 0 {
		d.blank()
		d.text(RoleTitle, "Not loaded (%d)", len(rest))
		cell := 0
		for _, n := range rest {
			cell = max(cell, utf8.RuneCountInString(n))
		}
		cell += 3 + 2 + 2 // mark, "○ ", gap
		cols := max(1, width/cell)
		rows := (len(rest) + cols - 1) / cols
		for r := 0; r < rows; r++ {
			l := d.line()
			for c := 0; c < cols; c++ {
				i := c*rows + r
				if i >= len(rest) {
					break
				}
				n := rest[i]
				mark(l, n)
				l.add(RoleDim, "○ ")
				if c+1 < cols && i+rows < len(rest) {
					l.addf(RoleText, "%-*s", cell-5, n)
				} else {
					l.add(RoleText, n)
				}
			}
		}
	}
	if q != "" && len(loaded)+len(rest) == 0 {
		d.blank()
		d.text(RoleDim, "   no catalog entry matches %q", q)
	}
	if removed := filterNames(t.CatalogRemoved, q); len(removed) > 0 {
		d.blank()
		d.text(RoleTitle, "Removed %s (%d)", since(t), len(removed))
		for _, n := range removed {
			d.line().add(RoleRemoved, " − "+n)
		}
	}
	return d.lines
}

// Searches lists the tool searches visible to t: each query, the tools it
// loaded, and when the model then called them. A search is numbered, as
// in 'tsinspect searches' and the report, by the turn that carries its
// result (the one it issued it, while it has none).
func Searches(s *timeline.Session, t *timeline.Turn, q string) []Line {
	var d doc
	dt := decoded(t)
	thread := threadTurns(s, t)
	// callTurn maps a tool_use id to the turn whose response made it, and
	// resultTurn to the first turn carrying its result.
	callTurn, resultTurn := map[string]int{}, map[string]int{}
	for _, u := range thread {
		du := decoded(u)
		for _, c := range du.ToolCalls {
			callTurn[c.ID] = u.Index
		}
		for _, sr := range u.NewSearches {
			if _, ok := resultTurn[sr.ToolUseID]; !ok && sr.ToolUseID != "" {
				resultTurn[sr.ToolUseID] = u.Index
			}
		}
	}
	l := heading(&d, t, "Searches", q)
	l.addf(RoleText, ": %s, %d new in this turn", numfmt.Count(len(dt.Searches), "search", "searches"), len(t.NewSearches))
	for _, sr := range dt.Searches {
		if q != "" && !matches(sr.Query+" "+strings.Join(sr.Results, " "), q) {
			continue
		}
		d.blank()
		l := d.line()
		// from is the first turn whose calls count as made after it.
		at, from := resultTurn[sr.ToolUseID], resultTurn[sr.ToolUseID]
		if at == 0 {
			at = callTurn[sr.ToolUseID]
			from = at + 1
		}
		if at > 0 {
			l.addf(RoleDim, "#%-4d ", at)
		} else {
			l.add(RoleDim, "      ")
		}
		l.add(RoleKey, sr.Tool+" ")
		l.addf(RoleString, "%q", sr.Query)
		l.addf(RoleDim, "  %s", sr.Mode)
		if sr.MaxResults > 0 {
			l.addf(RoleDim, ", max %d", sr.MaxResults)
		}
		if sr.Server {
			l.add(RoleDim, ", server-side")
		}
		if sr.New {
			l.add(RoleAdded, "  NEW")
		}
		switch {
		case !sr.HasResult:
			d.line().add(RoleDim, "      → no result yet")
		case sr.IsError || sr.ErrorCode != "":
			l := d.line()
			l.add(RoleError, "      → error")
			if sr.ErrorCode != "" {
				l.add(RoleError, " "+sr.ErrorCode)
			}
			if sr.Text != "" {
				l.add(RoleDim, ": "+firstLine(sr.Text))
			}
		case sr.NoMatch || len(sr.Results) == 0:
			l := d.line()
			l.add(RoleWarning, "      → no match")
			if sr.Text != "" {
				l.add(RoleDim, ": "+firstLine(sr.Text))
			}
		default:
			l := d.line()
			l.add(RoleDim, "      → loaded ")
			for i, n := range sr.Results {
				if i > 0 {
					l.add(RoleDim, ", ")
				}
				l.add(RoleSearch, n)
			}
			if !sr.Server && !sr.ToolLoaded {
				l.add(RoleWarning, "  (no \"Tool loaded.\" beside the result)")
			}
			l = d.line()
			l.add(RoleDim, "      → called ")
			for i, n := range sr.Results {
				if i > 0 {
					l.add(RoleDim, ", ")
				}
				if c := firstCall(thread, from, n); c > 0 {
					l.addf(RoleText, "%s at #%d", n, c)
				} else {
					l.addf(RoleDim, "%s never", n)
				}
			}
		}
	}
	if len(dt.Searches) == 0 {
		d.blank()
		d.text(RoleDim, "No tool search in this request's history.")
	}
	return d.lines
}

// firstCall returns the first turn of thread numbered from or later whose
// response calls name, or 0.
func firstCall(thread []*timeline.Turn, from int, name string) int {
	for _, u := range thread {
		if u.Index < from {
			continue
		}
		for _, c := range decoded(u).ToolCalls {
			if c.Name == name {
				return u.Index
			}
		}
	}
	return 0
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

// Flags explains each flag of t: what happened, why it matters, what to do.
func Flags(s *timeline.Session, t *timeline.Turn, q string, explain Explainer, tab *pricing.Table) []Line {
	var d doc
	l := heading(&d, t, "Flags", q)
	l.add(RoleText, ": "+numfmt.Count(len(t.Flags), "flag", "flags"))
	sorted := slices.Clone(t.Flags)
	slices.SortStableFunc(sorted, func(a, b timeline.Flag) int {
		return timeline.SeverityRank(a.Severity) - timeline.SeverityRank(b.Severity)
	})
	for _, f := range sorted {
		if !matches(f.Kind+" "+f.Detail+" "+f.Tool, q) {
			continue
		}
		d.blank()
		mark, role := SeverityMark(f.Severity)
		l := d.line()
		l.addf(role, "%s %s", mark, f.Kind)
		l.addf(RoleDim, "  %s", f.Severity)
		if f.Tool != "" {
			l.add(RoleText, "  "+f.Tool)
		}
		if usd, ok := timeline.FlagCost(tab, s, t, f); ok {
			l.add(RoleWarning, "  cost "+pricing.Format(usd, true))
		}
		if f.Detail != "" {
			d.text(RoleKey, "  What happened")
			d.line().add(RoleText, "    "+f.Detail)
		}
		if f.Cause != "" || f.TokensLost > 0 {
			l := d.line()
			l.add(RoleKey, "  cause ")
			l.add(RoleText, orDash(f.Cause))
			if f.TokensLost > 0 {
				l.addf(RoleText, ", %s tokens no longer cached", Tokens(f.TokensLost))
			}
			if f.CacheMissReason != "" {
				l.addf(RoleDim, "; the API says %s", f.CacheMissReason)
				switch {
				case f.Agrees == nil:
				case *f.Agrees:
					l.add(RoleDim, " (agrees)")
				default:
					l.add(RoleWarning, " (disagrees)")
				}
			}
		}
		if explain != nil {
			why, todo := explain(f.Kind)
			if why != "" {
				d.text(RoleKey, "  Why it matters")
				d.text(RoleText, "    %s", why)
			}
			if todo != "" {
				d.text(RoleKey, "  What to do")
				d.text(RoleText, "    %s", todo)
			}
		}
	}
	if len(t.Flags) == 0 {
		d.blank()
		d.text(RoleDim, "Nothing flagged on this turn.")
	}
	// The session at a glance.
	kinds := map[string]int{}
	var order []string
	for _, u := range s.Turns {
		for _, f := range u.Flags {
			if kinds[f.Kind] == 0 {
				order = append(order, f.Kind)
			}
			kinds[f.Kind]++
		}
	}
	if len(order) > 0 {
		d.blank()
		l := d.line()
		l.add(RoleDim, "In this session: ")
		for i, k := range order {
			if i > 0 {
				l.add(RoleDim, ", ")
			}
			l.addf(RoleDim, "%s ×%d", k, kinds[k])
		}
		l.add(RoleDim, "   (n/N: next/previous flagged turn)")
	}
	return d.lines
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
