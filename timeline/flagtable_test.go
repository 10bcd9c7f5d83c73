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
}{
	// The SDK's automatic retry met HTTP 529.
	{timeline.FlagAPIError, map[string]int{"sdk-flaky": 1}},
	// A stream cut after four events.
	{timeline.FlagStreamIncomplete, map[string]int{"sdk-flaky": 1}},
	// After the 529, the cut stream and the empty reply in sdk-flaky; each
	// subagent asked again after its empty reply in Claude Code's capture.
	// Never the parallel subagents nor the two conversations of sdk-agent.
	{timeline.FlagRetry, map[string]int{"sdk-flaky": 3, "claude-code-parallel-subagents": 2}},
	// get_exchange_rate is deferred and no search loaded it.
	{timeline.FlagCallBeforeLoad, map[string]int{"sdk-flaky": 1}},
	// book_flight is offered nowhere.
	{timeline.FlagUnknownTool, map[string]int{"sdk-flaky": 1}},
	// Empty replies ending on "\n\nHuman:", which no request set; never
	// the poem of sdk-agent, which ends on the stop sequence it asked for.
	{timeline.FlagStopSequence, map[string]int{"sdk-flaky": 1, "claude-code-parallel-subagents": 4}},
	// The server-side regex search for flights found nothing; the one of
	// sdk-agent found get_weather.
	{timeline.FlagEmptySearch, map[string]int{"sdk-flaky": 1}},
	// The stand-in evicted the cache entry; never the growing prompts of
	// the other captures, nor the first turns of subagents.
	{timeline.FlagCacheBreak, map[string]int{"sdk-flaky": 1}},
	// Claude Code with ENABLE_TOOL_SEARCH=false; never on an SDK app,
	// nor where ToolSearch is on.
	{timeline.FlagToolSearchOff, map[string]int{"claude-code-tool-search-off": 1}},
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
		if len(c.fires) == 0 {
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
