package e2e

import (
	"bufio"
	"io"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/timeline"
)

// startStandin runs 'tsinspect standin --scenario NAME' on a free loopback
// port, as a user would, and returns its URL; it is stopped at cleanup.
func startStandin(t *testing.T, scenario string) string {
	t.Helper()
	cmd := exec.Command(kit.Tsinspect, "standin", "--listen", "127.0.0.1:0", "--scenario", scenario)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		url := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+);`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := url.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(patience):
		t.Fatal("the stand-in did not say where it listens")
	}
	return ""
}

// TestStandinScenarios records real Claude Code against the stand-in's
// subagent and cachebreak scripts, through tsinspect record, and checks
// that each shows what it is for: a subagent thread that loaded and called
// echo itself, and a cache_break that nothing in the request explains.
func TestStandinScenarios(t *testing.T) {
	kit.RequireClaude(t)
	t.Run("subagent", func(t *testing.T) {
		u := startStandin(t, "subagent")
		res := kit.Record(t, u, session.Options{Prompt: "Show me what the demo MCP tools can do.", Allowed: []string{"Agent"}})
		if res.Err != nil {
			t.Fatalf("%v\n%s", res.Err, res.Output)
		}
		_, out, _ := runCLI(t, "report", res.DB)
		r := parseReport(t, out)
		var sub string
		for _, th := range r.Threads {
			if th.Kind == timeline.KindSubagent {
				sub = th.ID
			}
		}
		var searched, called bool
		for _, tu := range r.Turns {
			if tu.Thread != sub {
				continue
			}
			for _, s := range tu.ToolSearches {
				searched = searched || len(s.Results) == 1 && s.Results[0] == echoTool
			}
			for _, c := range tu.ToolCalls {
				called = called || c.Name == echoTool && c.Loaded
			}
		}
		if sub == "" || !searched || !called || len(r.Capture.Flags) != 0 {
			t.Errorf("subagent thread %q: search loaded echo %v, echo called %v; flags %v\n%s", sub, searched, called, r.Capture.Flags, res.Output)
		}
	})
	t.Run("cachebreak", func(t *testing.T) {
		u := startStandin(t, "cachebreak")
		res := kit.Record(t, u, session.Options{Prompt: "Show me what the demo MCP tools can do."})
		if res.Err != nil {
			t.Fatalf("%v\n%s", res.Err, res.Output)
		}
		_, out, _ := runCLI(t, "report", res.DB)
		r := parseReport(t, out)
		var breaks []string
		for _, tu := range r.Turns {
			for _, f := range tu.Flags {
				if f.Kind == timeline.FlagCacheBreak {
					breaks = append(breaks, f.Cause)
				}
			}
		}
		if len(breaks) != 1 || breaks[0] != timeline.CauseUnexplained || r.Capture.Flags[timeline.FlagCacheBreak] != 1 || len(r.Capture.Flags) != 1 {
			t.Errorf("cache breaks %v, flags %v\n%s", breaks, r.Capture.Flags, res.Output)
		}
	})
}
