package view

import (
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

func TestTokensAndBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1.0k", 12345: "12.3k", 99_949: "99.9k", 123_456: "123k", 1_234_567: "1.2M"} {
		if got := Tokens(n); got != want {
			t.Errorf("Tokens(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestStop(t *testing.T) {
	cases := []struct {
		r    decode.Response
		want string
		role Role
	}{
		{decode.Response{Status: 200, StopReason: "tool_use"}, "tool_use", RoleText},
		{decode.Response{Status: 200, StopReason: "stop_sequence"}, "stop_seq", RoleWarning},
		{decode.Response{Status: 200, StopReason: "refusal"}, "refusal", RoleWarning},
		{decode.Response{Status: 529, Error: &decode.APIError{Type: "overloaded_error"}}, "overloaded", RoleError},
		{decode.Response{Status: 500}, "500", RoleError},
		{decode.Response{Status: 200, Incomplete: true, StopReason: "x"}, "cut", RoleError},
		{decode.Response{}, "no reply", RoleError},
	}
	for _, c := range cases {
		text, role := Stop(&decode.Turn{Response: c.r})
		if text != c.want || role != c.role {
			t.Errorf("Stop(%+v) = %q %v, want %q %v", c.r, text, role, c.want, c.role)
		}
	}
}

func TestBar(t *testing.T) {
	cases := []struct {
		read, created, input int64
		want                 [3]int
	}{
		{1000, 0, 0, [3]int{8, 0, 0}},
		{990, 5, 5, [3]int{6, 1, 1}}, // small parts still show
		{0, 100, 0, [3]int{0, 8, 0}},
		{500, 250, 250, [3]int{4, 2, 2}},
		{0, 0, 0, [3]int{0, 0, 0}},
	}
	for _, c := range cases {
		r, cr, in := Bar(decode.Usage{CacheReadInputTokens: c.read, CacheCreationInputTokens: c.created, InputTokens: c.input}, 8)
		if [3]int{r, cr, in} != c.want {
			t.Errorf("Bar(%d,%d,%d) = %d,%d,%d want %v", c.read, c.created, c.input, r, cr, in, c.want)
		}
	}
}

func TestCells(t *testing.T) {
	ex := &exchange.Exchange{Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	d := &decode.Turn{Catalog: []string{"a", "b", "c"}, WorkingSet: []decode.WorkingTool{{Name: "Bash", Via: decode.ViaAlways}, {Name: "a", Via: decode.ViaSearch}}}
	d.Request.Model = "claude-sonnet-4-5-20250929"
	d.Response = decode.Response{Status: 200, StopReason: "tool_use", Usage: decode.Usage{InputTokens: 3, CacheReadInputTokens: 20000, CacheCreationInputTokens: 1500}}
	tu := &timeline.Turn{Index: 12, Thread: "sub1", Prev: 9, Exchange: ex, Decoded: d, WorkingAdded: []string{"a"},
		Flags: []timeline.Flag{{Kind: "empty_search", Severity: timeline.SeverityWarning}, {Kind: "call_before_load", Severity: timeline.SeverityError}, {Kind: "retry", Severity: timeline.SeverityInfo}}}
	want := map[Column]string{
		ColIndex: "12", ColTime: "03:04:05", ColThread: "sub1", ColModel: "sonnet-4-5",
		ColCatalog: "3", ColWorking: "2 +1", ColPrompt: " 21.5k ██████▓░", ColStop: "tool_use",
		ColFlags: "✖▲● call_before_load",
	}
	for c := Column(0); c < NumColumns; c++ {
		if got := Cell(tu, c, time.UTC, false).String(); got != want[c] {
			t.Errorf("%s: %q, want %q", c.Title(), got, want[c])
		}
	}
	if got := Cell(tu, ColStop, time.UTC, true).String(); got != "streaming" {
		t.Errorf("in flight stop: %q", got)
	}
	flags := Cell(tu, ColFlags, time.UTC, false)
	if flags[0].Role != RoleError || flags[len(flags)-1].Role != RoleError {
		t.Errorf("flag roles: %+v", flags)
	}
	tu.Prev = 0 // a thread's first turn: no "+added"
	if got := Cell(tu, ColWorking, time.UTC, false).String(); got != "2" {
		t.Errorf("first turn working: %q", got)
	}
}

func TestWrap(t *testing.T) {
	l := Line{{Text: "    ", Role: RoleText}, {Text: "alpha beta ", Role: RoleKey}, {Text: "gamma delta epsilon", Role: RoleText}}
	got := Text(Wrap([]Line{l}, 16))
	want := "    alpha beta\n    gamma delta\n    epsilon\n"
	if got != want {
		t.Errorf("Wrap:\n%s\nwant:\n%s", got, want)
	}
	long := Line{{Text: "x" + strings.Repeat("y", 25)}}
	if got := Text(Wrap([]Line{long}, 10)); got != "xyyyyyyyyy\nyyyyyyyyyy\nyyyyyy\n" {
		t.Errorf("hard break:\n%s", got)
	}
	for _, w := range Wrap([]Line{l, long}, 12) {
		if w.Width() > 12 {
			t.Errorf("line wider than 12: %q", w.String())
		}
	}
	short := Line{{Text: "fits"}}
	if got := Wrap([]Line{short}, 10); len(got) != 1 || got[0].String() != "fits" {
		t.Errorf("short line changed: %v", got)
	}
}

func TestDiff(t *testing.T) {
	a := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight"
	b := "one\ntwo\nthree\nFOUR\nfive\nsix\nseven\neight\nnine"
	var got []string
	for _, d := range Diff(a, b, 1, 0) {
		got = append(got, string(d.Op)+d.Text)
	}
	want := []string{"~… 2 lines unchanged", " three", "-four", "+FOUR", " five", "~… 2 lines unchanged", " eight", "+nine"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Diff:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := Diff("same", "same", 2, 0); len(d) != 0 {
		t.Errorf("no change gave %v", d)
	}
	// A long line changed in the middle is cropped around the change.
	x := strings.Repeat("a", 500) + "OLD" + strings.Repeat("b", 500)
	y := strings.Repeat("a", 500) + "NEW" + strings.Repeat("b", 500)
	d := Diff(x, y, 0, 0)
	if len(d) != 2 || !strings.Contains(d[0].Text, "OLD") || !strings.Contains(d[1].Text, "NEW") || len(d[0].Text) > cropWidth+40 || !strings.HasPrefix(d[0].Text, "…") {
		t.Errorf("cropped diff: %q", d)
	}
	// The line cap.
	many := strings.Repeat("x\n", 100)
	if d := Diff("", many, 0, 10); len(d) != 11 || d[10].Op != '~' || d[10].Text != "… 90 lines more" {
		t.Errorf("cap: %d lines, last %+v", len(d), d[len(d)-1])
	}
}

func TestFirstPrefixChange(t *testing.T) {
	tool := func(name, desc string, deferred bool) string {
		s := `{"name":"` + name + `","description":"` + desc + `","input_schema":{"type":"object"}`
		if deferred {
			s += `,"defer_loading":true`
		}
		return s + "}"
	}
	req := func(model, sys, tools, msgs string) *decode.Turn {
		return decode.DecodeRequest([]byte(`{"model":"` + model + `","max_tokens":100,"system":[` +
			`{"type":"text","text":"x-anthropic-billing-header: cc_version=` + model + `;"},` +
			`{"type":"text","text":"` + sys + `","cache_control":{"type":"ephemeral"}}],"tools":[` + tools + `],"messages":[` + msgs + `]}`))
	}
	u1 := `{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}`
	u1plain := `{"role":"user","content":[{"type":"text","text":"hi"}]}`
	a1 := `{"role":"assistant","content":[{"type":"text","text":"hello"}]}`
	u2 := `{"role":"user","content":[{"type":"text","text":"more","cache_control":{"type":"ephemeral"}}]}`
	tools := tool("Bash", "runs", false) + "," + tool("Read", "reads", false)
	base := req("m1", "You are helpful.", tools, u1)
	cases := []struct {
		name  string
		cur   *decode.Turn
		where string
	}{
		{"extends (cache_control moved, billing header differs)", req("m1", "You are helpful.", tools+","+tool("Deferred", "d", true), u1plain+","+a1+","+u2), ""},
		{"model", req("m2", "You are helpful.", tools, u1), "model"},
		{"tool changed", req("m1", "You are helpful.", tool("Bash", "runs things", false)+","+tool("Read", "reads", false), u1), "tools[0] Bash"},
		{"tool added", req("m1", "You are helpful.", tools+","+tool("Write", "w", false), u1), "tools[2] Write (new)"},
		{"system", req("m1", "You are very helpful.", tools, u1), "system[1]"},
		{"message", req("m1", "You are helpful.", tools, `{"role":"user","content":[{"type":"text","text":"bye"}]}`), "messages[0].content[0] (text)"},
	}
	for _, c := range cases {
		pc := FirstPrefixChange(base, c.cur)
		if pc.Where != c.where {
			t.Errorf("%s: Where %q, want %q", c.name, pc.Where, c.where)
		}
	}
	pc := FirstPrefixChange(base, cases[4].cur)
	if pc.Old != "You are helpful." || pc.New != "You are very helpful." {
		t.Errorf("system texts: %q %q", pc.Old, pc.New)
	}
	pc = FirstPrefixChange(base, cases[2].cur)
	if !strings.Contains(pc.Old, `"description": "runs"`) || !strings.Contains(pc.New, `"description": "runs things"`) {
		t.Errorf("tool diff texts:\n%s\n%s", pc.Old, pc.New)
	}
}
