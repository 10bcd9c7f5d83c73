package view

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
)

// Column is a column of the turn list.
type Column int

// The turn list's columns, in display order.
const (
	ColIndex   Column = iota // turn number
	ColTime                  // start time
	ColThread                // thread ID
	ColModel                 // model, shortened
	ColCatalog               // catalog size, +added
	ColWorking               // working-set size, +added
	ColPrompt                // prompt tokens and a cache bar
	ColCost                  // the turn's price in US dollars (see CostCell)
	ColStop                  // stop reason or error
	ColFlags                 // flag marks
	NumColumns               // the number of columns
)

// Title returns the column's heading.
func (c Column) Title() string {
	switch c {
	case ColIndex:
		return "#"
	case ColTime:
		return "TIME"
	case ColThread:
		return "THREAD"
	case ColModel:
		return "MODEL"
	case ColCatalog:
		return "CAT"
	case ColWorking:
		return "WORK"
	case ColPrompt:
		return "PROMPT"
	case ColCost:
		return "COST"
	case ColStop:
		return "STOP"
	case ColFlags:
		return "FLAGS"
	}
	return ""
}

// RightAligned reports whether the column holds numbers.
func (c Column) RightAligned() bool { return c == ColIndex || c == ColCost }

// MaxWidth is the widest a column is drawn (0: no limit).
func (c Column) MaxWidth() int {
	switch c {
	case ColModel:
		return 12
	case ColStop:
		return 10
	}
	return 0
}

// BarWidth is the width of the cache bar in the prompt column.
const BarWidth = 8

// Cell returns what the turn list shows for t in column c. Times are shown
// in loc. inFlight marks a turn whose response a replay has not reached.
// ColCost is empty here: it needs a price table (CostCell).
func Cell(t *timeline.Turn, c Column, loc *time.Location, inFlight bool) Line {
	var l Line
	d := t.Decoded
	if d == nil {
		d = &decode.Turn{}
	}
	switch c {
	case ColIndex:
		l.add(RoleDim, strconv.Itoa(t.Index))
	case ColTime:
		if t.Exchange != nil && !t.Exchange.Start.IsZero() {
			l.add(RoleText, t.Exchange.Start.In(loc).Format("15:04:05"))
		}
	case ColThread:
		l.add(RoleText, t.Thread)
	case ColModel:
		l.add(RoleText, decode.ShortModel(model(d)))
	case ColCatalog:
		if tr := d.Request.Transcript; tr != nil && !tr.CatalogRecorded {
			l.add(RoleDim, "-") // the release wrote no catalog
			break
		}
		sizeCell(&l, len(d.Catalog), len(t.CatalogAdded), t.Prev != 0)
	case ColWorking:
		sizeCell(&l, len(d.WorkingSet), len(t.WorkingAdded), t.Prev != 0)
		if d.Request.Transcript != nil {
			l.add(RoleDim, "*") // the deferred tools loaded only
		}
	case ColPrompt:
		u := d.Response.Usage
		// A response still arriving in a live capture already names its
		// prompt (message_start); a replay's is not shown before its end.
		if inFlight && (!arriving(t) || u.TotalInput() == 0) {
			l.add(RoleDim, "…")
			break
		}
		if u.TotalInput() == 0 {
			l.add(RoleDim, "-")
			break
		}
		l.addf(RoleText, "%6s ", Tokens(u.TotalInput()))
		r, c, i := Bar(u, BarWidth)
		l.add(RoleRead, strings.Repeat("█", r))
		l.add(RoleCreated, strings.Repeat("▓", c))
		l.add(RoleInput, strings.Repeat("░", i))
	case ColStop:
		if inFlight {
			l.add(RoleDim, Progress(t))
			break
		}
		text, role := Stop(d)
		l.add(role, text)
	case ColFlags:
		flagMarks(&l, t.Flags, true)
	}
	return l
}

// arriving reports whether t's exchange is in flight in the capture itself
// (a live view), not merely ahead of a replay's clock.
func arriving(t *timeline.Turn) bool {
	return t.Exchange != nil && t.Exchange.State == exchange.StateInFlight
}

// Progress says how far a turn in flight has come, for its STOP cell (at
// most 10 columns): "waiting" before the response began, "↓12.3 kB" once
// bytes arrive in a live capture, "streaming" in a replay.
func Progress(t *timeline.Turn) string {
	if !arriving(t) {
		return "streaming"
	}
	ex := t.Exchange
	if ex.Status == 0 {
		return "waiting"
	}
	var n int64
	if k := len(ex.Chunks); k > 0 {
		n = ex.Chunks[k-1].Offset + int64(ex.Chunks[k-1].Size)
	}
	if n == 0 {
		return "streaming"
	}
	return "↓" + numfmt.Bytes(n)
}

// CostCell returns the turn's price in US dollars for the turn list:
// "$0.0123", "≈$0.0123" when the model is priced as a neighbour in the table,
// "-" when it has no price, "…" while a replay has not reached the
// response.
func CostCell(t *timeline.Turn, tab *pricing.Table, inFlight bool) Line {
	var l Line
	if inFlight {
		l.add(RoleDim, "…")
		return l
	}
	c, p, ok := timeline.TurnCost(tab, t)
	if !ok {
		l.add(RoleDim, "-")
		return l
	}
	s := pricing.Format(c.Total, true)
	if p.Estimated {
		s = "≈" + s
	}
	l.add(RoleText, s)
	return l
}

// SessionCost sums the prices of the session's turns, or of one thread's
// when thread is not ""; estimated is set when a model was priced as
// a neighbour in the table, ok when any turn had a price.
func SessionCost(s *timeline.Session, thread string, tab *pricing.Table) (usd float64, estimated, ok bool) {
	if s == nil {
		return 0, false, false
	}
	for _, t := range s.Turns {
		if thread != "" && t.Thread != thread {
			continue
		}
		if c, p, priced := timeline.TurnCost(tab, t); priced {
			usd += c.Total
			estimated = estimated || p.Estimated
			ok = true
		}
	}
	return usd, estimated, ok
}

// WideFlags is the FLAGS cell of a wide list: every flag's kind with what
// it is about (the tool, the cache break's cause, the tokens lost), most
// severe first: "✖ call_before_load mcp__demo__action_7 · ▲ empty_search".
func WideFlags(t *timeline.Turn) Line {
	var l Line
	sorted := slices.Clone(t.Flags)
	slices.SortStableFunc(sorted, func(a, b timeline.Flag) int {
		return timeline.SeverityRank(a.Severity) - timeline.SeverityRank(b.Severity)
	})
	for i, f := range sorted {
		if i > 0 {
			l.add(RoleDim, " · ")
		}
		mark, role := SeverityMark(f.Severity)
		l.add(role, mark+" "+f.Kind)
		switch {
		case f.Tool != "":
			l.add(RoleText, " "+f.Tool)
		case f.Cause != "":
			l.add(RoleText, " "+f.Cause)
			if f.TokensLost > 0 {
				l.addf(RoleDim, " −%s", Tokens(f.TokensLost))
			}
		}
	}
	return l
}

// sizeCell writes "41" or "43 +2".
func sizeCell(l *Line, n, added int, showAdded bool) {
	l.add(RoleText, strconv.Itoa(n))
	if showAdded && added > 0 {
		l.addf(RoleAdded, " +%d", added)
	}
}

func model(d *decode.Turn) string {
	if d.Request.Model != "" {
		return d.Request.Model
	}
	return d.Response.Model
}

// Stop returns the turn's outcome for the list: the stop reason, an HTTP
// status or error type, or "cut" for a stream that broke off.
func Stop(d *decode.Turn) (string, Role) {
	r := d.Response
	switch {
	case r.Error != nil && r.Error.Type != "":
		return strings.TrimSuffix(r.Error.Type, "_error"), RoleError
	case r.Status >= 400:
		return strconv.Itoa(r.Status), RoleError
	case r.Status == 0 && r.StopReason == "":
		return "no reply", RoleError
	case r.Incomplete:
		return "cut", RoleError
	}
	switch r.StopReason {
	case "end_turn", "tool_use":
		return r.StopReason, RoleText
	case "stop_sequence":
		return "stop_seq", RoleWarning
	case "max_tokens":
		return "max_tok", RoleWarning
	case "model_context_window_exceeded":
		return "ctx_full", RoleWarning
	case "":
		return "-", RoleDim
	}
	return r.StopReason, RoleWarning
}

// Bar splits width cells between cache read, cache creation and uncached
// input, in proportion; a non-zero part gets at least one cell.
func Bar(u decode.Usage, width int) (read, created, input int) {
	total := u.TotalInput()
	if total <= 0 || width <= 0 {
		return 0, 0, 0
	}
	parts := [3]int64{u.CacheReadInputTokens, u.CacheCreationInputTokens, u.InputTokens}
	var cells [3]int
	used := 0
	for i, p := range parts {
		cells[i] = int(p * int64(width) / total)
		if p > 0 && cells[i] == 0 {
			cells[i] = 1
		}
		used += cells[i]
	}
	// Settle rounding on the largest part.
	big := 0
	for i := range parts {
		if parts[i] > parts[big] {
			big = i
		}
	}
	cells[big] += width - used
	if cells[big] < 1 {
		cells[big] = 1
	}
	return cells[0], cells[1], cells[2]
}

// SeverityMark returns the mark and role of a severity: ✖ error, ▲ warning,
// ● info. The marks differ in shape so that they read without colour.
func SeverityMark(s string) (string, Role) {
	switch s {
	case timeline.SeverityError:
		return "✖", RoleError
	case timeline.SeverityWarning:
		return "▲", RoleWarning
	}
	return "●", RoleInfo
}

// flagMarks writes a mark per flag, worst first, then the worst flag's kind.
func flagMarks(l *Line, flags []timeline.Flag, kind bool) {
	if len(flags) == 0 {
		return
	}
	sorted := slices.Clone(flags)
	slices.SortStableFunc(sorted, func(a, b timeline.Flag) int {
		return timeline.SeverityRank(a.Severity) - timeline.SeverityRank(b.Severity)
	})
	for _, f := range sorted {
		mark, role := SeverityMark(f.Severity)
		l.add(role, mark)
	}
	if kind {
		_, role := SeverityMark(sorted[0].Severity)
		l.add(RoleText, " ")
		l.add(role, sorted[0].Kind)
	}
}
