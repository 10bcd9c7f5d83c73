package filter

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	turn := &Fields{Flags: []string{"cache_break", "retry"}, Model: "claude-opus-4-5", Tools: []string{"mcp__github__create_issue", "Bash"},
		Thread: "sub1", Cost: 0.08, Priced: true, Tokens: 120000, Text: "hello world"}
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
	} {
		_, err := Parse(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", expr, err, want)
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
