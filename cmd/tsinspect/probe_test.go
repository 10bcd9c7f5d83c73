package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/cli"
)

// mcpHTTP serves an MCP server over streamable HTTP on 127.0.0.1 with six
// "get_item_COLOUR" tools with descriptions and a bare "get_item" without
// one, which no query of its name finds: every word of it ties or loses.
func mcpHTTP(t *testing.T) string {
	t.Helper()
	var tools []map[string]any
	for _, c := range []string{"red", "green", "blue", "cyan", "pink", "gray"} {
		tools = append(tools, map[string]any{"name": "get_item_" + c, "description": "Get an item.", "inputSchema": map[string]any{"type": "object"}})
	}
	tools = append(tools, map[string]any{"name": "get_item", "inputSchema": map[string]any{"type": "object"}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := map[string]any{"serverInfo": map[string]any{"name": "items", "version": "0.1"}}
		if req.Method == "tools/list" {
			result = map[string]any{"tools": tools}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	b := fmt.Sprintf(`{"mcpServers":{"items":{"type":"http","url":%q}}}`, srv.URL)
	if err := os.WriteFile(cfg, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func runProbeIn(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	err := runProbe(env, args)
	code := 0
	var ee *cli.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.Code
		if ee.Err != nil {
			errb.WriteString(ee.Err.Error())
		}
	case err != nil:
		code = 1
		errb.WriteString(err.Error())
	}
	return code, out.String(), errb.String()
}

func TestProbe(t *testing.T) {
	cfg := mcpHTTP(t)
	code, out, stderr := runProbeIn("--mcp-config", cfg, "--query", "get item")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"server items (http items 0.1): 7 tools",
		`mcp__items__get_item_red    39      "red"`,
		"1 tool no query of its own name's words finds: mcp__items__get_item",
		`empty description: only its name can match; "get" and "item" in 7 names; no distinctive name part: 6 tools score as high or higher on "get item"`,
		"these tools would be sent inline (below the threshold)",
		`keyword query "get item", max_results 5`,
		// By default the pool holds Claude Code's own deferred tools (TaskGet
		// scores on "get"), and the scoring is that release's.
		"max_results 5 cut the list after mcp__items__get_item_pink (score 36), in a tie with mcp__items__get_item_red (score 36)",
		`TaskGet                     "get" = name part +10`,
		"Searched among them and Claude Code 2.1.331's 15 deferred tools (--claude-tools none to leave them out)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}
	code, _, stderr = runProbeIn("--mcp-config", cfg, "--require", "findable")
	if code != 3 || !strings.Contains(stderr, "--require findable: 1 of 7 tools found by no query of its name's words: mcp__items__get_item") {
		t.Errorf("--require findable: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runProbeIn("--mcp-config", cfg, "--expect", "gray=mcp__items__get_item_gray", "--expect", "item=mcp__items__get_item")
	if code != 3 || strings.Count(stderr, "--expect") != 1 || !strings.Contains(stderr, `"item" does not load mcp__items__get_item (it loads mcp__items__get_item_blue,`) {
		t.Errorf("--expect: exit %d, stderr %q", code, stderr)
	}
	code, _, _ = runProbeIn("--mcp-config", cfg, "--expect", "gray=mcp__items__get_item_gray", "--context-window", "1000")
	if code != 0 {
		t.Errorf("--expect met: exit %d", code)
	}
	// The published scoring does not score the tool names whole; without
	// Claude Code's tools only the server's compete.
	_, out, _ = runProbeIn("--mcp-config", cfg, "--algorithm", "published", "--claude-tools", "none", "--query", "get item")
	if strings.Contains(out, `in a whole name +4`) || strings.Contains(out, "TaskGet") || !strings.Contains(out, "(score 28), in a tie with mcp__items__get_item_red (score 28)") ||
		!strings.Contains(out, `Searched among them alone, without Claude Code's own deferred tools; keyword scoring "published": the published algorithm.`) {
		t.Errorf("published scoring over the server's tools alone:\n%s", out)
	}
	_, out, _ = runProbeIn("--mcp-config", cfg, "--claude-tools", "2.1.328")
	if !strings.Contains(out, `Claude Code 2.1.328's 15 deferred tools`) || !strings.Contains(out, `keyword scoring "2.1.328": the scoring Claude Code 2.1.328 runs, as measured.`) {
		t.Errorf("--claude-tools 2.1.328:\n%s", out)
	}
	_, out, _ = runProbeIn("--mcp-config", cfg, "--context-window", "1000")
	if !strings.Contains(out, "(100 of 1,000 tokens): these tools would be deferred") {
		t.Errorf("small window:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "--mcp-config FILE is required"},
		{[]string{"--mcp-config", cfg, "--require", "all"}, 2, `--require "all": want findable`},
		{[]string{"--mcp-config", cfg, "--expect", "noequals"}, 2, `--expect "noequals": want QUERY=TOOL`},
		{[]string{"--mcp-config", cfg, "--server", "nope"}, 2, "the config's servers are items"},
		{[]string{"--mcp-config", cfg, "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"--mcp-config", cfg, "--algorithm", "nope"}, 2, `--algorithm "nope": want auto, published or a Claude Code version`},
		{[]string{"--mcp-config", cfg, "--claude-tools", "2.1.100"}, 2, `--claude-tools "2.1.100": recorded releases are 2.1.328, 2.1.331 (or none)`},
		{[]string{"--mcp-config", filepath.Join(t.TempDir(), "none.json")}, 1, "probe: mcp config: open"},
	} {
		code, _, stderr := runProbeIn(c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d %q, want %d %q", c.args, code, stderr, c.code, c.want)
		}
	}
}
