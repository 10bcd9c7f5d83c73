package timeline_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/timeline"
)

// flagCases holds every flag kind to the recorded captures of testdata:
// the captures where it must fire, with how many times; on every other
// capture it must not (and TestCorpusFlags holds it to the third-party
// corpus as well).
var flagCases = []struct {
	kind  string
	fires map[string]int
	// synthetic names the test that makes the flag fire where no real
	// client could be made to: on every recorded capture it must not.
	synthetic string
}{
	// The SDK's automatic retry met HTTP 529.
	{kind: timeline.FlagAPIError, fires: map[string]int{"sdk-flaky": 1}},
	// A stream cut after four events.
	{kind: timeline.FlagStreamIncomplete, fires: map[string]int{"sdk-flaky": 1}},
	// After the 529, the cut stream and the empty reply in sdk-flaky; each
	// subagent asked again after its empty reply in Claude Code's capture.
	// Never the parallel subagents nor the two conversations of sdk-agent.
	{kind: timeline.FlagRetry, fires: map[string]int{"sdk-flaky": 3, "claude-code-parallel-subagents": 2}},
	// get_exchange_rate is deferred and no search loaded it.
	{kind: timeline.FlagCallBeforeLoad, fires: map[string]int{"sdk-flaky": 1}},
	// book_flight is offered nowhere; with tool search off, Claude Code
	// offers no ToolSearch and the model called it twice.
	{kind: timeline.FlagUnknownTool, fires: map[string]int{"sdk-flaky": 1, "claude-code-search-absent": 2}},
	// Empty replies ending on "\n\nHuman:", which no request set; never
	// the poem of sdk-agent, which ends on the stop sequence it asked for.
	{kind: timeline.FlagStopSequence, fires: map[string]int{"sdk-flaky": 1, "claude-code-parallel-subagents": 4}},
	// The server-side regex search for flights found nothing; the one of
	// sdk-agent found get_weather. Never the calls of an absent ToolSearch
	// (claude-code-search-absent): no search ran.
	{kind: timeline.FlagEmptySearch, fires: map[string]int{"sdk-flaky": 1}},
	// echo loaded, called, then asked for again with the same select:
	// query; never the two refused calls of the absent ToolSearch.
	{kind: timeline.FlagSearchRepeated, fires: map[string]int{"claude-code-search-repeated": 1}},
	// The stand-in evicted the cache entry; never the growing prompts of
	// the other captures, nor the first turns of subagents.
	{kind: timeline.FlagCacheBreak, fires: map[string]int{"sdk-flaky": 1}},
	// Claude Code with ENABLE_TOOL_SEARCH=false, and with auto below the
	// threshold; never on an SDK app, nor where ToolSearch is on.
	{kind: timeline.FlagToolSearchOff, fires: map[string]int{"claude-code-tool-search-off": 1, "claude-code-auto-inline": 1, "claude-code-search-absent": 1}},
	// Claude Code with ENABLE_TOOL_SEARCH=auto below the threshold: every
	// schema inline, no ToolSearch, and still the deferred-tools reminder.
	{kind: timeline.FlagCatalogNoSearch, fires: map[string]int{"claude-code-auto-inline": 1}},
	{kind: timeline.FlagDeferredInline, fires: map[string]int{"claude-code-auto-inline": 1}},
	// Claude Code could not be made to send these; synthetic sessions
	// provoke them, and no recorded capture may raise them.
	{kind: timeline.FlagSearchNoCatalog, synthetic: "TestSearchWithoutCatalog"},
	// Recorded with real Claude Code in e2e (TestSessionFilesAgreeWithRecorder, "missed").
	{kind: timeline.FlagSearchPartial, synthetic: "TestRuleSearchPartialOnAView"},
	{kind: timeline.FlagUnknownReference, synthetic: "TestUnknownReference"},
	{kind: timeline.FlagReferenceNotSent, synthetic: "TestReferenceNotSent"},
}

func TestEveryFlagKindOnRecordedCaptures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json.gz"))
	if err != nil || len(files) < 4 {
		t.Fatalf("captures in testdata: %v %v", files, err)
	}
	sessions := map[string]*timeline.Session{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json.gz")
		sessions[name] = timeline.Build(loadCapture(t, name))
	}
	var covered []string
	for _, c := range flagCases {
		covered = append(covered, c.kind)
		if len(c.fires) == 0 && c.synthetic == "" {
			t.Errorf("%s: no capture where it fires", c.kind)
		}
		for name := range c.fires {
			if sessions[name] == nil {
				t.Errorf("%s: no capture %s in testdata", c.kind, name)
			}
		}
		for name, s := range sessions {
			got := 0
			for _, tt := range s.Turns {
				for _, f := range tt.Flags {
					if f.Kind == c.kind {
						got++
					}
				}
			}
			if want := c.fires[name]; got != want {
				t.Errorf("%s on %s: %d flags, want %d\n%s", c.kind, name, got, want, dump(s))
			}
		}
	}
	for _, k := range timeline.Kinds() {
		if !slices.Contains(covered, k) {
			t.Errorf("flag kind %s has no case", k)
		}
	}
}
