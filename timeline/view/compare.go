package view

import (
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/compare"
)

// TabCompare is the tab of the turn's differences from the session it is
// compared with (open A --compare B); it exists only then, after the
// others.
const TabCompare Tab = NumTabs

// Comparison is the session shown (A) set beside another (B): each turn
// of A's aligned counterpart in B and what differs.
type Comparison struct {
	// Name names B.
	Name string
	Diff *compare.Diff
	rows map[int]*compare.Row // by A's turn index
}

// NewComparison indexes d by the turns of A; name names B.
func NewComparison(d *compare.Diff, name string) *Comparison {
	c := &Comparison{Name: name, Diff: d, rows: map[int]*compare.Row{}}
	for ti := range d.Threads {
		for ri := range d.Threads[ti].Rows {
			r := &d.Threads[ti].Rows[ri]
			if r.AFirst == 0 {
				continue
			}
			for i := r.AFirst; i <= r.ALast; i++ {
				c.rows[i] = r
			}
		}
	}
	return c
}

// Mark is the turn list's mark for a turn of A: "≠" when its counterpart
// in B differs, "−" when it has none, "" when it is the same.
func (c *Comparison) Mark(t *timeline.Turn) string {
	r := c.rows[t.Index]
	switch {
	case r == nil, r.Op == compare.OpDeleted:
		return "−"
	case r.Op == compare.OpChanged:
		return "≠"
	}
	return ""
}

// FlagsCell puts the turn's mark before its FLAGS cell.
func (c *Comparison) FlagsCell(t *timeline.Turn, flags Line) Line {
	m := c.Mark(t)
	if m == "" {
		return flags
	}
	var l Line
	l.add(RoleWarning, m)
	if len(flags) > 0 {
		l.add(RoleText, " ")
	}
	return append(l, flags...)
}

// Lines is the Compare tab of turn t: its counterpart in B and what
// differs, then the differences in the requests' shape.
func (c *Comparison) Lines(t *timeline.Turn) []Line {
	var d doc
	heading(&d, t, "Compared with "+c.Name, "")
	r := c.rows[t.Index]
	switch {
	case r == nil || r.Op == compare.OpDeleted:
		d.text(RoleWarning, "No counterpart in B: this turn is only in this session.")
	case r.Op == compare.OpSame:
		d.text(RoleText, "The same as B's turn %d.", r.BFirst+(t.Index-r.AFirst))
	default:
		d.text(RoleText, "B's turn %d differs:", r.BFirst)
		for _, f := range r.Fields {
			l := d.line()
			l.addf(RoleKey, "  %-14s", f.Name)
			l.addf(RoleRemoved, "A: %s", orDashText(f.A))
			l2 := d.line()
			l2.addf(RoleKey, "  %-14s", "")
			l2.addf(RoleAdded, "B: %s", orDashText(f.B))
		}
	}
	// Turns of B with no counterpart here, just before this one.
	for _, th := range c.Diff.Threads {
		for i, row := range th.Rows {
			if row.Op != compare.OpInserted || i+1 >= len(th.Rows) || th.Rows[i+1].AFirst != t.Index {
				continue
			}
			d.line()
			d.text(RoleWarning, "Before it, only in B: turn %d (%s).", row.BFirst, row.What)
		}
	}
	if len(c.Diff.Shape) > 0 {
		d.line()
		d.text(RoleTitle, "Request shape, A → B")
		for _, ch := range c.Diff.Shape {
			l := d.line()
			l.addf(RoleText, "  %s: %s %s", ch.Area, ch.Op, ch.Item)
			if ch.Detail != "" {
				l.addf(RoleDim, " (%s)", ch.Detail)
			}
		}
	}
	if c.Diff.Same {
		d.line()
		d.text(RoleDim, "The two sessions are the same in what tsinspect compares.")
	}
	return d.lines
}

func orDashText(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
