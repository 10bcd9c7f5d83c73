package source

import (
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

const opus = "claude-opus-4-7"

// breakAfter writes two turns gap apart, the first writing its cache
// with the given lifetimes, the second reading nothing, and returns the
// cache_break flags.
func breakAfter(t *testing.T, gap time.Duration, w5m, w1h int64, extra map[string]any) []timeline.Flag {
	h := newHandmade(t, "2.1.217")
	h.user(0, "first")
	h.answer(3*time.Second, opus, 20000, w5m, w1h, text("one"), nil)
	h.user(gap, "second")
	h.answer(3*time.Second, opus, 0, 0, 30000, text("two"), extra)
	return flagsOf(h.write(), timeline.FlagCacheBreak)
}

func TestTranscriptBreakLifetimeFromUsage(t *testing.T) {
	for _, tc := range []struct {
		name     string
		gap      time.Duration
		w5m, w1h int64
		cause    string
		says     string
	}{
		{"1h writes, 7 minutes: no expiry", 7 * time.Minute, 0, 9000, timeline.CauseNotRecorded, "within the 1 h cache lifetime"},
		{"1h writes, 70 minutes: expiry", 70 * time.Minute, 0, 9000, timeline.CauseTTL, "longer than the 1 h cache lifetime"},
		{"5m writes, 7 minutes: expiry", 7 * time.Minute, 9000, 0, timeline.CauseTTL, "longer than the 5 min cache lifetime"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := breakAfter(t, tc.gap, tc.w5m, tc.w1h, nil)
			if len(fs) != 1 || fs[0].Cause != tc.cause || !strings.Contains(fs[0].Detail, tc.says) {
				t.Fatalf("got %+v, want one %s saying %q", fs, tc.cause, tc.says)
			}
			if strings.Contains(fs[0].Detail, "5 minutes or an hour") {
				t.Errorf("the usage tells the lifetime, yet: %s", fs[0].Detail)
			}
		})
	}
}

func TestTranscriptBreakDiagnosticsFirst(t *testing.T) {
	diag := map[string]any{"diagnostics": map[string]any{"cache_miss_reason": map[string]any{"type": "system_changed", "cache_missed_input_tokens": 20000}}}
	fs := breakAfter(t, 70*time.Minute, 0, 9000, diag)
	if len(fs) != 1 || fs[0].Cause != "system_changed" {
		t.Fatalf("got %+v, want the API's system_changed before the gap", fs)
	}
}

func TestTranscriptBreakAfterToolSearch(t *testing.T) {
	h := newHandmade(t, "2.1.217")
	h.user(0, "first")
	h.answer(3*time.Second, opus, 20000, 0, 9000, []any{map[string]any{"type": "tool_use", "id": "toolu_s1", "name": "ToolSearch", "input": map[string]any{"query": "select:WebFetch,WebSearch", "max_results": 5}}}, nil)
	h.user(time.Second, []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_s1", "content": []any{
		map[string]any{"type": "tool_reference", "tool_name": "WebFetch"}, map[string]any{"type": "tool_reference", "tool_name": "WebSearch"}}}})
	h.answer(3*time.Second, opus, 0, 0, 30000, text("two"), nil)
	s := h.write()
	fs := flagsOf(s, timeline.FlagCacheBreak)
	if len(fs) != 1 || fs[0].Cause != timeline.CauseTools || !strings.Contains(fs[0].Detail, "ToolSearch on turn 1") || !strings.Contains(fs[0].Detail, "loaded WebFetch, WebSearch") {
		t.Fatalf("got %+v, want tools_changed naming the search and its tools", fs)
	}
	// The Cache tab says what the flag says, and no other story.
	tab := view.Text(view.Cache(s, s.Turns[1], 80, 6))
	if !strings.Contains(tab, fs[0].Detail) || strings.Contains(tab, "Nothing in the request broke the cache") {
		t.Errorf("the Cache tab does not say what the flag says:\n%s", tab)
	}
}

// A manual /compact writes its own command's records after the boundary
// as children of the boundary's logical parent: the next request still
// starts from the summary, and is no cache break.
func TestTranscriptManualCompactIsNoBreak(t *testing.T) {
	h := newHandmade(t, "2.1.217")
	h.user(0, "first")
	h.answer(3*time.Second, opus, 200000, 0, 9000, text("one"), nil)
	before := h.add(time.Second, "", map[string]any{"type": "system", "subtype": "stop_hook_summary", "content": "", "level": "info"})
	h.add(3*time.Minute, "-", map[string]any{"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "logicalParentUuid": before,
		"compactMetadata": map[string]any{"trigger": "manual", "preTokens": 209000}})
	h.add(0, "", map[string]any{"type": "user", "isCompactSummary": true, "message": map[string]any{"role": "user", "content": "This session is being continued from a previous conversation that ran out of context.\n[summary]"}})
	h.add(0, before, map[string]any{"type": "user", "isMeta": true, "message": map[string]any{"role": "user", "content": "<local-command-caveat>Caveat: ...</local-command-caveat>"}})
	h.user(0, "<command-name>/compact</command-name>")
	h.user(0, "<local-command-stdout>Compacted </local-command-stdout>")
	h.user(time.Minute, "go on")
	h.answer(3*time.Second, opus, 30000, 0, 20000, text("two"), map[string]any{"diagnostics": map[string]any{"cache_miss_reason": map[string]any{"type": "messages_changed"}}})
	s := h.write()
	if fs := flagsOf(s, timeline.FlagCacheBreak); len(fs) != 0 {
		t.Fatalf("a compaction flagged as a cache break: %+v", fs)
	}
	last := s.Turns[len(s.Turns)-1]
	if last.Link != timeline.LinkCompaction {
		t.Errorf("the turn after /compact is linked %q, want compaction", last.Link)
	}
}

// search writes a ToolSearch for query whose result loads loaded, and the
// answer after it calling next.
func search(h *handmade, query string, loaded []string, next string) {
	h.answer(3*time.Second, opus, 20000, 0, 900, []any{map[string]any{"type": "tool_use", "id": "toolu_s", "name": "ToolSearch", "input": map[string]any{"query": query, "max_results": 1}}}, nil)
	var refs []any
	for _, n := range loaded {
		refs = append(refs, map[string]any{"type": "tool_reference", "tool_name": n})
	}
	h.user(time.Second, []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_s", "content": refs}})
	h.answer(3*time.Second, opus, 20900, 0, 300, []any{map[string]any{"type": "tool_use", "id": "toolu_n", "name": next, "input": map[string]any{"url": "x"}}}, nil)
}

// A 2.1.79 session (no catalog written) whose keyword search names two of
// Claude Code's tools and loads one: search_partial, in the timeline and
// the listing; a search that loads all it names: none.
func TestSearchPartialFromTranscript(t *testing.T) {
	h := newHandmade(t, "2.1.79")
	h.user(0, "look it up")
	search(h, "WebSearch WebFetch", []string{"WebFetch"}, "WebFetch")
	s := h.write()
	fs := flagsOf(s, timeline.FlagSearchPartial)
	if len(fs) != 1 || len(fs[0].Missing) != 1 || fs[0].Missing[0] != "WebSearch" || !strings.Contains(fs[0].Detail, "called WebFetch") {
		t.Fatalf("got %+v, want WebSearch left out, then WebFetch called", fs)
	}

	h = newHandmade(t, "2.1.79")
	h.user(0, "look it up")
	search(h, "select:WebSearch", []string{"WebSearch"}, "WebSearch")
	if fs := flagsOf(h.write(), timeline.FlagSearchPartial); len(fs) != 0 {
		t.Fatalf("a search that loaded what it named: %+v", fs)
	}
}

// Claude Code's own messages for errors the API answered ("Not logged
// in", "Credit balance is too low", overloaded) are api_errors with its
// text, not broken streams; a connection that failed stays one.
func TestSyntheticAPIErrors(t *testing.T) {
	for _, tc := range []struct {
		text, kind, says string
	}{
		{"Not logged in · Please run /login", timeline.FlagAPIError, "HTTP 401 (authentication_error: Claude Code wrote: Not logged in · Please run /login"},
		{"Credit balance is too low", timeline.FlagAPIError, "HTTP 400 (invalid_request_error: Claude Code wrote: Credit balance is too low"},
		{"Repeated 529 Overloaded errors", timeline.FlagAPIError, "HTTP 529 (overloaded_error"},
		{"API Error: Unable to connect to API (ECONNRESET)", timeline.FlagStreamIncomplete, "ECONNRESET"},
	} {
		h := newHandmade(t, "2.1.217")
		h.user(0, "hello")
		h.add(time.Second, "", map[string]any{"type": "assistant", "isApiErrorMessage": true,
			"message": map[string]any{"id": "msg_err", "type": "message", "role": "assistant", "model": "<synthetic>", "content": text(tc.text),
				"usage": map[string]any{"input_tokens": 0, "output_tokens": 0}}})
		s := h.write()
		fs := flagsOf(s, tc.kind)
		if len(fs) != 1 || !strings.Contains(fs[0].Detail, tc.says) {
			t.Errorf("%q: got %+v, want one %s saying %q", tc.text, fs, tc.kind, tc.says)
		}
		if tc.kind == timeline.FlagAPIError && len(flagsOf(s, timeline.FlagStreamIncomplete)) > 0 {
			t.Errorf("%q: still a broken stream", tc.text)
		}
	}
}
