package recording

import (
	"os"
	"path/filepath"
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
			got := Warnings(c.mode, c.up, hosts, c.environ)
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

func TestPlanChildEnv(t *testing.T) {
	const addr = "127.0.0.1:8080"
	for _, c := range []struct {
		name    string
		mode    string
		environ []string
		set     []string // exactly the entries the child gets
		note    string   // a note says this ("" no note)
		warn    string   // a warning says this ("" no warning)
		merge   string
	}{
		{"reverse unset", capture.ModeReverse, nil,
			[]string{"ANTHROPIC_BASE_URL=http://" + addr, "ENABLE_TOOL_SEARCH=true"}, "ENABLE_TOOL_SEARCH is unset: setting it to true", "", ""},
		{"reverse empty", capture.ModeReverse, []string{"ENABLE_TOOL_SEARCH="},
			[]string{"ANTHROPIC_BASE_URL=http://" + addr, "ENABLE_TOOL_SEARCH=true"}, "is unset", "", ""},
		{"reverse true", capture.ModeReverse, []string{"ENABLE_TOOL_SEARCH=true"},
			[]string{"ANTHROPIC_BASE_URL=http://" + addr}, "keeping your ENABLE_TOOL_SEARCH=true", "", ""},
		{"reverse auto", capture.ModeReverse, []string{"ENABLE_TOOL_SEARCH=auto"},
			[]string{"ANTHROPIC_BASE_URL=http://" + addr}, "keeping your ENABLE_TOOL_SEARCH=auto", "", ""},
		{"reverse auto:5", capture.ModeReverse, []string{"ENABLE_TOOL_SEARCH=auto:5"},
			[]string{"ANTHROPIC_BASE_URL=http://" + addr}, "keeping your ENABLE_TOOL_SEARCH=auto:5", "", ""},
		{"reverse false", capture.ModeReverse, []string{"ENABLE_TOOL_SEARCH=false"},
			[]string{"ANTHROPIC_BASE_URL=http://" + addr}, "", "ENABLE_TOOL_SEARCH=false turns tool search off", ""},
		{"reverse auto:100", capture.ModeReverse, []string{"ENABLE_TOOL_SEARCH=auto:100"},
			[]string{"ANTHROPIC_BASE_URL=http://" + addr}, "", "ENABLE_TOOL_SEARCH=auto:100 turns tool search off", ""},
		{"mitm leaves tool search alone", capture.ModeMITM, []string{"ENABLE_TOOL_SEARCH=false"},
			[]string{"HTTPS_PROXY=http://" + addr, "https_proxy=http://" + addr, "NODE_EXTRA_CA_CERTS=/ca.pem"}, "", "", ""},
		{"mitm unset", capture.ModeMITM, nil,
			[]string{"HTTPS_PROXY=http://" + addr, "https_proxy=http://" + addr, "NODE_EXTRA_CA_CERTS=/ca.pem"}, "", "", ""},
		{"mitm user CA bundle", capture.ModeMITM, []string{"NODE_EXTRA_CA_CERTS=/corp.pem"},
			[]string{"HTTPS_PROXY=http://" + addr, "https_proxy=http://" + addr}, "NODE_EXTRA_CA_CERTS is /corp.pem", "", "/corp.pem"},
		{"mitm user proxy", capture.ModeMITM, []string{"HTTPS_PROXY=http://corp:3128"},
			[]string{"HTTPS_PROXY=http://" + addr, "https_proxy=http://" + addr, "NODE_EXTRA_CA_CERTS=/ca.pem"}, "", "HTTPS_PROXY was http://corp:3128", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := PlanChild(c.mode, addr, "/ca.pem", c.environ)
			if strings.Join(got.Set, " ") != strings.Join(c.set, " ") {
				t.Errorf("set %q, want %q", got.Set, c.set)
			}
			// Reverse mode always says what a base URL changes; mitm never.
			var others []string
			said := false
			for _, n := range got.Notes {
				if n == BaseURLNote {
					said = true
					continue
				}
				others = append(others, n)
			}
			if said != (c.mode == capture.ModeReverse) {
				t.Errorf("mode %s: base URL note given %v", c.mode, said)
			}
			notes, warns := strings.Join(others, "\n"), strings.Join(got.Warnings, "\n")
			if (c.note == "") != (notes == "") || !strings.Contains(notes, c.note) {
				t.Errorf("notes %q, want one saying %q", got.Notes, c.note)
			}
			if (c.warn == "") != (warns == "") || !strings.Contains(warns, c.warn) {
				t.Errorf("warnings %q, want one saying %q", got.Warnings, c.warn)
			}
			if got.MergeCA != c.merge {
				t.Errorf("MergeCA %q, want %q", got.MergeCA, c.merge)
			}
		})
	}
}

func TestToolSearchOff(t *testing.T) {
	for v, want := range map[string]bool{
		"false": true, "FALSE": true, " off ": true, "0": true, "no": true, "auto:100": true, "auto:150": true,
		"true": false, "auto": false, "auto:0": false, "auto:99": false, "auto:x": false, "1": false, "force": false,
	} {
		if got := ToolSearchOff(v); got != want {
			t.Errorf("ToolSearchOff(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestWriteCABundle(t *testing.T) {
	dir := t.TempDir()
	user, ca := filepath.Join(dir, "user.pem"), filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(user, []byte("USER CERT"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, []byte("CA CERT"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := WriteCABundle(user, ca)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(p)
	b, _ := os.ReadFile(p)
	if string(b) != "USER CERT\nCA CERT" {
		t.Errorf("bundle %q", b)
	}
	if _, err := WriteCABundle(filepath.Join(dir, "missing.pem"), ca); err == nil || !strings.Contains(err.Error(), "NODE_EXTRA_CA_CERTS") {
		t.Errorf("missing user file: err %v", err)
	}
}
