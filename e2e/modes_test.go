package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
)

// requestShape is what Claude Code's main request looks like in a mode:
// its system blocks, whether one has scope "global", whether it carries
// diagnostics, its betas, and the side requests beside it.
type requestShape struct {
	system   int
	global   bool
	diag     bool
	betas    []string
	sideReqs []string
}

func shapeOf(t *testing.T, logged []fixtures.Logged) requestShape {
	t.Helper()
	var s requestShape
	found := false
	for _, l := range logged {
		if !strings.HasPrefix(l.Path, "/v1/messages") || strings.Contains(l.Path, "count_tokens") {
			if l.Method != "POST" || !strings.HasPrefix(l.Path, "/v1/messages") {
				s.sideReqs = append(s.sideReqs, l.Method+" "+l.Path)
			}
			continue
		}
		if found || !bytes.Contains(l.Body, []byte("mcp__demo__echo")) {
			continue
		}
		found = true
		var req struct {
			System []struct {
				CacheControl *struct {
					Scope string `json:"scope"`
				} `json:"cache_control"`
			} `json:"system"`
			Diagnostics json.RawMessage `json:"diagnostics"`
		}
		if err := json.Unmarshal(l.Body, &req); err != nil {
			t.Fatalf("main request: %v", err)
		}
		s.system = len(req.System)
		for _, b := range req.System {
			if b.CacheControl != nil && b.CacheControl.Scope == "global" {
				s.global = true
			}
		}
		s.diag = req.Diagnostics != nil
		for _, b := range strings.Split(l.Header.Get("Anthropic-Beta"), ",") {
			if b = strings.TrimSpace(b); b != "" {
				s.betas = append(s.betas, b)
			}
		}
		sort.Strings(s.betas)
	}
	if !found {
		t.Fatal("no main request with the demo tools")
	}
	return s
}

// TestModesSayWhatTheyChange records the pinned Claude Code through the
// forward proxy and behind ANTHROPIC_BASE_URL, and checks the differences
// the README's table and record's note state: 3 system blocks instead of
// 4 (no scope "global" block), no diagnostics, up to 4 fewer betas and HEAD
// /api/hello in place of the other side requests. record says so when it starts in reverse mode, and bodies
// mode's --upstream points the child at a stand-in.
func TestModesSayWhatTheyChange(t *testing.T) {
	kit.RequireClaude(t)
	sc := fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(fixtures.Text("done"))}}
	shapes := map[string]requestShape{}
	for _, mode := range []string{"mitm", "reverse"} {
		srv, url := session.StandIn(t, sc, fixtures.Options{})
		// As users run it: side traffic allowed (the tests turn it off
		// elsewhere); what Claude Code asks for then differs too.
		res := kit.Record(t, url, session.Options{Mode: mode, Env: []string{"ENABLE_TOOL_SEARCH=true", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="}})
		if res.Err != nil {
			t.Fatalf("record %s: %v\n%s", mode, res.Err, res.Output)
		}
		shapes[mode] = shapeOf(t, srv.Exchanges())
		t.Logf("%s: %d system blocks, global %v, diagnostics %v, %d betas, side requests %q",
			mode, shapes[mode].system, shapes[mode].global, shapes[mode].diag, len(shapes[mode].betas), shapes[mode].sideReqs)
	}
	m, r := shapes["mitm"], shapes["reverse"]
	if m.system != 4 || !m.global || r.system != 3 || r.global {
		t.Errorf("system blocks: mitm %d (global %v), reverse %d (global %v); want 4 with a global block, 3 without", m.system, m.global, r.system, r.global)
	}
	if !m.diag || r.diag {
		t.Errorf("diagnostics: mitm %v, reverse %v; want only in mitm", m.diag, r.diag)
	}
	var fewer []string
	have := map[string]bool{}
	for _, b := range r.betas {
		have[b] = true
	}
	for _, b := range m.betas {
		if !have[b] {
			fewer = append(fewer, b)
		}
	}
	// 2.1.328 and 2.1.331 leave out three (four on the requests that
	// carry mid-conversation-system-clear-at through the proxy), 2.1.300
	// two; cache-diagnosis and thinking-binding-controls always. None is
	// added.
	want := map[string]bool{}
	for _, b := range fewer {
		want[b] = true
	}
	if len(m.betas)-len(r.betas) != len(fewer) || len(fewer) > 4 ||
		!want["cache-diagnosis-2026-04-07"] || !want["thinking-binding-controls-2026-08-01"] {
		t.Errorf("betas: mitm %q, reverse %q; want 2 to 4 fewer behind the base URL, got %q", m.betas, r.betas, fewer)
	}
	hello := func(side []string) bool {
		for _, s := range side {
			if s == "HEAD /api/hello" {
				return true
			}
		}
		return false
	}
	if hello(m.sideReqs) || !hello(r.sideReqs) {
		t.Errorf("HEAD /api/hello: mitm %q, reverse %q; want it behind the base URL only", m.sideReqs, r.sideReqs)
	}
	t.Logf("betas only through the proxy: %q", fewer)

	// record says it at the start in reverse mode, not in mitm mode.
	for _, mode := range []string{"reverse", "mitm"} {
		dir := t.TempDir()
		out, err := exec.Command(kit.Tsinspect, "record", "--db", filepath.Join(dir, "s.db"), "--mode", mode,
			"--ca-dir", filepath.Join(dir, "ca"), "--", "true").CombinedOutput()
		if err != nil {
			t.Fatalf("record %s: %v\n%s", mode, err, out)
		}
		said := strings.Contains(string(out), "note: behind ANTHROPIC_BASE_URL Claude Code sends other requests")
		if said != (mode == "reverse") {
			t.Errorf("record --mode %s: note given %v:\n%s", mode, said, out)
		}
	}

	// Bodies mode: --upstream is the child's ANTHROPIC_BASE_URL.
	srv, url := session.StandIn(t, sc, fixtures.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "bodies.db")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kit.Tsinspect, "record", "--db", db, "--mode", "bodies", "--upstream", url, "--",
		kit.Claude, "-p", "say done", "--model", "claude-sonnet-4-5")
	cmd.Dir = dir
	cmd.Env = session.ClaudeEnv(filepath.Join(dir, "home"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("record --mode bodies --upstream: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "the child gets ANTHROPIC_BASE_URL="+url+" (--upstream)") ||
		!strings.Contains(string(out), "note: behind ANTHROPIC_BASE_URL") {
		t.Errorf("bodies mode does not say where the child goes and what that changes:\n%s", out)
	}
	posts := 0
	for _, l := range srv.Exchanges() {
		if strings.HasPrefix(l.Path, "/v1/messages") {
			posts++
		}
	}
	if posts == 0 {
		t.Fatalf("the stand-in got no request:\n%s", out)
	}
	if n := len(session.ReadCapture(t, db)); n == 0 {
		t.Errorf("bodies capture is empty after %d requests reached the stand-in", posts)
	}
}
