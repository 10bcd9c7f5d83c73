package main

import (
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/capture"
)

func TestBypasses(t *testing.T) {
	for _, c := range []struct {
		noProxy string
		want    bool
	}{
		{"", false},
		{"*", true},
		{"localhost,127.0.0.1", false},
		{"localhost, api.anthropic.com", true},
		{".anthropic.com", true},
		{"anthropic.com", true},
		{"*.anthropic.com", true},
		{"API.Anthropic.com:443", true},
		{"notanthropic.com", false},
		{"anthropic.com.evil", false},
		{",,", false},
		{"*.example.com,,", false},
	} {
		if got := bypasses(c.noProxy, "api.anthropic.com"); got != c.want {
			t.Errorf("bypasses(%q) = %v, want %v", c.noProxy, got, c.want)
		}
	}
}

func TestEnvWarnings(t *testing.T) {
	hosts := capture.InterceptHosts([]string{"gw.example.com"})
	for _, c := range []struct {
		name    string
		mode    string
		up      string
		environ []string
		lines   int
		want    []string // what the lines say between them
	}{
		{"clean", capture.ModeMITM, "", []string{"PATH=/bin", "NO_PROXY=localhost"}, 0, nil},
		{"no_proxy", capture.ModeMITM, "", []string{"no_proxy=.anthropic.com"}, 1, []string{"no_proxy=.anthropic.com makes the client bypass the proxy for api.anthropic.com"}},
		{"base URL not intercepted", capture.ModeMITM, "", []string{"ANTHROPIC_BASE_URL=https://llm.corp.example/v1"}, 1, []string{"sends the client to llm.corp.example, which is not intercepted", "--intercept llm.corp.example"}},
		{"base URL intercepted", capture.ModeMITM, "", []string{"ANTHROPIC_BASE_URL=https://gw.example.com"}, 0, nil},
		{"plain HTTP base URL", capture.ModeMITM, "", []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:4000"}, 1, []string{"plain HTTP", "--mode reverse --upstream http://127.0.0.1:4000"}},
		{"reverse replaces the base URL", capture.ModeReverse, "", []string{"ANTHROPIC_BASE_URL=https://gw.example.com"}, 1, []string{"ANTHROPIC_BASE_URL was https://gw.example.com", "--upstream https://gw.example.com"}},
		{"reverse to the base URL", capture.ModeReverse, "https://gw.example.com", []string{"ANTHROPIC_BASE_URL=https://gw.example.com"}, 0, nil},
		{"reverse ignores NO_PROXY", capture.ModeReverse, "", []string{"NO_PROXY=*"}, 0, nil},
		{"bedrock", capture.ModeReverse, "", []string{"CLAUDE_CODE_USE_BEDROCK=1"}, 1, []string{"CLAUDE_CODE_USE_BEDROCK is set"}},
		{"bedrock off", capture.ModeMITM, "", []string{"CLAUDE_CODE_USE_BEDROCK=0"}, 0, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := envWarnings(c.mode, c.up, hosts, c.environ)
			if len(got) != c.lines {
				t.Fatalf("warnings %q, want %d", got, c.lines)
			}
			joined := strings.Join(got, "\n")
			for _, w := range c.want {
				if !strings.Contains(joined, w) {
					t.Errorf("warnings %q do not say %q", got, w)
				}
			}
		})
	}
}
