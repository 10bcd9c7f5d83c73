package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/timeline"
)

// isCacheFlag reports whether a flag is about the prompt cache.
func isCacheFlag(f timeline.Flag) bool {
	return strings.Contains(f.Kind, "cache") || f.Cause != ""
}

// Cache draws the prompt of every turn of t's thread as a stacked bar chart
// (cache read, cache creation, uncached input) of the given size, marks t
// and the cache breaks under it, and then explains t: its figures, its
// cache flags, and the first point where its prompt prefix differs from the
// previous request of the thread, as a diff of the two requests there.
// (The Flags tab has each flag's full story.)
func Cache(s *timeline.Session, t *timeline.Turn, width, height int) []Line {
	return cache(s, t, width, height, "", false)
}

// CacheWithoutText is Cache without the text of the prefix that changed
// (a system prompt, a message, a tool definition: what a redacted view
// never shows): where the diff would be, it says note.
func CacheWithoutText(s *timeline.Session, t *timeline.Turn, width, height int, note string) []Line {
	return cache(s, t, width, height, note, false)
}

// cache is Cache, without its chart when charted (the front end draws
// it), with the diff of the prefix replaced by note when note is set.
func cache(s *timeline.Session, t *timeline.Turn, width, height int, note string, charted bool) []Line {
	var d doc
	thread := threadTurns(s, t)
	l := d.line()
	l.addf(RoleTitle, "Prompt cache across %s", t.Thread)
	l.addf(RoleDim, " (%s)", numfmt.Count(len(thread), "turn", "turns"))
	if !charted {
		chart(&d, thread, t, width, height)
	}

	u := decoded(t).Response.Usage
	l = d.line()
	l.addf(RoleTitle, "#%d", t.Index)
	if u.TotalInput() == 0 {
		l.add(RoleDim, "  no usage reported")
	} else {
		l.addf(RoleText, "  prompt %s = ", Tokens(u.TotalInput()))
		l.addf(RoleRead, "read %s", Tokens(u.CacheReadInputTokens))
		l.add(RoleText, " + ")
		l.addf(RoleCreated, "created %s", Tokens(u.CacheCreationInputTokens))
		l.add(RoleText, " + ")
		l.addf(RoleInput, "input %s", Tokens(u.InputTokens))
		if t.OutputPlaceholder() {
			l.addf(RoleDim, ";  output ≥%s (the placeholder written when the answer began: the files hold no final count)", Tokens(u.OutputTokens))
		} else {
			l.addf(RoleDim, ";  output %s", Tokens(u.OutputTokens))
		}
	}
	composition(&d, t)
	if r := decoded(t).Response.CacheMissReason; r != nil {
		l := d.line()
		l.add(RoleKey, "  API cache_miss_reason ")
		l.add(RoleText, r.Type)
		if r.CacheMissedInputTokens > 0 {
			l.addf(RoleDim, " (%s tokens missed)", Tokens(r.CacheMissedInputTokens))
		}
	}
	for _, f := range t.Flags {
		if !isCacheFlag(f) {
			continue
		}
		mark, role := SeverityMark(f.Severity)
		l := d.line()
		l.addf(role, "%s %s", mark, f.Kind)
		l.addf(RoleText, "  cause %s", orDash(f.Cause))
		if f.TokensLost > 0 {
			l.addf(RoleText, ", %s tokens lost", Tokens(f.TokensLost))
		}
		if f.CacheMissReason != "" {
			l.addf(RoleDim, "; the API says %s", f.CacheMissReason)
		}
		if f.Detail != "" {
			// What the flag says, whole: the tab never tells another story.
			d.line().add(RoleText, "    "+f.Detail)
		}
	}

	prev := TurnAt(s, t.Prev)
	switch {
	case prev == nil && t.Link == timeline.LinkRestart:
		d.text(RoleDim, "First turn since %s started again (its context cleared, or the record it continues missing from the file): no earlier request to compare with.", t.Thread)
		return d.lines
	case prev == nil:
		d.text(RoleDim, "First turn of %s: no earlier request to compare with.", t.Thread)
		return d.lines
	}
	pc := FirstPrefixChange(decoded(prev), decoded(t))
	l = d.line()
	l.addf(RoleTitle, "Prefix vs #%d", prev.Index)
	if gap, ok := timeline.GapText(prev, t); ok {
		l.addf(RoleDim, "  (%s after it started)", gap)
	}
	if pc.Betas {
		d.line().add(RoleWarning, "  anthropic-beta header changed")
	}
	if pc.Where == "" {
		if decoded(t).Request.Transcript != nil {
			// A request made from a transcript holds only the model and
			// the messages: the rest of the prefix is not known.
			d.line().add(RoleText, "  Same model and messages: the transcript does not hold the system prompt, the tools or the betas to compare.")
		} else {
			d.line().add(RoleText, "  Same prefix: this request repeats the previous one and adds to it.")
		}
		for _, f := range t.Flags {
			if isCacheFlag(f) {
				d.line().addf(RoleDim, "  The cache broke all the same: %s (the flag above says why).", orDash(f.Cause))
				break
			}
		}
		return d.lines
	}
	l = d.line()
	l.add(RoleText, "  first difference at ")
	l.add(RoleWarning, pc.Where)
	if note != "" {
		d.line().add(RoleDim, "  "+note)
		return d.lines
	}
	for _, dl := range Diff(pc.Old, pc.New, 2, 40) {
		l := d.line()
		switch dl.Op {
		case '-':
			l.add(RoleRemoved, "  - "+dl.Text)
		case '+':
			l.add(RoleAdded, "  + "+dl.Text)
		case '~':
			l.add(RoleDim, "    "+dl.Text)
		default:
			l.add(RoleDim, "    "+dl.Text)
		}
	}
	return d.lines
}

// composition says what filled t's prompt (advice.ContextOf): the largest
// parts first, each with its share of the prompt billed, those under 1 %
// counted together.
func composition(d *doc, t *timeline.Turn) {
	c := advice.ContextOf(t)
	if c.Tokens <= 0 || len(c.Parts) == 0 {
		return
	}
	const most = 4
	l := d.line()
	l.add(RoleKey, "  filled by ")
	rest := 0
	for i, p := range c.Parts {
		if i >= most || i > 0 && p.Tokens*100 < c.Tokens {
			rest++
			continue
		}
		if i > 0 {
			l.add(RoleDim, ", ")
		}
		l.addf(RoleText, "%s %s", p.Name, Tokens(p.Tokens))
		l.addf(RoleDim, " %d%%", p.Tokens*100/c.Tokens)
	}
	if rest > 0 {
		l.addf(RoleDim, " +%d smaller", rest)
	}
	if c.Scaled {
		l.add(RoleDim, " (billed prompt by bytes)")
	} else {
		l.add(RoleDim, " (≈2.5 bytes/token)")
	}
}

// chart draws the stacked bars of thread into d.
func chart(d *doc, thread []*timeline.Turn, sel *timeline.Turn, width, height int) {
	const axis = 8 // "  42.7k┤"
	height = max(height, 2)
	plot := max(width-axis-1, 4)
	n := len(thread)
	cw := min(max(plot/max(n, 1), 1), 4) // cells per turn
	shown := min(n, plot/cw)
	pos := 0
	for i, u := range thread {
		if u.Index == sel.Index {
			pos = i
		}
	}
	first := min(max(pos-shown/2, 0), n-shown)
	window := thread[first : first+shown]
	var top int64
	for _, u := range thread {
		top = max(top, decoded(u).Response.Usage.TotalInput())
	}
	if top == 0 {
		d.text(RoleDim, "  no usage reported in this thread")
		return
	}
	bar := max(cw-1, 1) // a gap between bars when there is room
	scale := func(v int64) int { return int((v*int64(height) + top/2) / top) }
	for row := 0; row < height; row++ {
		level := height - row
		l := d.line()
		switch row {
		case 0:
			l.addf(RoleDim, "%7s┤", Tokens(top))
		case height - 1:
			l.addf(RoleDim, "%7s┤", "0")
		default:
			l.addf(RoleDim, "%7s│", "")
		}
		for _, u := range window {
			us := decoded(u).Response.Usage
			hr := scale(us.CacheReadInputTokens)
			hc := scale(us.CacheReadInputTokens + us.CacheCreationInputTokens)
			ht := max(scale(us.TotalInput()), min(int(us.TotalInput()), 1))
			glyph, role := " ", RoleText
			switch {
			case level <= hr:
				glyph, role = "█", RoleRead
			case level <= hc:
				glyph, role = "▓", RoleCreated
			case level <= ht:
				glyph, role = "░", RoleInput
			}
			l.add(role, strings.Repeat(glyph, bar))
			if cw > bar {
				l.add(RoleText, " ")
			}
		}
	}
	// Marks: the selected turn and the cache breaks.
	l := d.line()
	l.addf(RoleDim, "%7s└", "")
	for _, u := range window {
		mark, role := "─", RoleDim
		for _, f := range u.Flags {
			if isCacheFlag(f) {
				mark, role = SeverityMark(f.Severity)
			}
		}
		if u.Index == sel.Index {
			mark, role = "◆", RoleTitle
		}
		l.add(role, mark)
		l.add(RoleDim, strings.Repeat("─", cw-1))
	}
	l = d.line()
	l.addf(RoleDim, "%8s", "")
	if len(window) > 0 {
		lo, hi := fmt.Sprintf("#%d", window[0].Index), fmt.Sprintf("#%d", window[len(window)-1].Index)
		span := len(window) * cw
		l.add(RoleDim, lo)
		if gap := span - len(lo) - len(hi); gap > 0 && len(window) > 1 {
			l.add(RoleDim, strings.Repeat(" ", gap)+hi)
		}
	}
	l = d.line()
	l.add(RoleRead, "  █ read")
	l.add(RoleCreated, "  ▓ created")
	l.add(RoleInput, "  ░ input")
	l.addf(RoleTitle, "   ◆ #%d", sel.Index)
	l.add(RoleWarning, "  ▲✖")
	l.add(RoleDim, " cache flag")
}

// PrefixChange is where a request's prompt prefix first differs from the
// previous request's, in the order the prompt cache reads it: model, then
// tools, system and messages.
type PrefixChange struct {
	// Where names the element ("model", "tools[4] Bash", "system[2]",
	// "messages[3].content[1] (text)"), "" when the new request repeats
	// the previous one and only adds to it.
	Where string
	// Old and New are the element in each request, as text to diff.
	Old, New string
	// Betas is set when the anthropic-beta header changed.
	Betas bool
}

// FirstPrefixChange finds the first point where cur's prompt prefix
// differs from prev's. Deferred tools are not part of the prefix, nor is
// Claude Code's billing header, and cache_control markers are ignored (they
// move every turn).
func FirstPrefixChange(prev, cur *decode.Turn) PrefixChange {
	pc := PrefixChange{Betas: strings.Join(prev.Request.Betas, ",") != strings.Join(cur.Request.Betas, ",")}
	p, c := prev.Request, cur.Request
	if p.Model != c.Model {
		pc.Where, pc.Old, pc.New = "model", p.Model, c.Model
		return pc
	}
	type tool struct {
		i int
		t decode.Tool
	}
	prefixTools := func(ts []decode.Tool) []tool {
		var out []tool
		for i, t := range ts {
			if !t.DeferLoading {
				out = append(out, tool{i, t})
			}
		}
		return out
	}
	pt, ct := prefixTools(p.Tools), prefixTools(c.Tools)
	for i := 0; i < max(len(pt), len(ct)); i++ {
		switch {
		case i >= len(ct):
			pc.Where = fmt.Sprintf("tools[%d] %s (no longer sent)", pt[i].i, pt[i].t.Name)
			pc.Old = pretty(pt[i].t.Raw)
			return pc
		case i >= len(pt):
			pc.Where = fmt.Sprintf("tools[%d] %s (new)", ct[i].i, ct[i].t.Name)
			pc.New = pretty(ct[i].t.Raw)
			return pc
		case !sameJSON(pt[i].t.Raw, ct[i].t.Raw):
			pc.Where = fmt.Sprintf("tools[%d] %s", ct[i].i, ct[i].t.Name)
			pc.Old, pc.New = pretty(pt[i].t.Raw), pretty(ct[i].t.Raw)
			return pc
		}
	}
	for i := 0; i < max(len(p.System), len(c.System)); i++ {
		var a, b *decode.SystemBlock
		if i < len(p.System) {
			a = &p.System[i]
		}
		if i < len(c.System) {
			b = &c.System[i]
		}
		if a != nil && b != nil && strings.HasPrefix(a.Text, timeline.BillingPrefix) && strings.HasPrefix(b.Text, timeline.BillingPrefix) {
			continue
		}
		if a == nil || b == nil || a.Type != b.Type || a.Text != b.Text {
			pc.Where = fmt.Sprintf("system[%d]", i)
			if a != nil {
				pc.Old = a.Text
			}
			if b != nil {
				pc.New = b.Text
			}
			return pc
		}
	}
	for i, pm := range p.Messages {
		if i >= len(c.Messages) {
			pc.Where = fmt.Sprintf("messages[%d] (no longer sent)", i)
			pc.Old = messageText(pm)
			return pc
		}
		cm := c.Messages[i]
		if pm.Role != cm.Role || pm.StringContent != cm.StringContent {
			pc.Where = fmt.Sprintf("messages[%d] (%s, was %s)", i, cm.Role, pm.Role)
			pc.Old, pc.New = messageText(pm), messageText(cm)
			return pc
		}
		if pm.StringContent {
			if pm.Text != cm.Text && !strings.HasPrefix(cm.Text, pm.Text) {
				pc.Where = fmt.Sprintf("messages[%d].content", i)
				pc.Old, pc.New = pm.Text, cm.Text
				return pc
			}
			continue
		}
		for j, pb := range pm.Blocks {
			if j >= len(cm.Blocks) {
				pc.Where = fmt.Sprintf("messages[%d].content[%d] (%s, no longer sent)", i, j, pb.Type)
				pc.Old = blockText(pb)
				return pc
			}
			if cb := cm.Blocks[j]; !sameJSON(pb.Raw, cb.Raw) {
				pc.Where = fmt.Sprintf("messages[%d].content[%d] (%s)", i, j, cb.Type)
				pc.Old, pc.New = blockText(pb), blockText(cb)
				return pc
			}
		}
	}
	return pc
}

// sameJSON compares two JSON values, ignoring cache_control.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	return bytes.Equal(timeline.CanonicalJSON(a), timeline.CanonicalJSON(b))
}

// pretty indents a JSON value, without its cache_control, for a diff.
func pretty(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Indent(&buf, timeline.CanonicalJSON(raw), "", "  ") != nil {
		return string(raw)
	}
	return buf.String()
}

// blockText is a content block as text to diff: its text when it has one.
func blockText(b decode.Block) string {
	switch {
	case b.Type == "text" && b.Text != "":
		return b.Text
	case b.Type == "thinking" && b.Thinking != "":
		return b.Thinking
	}
	return pretty(b.Raw)
}

func messageText(m *decode.Message) string {
	if m.StringContent {
		return m.Text
	}
	var parts []string
	for _, b := range m.Blocks {
		parts = append(parts, blockText(b))
	}
	return strings.Join(parts, "\n")
}
