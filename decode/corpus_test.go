package decode

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// expectedProblems lists the corpus exchanges that are malformed on
// purpose, with a fragment of each problem they must raise.
var expectedProblems = map[string][]string{
	// The tool_use block is never stopped and its input JSON is cut.
	"anthropic-sdk-python/incomplete_partial_json_response.txt": {
		"response block 1 never stopped",
		"response block 1: input JSON does not parse",
	},
}

// TestCorpusDecodes decodes every corpus file and checks each exchange
// decodes without problems (but for the malformed ones, which must raise
// theirs) and yields a message or an error.
func TestCorpusDecodes(t *testing.T) {
	files := corpusFiles(t)
	if len(files) < 40 {
		t.Fatalf("corpus has %d files, want at least 40", len(files))
	}
	for _, rel := range files {
		cases := corpusCases(t, rel)
		if len(cases) == 0 {
			t.Errorf("%s: no exchange", rel)
		}
		for _, c := range cases {
			turn := Decode(c.ex)
			if want, ok := expectedProblems[rel]; ok {
				got := strings.Join(turn.Problems, "\n")
				for _, w := range want {
					if !strings.Contains(got, w) {
						t.Errorf("%s: want a problem with %q, got:\n%s", c.name, w, got)
					}
				}
			} else {
				noProblems(t, c.name, turn)
			}
			r := turn.Response
			switch {
			case r.Error != nil:
				if r.Error.Type == "" || r.Error.Message == "" {
					t.Errorf("%s: error without type or message: %+v", c.name, r.Error)
				}
			case turn.Request.Kind == KindCountTokens:
				if r.Usage.InputTokens == 0 {
					t.Errorf("%s: count_tokens without input_tokens", c.name)
				}
			default:
				if r.ID == "" || r.StopReason == "" {
					t.Errorf("%s: response without id or stop_reason: id=%q stop=%q", c.name, r.ID, r.StopReason)
				}
				if r.Streamed && r.Incomplete {
					t.Errorf("%s: complete stream marked incomplete", c.name)
				}
				if len(r.Usage.Raw) == 0 || (r.Usage.OutputTokens == 0 && r.StopReason != "refusal") {
					t.Errorf("%s: no usage or no output_tokens: %s", c.name, r.Usage.Raw)
				}
			}
			for i, b := range r.Content {
				if b.Type == "" || !json.Valid(b.Raw) {
					t.Errorf("%s: block %d has no type or invalid raw", c.name, i)
				}
				if (b.Type == "tool_use" || b.Type == "server_tool_use") && !json.Valid(b.Input) && b.PartialInput == "" {
					t.Errorf("%s: block %d: tool input missing", c.name, i)
				}
			}
			if _, err := json.Marshal(turn); err != nil {
				t.Errorf("%s: turn does not marshal: %v", c.name, err)
			}
		}
	}
}

// decodeCorpus decodes the exchanges of one corpus file.
func decodeCorpus(t *testing.T, rel string) []*Turn {
	t.Helper()
	var out []*Turn
	for _, c := range corpusCases(t, rel) {
		out = append(out, Decode(c.ex))
	}
	return out
}

func blockTypes(bs []Block) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Type)
	}
	return out
}

func TestCorpusGoCassetteStream(t *testing.T) {
	turns := decodeCorpus(t, "anthropic-sdk-go/toolrunner_testdata_cassettes_tool_runner_streaming_all.yaml")
	if len(turns) != 2 {
		t.Fatalf("got %d interactions, want 2", len(turns))
	}
	r := turns[0].Response
	if !r.Streamed || r.StopReason != "tool_use" || r.ID != "msg_01H1pwRRkQxKbUGKi785gT4M" {
		t.Fatalf("response: streamed=%v stop=%q id=%q", r.Streamed, r.StopReason, r.ID)
	}
	if got := blockTypes(r.Content); !reflect.DeepEqual(got, []string{"text", "tool_use"}) {
		t.Fatalf("blocks %v", got)
	}
	if r.Content[0].Text != "I'll get the current weather in San Francisco for you in Fahrenheit." {
		t.Errorf("text %q", r.Content[0].Text)
	}
	if !jsonEqual(r.Content[1].Input, []byte(`{"city":"San Francisco","units":"fahrenheit"}`)) {
		t.Errorf("input %s", r.Content[1].Input)
	}
	if r.Usage.InputTokens != 397 || r.Usage.OutputTokens != 89 || r.Usage.CacheCreation == nil {
		t.Errorf("usage %+v", r.Usage)
	}
	if r.RequestID != "req_011CUdgeEaEXcfa9PDdxrNMk" {
		t.Errorf("request-id %q", r.RequestID)
	}
	if n := len(r.Events); n == 0 || r.Events[0].Name != "message_start" || r.Events[n-1].Name != "message_stop" {
		t.Errorf("events %v", r.Events)
	}
	calls := turns[0].ToolCalls
	if len(calls) != 1 || calls[0].Name != "get_weather" || !calls[0].Loaded || calls[0].Via != ViaAlways {
		t.Errorf("tool calls %+v", calls)
	}
	// The second request carries the tool_result.
	lu := turns[1].LastUser
	if len(lu.ToolResults) != 1 || lu.ToolResults[0].ToolUseID != "toolu_01RaX2WYWRWCbaeFHssmGJXG" {
		t.Errorf("last user %+v", lu)
	}
}

func TestCorpusToolCallError(t *testing.T) {
	turns := decodeCorpus(t, "anthropic-sdk-go/toolrunner_testdata_cassettes_tool_runner_tool_call_error.yaml")
	lu := turns[1].LastUser
	if len(lu.ToolResults) != 1 || !lu.ToolResults[0].IsError || lu.ToolResults[0].Text() != "Error: Unexpected error, try again" {
		t.Errorf("tool result %+v", lu.ToolResults)
	}
}

func TestCorpusPythonStreams(t *testing.T) {
	basic := decodeCorpus(t, "anthropic-sdk-python/basic_response.txt")[0].Response
	if len(basic.Content) != 1 || basic.Content[0].Text != "Hello there!" || basic.StopReason != "end_turn" || basic.Usage.OutputTokens != 6 || basic.Usage.InputTokens != 11 {
		t.Errorf("basic: %+v", basic)
	}
	tool := decodeCorpus(t, "anthropic-sdk-python/tool_use_response.txt")[0].Response
	if len(tool.Content) != 2 || !jsonEqual(tool.Content[1].Input, []byte(`{"location":"Paris"}`)) {
		t.Errorf("tool_use: %+v", tool.Content)
	}
	comp := decodeCorpus(t, "anthropic-sdk-python/compaction_response.txt")[0].Response
	var c struct {
		Content   string `json:"content"`
		Encrypted string `json:"encrypted_content"`
	}
	if err := json.Unmarshal(comp.Content[0].Raw, &c); err != nil || c.Content != "Earlier conversation summarized." || c.Encrypted == "" {
		t.Errorf("compaction block %s", comp.Content[0].Raw)
	}
	ref := decodeCorpus(t, "anthropic-sdk-python/refusal_response.txt")[0].Response
	if ref.StopReason != "refusal" || !strings.Contains(string(ref.StopDetails), `"cyber"`) {
		t.Errorf("refusal: %q %s", ref.StopReason, ref.StopDetails)
	}
	thinking := decodeCorpus(t, "anthropic-sdk-python/stream-a-refusal.sse")[0].Response
	if thinking.Content[0].Type != "thinking" || !strings.HasPrefix(thinking.Content[0].Thinking, "Simple educational question about") || thinking.Content[0].Signature == "" {
		t.Errorf("thinking block %+v", thinking.Content[0])
	}
	cut := decodeCorpus(t, "anthropic-sdk-python/incomplete_partial_json_response.txt")[0].Response
	if cut.Content[1].PartialInput == "" || cut.Content[1].Input != nil {
		t.Errorf("partial input not kept: %+v", cut.Content[1])
	}
}

func TestCorpusPydanticStreams(t *testing.T) {
	// message_start carries cache_read 55096; message_delta's cumulative
	// usage says 0 and overwrites it; StartUsage keeps the first.
	turn := decodeCorpus(t, "pydantic-ai/test_anthropic_compaction_usage_with_cache_streaming.yaml")[0]
	r := turn.Response
	if got := blockTypes(r.Content); !reflect.DeepEqual(got, []string{"compaction", "text"}) {
		t.Fatalf("blocks %v", got)
	}
	if r.Content[1].Text != "Hello! 👋" {
		t.Errorf("text %q", r.Content[1].Text)
	}
	if r.Usage.CacheReadInputTokens != 0 || r.Usage.Iterations == nil {
		t.Errorf("usage %+v", r.Usage)
	}
	if !strings.Contains(string(r.StartUsage), `"cache_read_input_tokens":55096`) {
		t.Errorf("start usage %s", r.StartUsage)
	}

	ws := decodeCorpus(t, "pydantic-ai/test_anthropic_model_web_search_tool_stream.yaml")[0].Response
	var cited int
	for _, b := range ws.Content {
		var x struct {
			Citations []json.RawMessage `json:"citations"`
		}
		_ = json.Unmarshal(b.Raw, &x)
		cited += len(x.Citations)
	}
	if cited != 7 {
		t.Errorf("got %d citations, want 7", cited)
	}
	if len(ws.Content) < 3 || ws.Content[1].Type != "server_tool_use" || !jsonEqual(ws.Content[1].Input, []byte(`{"query":"San Francisco weather today"}`)) {
		t.Errorf("web search call %+v", ws.Content[1])
	}
	// The searches the response was billed for: two, in message_delta.
	if ws.Usage.WebSearchRequests != 2 {
		t.Errorf("web_search_requests %d, want 2", ws.Usage.WebSearchRequests)
	}

	red := decodeCorpus(t, "pydantic-ai/test_anthropic_model_thinking_part_redacted_stream.yaml")[0].Response
	if got := blockTypes(red.Content); len(got) < 3 || got[0] != "redacted_thinking" || got[1] != "redacted_thinking" {
		t.Errorf("redacted blocks %v", got)
	}
}

func TestCorpusPydanticToolSearch(t *testing.T) {
	// A client-side custom search (search_tools) answered with
	// tool_reference: the deferred tool is loaded by search.
	turns := decodeCorpus(t, "pydantic-ai/test_anthropic_deferred_capability_tool_callable_without_tool_search.yaml")
	t1 := turns[1]
	if !reflect.DeepEqual(t1.Catalog, []string{"lookup_refund_policy"}) {
		t.Errorf("catalog %v", t1.Catalog)
	}
	if via, ok := t1.WorkingVia("lookup_refund_policy"); !ok || via != ViaSearch {
		t.Errorf("lookup_refund_policy via %q %v", via, ok)
	}
	if len(t1.NewSearches) != 1 || t1.NewSearches[0].Tool != "search_tools" || t1.NewSearches[0].Query != "refunds" || !reflect.DeepEqual(t1.NewSearches[0].Results, []string{"lookup_refund_policy"}) {
		t.Errorf("searches %+v", t1.NewSearches)
	}
	if len(t1.ToolCalls) != 1 || !t1.ToolCalls[0].Loaded || !t1.ToolCalls[0].InCatalog {
		t.Errorf("tool calls %+v", t1.ToolCalls)
	}
	// Before the search, the deferred tool is neither loaded nor restored.
	t0 := turns[0]
	if t0.InWorkingSet("lookup_refund_policy") || !reflect.DeepEqual(t0.Unreferenced, []string{"lookup_refund_policy"}) {
		t.Errorf("turn 0 working set %+v unreferenced %v", t0.WorkingSet, t0.Unreferenced)
	}

	// tool_addition in a role:"system" message: in the catalog and loaded.
	add := decodeCorpus(t, "pydantic-ai/test_native_tool_availability_delta.yaml")[0]
	if m := add.Request.Messages[3]; m.Role != "system" || m.Blocks[0].Type != "tool_addition" || m.Blocks[0].ToolName != "lookup_refund_policy" {
		t.Errorf("system message %+v", m)
	}
	if via, _ := add.WorkingVia("lookup_refund_policy"); via != ViaAddition {
		t.Errorf("via %q", via)
	}
	if !add.InWorkingSet("tool_search_tool_bm25") {
		t.Error("server search tool not in the working set")
	}
	if len(add.ToolCalls) != 1 || !add.ToolCalls[0].Loaded {
		t.Errorf("calls %+v", add.ToolCalls)
	}

	ct := decodeCorpus(t, "pydantic-ai/test_anthropic_count_tokens_with_tool_search_replay.yaml")[0]
	if ct.Request.Kind != KindCountTokens || ct.Response.Usage.InputTokens != 641 {
		t.Errorf("count_tokens: kind %q usage %+v", ct.Request.Kind, ct.Response.Usage)
	}

	cache := decodeCorpus(t, "pydantic-ai/test_inline_system_prompt_cache_prefix_is_reused.yaml")[1]
	want := []CacheMarker{{Where: "message", Index: 3, Block: 0, Type: "ephemeral", TTL: "5m"}}
	var got []CacheMarker
	for _, m := range cache.Request.CacheMarkers {
		if m.Where == "message" {
			got = append(got, m)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cache markers %+v", cache.Request.CacheMarkers)
	}
	if cache.Response.Usage.CacheReadInputTokens == 0 {
		t.Errorf("no cache read on the second request: %+v", cache.Response.Usage)
	}
}

func TestCorpusServerSearch(t *testing.T) {
	turns := decodeCorpus(t, "vercel-ai/anthropic-tool-search-regex.1.chunks.txt")
	s := turns[0].Searches
	if len(s) != 1 || !s[0].Server || s[0].Mode != ModeRegex || !s[0].HasResult || !s[0].New || s[0].Result.Block != 1 {
		t.Fatalf("searches %+v", s)
	}
	if s[0].Query == "" || len(s[0].Results) == 0 {
		t.Errorf("search %+v", s[0])
	}
	// The tool called after the search is loaded by it, within the response.
	calls := turns[0].ToolCalls
	last := calls[len(calls)-1]
	if last.Server || !last.Loaded || last.Via != ViaResponseSearch {
		t.Errorf("call %+v", last)
	}

	bm := decodeCorpus(t, "vercel-ai/anthropic-tool-search-bm25.1.json")[0]
	if len(bm.Searches) != 1 || bm.Searches[0].Mode != ModeBM25 || bm.Searches[0].Query == "" {
		t.Errorf("bm25 %+v", bm.Searches)
	}

	er := decodeCorpus(t, "vercel-ai/anthropic-tool-search-error-step-2.1.json")[0]
	if b := er.Response.Content[0]; b.ErrorCode != "invalid_tool_input" || !b.IsError {
		t.Errorf("error block %+v", b)
	}

	e400 := decodeCorpus(t, "vercel-ai/anthropic-tool-choice-none-tool-search-history.error.json")[0].Response
	if e400.Error == nil || e400.Error.Type != "invalid_request_error" || !strings.Contains(e400.Error.Message, "Tool reference 'lookup_documents' not found") || e400.Error.RequestID == "" {
		t.Errorf("error %+v", e400.Error)
	}
}

// TestSearchResultInNextResponse replays the deferred-regex fixture: the
// first response ends with a server_tool_use, and its result arrives as
// block 0 of the next response. The search is new on the second turn.
func TestSearchResultInNextResponse(t *testing.T) {
	for _, rel := range []string{"vercel-ai/anthropic-tool-search-deferred-regex.chunks.txt", "vercel-ai/anthropic-tool-search-deferred-bm25.chunks.txt"} {
		cases := corpusCases(t, rel)
		first := Decode(cases[0].ex)
		if len(first.Searches) != 1 || first.Searches[0].HasResult || len(first.NewSearches) != 0 {
			t.Fatalf("%s: first turn searches %+v", rel, first.Searches)
		}
		var blocks []json.RawMessage
		for _, b := range first.Response.Content {
			blocks = append(blocks, b.Raw)
		}
		assistant, _ := json.Marshal(blocks)
		req := `{"model":"m","max_tokens":1,"tools":[{"type":"tool_search_tool_regex_20251119","name":"tool_search_tool_regex"},{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"},{"name":"readNoteTree","defer_loading":true,"input_schema":{}},{"name":"executeEditorOperation","defer_loading":true,"input_schema":{}}],"messages":[{"role":"user","content":"go"},{"role":"assistant","content":` + string(assistant) + `},{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + first.Response.Content[1].ID + `","content":"ok"}]}]}`
		ex := cases[1].ex
		ex.ReqBody = []byte(req)
		second := Decode(ex)
		noProblems(t, rel, second)
		if len(second.NewSearches) != 1 {
			t.Fatalf("%s: new searches %+v", rel, second.NewSearches)
		}
		s := second.NewSearches[0]
		if !s.Server || s.Call.Response || s.Call.Message != 1 || !s.Result.Response || s.Result.Block != 0 || len(s.Results) == 0 {
			t.Errorf("%s: search %+v", rel, s)
		}
		if !reflect.DeepEqual(second.Catalog, []string{"executeEditorOperation", "readNoteTree"}) {
			t.Errorf("%s: catalog %v", rel, second.Catalog)
		}
		// Server-side: unreferenced deferred tools are not in the working set.
		if second.InWorkingSet("readNoteTree") || len(second.Unreferenced) != 2 {
			t.Errorf("%s: working set %+v unreferenced %v", rel, second.WorkingSet, second.Unreferenced)
		}
		calls := second.ToolCalls
		if len(calls) != 1 || calls[0].Name != "executeEditorOperation" || calls[0].Via != ViaResponseSearch {
			t.Errorf("%s: calls %+v", rel, calls)
		}
	}
}

// streamPairs are the corpus fixtures with a stream and a plain body of
// the same request (separate recordings: ids, wording and counts differ).
var streamPairs = [][2]string{
	{"vercel-ai/anthropic-clear-tool-uses.1.chunks.txt", "vercel-ai/anthropic-clear-tool-uses.1.json"},
	{"vercel-ai/anthropic-compaction.1.chunks.txt", "vercel-ai/anthropic-compaction.1.json"},
	{"vercel-ai/anthropic-refusal.chunks.txt", "vercel-ai/anthropic-refusal.json"},
	{"vercel-ai/anthropic-tool-search-bm25.1.chunks.txt", "vercel-ai/anthropic-tool-search-bm25.1.json"},
	{"vercel-ai/anthropic-tool-search-regex.1.chunks.txt", "vercel-ai/anthropic-tool-search-regex.1.json"},
	{"vercel-ai/anthropic-tool-search-deferred-regex.chunks.txt#1", "vercel-ai/anthropic-tool-search-deferred-regex.2.json"},
	{"vercel-ai/anthropic-tool-search-deferred-bm25.chunks.txt#1", "vercel-ai/anthropic-tool-search-deferred-bm25.2.json"},
}

// shape is what two recordings of one request share.
type shape struct {
	StopReason string
	Blocks     []string
	UsageKeys  []string
}

func shapeOf(r Response) shape {
	s := shape{StopReason: r.StopReason}
	for _, b := range r.Content {
		d := b.Type
		if b.Name != "" {
			d += ":" + b.Name
		}
		if b.Type == "tool_search_tool_result" {
			d += ":" + strings.Join(b.References, ",")
		}
		s.Blocks = append(s.Blocks, d)
	}
	var u map[string]json.RawMessage
	_ = json.Unmarshal(r.Usage.Raw, &u)
	for k := range u {
		s.UsageKeys = append(s.UsageKeys, k)
	}
	sortStrings(s.UsageKeys)
	return s
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestStreamMatchesPlain compares each rebuilt stream with the plain body
// recorded for the same request: same stop reason, block types, tool
// names, references and usage fields; and, for the refusal pair, whose
// recordings agree, the same stop details and usage exactly.
func TestStreamMatchesPlain(t *testing.T) {
	for _, p := range streamPairs {
		streamFile, idx := p[0], 0
		if i := strings.Index(streamFile, "#"); i >= 0 {
			streamFile, idx = streamFile[:i], int(streamFile[i+1]-'0')
		}
		cases := corpusCases(t, streamFile)
		streamed := Decode(cases[idx].ex).Response
		plain := decodeCorpus(t, p[1])[0].Response
		if !streamed.Streamed || plain.Streamed {
			t.Fatalf("%v: streamed flags %v %v", p, streamed.Streamed, plain.Streamed)
		}
		a, b := shapeOf(streamed), shapeOf(plain)
		// The server_tool_use counter comes in message_delta only when
		// used; the plain bodies always carry it.
		if !reflect.DeepEqual(a.StopReason, b.StopReason) || !reflect.DeepEqual(a.Blocks, b.Blocks) {
			t.Errorf("%v:\n stream %+v\n plain  %+v", p, a, b)
		}
		for _, k := range a.UsageKeys {
			if !strings.Contains(strings.Join(b.UsageKeys, ","), k) {
				t.Errorf("%v: usage key %q only in the stream", p, k)
			}
		}
	}
	s := Decode(corpusCases(t, "vercel-ai/anthropic-refusal.chunks.txt")[0].ex).Response
	j := decodeCorpus(t, "vercel-ai/anthropic-refusal.json")[0].Response
	if !jsonEqual(s.StopDetails, j.StopDetails) || !jsonEqual(s.Usage.Raw, j.Usage.Raw) || s.Model != j.Model || len(s.Content) != 0 {
		t.Errorf("refusal:\n stream %s %s\n plain  %s %s", s.StopDetails, s.Usage.Raw, j.StopDetails, j.Usage.Raw)
	}
}

// TestSyntheticStreamRoundTrip streams every plain message body of the
// corpus (cut in small deltas, as the API does) and checks the rebuilt
// message equals the body exactly: content, stop reason and usage.
func TestSyntheticStreamRoundTrip(t *testing.T) {
	n := 0
	for _, rel := range corpusFiles(t) {
		if strings.HasSuffix(rel, ".chunks.txt") || strings.HasSuffix(rel, ".sse") || strings.HasSuffix(rel, ".txt") {
			continue
		}
		for _, c := range corpusCases(t, rel) {
			plain := Decode(c.ex)
			if plain.Response.Streamed || plain.Response.ID == "" {
				continue
			}
			n++
			body := synthesizeSSE(t, plain.Response)
			ex := *c.ex
			ex.RespBody = body
			ex.RespHeaders = nil
			streamed := Decode(&ex)
			noProblems(t, c.name+" (streamed)", streamed)
			sr, pr := streamed.Response, plain.Response
			if sr.Incomplete || sr.StopReason != pr.StopReason || sr.ID != pr.ID || sr.Model != pr.Model {
				t.Errorf("%s: header fields differ: %+v", c.name, sr)
			}
			if len(sr.Content) != len(pr.Content) {
				t.Errorf("%s: %d blocks, want %d", c.name, len(sr.Content), len(pr.Content))
				continue
			}
			for i := range pr.Content {
				if !jsonEqual(sr.Content[i].Raw, pr.Content[i].Raw) {
					t.Errorf("%s: block %d:\n got  %s\n want %s", c.name, i, sr.Content[i].Raw, pr.Content[i].Raw)
				}
			}
			if !jsonEqual(sr.Usage.Raw, pr.Usage.Raw) {
				t.Errorf("%s: usage\n got  %s\n want %s", c.name, sr.Usage.Raw, pr.Usage.Raw)
			}
			if !reflect.DeepEqual(stripCallInput(streamed.ToolCalls), stripCallInput(plain.ToolCalls)) || !reflect.DeepEqual(stripSearchInput(streamed.Searches), stripSearchInput(plain.Searches)) {
				t.Errorf("%s: calls or searches differ:\n %+v %+v\n %+v %+v", c.name, streamed.ToolCalls, streamed.Searches, plain.ToolCalls, plain.Searches)
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d plain messages streamed", n)
	}
}

// stripCallInput and stripSearchInput drop the raw inputs, whose spacing
// differs between a body and its stream.
func stripCallInput(cs []ToolCall) []ToolCall {
	out := make([]ToolCall, len(cs))
	for i, c := range cs {
		c.Input = nil
		out[i] = c
	}
	return out
}

func stripSearchInput(ss []*Search) []Search {
	out := make([]Search, len(ss))
	for i, p := range ss {
		s := *p
		s.Input = nil
		out[i] = s
	}
	return out
}

// synthesizeSSE streams a decoded message as the API would: message_start
// with empty content and the input-side usage, each block started empty
// and filled by deltas of at most 7 bytes, message_delta with the stop
// and the usage, message_stop.
func synthesizeSSE(t *testing.T, r Response) []byte {
	var sb strings.Builder
	emit := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		sb.WriteString("event: " + name + "\ndata: " + string(b) + "\n\n")
	}
	pieces := func(s string) []string {
		var out []string
		for len(s) > 7 {
			// Cut on a rune boundary.
			k := 7
			for k > 0 && (s[k]&0xC0) == 0x80 {
				k--
			}
			out = append(out, s[:k])
			s = s[k:]
		}
		return append(out, s)
	}
	var usage map[string]json.RawMessage
	_ = json.Unmarshal(r.Usage.Raw, &usage)
	emit("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": r.ID, "type": "message", "role": r.Role, "model": r.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": usage["input_tokens"], "output_tokens": 1},
	}})
	emit("ping", map[string]any{"type": "ping"})
	for i, b := range r.Content {
		var f map[string]json.RawMessage
		if err := json.Unmarshal(b.Raw, &f); err != nil {
			t.Fatal(err)
		}
		delta := func(d map[string]any) {
			emit("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		var deltas []map[string]any
		switch b.Type {
		case "text":
			f["text"] = json.RawMessage(`""`)
			for _, p := range pieces(b.Text) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": p})
			}
			if cs, ok := f["citations"]; ok && !isNull(cs) {
				var list []json.RawMessage
				_ = json.Unmarshal(cs, &list)
				f["citations"] = json.RawMessage(`[]`)
				for _, c := range list {
					deltas = append(deltas, map[string]any{"type": "citations_delta", "citation": c})
				}
			}
		case "thinking":
			f["thinking"], f["signature"] = json.RawMessage(`""`), json.RawMessage(`""`)
			for _, p := range pieces(b.Thinking) {
				deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": p})
			}
			deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": b.Signature})
		case "tool_use", "server_tool_use":
			f["input"] = json.RawMessage(`{}`)
			for _, p := range pieces(string(b.Input)) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": p})
			}
		case "compaction":
			var content string
			_ = json.Unmarshal(f["content"], &content)
			f["content"] = json.RawMessage(`null`)
			for _, p := range pieces(content) {
				deltas = append(deltas, map[string]any{"type": "compaction_delta", "content": p})
			}
		}
		emit("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": f})
		for _, d := range deltas {
			delta(d)
		}
		emit("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	var stopSeq any
	if r.StopSequence != nil {
		stopSeq = *r.StopSequence
	}
	d := map[string]any{"stop_reason": r.StopReason, "stop_sequence": stopSeq}
	if r.StopDetails != nil {
		d["stop_details"] = r.StopDetails
	}
	emit("message_delta", map[string]any{"type": "message_delta", "delta": d, "usage": usage})
	emit("message_stop", map[string]any{"type": "message_stop"})
	return []byte(sb.String())
}

// TestOtherClientTextSearch: pydantic-ai's search_tools, offered in the
// request's tools, is a search whether it answers with tool_reference
// blocks (the recorded cassette) or
// in text, as it does when nothing matched ("No matching tools found",
// since Anthropic refuses an empty tool_result) and on its local path (a
// JSON object naming the discovered tools). The cassette's second request
// is rewritten to each text form. A tool merely named like a search, or a
// search_tools whose input is not a search's, is no search.
func TestOtherClientTextSearch(t *testing.T) {
	cases := corpusCases(t, "pydantic-ai/test_anthropic_explicit_tool_search_keeps_search_surface.yaml")
	if len(cases) < 2 {
		t.Fatalf("%d exchanges in the cassette", len(cases))
	}
	base := cases[1].ex
	const refs = `[{"tool_name":"search_only_tool","type":"tool_reference"}]`
	var body map[string]any
	if err := json.Unmarshal(base.ReqBody, &body); err != nil {
		t.Fatal(err)
	}
	canon, _ := json.Marshal(body)
	if !bytes.Contains(canon, []byte(refs)) {
		t.Fatalf("the cassette's tool_result no longer holds %s", refs)
	}
	with := func(content string, edit func([]byte) []byte) *Turn {
		ex := *base
		ex.ReqBody = bytes.Replace(canon, []byte(refs), []byte(content), 1)
		if edit != nil {
			ex.ReqBody = edit(ex.ReqBody)
		}
		return Decode(&ex)
	}
	quoted := func(s string) string { b, _ := json.Marshal(s); return string(b) }

	none := with(quoted("No matching tools found. The tools you need may not be available."), nil)
	if len(none.NewSearches) != 1 || none.NewSearches[0].Tool != "search_tools" || !none.NewSearches[0].HasResult ||
		!none.NewSearches[0].NoMatch || len(none.NewSearches[0].Results) != 0 || none.NewSearches[0].Query != "search_only_tool" {
		t.Errorf("no match in text: %+v", none.NewSearches)
	}
	named := with(quoted(`{"discovered_tools":[{"name":"search_only_tool","description":null}]}`), nil)
	if len(named.NewSearches) != 1 || named.NewSearches[0].NoMatch || !reflect.DeepEqual(named.NewSearches[0].Results, []string{"search_only_tool"}) {
		t.Errorf("JSON naming the tools: %+v", named.NewSearches)
	}
	empty := with(quoted(`{"discovered_tools":[],"message":"No matching tools found. The tools you need may not be available."}`), nil)
	if len(empty.NewSearches) != 1 || !empty.NewSearches[0].NoMatch || len(empty.NewSearches[0].Results) != 0 {
		t.Errorf("JSON naming none: %+v", empty.NewSearches)
	}
	// The same text from a tool that is not a search tool: a web search,
	// and a search_tools whose input is not a search's.
	rename := func(from, to string) func([]byte) []byte {
		return func(b []byte) []byte {
			return bytes.ReplaceAll(b, []byte(`"name":"`+from+`"`), []byte(`"name":"`+to+`"`))
		}
	}
	if web := with(quoted("No matching tools found."), rename("search_tools", "web_search")); len(web.NewSearches) != 0 {
		t.Errorf("a web search taken for a tool search: %+v", web.NewSearches)
	}
	notSearch := with(quoted("No matching tools found."), func(b []byte) []byte {
		return bytes.ReplaceAll(b, []byte(`"queries":{`), []byte(`"target":{`))
	})
	if len(notSearch.NewSearches) != 0 {
		t.Errorf("a search_tools with another input taken for a tool search: %+v", notSearch.NewSearches)
	}
}
