package timeline_test

import (
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/timeline"
)

// TestContradictionsNone: Claude Code's ordinary tool-search round trip
// contradicts nothing.
func TestContradictionsNone(t *testing.T) {
	c := newCapture(t)
	toolsearchSession(c)
	s := c.build()
	for _, k := range []string{timeline.FlagCatalogNoSearch, timeline.FlagSearchNoCatalog, timeline.FlagDeferredInline, timeline.FlagUnknownReference, timeline.FlagReferenceNotSent} {
		noFlag(t, s, k)
	}
}

// TestCatalogWithoutSearch is the ENABLE_TOOL_SEARCH=auto session below
// its threshold: every tool inline, no ToolSearch, the reminder still
// there. Both contradictions are raised once per thread, with evidence.
func TestCatalogWithoutSearch(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("go")
	c1.tools = []any{tool("Agent"), tool("Bash"), tool(echo), tool("mcp__demo__action_0")}
	r1 := call("toolu_e1", echo, obj{"text": "x"}, 0, 20000)
	c.send(c1, r1)
	c.send(c1.then(r1).user(toolResult("toolu_e1", "x", false)), say("ok", 20000, 40))
	s := c.build()
	f := oneFlag(t, s, timeline.FlagCatalogNoSearch, 1)
	for _, want := range []string{"announces 2 tools as deferred", "reminder, message 0, block 0", echo, "4 tools hold no ToolSearch", "2 of the announced tools are sent inline"} {
		if !strings.Contains(f.Detail, want) {
			t.Errorf("catalog_without_search %q does not say %q", f.Detail, want)
		}
	}
	in := oneFlag(t, s, timeline.FlagDeferredInline, 1)
	if !strings.Contains(in.Detail, "2 tools announced as deferred") || !strings.Contains(in.Detail, echo+", mcp__demo__action_0") || in.Tool != "" {
		t.Errorf("deferred_sent_inline %+v", in)
	}
	noFlag(t, s, timeline.FlagSearchNoCatalog)
	noFlag(t, s, timeline.FlagCallBeforeLoad)
}

// TestDeferredInlineOne: one announced tool inline next to ToolSearch; a
// tool newly inlined later is flagged on its own turn.
func TestDeferredInlineOne(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("go")
	c1.tools = append(c1.tools, tool(echo))
	r1 := say("hm", 0, 20000)
	c.send(c1, r1)
	c2 := c1.then(r1).user(text("again"))
	c2.tools = append(c2.tools, tool("mcp__demo__action_0"))
	c.send(c2, say("ok", 20000, 40))
	s := c.build()
	all := allFlags(s, timeline.FlagDeferredInline)
	if len(all) != 2 || len(all[1]) != 1 || len(all[2]) != 1 {
		t.Fatalf("flags %s, want one on turns 1 and 2", describeFlags(all))
	}
	if f := all[1][0]; f.Tool != echo || !strings.Contains(f.Detail, "1 tool announced as deferred") {
		t.Errorf("turn 1 %+v", f)
	}
	if f := all[2][0]; f.Tool != "mcp__demo__action_0" {
		t.Errorf("turn 2 %+v: want only the newly inlined tool", f)
	}
	noFlag(t, s, timeline.FlagCatalogNoSearch)
}

func TestSearchWithoutCatalog(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("go")
	c1.messages = []any{obj{"role": "user", "content": []any{text("go")}}}
	r1 := say("hm", 0, 20000)
	c.send(c1, r1)
	c.send(c1.then(r1).user(text("again")), say("ok", 20000, 40))
	s := c.build()
	f := oneFlag(t, s, timeline.FlagSearchNoCatalog, 1)
	if !strings.Contains(f.Detail, "ToolSearch is among the 5 tools") {
		t.Errorf("%+v", f)
	}
}

// TestUnknownReference: a ToolSearch result names a tool never announced
// nor sent; the next request cannot send it either. One flag, not two.
func TestUnknownReference(t *testing.T) {
	c := newCapture(t)
	r1 := call("toolu_s1", "ToolSearch", obj{"query": "ghost"}, 0, 20000)
	c1 := mainConv("go")
	c.send(c1, r1)
	c2 := c1.then(r1).user(toolResult("toolu_s1", refs("mcp__ghost__boo"), false), text("Tool loaded."))
	c.send(c2, say("ok", 20000, 40))
	s := c.build()
	f := oneFlag(t, s, timeline.FlagUnknownReference, 2)
	if f.Tool != "mcp__ghost__boo" || f.Search != "toolu_s1" || !strings.Contains(f.Detail, `ToolSearch "ghost" returned a tool_reference to mcp__ghost__boo`) || !strings.Contains(f.Detail, "catalog (2 tools)") {
		t.Errorf("%+v", f)
	}
	noFlag(t, s, timeline.FlagReferenceNotSent)
}

// TestReferenceNotSent: echo is loaded by a search, then a later request
// drops it from tools; flagged once for the thread.
func TestReferenceNotSent(t *testing.T) {
	c := newCapture(t)
	c3 := toolsearchSession(c)
	c4 := c3.user(text("more"))
	c4.tools = c4.tools[:len(c4.tools)-1] // echo gone
	r4 := say("again", 20000, 10)
	c.send(c4, r4)
	c.send(c4.then(r4).user(text("more")), say("ok", 20000, 10))
	s := c.build()
	f := oneFlag(t, s, timeline.FlagReferenceNotSent, 4)
	if f.Tool != echo || !strings.Contains(f.Detail, "loads "+echo+", but this request's 5 tools do not include it") {
		t.Errorf("%+v", f)
	}
	if n := len(allFlags(s, timeline.FlagReferenceNotSent)); n != 1 {
		t.Errorf("%d turns flagged, want 1", n)
	}
}

// TestContradictionsSkipTextOnlyRequests: a side request with no tools (a
// compaction summary) carries the catalog and the references as history
// only; unless the API refused it, nothing is flagged.
func TestContradictionsSkipTextOnlyRequests(t *testing.T) {
	for _, refused := range []bool{false, true} {
		c := newCapture(t)
		c3 := toolsearchSession(c)
		side := c3.user(text("Summarise the conversation."))
		side.tools = nil
		r := say("Summary.", 0, 100)
		if refused {
			r = httpError(400, "invalid_request_error", "Tool reference 'mcp__demo__echo' not found in available tools")
		}
		c.send(side, r)
		s := c.build()
		noFlag(t, s, timeline.FlagCatalogNoSearch)
		if !refused {
			noFlag(t, s, timeline.FlagReferenceNotSent)
			continue
		}
		all := allFlags(s, timeline.FlagReferenceNotSent)
		if len(all) != 1 {
			t.Fatalf("refused: flags %s, want one reference_not_sent", describeFlags(all))
		}
		for _, fs := range all {
			if !strings.Contains(fs[0].Detail, "refused the request with HTTP 400") {
				t.Errorf("refused: %s", fs[0].Detail)
			}
		}
	}
}

// TestToolAdditionIsNotAnAnnouncement: a tool_addition block (a deferred
// tool made callable without a search) tells the model nothing about
// ToolSearch: no catalog_without_search, and the added tool sent inline
// is not "announced as deferred".
func TestToolAdditionIsNotAnAnnouncement(t *testing.T) {
	c := newCapture(t)
	c1 := mainConv("go")
	c1.tools = []any{tool("Bash"), tool("lookup_refund_policy")}
	c1.messages = []any{
		obj{"role": "user", "content": []any{text("go")}},
		obj{"role": "system", "content": []any{obj{"type": "tool_addition", "tool": obj{"type": "tool_reference", "name": "lookup_refund_policy"}}}},
	}
	c.send(c1, say("ok", 0, 20000))
	s := c.build()
	if d := s.Turns[0].Decoded; len(d.Catalog) != 1 {
		t.Fatalf("catalog %v: want the added tool (the test needs a catalog)", d.Catalog)
	}
	noFlag(t, s, timeline.FlagCatalogNoSearch)
	noFlag(t, s, timeline.FlagDeferredInline)
}
