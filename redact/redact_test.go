package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/report"
)

func TestScrubRemoves(t *testing.T) {
	cases := []struct {
		in, gone, class string
	}{
		{"write to alice.cnry@example.org today", "alice.cnry@example.org", "[email-1]"},
		{"open /home/bob/projects/plan.txt now", "/home/bob/projects/plan.txt", "[path-1]"},
		{"read ~/secrets/plan.md", "~/secrets/plan.md", "[path-1]"},
		{`see C:\Users\bob\Documents\plan.docx`, `C:\Users\bob`, "[path-1]"},
		{"file:/srv/data/x", "/srv/data/x", "[path-1]"},
		{"key sk-ant-api03-AbCdEf0123456789-xyz_QQ", "sk-ant-api03-AbCdEf0123456789-xyz_QQ", "[secret-1]"},
		{"Authorization: Bearer abc123def456ghi789", "abc123def456ghi789", "Authorization: Bearer [secret-1]"},
		{"use token=abcd1234 here", "abcd1234", "[secret-1]"},
		{`{"api_key": "zz9988xxyy"}`, "zz9988xxyy", "[secret-1]"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV", "eyJhbGciOiJIUzI1NiJ9", "[secret-1]"},
		{"aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "[secret-1]"},
		{"gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrst", "[secret-1]"},
		{"sha 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "9f86d081884c7d659a2f", "[secret-1]"},
		{"img iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "iVBORw0KGgoAAAANSUhEUg", "[secret-1]"},
		{"session 5f0c4a8e-2b7d-4c1e-9a3f-6d8b1e2c7a90 ended", "5f0c4a8e-2b7d", "[id-1]"},
		{"dial tcp 10.31.33.7:5432: refused", "10.31.33.7", "[ip-1]"},
		{"from fe80::1ff:fe23:4567:890a", "fe80::1ff:fe23:4567:890a", "[ip-1]"},
		{"upstream db.cnry-internal.corp is down", "db.cnry-internal.corp", "[host-1]"},
		{"see https://wiki.example.net/page?id=3", "wiki.example.net", "[url-1]"},
		{"Overloaded for org cnry28org now", "cnry28org", "[id-1]"},
		{"request req_011CVabc9XyZ failed", "req_011CVabc9XyZ", "[id-1]"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "MIIE", "[secret-1]"},
	}
	for _, c := range cases {
		s := newScrubber(nil)
		got := s.text(c.in)
		if strings.Contains(got, c.gone) || !strings.Contains(got, c.class) {
			t.Errorf("text(%q) = %q: want %q gone, %s in its place", c.in, got, c.gone, c.class)
		}
	}
}

func TestScrubKeeps(t *testing.T) {
	for _, in := range []string{
		"select:mcp__demo__echo",
		"select:mcp__claude_ai_Google_Drive__search_files_and_folders,mcp__github__create_issue",
		"weather forecast", "notebook jupyter", "+slack send message", "mcp__github",
		"Cache read fell from 22,319 to 0 tokens (−22,319) against turn 5 of this thread (#5).",
		"max_tokens: 32000", "at 12:00:11 UTC", "claude-sonnet-4-5-20250929",
		"POST /v1/messages?beta=true failed", "see api.anthropic.com", "e.g. this, i.e. that",
		"Node.js and report.json", "The API answered HTTP 529 (overloaded_error: Overloaded).",
		"Tool reference 'mcp__demo__echo' not found in available tools",
		"Bearer authentication", "the token counts", "HTTP 529 / overloaded",
		"the betas changed (added context-management-2025-06-27)", "mcp__demo__action_12 and claude-3-5-sonnet-20241022",
		"sha256 utf-8 x86_64 v26.12.1",
	} {
		if got := newScrubber(nil).text(in); got != in {
			t.Errorf("text(%q) = %q: want it kept", in, got)
		}
	}
}

func TestModels(t *testing.T) {
	a := &applier{s: newScrubber(nil), toolMemo: map[string]string{}}
	for _, m := range []string{"claude-sonnet-4-5-20250929", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-opus-4-1@20250805", "claude-opus-5-5"} {
		if got := a.model(m); got != m {
			t.Errorf("model(%q) = %q", m, got)
		}
	}
	for _, m := range []string{"arn:aws:bedrock:us-east-1:123456789012:inference-profile/x", "model-for-cnry@example.org"} {
		if got := a.model(m); got == m || !strings.HasPrefix(got, "[model-") {
			t.Errorf("model(%q) = %q, want a pseudonym", m, got)
		}
	}
}

func TestPseudonymsStable(t *testing.T) {
	s := newScrubber(nil)
	a := s.text("a@example.org and b@example.org")
	b := s.text("again b@example.org then a@example.org")
	if a != "[email-1] and [email-2]" || b != "again [email-2] then [email-1]" {
		t.Errorf("got %q and %q", a, b)
	}
}

func TestKnownValues(t *testing.T) {
	exs := []exchange.Exchange{{
		Method: "POST", URL: "https://gateway.cnry-corp.example/v1/messages?beta=true", Host: "gateway.cnry-corp.example",
		ReqHeaders: []exchange.Header{
			{Name: "X-Claude-Code-Session-Id", Value: "cnrysess-77aa-11bb"},
			{Name: "X-Gateway-Token", Value: "gwtok_cnry_0042_zzz"},
			{Name: "Content-Type", Value: "application/json"},
			{Name: "X-Claude-Code-Prev-Tool-Durations", Value: "ToolSearch=2,mcp__demo__action_7=4"},
		},
		ReqBody: []byte(`{"model":"claude-sonnet-4-5","metadata":{"user_id":"{\"device_id\":\"cnrydev0123456789\",\"account_uuid\":\"acct-cnry-9876\",\"session_id\":\"cnrysess-77aa-11bb\"}"},` +
			`"system":[{"type":"text","text":"Working directory: /home/cnryuser/proj"}],"messages":[{"role":"user","content":"hi"}]}`),
	}}
	k := Collect(exs)
	s := newScrubber(k)
	in := "seen cnrydev0123456789, acct-cnry-9876, cnrysess-77aa-11bb, gwtok_cnry_0042_zzz at gateway.cnry-corp.example for cnryuser; ToolSearch and mcp__demo__action_7 stay"
	got := s.text(in)
	if strings.Contains(got, "cnry") {
		t.Errorf("known values left: %q (known %+v)", got, k.literals)
	}
	if !strings.Contains(got, "ToolSearch and mcp__demo__action_7 stay") {
		t.Errorf("tool names taken for identifiers: %q", got)
	}
}

// sample is a report with a secret in every free-text field.
func sample() *report.Report {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	stop := "\n\nHuman: mail cnry1@example.org"
	agrees := true
	r := &report.Report{
		SchemaVersion: 1, Generator: "tsinspect 0.1.0",
		Capture: report.Capture{Exchanges: 3, Turns: 2, FirstAt: &at, LastAt: &at, Flags: map[string]int{"empty_search": 1, "call_before_load": 1}},
		Threads: []report.Thread{{ID: "main", Kind: "main", Turns: []int{1, 2}, Models: []string{"claude-sonnet-4-5"}}},
		Turns: []report.Turn{{
			Index: 1, Thread: "main", Link: "new", ExchangeID: 3, At: &at, Model: "claude-sonnet-4-5", Status: 200,
			ResponseID: "msg_01AbCdEfGhIjKlMnOpQrStUv", StopReason: "tool_use",
			Catalog:    report.Catalog{Count: 2, Added: []string{"mcp__acme__create_issue"}},
			WorkingSet: report.WorkingSet{Count: 1, Names: []string{"ToolSearch"}, Via: map[string]string{"ToolSearch": "always"}},
			ToolCalls:  []report.ToolCall{{ID: "toolu_01AbCdEfGhIjKlMnOpQrStUv", Name: "ToolSearch", Loaded: true, Via: "always"}},
			ToolDefinitions: []report.ToolDefinition{{Name: "mcp__acme__create_issue", Deferred: true,
				SHA256: strings.Repeat("ab", 32), Tokens: 40, TokensFrom: "estimate"}},
		}, {
			Index: 2, Thread: "main", Prev: 1, Link: "extends", ExchangeID: 4, At: &at, Model: "claude-sonnet-4-5", Status: 200,
			ResponseID: "msg_01ZyXwVuTsRqPoNmLkJiHgFe", StopReason: "stop_sequence", StopSequence: &stop,
			Error: &report.Error{Type: "api_error", Message: "backend db.cnry2.internal (10.9.8.7) said key sk-ant-api03-cnry3cnry3cnry3"},
			ToolSearches: []report.Search{{ToolUseID: "toolu_01AbCdEfGhIjKlMnOpQrStUv", Tool: "ToolSearch",
				Query: "send to cnry4@example.org /home/cnry5/notes.txt", Mode: "keyword", MaxResults: 5, NoMatch: true}},
			ToolCalls: []report.ToolCall{{ID: "toolu_01QqQqQqQqQqQqQqQqQqQqQq", Name: "mcp__acme__create_issue", InCatalog: true}},
			Flags: []report.Flag{
				{Kind: "empty_search", Severity: "warning", Search: "toolu_01AbCdEfGhIjKlMnOpQrStUv",
					Detail: `ToolSearch "send to cnry4@example.org /home/cnry5/notes.txt" (keyword query) loaded nothing: "No matching deferred tools found". The catalog held 2 deferred tools.`},
				{Kind: "call_before_load", Severity: "error", Tool: "mcp__acme__create_issue",
					Detail: `The model called mcp__acme__create_issue. Its tool_result in turn 3 is an error: "cnry6 the secret tool output \"quoted\" text…". Was ` + "`{\"cnry7\":1}`" + `.`},
				{Kind: "cache_break", Severity: "warning", Cause: "unexplained", TokensLost: 5000, CacheMissReason: "messages_changed", Agrees: &agrees,
					Detail: "Cache read fell: nothing changed on acme's side."},
				{Kind: "cache_break", Severity: "warning", Cause: "messages_changed",
					Detail: `the thinking settings changed from {"budget_tokens":1000,"type":"enabled"} to (absent)`},
			},
			Problems: []string{`request body is not JSON: invalid character 'c' in "cnry8@example.org"`},
		}},
		TokenSummary: report.TokenSummary{Method: "x", CharsPerToken: 2.5, Threads: []report.ThreadTokens{{
			Thread: "main", Turns: 2, LoadedTools: []string{"mcp__acme__create_issue"}, Unknown: []string{"mcp__acme__close_issue"},
		}}},
	}
	r.Normalize()
	return r
}

func TestApplyDefault(t *testing.T) {
	r := sample()
	before, _ := json.Marshal(r)
	out := Apply(r, Default, nil)
	after, _ := json.Marshal(r)
	if !bytes.Equal(before, after) {
		t.Error("Apply changed its input")
	}
	var buf bytes.Buffer
	if err := out.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	js := buf.String()
	for _, gone := range []string{"cnry", "10.9.8.7", "msg_01", "toolu_01", "secret tool output"} {
		if strings.Contains(js, gone) {
			t.Errorf("%q left in:\n%s", gone, js)
		}
	}
	tu := out.Turns[1]
	q := tu.ToolSearches[0].Query
	if !regexp.MustCompile(`^send to \[email-\d\] \[path-\d\]$`).MatchString(q) {
		t.Errorf("query %q", q)
	}
	if d := tu.Flags[0].Detail; !strings.HasPrefix(d, `ToolSearch "`+q+`" (keyword query) loaded nothing: "No matching deferred tools found".`) {
		t.Errorf("empty_search detail %q, query %q", d, q)
	}
	if d := tu.Flags[1].Detail; !strings.Contains(d, `is an error: "[`) || !strings.Contains(d, "characters removed]") || !strings.Contains(d, "bytes removed]`") {
		t.Errorf("call_before_load detail %q", d)
	}
	if tu.Flags[0].Search != tu.ToolSearches[0].ToolUseID || tu.ToolSearches[0].ToolUseID != out.Turns[0].ToolCalls[0].ID || tu.ToolCalls[0].ID == tu.ToolSearches[0].ToolUseID {
		t.Errorf("tool_use ids not pseudonymised consistently: %+v %+v %+v", tu.Flags[0], tu.ToolSearches[0], out.Turns[0].ToolCalls)
	}
	if tu.Flags[1].Tool != "mcp__acme__create_issue" || out.Turns[0].ToolDefinitions[0].SHA256 != strings.Repeat("ab", 32) {
		t.Errorf("tool names or hashes not kept: %+v", tu.Flags[1])
	}
	if !regexp.MustCompile(`^\n\nHuman: mail \[email-\d\]$`).MatchString(*tu.StopSequence) {
		t.Errorf("stop sequence %q", *tu.StopSequence)
	}
}

func TestApplyStrict(t *testing.T) {
	out := Apply(sample(), Strict, nil)
	var buf bytes.Buffer
	out.WriteJSON(&buf)
	js := buf.String()
	if strings.Contains(js, "acme") {
		t.Errorf("server name left under strict:\n%s", js)
	}
	for _, want := range []string{"mcp__s1__create_issue", "mcp__s1__close_issue", "nothing changed on s1's side"} {
		if !strings.Contains(js, want) {
			t.Errorf("no %q in:\n%s", want, js)
		}
	}
}

func TestApplyOff(t *testing.T) {
	r := sample()
	out := Apply(r, Off, nil)
	a, _ := json.Marshal(r)
	b, _ := json.Marshal(out)
	if !bytes.Equal(a, b) {
		t.Errorf("off changed the report:\n%s\n%s", a, b)
	}
	out.Turns[0].Model = "changed"
	if r.Turns[0].Model == "changed" {
		t.Error("off shares the report")
	}
}

func TestParsePolicy(t *testing.T) {
	for _, p := range Policies() {
		if got, err := ParsePolicy(string(p)); err != nil || got != p {
			t.Errorf("ParsePolicy(%q) = %q, %v", p, got, err)
		}
		if Describe(p) == "" {
			t.Errorf("Describe(%q) is empty", p)
		}
	}
	if _, err := ParsePolicy("lax"); err == nil {
		t.Error("ParsePolicy(lax) succeeded")
	}
}

// mayBeZero are the fields a redacted report may leave empty though the
// input had them: values that failed their shape check.
var mayBeZero = map[string]bool{
	"Turns.ToolDefinitions.SHA256": true, // not 64 hex digits in the filler
}

// droppedWhole are the fields every policy but off leaves out whole: they
// are nothing but what the users and tools said.
var droppedWhole = map[string]bool{
	"Turns.Conversation": true,
}

// TestEveryFieldHandled fills every field of a report with a private
// value and checks that Apply copies every field (so that a field added
// to report.Report cannot be dropped silently) and lets no private value
// through (so that it cannot leak either).
func TestEveryFieldHandled(t *testing.T) {
	const secret = "cnry9@example.org /home/cnryuser/f sk-ant-api03-cnrycnrycnry0000"
	var r report.Report
	fill(reflect.ValueOf(&r).Elem(), secret)
	out := Apply(&r, Default, nil)
	var buf bytes.Buffer
	if err := out.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "cnry") {
		t.Errorf("private value left:\n%s", buf.String())
	}
	checkFilled(t, reflect.ValueOf(out).Elem(), "")
}

// fill sets every string to s, every number to 7, every bool to true, and
// gives slices and maps one element, recursively.
func fill(v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(7)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), s)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, s)
		fill(e, s)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			fill(v.Field(i), s)
		}
	}
}

// checkFilled fails for every zero field of v not in mayBeZero.
func checkFilled(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() && droppedWhole[path] {
			return
		}
		if v.IsNil() {
			t.Errorf("%s: nil after Apply", path)
			return
		}
		if droppedWhole[path] {
			t.Errorf("%s: kept by Apply, which must drop it", path)
			return
		}
		checkFilled(t, v.Elem(), path)
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			t.Errorf("%s: empty after Apply", path)
			return
		}
		if v.Kind() == reflect.Slice {
			checkFilled(t, v.Index(0), path)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			p := v.Type().Field(i).Name
			if path != "" {
				p = path + "." + p
			}
			checkFilled(t, v.Field(i), p)
		}
	default:
		if v.IsZero() && !mayBeZero[path] {
			t.Errorf("%s: zero after Apply (%s); classify the field in redact", path, fmt.Sprint(v.Interface()))
		}
	}
}

func TestValuesFreeText(t *testing.T) {
	v := NewValues(Default, nil, nil)
	got := v.FreeText(`called mcp__demo__echo with "my secret plan for /home/alice/x" at /home/alice/src`)
	if strings.Contains(got, "secret plan") || strings.Contains(got, "/home/alice") {
		t.Errorf("FreeText kept private text: %s", got)
	}
	if !strings.Contains(got, `"[32 characters removed]"`) || !strings.Contains(got, "mcp__demo__echo") {
		t.Errorf("FreeText = %s, want the quote replaced by its length and the tool kept", got)
	}
	v.KeepQueries([]string{"find the echo tool"})
	if got := v.FreeText(`ToolSearch "find the echo tool" loaded nothing; "a secret" stays out`); got != `ToolSearch "find the echo tool" loaded nothing; "[8 characters removed]" stays out` {
		t.Errorf("FreeText with a query = %s", got)
	}
	if off := NewValues(Off, nil, nil); off.FreeText(`"x" /home/a`) != `"x" /home/a` {
		t.Errorf("FreeText under Off changed the text")
	}
}

// TestManyLiteralsScrubbedAsFew holds the scrubbing of a session with many
// known values (each turn's request id is one) to looking for each in
// turn: the same values found, the longest first.
func TestManyLiteralsScrubbedAsFew(t *testing.T) {
	k := &Known{}
	for i := range 40 {
		k.add("request", fmt.Sprintf("req_%020d", i*7919), false)
	}
	k.add("session", "req_00000000000000007919-tail", false) // holds a shorter one
	k.add("path", "/srv/builds/agent", false)
	many := newScrubber(k)
	if len(many.literals) <= fewLiterals {
		t.Fatalf("%d literals: the test needs more than %d", len(many.literals), fewLiterals)
	}
	text := "ids req_00000000000000007919-tail and req_00000000000000015838, req_00000000000000000000 in /srv/builds/agent/x; none: req_00000000000000000001"
	// The reference: each literal looked for in turn, longest first.
	ref := newScrubber(k)
	want := text
	for _, l := range ref.literals {
		if strings.Contains(want, l.value) {
			want = strings.ReplaceAll(want, l.value, ref.pseudonym(l.class, l.value))
		}
	}
	if got := many.scrub(text); got != want {
		t.Errorf("scrub:\n got %s\nwant %s", got, want)
	}
	if strings.Contains(want, "7919") || !strings.Contains(want, "00000001") {
		t.Errorf("reference scrubbed the wrong values: %s", want)
	}
	if !many.hasSecret("x req_00000000000000015838 y") || many.hasSecret("req_00000000000000000001") {
		t.Error("hasSecret disagrees with the literals")
	}
}

// TestFreeTextKnowsLaterQueries: a text redacted before KeepQueries named
// its quoted query keeps the query once it is named (the texts redacted
// are remembered, not past what they depend on).
func TestFreeTextKnowsLaterQueries(t *testing.T) {
	v := NewValues(Default, nil, nil)
	text := `search "deploy notes" loaded nothing`
	before := v.FreeText(text)
	v.KeepQueries([]string{"deploy notes"})
	after := v.FreeText(text)
	if strings.Contains(before, "deploy notes") {
		t.Errorf("an unnamed quoted excerpt was kept: %s", before)
	}
	if !strings.Contains(after, "deploy notes") {
		t.Errorf("a query named after the text was first redacted is not kept: %s", after)
	}
}
