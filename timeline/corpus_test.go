package timeline_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
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

// TestOtherClientEmptySearch: pydantic-ai's search_tools answering "No
// matching tools found" in text (the cassette's tool_reference result
// rewritten to it) is an empty search, flagged; answering with JSON that
// names a tool it is not.
func TestOtherClientEmptySearch(t *testing.T) {
	caps, err := corpus.Captures(corpus.Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	var exs []exchange.Exchange
	for _, c := range caps {
		if c.Name == "pydantic-ai/test_anthropic_explicit_tool_search_keeps_search_surface.yaml" {
			exs = c.Exchanges
		}
	}
	if len(exs) < 2 {
		t.Fatal("the pydantic-ai search cassette is not in the corpus")
	}
	const refs = `[{"tool_name":"search_only_tool","type":"tool_reference"}]`
	rewrite := func(content string) []exchange.Exchange {
		out := slices.Clone(exs)
		for i := range out {
			var v any
			if json.Unmarshal(out[i].ReqBody, &v) != nil {
				continue
			}
			b, _ := json.Marshal(v)
			out[i].ReqBody = bytes.Replace(b, []byte(refs), []byte(content), 1)
		}
		return out
	}
	empty := timeline.Build(rewrite(`"No matching tools found. The tools you need may not be available."`))
	if got := flagList(empty); !slices.Contains(got, "2:empty_search") {
		t.Errorf("flags %v, want empty_search on turn 2\n%s", got, dump(empty))
	}
	named := timeline.Build(rewrite(`"{\"discovered_tools\":[{\"name\":\"search_only_tool\",\"description\":null}]}"`))
	for _, f := range flagList(named) {
		if strings.HasSuffix(f, ":empty_search") {
			t.Errorf("a search naming its tool flagged empty: %v", flagList(named))
		}
	}
	if n := len(named.Turns[1].NewSearches); n != 1 {
		t.Errorf("%d searches on turn 2, want 1", n)
	}
}
