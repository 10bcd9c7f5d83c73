package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
)

// firstRequest describes the tool-search setup of a request body: whether
// ToolSearch is offered, how many tools are deferred and inline, and
// whether the deferred-tools reminder is there.
type toolSetup struct {
	search    bool
	deferred  int
	inlineMCP int
	reminder  bool
}

func setupOf(t *testing.T, body []byte) toolSetup {
	t.Helper()
	var req struct {
		Tools []struct {
			Name         string `json:"name"`
			DeferLoading bool   `json:"defer_loading"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request body: %v", err)
	}
	var s toolSetup
	for _, tl := range req.Tools {
		switch {
		case tl.Name == "ToolSearch":
			s.search = true
		case tl.DeferLoading:
			s.deferred++
		case strings.HasPrefix(tl.Name, "mcp__"):
			s.inlineMCP++
		}
	}
	s.reminder = strings.Contains(string(body), "deferred tools are now available")
	return s
}

// TestRecordKeepsToolSearchSetting records real Claude Code in both modes
// with ENABLE_TOOL_SEARCH unset, true, auto and false, and checks that
// record sets it only when unset (saying so), keeps the user's value
// otherwise (warning when it turns tool search off behind the proxy's base
// URL), and that the capture names the contradictions Claude Code's own
// choice leaves in the requests.
func TestRecordKeepsToolSearchSetting(t *testing.T) {
	kit.RequireClaude(t)
	for _, mode := range []string{"reverse", "mitm"} {
		for _, value := range []string{"", "true", "auto", "false"} {
			name := mode + "/" + value
			if value == "" {
				name = mode + "/unset"
			}
			t.Run(name, func(t *testing.T) {
				sc := fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(fixtures.Text("done"))}}
				srv, url := session.StandIn(t, sc, fixtures.Options{})
				o := session.Options{Mode: mode}
				if value != "" {
					o.Env = []string{"ENABLE_TOOL_SEARCH=" + value}
				}
				res := kit.Record(t, url, o)
				if res.Err != nil {
					t.Fatalf("record: %v\n%s", res.Err, res.Output)
				}
				var main []byte
				for _, l := range srv.Exchanges() {
					if strings.Contains(l.Path, "/v1/messages") && !strings.Contains(l.Path, "count_tokens") && strings.Contains(string(l.Body), "mcp__demo__echo") {
						main = l.Body
						break
					}
				}
				if main == nil {
					t.Fatalf("no request with the demo tools\n%s", res.Output)
				}
				s := setupOf(t, main)
				code, out, stderr := runCLI(t, "report", res.DB)
				if code != 0 {
					t.Fatalf("report: exit %d: %s", code, stderr)
				}
				r := parseReport(t, out)
				// What Claude Code did with the value it got: unset is
				// record's true (reverse) or Claude Code's own default
				// (mitm, Anthropic's host); auto keeps the 41 demo tools
				// inline, below its 10 % threshold, as the user asked.
				on := value == "" || value == "true"
				want := toolSetup{search: on, reminder: value != "false"}
				if on {
					want.deferred = 1 // the placeholder; the demo tools are in the catalog
				} else {
					want.inlineMCP = 41
				}
				if s != want {
					t.Errorf("first request: %+v, want %+v", s, want)
				}
				wantFlags := map[string]int{}
				switch value {
				case "auto":
					// The reminder still announces the inlined tools as
					// deferred and points at a ToolSearch that is not there.
					wantFlags = map[string]int{"tool_search_off": 1, "catalog_without_search": 1, "deferred_sent_inline": 1}
				case "false":
					wantFlags = map[string]int{"tool_search_off": 1}
				}
				if len(r.Capture.Flags) != len(wantFlags) {
					t.Errorf("flags %v, want %v", r.Capture.Flags, wantFlags)
				}
				for k, n := range wantFlags {
					if r.Capture.Flags[k] != n {
						t.Errorf("flags %v, want %v", r.Capture.Flags, wantFlags)
					}
				}
				if value == "auto" {
					// The evidence: where the announcement is, and how many
					// announced tools the model could call directly.
					var detail string
					for _, tu := range r.Turns {
						for _, f := range tu.Flags {
							if f.Kind == "catalog_without_search" {
								detail = f.Detail
							}
						}
					}
					m := regexp.MustCompile(`announces (\d+) tools as deferred \(reminder, message 0, block \d+: .*\) and tells the model to load them with ToolSearch, but its \d+ tools hold no ToolSearch.* (\d+) of the announced tools are sent inline`).FindStringSubmatch(detail)
					inline := 0
					if m != nil {
						inline, _ = strconv.Atoi(m[2])
					}
					if inline < 41 {
						t.Errorf("catalog_without_search detail %q: want the reminder and at least the 41 demo tools inline", detail)
					}
				}
				warned := strings.Contains(res.Output, "tsinspect: warning: ENABLE_TOOL_SEARCH=false turns tool search off")
				if warned != (mode == "reverse" && value == "false") {
					t.Errorf("warning about ENABLE_TOOL_SEARCH=false shown %v (mode %s, value %q):\n%s", warned, mode, value, res.Output)
				}
				if t.Failed() {
					t.Logf("output:\n%s", res.Output)
				}
			})
		}
	}
}

// TestRecordChildEnvironment runs a shell as the recorded command to see
// the environment record gives it: ENABLE_TOOL_SEARCH only when unset,
// with a note; the user's NODE_EXTRA_CA_CERTS bundled with the CA, not
// replaced.
func TestRecordChildEnvironment(t *testing.T) {
	dir := t.TempDir()
	userCA := filepath.Join(dir, "corp.pem")
	if err := os.WriteFile(userCA, []byte("-----BEGIN CERTIFICATE-----\nCORP\n-----END CERTIFICATE-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := `echo "ETS=${ENABLE_TOOL_SEARCH-<unset>}"; echo "BASE=$ANTHROPIC_BASE_URL"; if [ -n "$NODE_EXTRA_CA_CERTS" ]; then echo "CA=$NODE_EXTRA_CA_CERTS"; grep -c CORP "$NODE_EXTRA_CA_CERTS"; fi; true`
	for _, c := range []struct {
		name, mode string
		env        []string
		out, err   []string // what stdout and stderr say
		notOut     string
	}{
		{"reverse unset", "reverse", nil, []string{"ETS=true", "BASE=http://127.0.0.1:"}, []string{"ENABLE_TOOL_SEARCH is unset: setting it to true for the child"}, ""},
		{"reverse auto", "reverse", []string{"ENABLE_TOOL_SEARCH=auto"}, []string{"ETS=auto"}, []string{"keeping your ENABLE_TOOL_SEARCH=auto"}, ""},
		{"reverse false", "reverse", []string{"ENABLE_TOOL_SEARCH=false"}, []string{"ETS=false"}, []string{"warning: ENABLE_TOOL_SEARCH=false turns tool search off"}, ""},
		{"mitm leaves it unset", "mitm", nil, []string{"ETS=<unset>"}, nil, "ETS=true"},
		{"mitm bundles the user's CA", "mitm", []string{"NODE_EXTRA_CA_CERTS=" + userCA}, []string{"CA=", "\n1\n"}, []string{"NODE_EXTRA_CA_CERTS is " + userCA + ": the child gets a bundle"}, "CA=" + userCA},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(kit.Tsinspect, "record", "--db", filepath.Join(t.TempDir(), "c.db"), "--mode", c.mode,
				"--ca-dir", filepath.Join(dir, "ca"), "--upstream", "http://127.0.0.1:9", "--", "sh", "-c", script)
			cmd.Env = append(session.ClaudeEnv(t.TempDir()), c.env...)
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("record: %v\n%s", err, errb.String())
			}
			for _, w := range c.out {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout %q does not say %q", out.String(), w)
				}
			}
			if c.notOut != "" && strings.Contains(out.String(), c.notOut) {
				t.Errorf("stdout %q says %q", out.String(), c.notOut)
			}
			for _, w := range c.err {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr %q does not say %q", errb.String(), w)
				}
			}
		})
	}
}
