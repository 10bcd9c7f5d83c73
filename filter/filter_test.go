package filter

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	turn := &Fields{Flags: []string{"cache_break", "retry"}, Model: "claude-opus-4-5", Tools: []string{"mcp__github__create_issue", "Bash"},
		Thread: "sub1", Cost: 0.08, Priced: true, Tokens: 120000, Text: "hello world",
		Request:  func() string { return `tool_result: the echo said "hi there"` },
		Response: func() string { return `mcp__demo__echo {"text":"hello from the demo"}` }}
	for expr, want := range map[string]bool{
		"flag:cache_break":                    true,
		"flag:call_before_load":               false,
		"flag:*_break":                        true,
		"model:opus":                          true,
		"model:sonnet":                        false,
		"tool:mcp__github__*":                 true,
		"tool:mcp__slack__*":                  false,
		"tool:bash":                           true,
		"thread:sub1":                         true,
		"thread:sub":                          false,
		"thread:sub*":                         true,
		"cost>0.05":                           true,
		"cost>=0.08":                          true,
		"cost<0.05":                           false,
		"cost>$0.01":                          true,
		"tokens>100000":                       true,
		"flag:cache_break and model:opus":     true,
		"flag:cache_break model:sonnet":       false,
		"model:sonnet or tool:mcp__github__*": true,
		"not thread:main":                     true,
		"not (flag:retry or cost>1)":          false,
		"(model:opus or model:haiku) and not flag:api_error and cost>0.05": true,
		"hello":             true,
		"hello and goodbye": false,
		// Content: a bare word looks in it too; body: in it alone.
		"demo":                      true,
		`"hello from the demo"`:     true,
		"body:demo":                 true,
		"body:world":                false,
		"req:demo":                  false,
		"resp:demo":                 true,
		"request:echo":              true,
		`req:"hi there"`:            true,
		`resp:"HELLO FROM"`:         true,
		`body:/hel+o\s+from/`:       true,
		"body:/^hello/":             false,
		"~b demo":                   true,
		"~bq demo":                  false,
		"~bs demo and flag:retry":   true,
		"not body:demo":             false,
		`"flag:retry"`:              false,
		"body:demo and model:haiku": false,
	} {
		e, err := Parse(expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if got := e.Match(turn); got != want {
			t.Errorf("%s (%s): %v, want %v", expr, e, got, want)
		}
	}
	unpriced := &Fields{Model: "gpt"}
	if e, _ := Parse("cost<1"); e.Match(unpriced) {
		t.Error("a turn without a price matched cost<1")
	}
	// Content is read only when an expression needs it.
	called := 0
	lazy := &Fields{Model: "opus", Request: func() string { called++; return "" }, Response: func() string { called++; return "" }}
	if e, _ := Parse("model:opus"); !e.Match(lazy) || called != 0 {
		t.Errorf("model:opus read the content %d times", called)
	}
}

func TestParseErrors(t *testing.T) {
	for expr, want := range map[string]string{
		"":               "empty",
		"cost>abc":       "wants a number",
		"flag:":          "nothing after",
		"model>3":        "takes :",
		"colour:red":     "unknown field",
		"(flag:retry":    "missing )",
		"flag:retry and": "ends too soon",
		"or flag:retry":  "unexpected",
		"flag:retry )":   "unexpected",
		"cost>>0.05":     "wants a number",
		`body:"/(/"`:     "not a regular expression",
		`body:"open`:     "a quote is not closed",
		"~b":             "wants the text",
		"body>3":         "takes :",
	} {
		_, err := Parse(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", expr, err, want)
		}
	}
	// With the flag kinds given, flag: must name one (or a glob match one).
	o := Options{FlagKinds: []string{"cache_break", "empty_search"}}
	for expr, want := range map[string]string{"flag:nonexistent_kind": "no flag kind is nonexistent_kind", "flag:*_tool": "no flag kind is *_tool"} {
		if _, err := o.Parse(expr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", expr, err, want)
		}
	}
	for _, ok := range []string{"flag:cache_break", "flag:*_search", "flag:CACHE_BREAK"} {
		if _, err := o.Parse(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

func TestHasFields(t *testing.T) {
	for expr, want := range map[string]bool{"hello": false, "hello world": false, "not hello": false, "hello or flag:retry": true, "cost>1": true} {
		e, err := Parse(expr)
		if err != nil || HasFields(e) != want {
			t.Errorf("%q: HasFields %v (err %v), want %v", expr, e != nil && HasFields(e), err, want)
		}
	}
}
