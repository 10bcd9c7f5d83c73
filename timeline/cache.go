package timeline

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// Causes of a cache_break, checked in this order.
const (
	CauseModel    = "model_changed"
	CauseTools    = "tools_changed"
	CauseSystem   = "system_changed"
	CauseBetas    = "betas_changed"
	CauseMessages = "messages_changed"
	CauseTTL      = "ttl_expired"
	// CauseLookback: nothing changed, but the request's cache breakpoint
	// sits 20 or more blocks after the previous one, beyond the API's
	// lookback, so the previous entry could not be found.
	CauseLookback    = "lookback_exceeded"
	CauseUnexplained = "unexplained"
	// CauseCompaction: the turn continues a thread after a compaction,
	// which replaced the whole history with a summary, and the prefix
	// before the messages changed too (the betas), so that nothing was
	// read.
	CauseCompaction = "compaction"
	// CauseNotRecorded: turns made from a transcript, where nothing the
	// transcript holds changed; what it does not hold (the system prompt,
	// the tools, the betas) may have.
	CauseNotRecorded = "not_recorded"
)

// The break rule's thresholds: a break is a cache read below breakRatio of
// what was due, and at least breakMinTokens below it. These are Claude
// Code's own (it compares with the previous request's read).
const (
	breakRatio     = 0.95
	breakMinTokens = 2000
	// lookback is how many blocks the API searches back from a breakpoint
	// for a cached prefix, the breakpoint's own block included.
	lookback = 20
)

// CacheBreak applies the break rule to a request whose prompt read read of
// total tokens from the cache, after a baseline request that read
// baseRead and wrote baseWrite: the tokens lost, and whether that is a
// break. What was due is what the baseline left in the cache, capped by
// this prompt (see ruleCacheBreak). The session listing applies it too.
func CacheBreak(baseRead, baseWrite, read, total int64) (lost int64, ok bool) {
	due := min(baseRead+baseWrite, total)
	if float64(read) < breakRatio*float64(due) && due-read >= breakMinTokens {
		return due - read, true
	}
	return 0, false
}

// Cache lifetimes.
const (
	ttl5m = 5 * time.Minute
	ttl1h = time.Hour
)

// cacheBaseline walks back from turn k's Prev to the nearest turn that got
// a complete, non-empty reply with usage: failed, cut and empty attempts
// (and their retries) say nothing reliable about what was cached, and a
// failed request writes nothing. -1 when there is none.
func cacheBaseline(v ruleView, k int) int {
	p := v.turn(k).t.Prev - 1
	for p >= 0 {
		pi := v.turn(p)
		if pi.usage && !pi.empty {
			return p
		}
		p = pi.t.Prev - 1
	}
	return -1
}

// compactedSince reports whether a compaction lies on turn k's lineage
// after turn base: k, or a turn between them, joined its thread after a
// compaction.
func compactedSince(v ruleView, k, base int) bool {
	for p := k; p > base; p = v.turn(p).t.Prev - 1 {
		if v.turn(p).t.Link == LinkCompaction {
			return true
		}
	}
	return false
}

// ruleCacheBreak compares a turn's cache read with what its baseline turn
// left in the cache.
//
// Claude Code's own rule compares with the previous request's cache read
// alone. We compare with read + creation of the baseline instead: that is
// the prefix the previous request left in the cache, and the next request
// of the same conversation extends that prefix, so all of it is due. This
// catches what the read-only rule cannot: a break on the second turn of a
// thread (the first read nothing, so nothing can fall below 95 % of it),
// and a break that loses only the newest part of the prefix. The expected
// amount is capped by this request's whole prompt, so a history that got
// shorter on purpose is not a break by itself.
func ruleCacheBreak(v ruleView, k int) []Flag {
	in := v.turn(k)
	if in.t.Prev == 0 || !in.usage {
		return nil
	}
	base := cacheBaseline(v, k)
	if base < 0 {
		return nil
	}
	bi := v.turn(base)
	bu := bi.d.Response.Usage
	u := in.d.Response.Usage
	due := min(bu.CacheReadInputTokens+bu.CacheCreationInputTokens, u.TotalInput())
	read := u.CacheReadInputTokens
	if _, ok := CacheBreak(bu.CacheReadInputTokens, bu.CacheCreationInputTokens, read, u.TotalInput()); !ok {
		return nil
	}
	cause, why := breakCause(v, base, k)
	// After compaction the history restarts on purpose, and Claude Code
	// renders its system prompt afresh (its snapshot lasts until the
	// compaction): only a change of model, tools or betas is a break then,
	// and one of the betas is the compaction's as much as theirs. A turn
	// made from a transcript shows only the model. The first turn after
	// the compaction that got an answer is measured so, even when attempts
	// that failed came between (the compaction is their link, not its).
	if compactedSince(v, k, base) {
		switch {
		case cause == CauseMessages || cause == CauseSystem:
			return nil
		case in.d.Request.Transcript != nil || bi.d.Request.Transcript != nil:
			if !CompactionBreak(bi.d.Request.Model, in.d.Request.Model) {
				return nil
			}
		case cause == CauseBetas:
			// The history was replaced whole; the betas are only what
			// else changed with it.
			cause, why = CauseCompaction, "the compaction before this turn replaced the whole history with a summary, and "+why
		}
	}
	lost := due - read
	d := fmt.Sprintf("Cache read fell from %s to %s tokens (%s) against %s: %s.", numfmt.Thousands(due), numfmt.Thousands(read), signed(-lost), v.ref(base), why)
	left := bu.CacheReadInputTokens + bu.CacheCreationInputTokens
	if bu.CacheCreationInputTokens > 0 && bu.CacheReadInputTokens > 0 {
		d += fmt.Sprintf(" That turn left %s tokens in the cache (%s read, %s written)", numfmt.Thousands(left), numfmt.Thousands(bu.CacheReadInputTokens), numfmt.Thousands(bu.CacheCreationInputTokens))
	} else {
		d += fmt.Sprintf(" That turn left %s tokens in the cache", numfmt.Thousands(left))
	}
	if due < left {
		d += fmt.Sprintf("; this whole prompt is %s", numfmt.Thousands(due))
	}
	d += "."
	if u.CacheCreationInputTokens > 0 {
		d += fmt.Sprintf(" What was lost was billed again as cache creation (%s tokens written).", numfmt.Thousands(u.CacheCreationInputTokens))
	} else {
		d += " What was lost was billed again as uncached input."
	}
	f := Flag{Cause: cause, TokensLost: lost}
	if m := in.d.Response.CacheMissReason; m != nil && m.Type != "" {
		agrees := m.Type == cause
		f.CacheMissReason, f.Agrees = m.Type, &agrees
		if agrees {
			d += fmt.Sprintf(" The API's diagnostics agree: cache_miss_reason %s.", m.Type)
		} else {
			d += fmt.Sprintf(" The API's diagnostics say otherwise: cache_miss_reason %s.", m.Type)
		}
		if m.CacheMissedInputTokens > 0 {
			d = strings.TrimSuffix(d, ".") + fmt.Sprintf(", %s tokens missed.", numfmt.Thousands(m.CacheMissedInputTokens))
		}
	}
	f.Detail = d
	return []Flag{f}
}

// CompactionBreak reports whether a turn that continues its thread after
// a compaction, asked of model after a baseline asked of baseModel, can be
// a cache break when all that is known of its prefix is the model (turns
// made from a transcript, and the session listing): a compaction replaces
// the history on purpose and is never a break by itself; only a change of
// model, which has its own cache, is.
func CompactionBreak(baseModel, model string) bool { return baseModel != model }

// breakCause finds what changed in the cached prefix between the baseline
// turn base and turn k, in prefix order: model, tools, system (and speed,
// which invalidates it), betas, messages; then time; else the server.
// Turns made from a transcript go by what the transcript holds
// (transcriptCause).
func breakCause(v ruleView, base, k int) (cause, why string) {
	p, t := v.turn(base), v.turn(k)
	pr, tr := &p.d.Request, &t.d.Request
	if pr.Transcript != nil || tr.Transcript != nil {
		return transcriptCause(v, base, k)
	}
	if pr.Model != tr.Model {
		return CauseModel, fmt.Sprintf("the model changed from %s to %s, and each model has its own cache", orNone(pr.Model), orNone(tr.Model))
	}
	if p.toolsKey != t.toolsKey {
		return CauseTools, "the tool definitions changed (" + toolsChange(p.tools, t.tools) + "); tools come first in the cached prefix, so nothing after the first changed tool could be read (deferred tools are not part of it)"
	}
	if p.sysKey != t.sysKey {
		return CauseSystem, "the system prompt changed (" + systemChange(p, t) + "; the billing header block is not counted)"
	}
	if a, c := CanonicalJSON(pr.Other["speed"]), CanonicalJSON(tr.Other["speed"]); !bytes.Equal(a, c) {
		return CauseSystem, fmt.Sprintf("the speed setting changed from %s to %s, which invalidates the cached system prompt and messages", orAbsent(a), orAbsent(c))
	}
	if !equalStrings(p.betas, t.betas) {
		added, removed := SetDiff(p.betas, t.betas)
		return CauseBetas, "the betas changed (" + changeList(added, removed) + ")"
	}
	if why, ok := messagesChange(p, t); ok {
		return CauseMessages, why
	}
	gap := t.start.Sub(p.start)
	if ttl := markerTTL(p.d.Request.CacheMarkers); gap > ttl {
		return CauseTTL, fmt.Sprintf("%s passed since that turn started, longer than the %s cache lifetime its cache_control markers set", durationText(gap), durationText(ttl))
	}
	if n, ok := lookbackExceeded(p, t); ok {
		return CauseLookback, fmt.Sprintf("nothing in the prefix changed, but this request's cache breakpoint is %d content blocks after that turn's, and the API looks back only %d blocks for a cached prefix", n, lookback)
	}
	msgs := fmt.Sprintf("first %d messages", len(p.msgHash))
	if len(p.msgHash) == 1 {
		msgs = "first message"
	}
	why = fmt.Sprintf("nothing in the cached prefix changed (same model, %d tool definitions, system prompt, betas and %s) and only %s passed since that turn started: the cache entry was lost on the server's side",
		len(t.tools), msgs, durationText(max(gap, 0)))
	if changed := otherSettingsChanged(pr, tr); changed != "" {
		why += " (or by the change of " + changed + ", which the API does not document as part of the cached prefix)"
	}
	return CauseUnexplained, why
}

// transcriptCause is the cause of a break between turns made from a
// transcript, base and k, from the evidence the files hold, in this
// order: the API's own diagnostics when Claude Code wrote them with the
// answer; a change of model; the tools a ToolSearch loaded right before
// (their schemas join the tools, first in the prefix); a change in the
// messages; the time between the turns against the cache lifetime the
// earlier requests' own usage shows (their 5-minute and 1-hour writes);
// else what the transcript does not hold (the system prompt, the tools,
// the betas) may have changed. A compaction is not a cause: the rule
// never flags one (CompactionBreak).
func transcriptCause(v ruleView, base, k int) (cause, why string) {
	p, t := v.turn(base), v.turn(k)
	pr, tr := &p.d.Request, &t.d.Request
	if api := t.d.Response.CacheMissReason; api != nil && api.Type != "" {
		// Claude Code wrote the API's own diagnosis with the answer.
		return api.Type, fmt.Sprintf("the API's diagnostics name the cause (cache_miss_reason %s); the transcript does not hold the requests to show what changed", api.Type)
	}
	if pr.Model != tr.Model {
		return CauseModel, fmt.Sprintf("the model changed from %s to %s, and each model has its own cache", orNone(pr.Model), orNone(tr.Model))
	}
	if j, s, ok := searchLoaded(v, k); ok {
		return CauseTools, fmt.Sprintf("the %s on %s loaded %s: %s schemas were added to the tools, which come first in the cached prefix", s.Tool, v.ref(j), strings.Join(s.Results, ", "), plural(len(s.Results), "its", "their"))
	}
	if why, ok := messagesChange(p, t); ok {
		return CauseMessages, why
	}
	gap := max(t.start.Sub(p.start), 0)
	ttl, from, known := writeLifetime(v, base)
	switch {
	case known && gap > ttl:
		return CauseTTL, fmt.Sprintf("%s passed since that turn started, longer than the %s cache lifetime %s wrote (its usage's cache_creation)", durationText(gap), durationText(ttl), v.ref(from))
	case known:
		return CauseNotRecorded, fmt.Sprintf("the model and the messages are the same and only %s passed, within the %s cache lifetime %s wrote (its usage's cache_creation), but the transcript does not hold the system prompt, the tools or the betas, so the cause is not known from it", durationText(gap), durationText(ttl), v.ref(from))
	case gap > ttl1h:
		return CauseTTL, fmt.Sprintf("%s passed since that turn started, longer than any cache lifetime", durationText(gap))
	case gap > ttl5m:
		return CauseTTL, fmt.Sprintf("%s passed since that turn started, longer than the 5-minute cache lifetime (no usage of the thread splits its cache writes by lifetime, so whether the cache lived 5 minutes or an hour is not known)", durationText(gap))
	}
	return CauseNotRecorded, fmt.Sprintf("the model and the messages are the same and only %s passed, but the transcript does not hold the system prompt, the tools or the betas, so the cause is not known from it", durationText(gap))
}

// searchLoaded finds the search whose result turn k carries and that
// loaded tools (a tool_reference): the turn whose answer called it (the
// one before k), and the search.
func searchLoaded(v ruleView, k int) (int, decode.Search, bool) {
	in := v.turn(k)
	for _, s := range in.t.NewSearches {
		if !s.Server && len(s.Results) > 0 && in.t.Prev > 0 {
			return in.t.Prev - 1, s, true
		}
	}
	return -1, decode.Search{}, false
}

// writeLifetime is the lifetime of the cache entry that turn base read or
// wrote, from the usage of the nearest turn at or before it in its thread
// that wrote to the cache and split its writes by lifetime
// (usage.cache_creation): one hour when it wrote only 1-hour entries,
// else five minutes. known is false when no such turn says.
func writeLifetime(v ruleView, base int) (ttl time.Duration, from int, known bool) {
	for p := base; p >= 0; {
		u := v.turn(p).d.Response.Usage
		if cc := u.CacheCreation; cc != nil && cc.Ephemeral5m+cc.Ephemeral1h > 0 {
			if cc.Ephemeral5m == 0 {
				return ttl1h, p, true
			}
			return ttl5m, p, true
		}
		p = v.turn(p).t.Prev - 1
	}
	return ttl5m, -1, false
}

// otherSettingsChanged lists the top-level request settings outside the
// documented prefix (effort in output_config, context_management, ...)
// that differ between two requests, with their values, or "".
func otherSettingsChanged(pr, tr *decode.Request) string {
	keys := map[string]bool{}
	for k := range pr.Other {
		keys[k] = true
	}
	for k := range tr.Other {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		switch k {
		case "thinking", "tool_choice", "speed", "metadata", "diagnostics", "stream":
			continue // in the prefix (checked before), or not settings
		}
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		a, c := CanonicalJSON(pr.Other[k]), CanonicalJSON(tr.Other[k])
		if !bytes.Equal(a, c) {
			parts = append(parts, fmt.Sprintf("%s from %s to %s", k, orAbsent(a), orAbsent(c)))
		}
	}
	return strings.Join(parts, " and ")
}

// messagesChange finds the first difference in the messages part of the
// prefix: the thinking and tool_choice settings (which sit where the
// messages start), then the messages p sent.
func messagesChange(p, t *info) (string, bool) {
	for _, key := range []string{"thinking", "tool_choice"} {
		a, c := CanonicalJSON(p.d.Request.Other[key]), CanonicalJSON(t.d.Request.Other[key])
		if !bytes.Equal(a, c) {
			return fmt.Sprintf("the %s settings changed from %s to %s, which invalidates the cached messages", key, orAbsent(a), orAbsent(c)), true
		}
	}
	pm, tm := p.d.Request.Messages, t.d.Request.Messages
	for i := range pm {
		if i >= len(tm) {
			return fmt.Sprintf("the history is shorter: it stops after message %d, where that turn had %d messages", len(tm)-1, len(pm)), true
		}
		if p.msgHash[i] == t.msgHash[i] {
			continue
		}
		a, c := canonicalMessage(pm[i]), canonicalMessage(tm[i])
		off := firstDiff(a, c)
		what := fmt.Sprintf("message %d (%s) is the first that differs", i, tm[i].Role)
		if pm[i].Role != tm[i].Role {
			return what + fmt.Sprintf(": it was a %s message", pm[i].Role), true
		}
		offs := blockOffsets(tm[i])
		blk := -1
		for j, o := range offs {
			if o <= off {
				blk = j
			}
		}
		blocks := messageBlocks(tm[i])
		if blk >= 0 && blk < len(blocks) {
			what += fmt.Sprintf(": block %d (%s) changes at byte %s of the message's JSON", blk, blocks[blk].Type, numfmt.Thousands(int64(off)))
		} else {
			what += fmt.Sprintf(": it changes at byte %s of the message's JSON", numfmt.Thousands(int64(off)))
		}
		if n, m := len(messageBlocks(pm[i])), len(blocks); n != m {
			what += fmt.Sprintf(" (%d %s, was %d)", m, numfmt.Plural(m, "block", "blocks"), n)
		}
		what += fmt.Sprintf(", cache_control markers aside: was `%s`, now `%s`", excerpt(a, off), excerpt(c, off))
		return what, true
	}
	return "", false
}

// markerTTL is the lifetime of the entry a request's last breakpoint
// wrote: one hour when it carries ttl "1h", else five minutes.
func markerTTL(ms []decode.CacheMarker) time.Duration {
	if len(ms) == 0 {
		return ttl5m
	}
	if ms[len(ms)-1].TTL == "1h" {
		return ttl1h
	}
	for _, m := range ms {
		if m.TTL == "1h" && m.Where == "message" {
			return ttl1h
		}
	}
	return ttl5m
}

// lookbackExceeded reports whether every breakpoint of t at or after p's
// last breakpoint is too far from it for the API to find p's entry, and
// the distance from the nearest.
func lookbackExceeded(p, t *info) (int, bool) {
	pp := markerPositions(p)
	if len(pp) == 0 {
		return 0, false
	}
	last := pp[len(pp)-1]
	nearest := -1
	for _, q := range markerPositions(t) {
		if q < last {
			continue
		}
		if q-last < lookback {
			return 0, false
		}
		if nearest < 0 || q-last < nearest {
			nearest = q - last
		}
	}
	return nearest, nearest >= 0
}

// markerPositions places a request's cache breakpoints in its prefix,
// counted in blocks: non-deferred tools, system blocks (billing header
// aside), then message content blocks. Sorted.
func markerPositions(in *info) []int {
	r := &in.d.Request
	toolPos := map[int]int{}
	n := 0
	for i, tool := range r.Tools {
		if !tool.DeferLoading {
			toolPos[i] = n
			n++
		}
	}
	sysPos := map[int]int{}
	for j, idx := range in.sysIdx {
		sysPos[idx] = n + j
	}
	n += len(in.sysIdx)
	msgStart := make([]int, len(r.Messages)+1)
	for i, m := range r.Messages {
		msgStart[i] = n
		n += len(messageBlocks(m))
	}
	msgStart[len(r.Messages)] = n
	var out []int
	for _, m := range r.CacheMarkers {
		switch m.Where {
		case "tool":
			if pos, ok := toolPos[m.Index]; ok {
				out = append(out, pos)
			}
		case "system":
			if pos, ok := sysPos[m.Index]; ok {
				out = append(out, pos)
			}
		case "message":
			if m.Index >= 0 && m.Index < len(r.Messages) {
				out = append(out, msgStart[m.Index]+max(m.Block, 0))
			}
		case "request":
			if n > 0 {
				out = append(out, n-1)
			}
		}
	}
	sortInts(out)
	return out
}

// toolsChange describes how two non-deferred tool lists differ.
func toolsChange(a, b []toolEntry) string {
	am := map[string]digest{}
	var an, bn []string
	for _, t := range a {
		am[t.name] = t.hash
		an = append(an, t.name)
	}
	var changed []string
	for _, t := range b {
		bn = append(bn, t.name)
		if h, ok := am[t.name]; ok && h != t.hash {
			changed = append(changed, t.name)
		}
	}
	added, removed := SetDiff(an, bn)
	var parts []string
	if len(added) > 0 || len(removed) > 0 {
		parts = append(parts, changeList(added, removed))
	}
	if len(changed) > 0 {
		parts = append(parts, "definition changed: "+strings.Join(changed, ", "))
	}
	if len(parts) == 0 {
		parts = append(parts, "same tools in a different order")
	}
	return strings.Join(parts, "; ") + fmt.Sprintf("; %d non-deferred tools, was %d", len(b), len(a))
}

// systemChange describes where two system prompts first differ.
func systemChange(p, t *info) string {
	ps, ts := p.d.Request.System, t.d.Request.System
	for j := 0; j < max(len(p.sysHash), len(t.sysHash)); j++ {
		switch {
		case j >= len(t.sysHash):
			return fmt.Sprintf("block %d was removed", p.sysIdx[j])
		case j >= len(p.sysHash):
			return fmt.Sprintf("block %d was added, %s", t.sysIdx[j], bytesText(len(ts[t.sysIdx[j]].Text)))
		case p.sysHash[j] != t.sysHash[j]:
			a, c := ps[p.sysIdx[j]].Text, ts[t.sysIdx[j]].Text
			off := firstDiff([]byte(a), []byte(c))
			s := fmt.Sprintf("block %d", t.sysIdx[j])
			switch {
			case off < 0:
				s += " changed outside its text"
			default:
				s += fmt.Sprintf(" differs from byte %s of its text", numfmt.Thousands(int64(off)))
				if len(c) != len(a) {
					s += fmt.Sprintf(", %s long, was %s", bytesText(len(c)), bytesText(len(a)))
				}
			}
			return s
		}
	}
	return "its blocks were reordered"
}

func changeList(added, removed []string) string {
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "added "+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		parts = append(parts, "removed "+strings.Join(removed, ", "))
	}
	return strings.Join(parts, "; ")
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func orAbsent(b []byte) string {
	if len(b) == 0 {
		return "(absent)"
	}
	s := string(b)
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return s
}

// excerpt shows b around byte off, on rune boundaries, for a person.
func excerpt(b []byte, off int) string {
	const before, after = 24, 40
	start, end := max(off-before, 0), min(off+after, len(b))
	if start > len(b) {
		start = len(b)
	}
	for start > 0 && !utf8.RuneStart(b[start]) {
		start--
	}
	for end < len(b) && !utf8.RuneStart(b[end]) {
		end++
	}
	s := strings.ReplaceAll(string(b[start:end]), "`", "'")
	if start > 0 {
		s = "…" + s
	}
	if end < len(b) {
		s += "…"
	}
	return s
}
