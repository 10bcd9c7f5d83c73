package timeline_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures/corpus"
	"github.com/tsinspect/tsinspect/timeline"
)

// flagList lists a session's flags as "turn:kind", in order.
func flagList(s *timeline.Session) []string {
	var out []string
	for _, t := range s.Turns {
		for _, f := range t.Flags {
			out = append(out, fmt.Sprintf("%d:%s", t.Index, f.Kind))
		}
	}
	return out
}

// corpusFlags are the flags the third-party corpus really calls for.
var corpusFlags = map[string][]string{
	// A real 400: a tool_reference to a tool no longer in tools.
	"vercel-ai/anthropic-tool-choice-none-tool-search-history.error.json": {"1:api_error"},
}

// TestCorpusFlags builds a session of every capture of the third-party
// corpus (SDK cassettes of the real API, and recorded responses) and holds
// its flags to what really went wrong there: anything else is a false
// flag. A file holding responses only answers a placeholder request with
// no tools, so the kinds that depend on the request's tools are left out
// there.
func TestCorpusFlags(t *testing.T) {
	caps, err := corpus.Captures(corpus.Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(caps) < 40 {
		t.Fatalf("only %d corpus captures read", len(caps))
	}
	requestBound := []string{timeline.FlagUnknownTool, timeline.FlagCallBeforeLoad, timeline.FlagUnknownReference}
	turns := 0
	for _, c := range caps {
		s := timeline.Build(c.Exchanges)
		turns += len(s.Turns)
		var got []string
		for _, t := range s.Turns {
			for _, f := range t.Flags {
				if c.ResponseOnly && slices.Contains(requestBound, f.Kind) {
					continue
				}
				got = append(got, fmt.Sprintf("%d:%s", t.Index, f.Kind))
			}
		}
		if want := corpusFlags[c.Name]; !slices.Equal(got, want) {
			t.Errorf("%s: flags %v, want %v\n%s", c.Name, got, want, dump(s))
		}
		if strings.HasPrefix(c.Name, "anthropic-sdk-go/") && strings.HasSuffix(c.Name, ".yaml") {
			if cl := s.Turns[0].Client; cl.String() != "Anthropic Go SDK 1.16.0" || cl.Family != timeline.ClientSDK {
				t.Errorf("%s: client %+v", c.Name, cl)
			}
		}
		for _, th := range s.Threads {
			if th.Kind == timeline.KindSide {
				t.Errorf("%s: %s is a side query, but the client is %s", c.Name, th.ID, th.Client)
			}
		}
	}
	if turns < 60 {
		t.Errorf("only %d turns in the corpus", turns)
	}
}
