package compare

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"slices"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/timeline"
)

// facts is what Compare looks at in a turn, taken once.
type facts struct {
	index   int
	model   string
	status  int
	stop    string
	catalog []string
	working []string
	// searches are the turn's new searches, each "mode query → results".
	searches []string
	// calls are the response's calls by name; inputs their inputs'
	// canonical JSON, in the same order.
	calls  []string
	inputs []string
	usage  decode.Usage
	cost   float64
	priced bool
	flags  []string
	// sig identifies the turn by content (the last user message, the
	// model and the calls); weak by the model and the calls' names.
	sig, weak [sha256.Size]byte
}

// factsOf takes the facts of every turn of s, by index.
func factsOf(s Side) map[int]*facts {
	out := make(map[int]*facts, len(s.Session.Turns))
	for _, t := range s.Session.Turns {
		if !isMessages(t) {
			continue
		}
		d := t.Decoded
		f := &facts{index: t.Index, model: d.Request.Model, status: d.Response.Status, stop: d.Response.StopReason,
			catalog: d.Catalog, usage: d.Response.Usage}
		for _, w := range d.WorkingSet {
			f.working = append(f.working, w.Name)
		}
		for _, sr := range t.NewSearches {
			f.searches = append(f.searches, searchText(sr))
		}
		for _, c := range d.ToolCalls {
			f.calls = append(f.calls, callText(d, c))
			f.inputs = append(f.inputs, string(timeline.CanonicalJSON(c.Input)))
		}
		for _, fl := range t.Flags {
			f.flags = append(f.flags, fl.Kind)
		}
		sort.Strings(f.flags)
		if s.Cost != nil {
			f.cost, f.priced = s.Cost(t)
		}
		f.sig, f.weak = signatures(d)
		out[t.Index] = f
	}
	return out
}

// callText is a call as a diff shows it: the tool's name, and for a
// search its query (other inputs are the user's: they are compared, not
// shown).
func callText(d *decode.Turn, c decode.ToolCall) string {
	for _, sr := range d.Searches {
		if sr.Call.Response && sr.ToolUseID == c.ID {
			return fmt.Sprintf("%s %q", c.Name, sr.Query)
		}
	}
	return c.Name
}

// searchText is a search as a diff shows it: its mode, its query and what
// it loaded.
func searchText(sr decode.Search) string {
	res := strings.Join(sr.Results, ", ")
	switch {
	case sr.IsError:
		res = "error " + sr.ErrorCode
	case !sr.HasResult:
		res = "no result"
	case len(sr.Results) == 0:
		res = "nothing"
	}
	return fmt.Sprintf("%s %q → %s", sr.Mode, sr.Query, res)
}

// signatures hashes what identifies a turn by content. Ids (tool_use ids,
// message ids), signatures and cache_control marks are left out.
func signatures(d *decode.Turn) (sig, weak [sha256.Size]byte) {
	h := sha256.New()
	w := sha256.New()
	h.Write([]byte(d.Request.Model + "\x00"))
	w.Write([]byte(d.Request.Model + "\x00"))
	if i := d.LastUser.Message; i >= 0 && i < len(d.Request.Messages) {
		m := d.Request.Messages[i]
		if m.StringContent {
			h.Write([]byte(m.Text))
		}
		for _, b := range m.Blocks {
			h.Write(blockKey(b))
			h.Write([]byte{0})
		}
	}
	h.Write([]byte{1})
	for _, c := range d.ToolCalls {
		h.Write([]byte(c.Name + "\x00"))
		h.Write(timeline.CanonicalJSON(c.Input))
		w.Write([]byte(c.Name + "\x00"))
	}
	h.Sum(sig[:0])
	w.Sum(weak[:0])
	return sig, weak
}

// blockKey is a content block without its ids: text as it is, any other
// block as its canonical JSON less "id", "tool_use_id" and "signature".
func blockKey(b decode.Block) []byte {
	if b.Type == "text" {
		return []byte("text\x00" + b.Text)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Raw, &m); err != nil {
		return b.Raw
	}
	for _, k := range []string{"id", "tool_use_id", "signature", "cache_control"} {
		delete(m, k)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return b.Raw
	}
	return out
}

// threadDiff aligns the turns of a thread pair.
func threadDiff(p threadPair, fa, fb map[int]*facts) ThreadDiff {
	td := ThreadDiff{}
	list := func(t *timeline.Thread, fs map[int]*facts) []*facts {
		if t == nil {
			return nil
		}
		out := make([]*facts, 0, len(t.Turns))
		for _, i := range t.Turns {
			if f := fs[i]; f != nil {
				out = append(out, f)
			}
		}
		return out
	}
	if p.a != nil {
		td.A, td.Kind = p.a.ID, p.a.Kind
	}
	if p.b != nil {
		td.B, td.Kind = p.b.ID, p.b.Kind
	}
	as, bs := list(p.a, fa), list(p.b, fb)
	if p.a == nil || p.b == nil {
		// A thread of one side only: one row for all of it.
		r := Row{Op: OpInserted, Count: len(bs)}
		if p.b == nil {
			r.Op, r.Count = OpDeleted, len(as)
		}
		if len(as) > 0 {
			r.AFirst, r.ALast = as[0].index, as[len(as)-1].index
		}
		if len(bs) > 0 {
			r.BFirst, r.BLast = bs[0].index, bs[len(bs)-1].index
		}
		td.Rows = []Row{r}
		return td
	}
	for _, pr := range align(as, bs) {
		var r Row
		switch {
		case pr.i < 0:
			f := bs[pr.j]
			r = Row{Op: OpInserted, BFirst: f.index, BLast: f.index, Count: 1, What: what(f)}
		case pr.j < 0:
			f := as[pr.i]
			r = Row{Op: OpDeleted, AFirst: f.index, ALast: f.index, Count: 1, What: what(f)}
		default:
			x, y := as[pr.i], bs[pr.j]
			r = Row{Op: OpSame, AFirst: x.index, ALast: x.index, BFirst: y.index, BLast: y.index, Count: 1}
			if r.Fields = fields(x, y); len(r.Fields) > 0 {
				r.Op = OpChanged
			}
		}
		if n := len(td.Rows); n > 0 && r.Op == OpSame && td.Rows[n-1].Op == OpSame {
			last := &td.Rows[n-1]
			last.ALast, last.BLast = r.ALast, r.BLast
			last.Count++
			continue
		}
		td.Rows = append(td.Rows, r)
	}
	return td
}

// what sums up a turn of one side: its model, searches and calls.
func what(f *facts) string {
	parts := []string{f.model}
	for _, s := range f.searches {
		parts = append(parts, "result of "+s)
	}
	if len(f.calls) > 0 {
		parts = append(parts, "calls "+strings.Join(f.calls, ", "))
	}
	if f.stop != "" && f.stop != "tool_use" {
		parts = append(parts, f.stop)
	}
	return strings.Join(parts, "; ")
}

// The names of the fields that are lists of tools (Field.Added,
// Field.Removed).
const (
	FieldCatalog    = "catalog"
	FieldWorkingSet = "working set"
)

// fields lists what differs between two aligned turns.
func fields(a, b *facts) []Field {
	var out []Field
	add := func(name, x, y string) {
		if x != y {
			out = append(out, Field{Name: name, A: x, B: y})
		}
	}
	add("model", a.model, b.model)
	add("status", fmt.Sprint(a.status), fmt.Sprint(b.status))
	add("stop reason", a.stop, b.stop)
	if added, removed := timeline.SetDiff(a.catalog, b.catalog); len(added)+len(removed) > 0 {
		out = append(out, Field{Name: FieldCatalog, A: fmt.Sprintf("%d tools", len(a.catalog)), B: fmt.Sprintf("%d tools", len(b.catalog)) + changeText(added, removed),
			Added: added, Removed: removed})
	}
	if added, removed := timeline.SetDiff(a.working, b.working); len(added)+len(removed) > 0 {
		out = append(out, Field{Name: FieldWorkingSet, A: fmt.Sprintf("%d tools", len(a.working)), B: fmt.Sprintf("%d tools", len(b.working)) + changeText(added, removed),
			Added: added, Removed: removed})
	}
	if !slices.Equal(a.searches, b.searches) {
		out = append(out, Field{Name: "searches", A: listText(a.searches), B: listText(b.searches)})
	}
	if !slices.Equal(a.calls, b.calls) {
		out = append(out, Field{Name: "calls", A: listText(a.calls), B: listText(b.calls)})
	} else if !slices.Equal(a.inputs, b.inputs) {
		var differ []string
		for i := range a.inputs {
			if a.inputs[i] != b.inputs[i] && !slices.Contains(differ, a.calls[i]) {
				differ = append(differ, a.calls[i])
			}
		}
		out = append(out, Field{Name: "call inputs", A: strings.Join(differ, ", "), B: "other input"})
	}
	num := func(name string, x, y int64) {
		if x != y {
			out = append(out, Field{Name: name, A: numfmt.Thousands(x), B: numfmt.Thousands(y) + " (" + signedThousands(y-x) + ")"})
		}
	}
	num("input tokens", a.usage.InputTokens, b.usage.InputTokens)
	num("cache read", a.usage.CacheReadInputTokens, b.usage.CacheReadInputTokens)
	num("cache write", a.usage.CacheCreationInputTokens, b.usage.CacheCreationInputTokens)
	num("output tokens", a.usage.OutputTokens, b.usage.OutputTokens)
	if a.priced != b.priced || a.cost != b.cost {
		x, y := costTexts(a.cost, b.cost, a.priced, b.priced)
		out = append(out, Field{Name: "cost", A: x, B: y})
	}
	add("flags", listText(a.flags), listText(b.flags))
	return out
}

func usdText(usd float64, ok bool) string {
	if !ok {
		return "not priced"
	}
	return fmt.Sprintf("$%.4f", usd)
}

// costTexts formats two different costs with enough digits to tell them
// apart.
func costTexts(a, b float64, aok, bok bool) (string, string) {
	x, y := usdText(a, aok), usdText(b, bok)
	if x == y && aok && bok {
		x, y = fmt.Sprintf("$%.6f", a), fmt.Sprintf("$%.6f", b)
	}
	return x, y
}

// signedThousands is n with its sign: "+1,200", "−30".
func signedThousands(n int64) string {
	if n < 0 {
		return "−" + numfmt.Thousands(-n)
	}
	return "+" + numfmt.Thousands(n)
}

func listText(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, "; ")
}

// changeText is " (+a, b; −c)" for names added and removed, "" for none.
func changeText(added, removed []string) string {
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "+"+strings.Join(added, ", +"))
	}
	if len(removed) > 0 {
		parts = append(parts, "−"+strings.Join(removed, ", −"))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}
