package diffreport

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tsinspect/tsinspect/timeline/compare"
)

// shapeLine is a line of the request shape as written: a change, or a run
// of additions or removals of one area (tools, betas) with nothing more to
// say of each, grouped into one line.
type shapeLine struct {
	threads []string
	area    string
	// text is what follows "area: ".
	text  string
	lines []string
}

// shapeLines groups the request shape's changes for writing.
func (r *Result) shapeLines() []shapeLine {
	var out []shapeLine
	for i := 0; i < len(r.Shape); {
		c := r.Shape[i]
		j := i + 1
		if bare(c) {
			for j < len(r.Shape) && bare(r.Shape[j]) && r.Shape[j].Area == c.Area && r.Shape[j].Op == c.Op && slices.Equal(r.Shape[j].Threads, c.Threads) {
				j++
			}
		}
		if j-i == 1 {
			_, text, _ := strings.Cut(changeLine(c), ": ")
			out = append(out, shapeLine{threads: c.Threads, area: c.Area, text: text, lines: c.Lines})
		} else {
			names := make([]string, 0, j-i)
			for _, g := range r.Shape[i:j] {
				names = append(names, g.Item)
			}
			mark := "+"
			if c.Op == "removed" {
				mark = "−"
			}
			out = append(out, shapeLine{threads: c.Threads, area: c.Area, text: fmt.Sprintf("%s %d: %s", mark, len(names), strings.Join(names, ", "))})
		}
		i = j
	}
	return out
}

// bare reports whether c adds or removes an item with nothing more to say
// of it.
func bare(c compare.Change) bool {
	return (c.Op == "added" || c.Op == "removed") && c.A == "" && c.B == "" && c.Detail == "" && len(c.Lines) == 0
}

// shapeLineText is a shape line as one line of text: "area [threads]: text".
func shapeLineText(l shapeLine) string {
	t := l.area
	if len(l.threads) > 0 && !(len(l.threads) == 1 && l.threads[0] == "main") {
		t += " [" + strings.Join(l.threads, ", ") + "]"
	}
	return t + ": " + l.text
}

// listChange is the change a list field of a turn, or the request shape's
// catalog, showed last in a thread, and what to call its place.
type listChange struct {
	names []string // "+name" and "−name", as changeSet makes them
	where string   // "turn 2", "the request shape"
}

// changeSet is the names a list change adds and removes, marked.
func changeSet(added, removed []string) []string {
	out := make([]string, 0, len(added)+len(removed))
	for _, n := range added {
		out = append(out, "+"+n)
	}
	for _, n := range removed {
		out = append(out, "−"+n)
	}
	return out
}

// briefRows returns the fields of each row of t as written: a catalog or
// working set whose change the thread has written already, for an earlier
// row (or in the request shape), is not listed again: it says it is the
// same, or what it adds to or leaves out of that one.
func (r *Result) briefRows(t compare.ThreadDiff) [][]compare.Field {
	last := map[string]*listChange{}
	pair := t.A
	if t.B != t.A {
		pair = t.A + "/" + t.B
	}
	var toolsAdded, toolsRemoved []string
	for _, c := range r.Shape {
		if !slices.Contains(c.Threads, pair) {
			continue
		}
		switch {
		case c.Area == compare.AreaCatalog && len(c.Added)+len(c.Removed) > 0:
			last[compare.FieldCatalog] = &listChange{names: changeSet(c.Added, c.Removed), where: "the request shape"}
		case c.Area == compare.AreaTools && c.Op == "added":
			toolsAdded = append(toolsAdded, c.Item)
		case c.Area == compare.AreaTools && c.Op == "removed":
			toolsRemoved = append(toolsRemoved, c.Item)
		}
	}
	if len(toolsAdded)+len(toolsRemoved) > 0 {
		last[compare.FieldWorkingSet] = &listChange{names: changeSet(toolsAdded, toolsRemoved), where: "the request shape's tools"}
	}
	out := make([][]compare.Field, len(t.Rows))
	for i, row := range t.Rows {
		out[i] = slices.Clone(row.Fields)
		for k := range out[i] {
			f := &out[i][k]
			if len(f.Added)+len(f.Removed) == 0 {
				continue
			}
			names := changeSet(f.Added, f.Removed)
			if prev := last[f.Name]; prev != nil {
				count, _, _ := strings.Cut(f.B, " (")
				if text, same, ok := againText(names, prev); ok {
					f.B = count + " (" + text + ")"
					if same {
						continue // the place written in full stays the one to name
					}
				}
			}
			last[f.Name] = &listChange{names: names, where: "turn " + turnPair(row)}
		}
	}
	return out
}

// againText says a list change against the one written before: the same,
// or that one with what it gains and loses, when that is the shorter
// telling.
func againText(names []string, prev *listChange) (text string, same, ok bool) {
	var gained, lost []string
	for _, n := range names {
		if !slices.Contains(prev.names, n) {
			gained = append(gained, n)
		}
	}
	for _, n := range prev.names {
		if !slices.Contains(names, n) {
			lost = append(lost, n)
		}
	}
	switch {
	case len(gained)+len(lost) == 0:
		return "the same change as " + prev.where, true, true
	case 2*(len(gained)+len(lost)) >= len(names):
		return "", false, false
	}
	text = "the change of " + prev.where
	if len(gained) > 0 {
		text += ", and " + strings.Join(gained, ", ")
	}
	if len(lost) > 0 {
		text += ", without " + strings.Join(lost, ", ")
	}
	return text, false, true
}
