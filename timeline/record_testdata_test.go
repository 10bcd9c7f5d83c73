package timeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
)

// TestRecordClaudeCode records testdata/claude-code-parallel-subagents:
// Claude Code with three MCP servers (ToolSearch on by
// ENABLE_TOOL_SEARCH=auto) starting two subagents of different types in
// one response, with the same prompt "Warmup": they run at once with the
// same messages but different system prompts and tools. The first to
// arrive gets an empty stop_sequence reply, the second a text.
func TestRecordClaudeCode(t *testing.T) {
	if !*record {
		t.Skip("records with -record only")
	}
	requireClaude(t)
	agent := func(n int, typ string) fixtures.Reply {
		return fixtures.CallTool("Agent", map[string]any{
			"description":   fmt.Sprintf("task %d", n),
			"prompt":        "Warmup",
			"subagent_type": typ,
		})
	}
	u := standIn(t, map[fixtures.Route][]fixtures.Step{
		fixtures.RouteMain:     fixtures.Steps(fixtures.Together(agent(1, "general-purpose"), agent(2, "Explore")), fixtures.Text("Both subagents reported.")),
		fixtures.RouteSubagent: {{fixtures.EmptyStop("\n\nHuman:"), fixtures.Text("Ready.")}},
	}, fixtures.Options{})
	dir := t.TempDir()
	cfg := map[string]any{"mcpServers": map[string]any{
		"files": map[string]any{"command": kit.MCPDemo, "args": []string{"-actions=150"}},
		"web":   map[string]any{"command": kit.MCPDemo, "args": []string{"-actions=150"}},
	}}
	b, _ := json.Marshal(cfg)
	extra := filepath.Join(dir, "more.json")
	if err := os.WriteFile(extra, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "capture.db")
	res := kit.Record(t, u, session.Options{DB: db, Mode: "mitm", Timeout: 2 * time.Minute, Prompt: "start two subagents",
		Env: []string{"ENABLE_TOOL_SEARCH=auto"}, Args: []string{"--mcp-config", extra}, Allowed: []string{"Agent", "mcp__files__echo", "mcp__web__echo"}})
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Output)
	}
	exs := session.ReadCapture(t, db)
	neutral := func(res session.Result) [][2]string {
		return [][2]string{{res.Home, "/home/user"}, {res.Dir, "/project"}, {strings.ReplaceAll(res.Dir, "/", "-"), "-project"},
			{fmt.Sprintf("/claude-%d/", os.Getuid()), "/claude-1000/"}}
	}
	storeCapture(t, "claude-code-parallel-subagents", exs, neutral(res))

	// testdata/claude-code-tool-search-off: the demo MCP server's tools
	// with ENABLE_TOOL_SEARCH=false, so every schema is sent in full.
	u2 := standIn(t, map[fixtures.Route][]fixtures.Step{
		fixtures.RouteMain: fixtures.Steps(fixtures.CallTool("mcp__demo__echo", map[string]any{"text": "hi"}), fixtures.Text("The echo tool answered.")),
	}, fixtures.Options{})
	db2 := filepath.Join(dir, "off.db")
	res2 := kit.Record(t, u2, session.Options{DB: db2, Mode: "mitm", Timeout: 2 * time.Minute, Actions: 3, Env: []string{"ENABLE_TOOL_SEARCH=false"}})
	if res2.Err != nil {
		t.Fatalf("%v\n%s", res2.Err, res2.Output)
	}
	storeCapture(t, "claude-code-tool-search-off", session.ReadCapture(t, db2), neutral(res2))
}

// TestRecordClaudeCodeSearches records testdata/claude-code-search-absent:
// the demo MCP server's tools with ENABLE_TOOL_SEARCH=false while the
// model calls ToolSearch twice anyway (Claude Code refuses both: "No such
// tool available"), then echo; and testdata/claude-code-search-repeated:
// with tool search on, the model loads echo, calls it, then asks for echo
// again with the same select: query and calls it again.
func TestRecordClaudeCodeSearches(t *testing.T) {
	if !*record {
		t.Skip("records with -record only")
	}
	requireClaude(t)
	const echo = "mcp__demo__echo"
	dir := t.TempDir()
	neutral := func(res session.Result) [][2]string {
		return [][2]string{{res.Home, "/home/user"}, {res.Dir, "/project"}, {strings.ReplaceAll(res.Dir, "/", "-"), "-project"},
			{fmt.Sprintf("/claude-%d/", os.Getuid()), "/claude-1000/"}}
	}
	u := standIn(t, map[fixtures.Route][]fixtures.Step{
		fixtures.RouteMain: fixtures.Steps(fixtures.ToolSearch("select:"+echo, 5), fixtures.ToolSearch("select:"+echo, 5),
			fixtures.CallTool(echo, map[string]any{"text": "hi"}), fixtures.Text("The echo tool answered.")),
	}, fixtures.Options{})
	db := filepath.Join(dir, "absent.db")
	res := kit.Record(t, u, session.Options{DB: db, Mode: "mitm", Timeout: 2 * time.Minute, Actions: 3, Env: []string{"ENABLE_TOOL_SEARCH=false"}})
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Output)
	}
	storeCapture(t, "claude-code-search-absent", session.ReadCapture(t, db), neutral(res))

	u2 := standIn(t, map[fixtures.Route][]fixtures.Step{
		fixtures.RouteMain: fixtures.Steps(fixtures.ToolSearch("select:"+echo, 5), fixtures.CallTool(echo, map[string]any{"text": "hi"}),
			fixtures.ToolSearch("select:"+echo, 5), fixtures.CallTool(echo, map[string]any{"text": "hi again"}), fixtures.Text("The echo tool answered twice.")),
	}, fixtures.Options{})
	db2 := filepath.Join(dir, "repeated.db")
	res2 := kit.Record(t, u2, session.Options{DB: db2, Mode: "mitm", Timeout: 2 * time.Minute, Actions: 3})
	if res2.Err != nil {
		t.Fatalf("%v\n%s", res2.Err, res2.Output)
	}
	storeCapture(t, "claude-code-search-repeated", session.ReadCapture(t, db2), neutral(res2))
}

// TestRecordClaudeCodeAuto records testdata/claude-code-auto-inline: the
// demo MCP server's 41 tools with ENABLE_TOOL_SEARCH=auto, below the
// threshold, so Claude Code sends every schema inline and no ToolSearch,
// yet still announces the deferred tools.
func TestRecordClaudeCodeAuto(t *testing.T) {
	if !*record {
		t.Skip("records with -record only")
	}
	requireClaude(t)
	u := standIn(t, map[fixtures.Route][]fixtures.Step{
		fixtures.RouteMain: fixtures.Steps(fixtures.CallTool("mcp__demo__echo", map[string]any{"text": "hi"}), fixtures.Text("The echo tool answered.")),
	}, fixtures.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "auto.db")
	res := kit.Record(t, u, session.Options{DB: db, Mode: "mitm", Timeout: 2 * time.Minute, Env: []string{"ENABLE_TOOL_SEARCH=auto"}})
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Output)
	}
	storeCapture(t, "claude-code-auto-inline", session.ReadCapture(t, db), [][2]string{{res.Home, "/home/user"}, {res.Dir, "/project"},
		{strings.ReplaceAll(res.Dir, "/", "-"), "-project"}, {fmt.Sprintf("/claude-%d/", os.Getuid()), "/claude-1000/"}})
}

// TestRecordSDK records testdata/sdk-agent and testdata/sdk-flaky with
// the official TypeScript SDK running testdata/NAME.mjs against the
// stand-in, through tsinspect record in reverse mode.
// TSINSPECT_ANTHROPIC_SDK names a directory where `npm install
// @anthropic-ai/sdk` was run.
func TestRecordSDK(t *testing.T) {
	if !*record {
		t.Skip("records with -record only")
	}
	agent := fixtures.Script{
		Classify: func(r *fixtures.Request) fixtures.Route {
			if strings.Contains(r.SystemText(), "You are a poet") {
				return fixtures.RouteSide
			}
			return fixtures.RouteMain
		},
		Routes: map[fixtures.Route][]fixtures.Step{
			fixtures.RouteMain: fixtures.Steps(
				fixtures.Together(fixtures.ServerToolSearch("tool_search_tool_regex", "weather", "get_weather"),
					fixtures.CallTool("get_weather", map[string]any{"city": "Paris"})).WithPreamble("Let me find a weather tool."),
				fixtures.Together(fixtures.CallTool("calculator", map[string]any{"expression": "21*2"}),
					fixtures.CallTool("get_weather", map[string]any{"city": "Lyon"})),
				fixtures.Text("Paris is sunny at 21 degrees, and 21*2 is 42."),
			),
			fixtures.RouteSide: fixtures.Steps(fixtures.Text("Paris wakes in golden light,\nthe Seine keeps every secret bright.\n").WithStopSequence("###")),
		},
	}
	recordSDK(t, "sdk-agent", agent)
	all := func(*fixtures.Request) fixtures.Route { return fixtures.RouteMain }
	flaky := fixtures.Script{Classify: all, Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: {
		{fixtures.HTTPError(529, "overloaded_error", "Overloaded"), fixtures.Together(
			fixtures.ServerToolSearch("tool_search_tool_regex", "flight|booking"),
			fixtures.CallTool("get_exchange_rate", map[string]any{"from": "USD", "to": "EUR"}),
			fixtures.CallTool("book_flight", map[string]any{"to": "Rome"}))},
		{fixtures.CutStream(4), fixtures.CallTool("calculator", map[string]any{"expression": "100*0.92"}).WithEviction()},
		{fixtures.EmptyStop("\n\nHuman:"), fixtures.Text("100 dollars are about 92 euros; I cannot book flights.")},
	}}}
	recordSDK(t, "sdk-flaky", flaky)
}

// recordSDK runs testdata/NAME.mjs against a stand-in playing script and
// stores the capture as testdata/NAME.json.gz.
func recordSDK(t *testing.T, name string, script fixtures.Script) {
	t.Helper()
	sdk := os.Getenv("TSINSPECT_ANTHROPIC_SDK")
	if sdk == "" {
		t.Fatal("set TSINSPECT_ANTHROPIC_SDK to a directory holding node_modules/@anthropic-ai/sdk")
	}
	if kitErr != nil {
		t.Fatal(kitErr)
	}
	_, u := session.StandIn(t, script, fixtures.Options{})
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", name+".mjs"))
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(sdk, name+".mjs")
	if err := os.WriteFile(run, src, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(run)
	db := filepath.Join(dir, "capture.db")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kit.Tsinspect, "record", "--db", db, "--mode", "reverse", "--upstream", u, "--quiet", "--", "node", run)
	cmd.Dir = sdk
	cmd.Env = session.ClaudeEnv(filepath.Join(dir, "home"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	t.Logf("%s", out)
	storeCapture(t, name, session.ReadCapture(t, db), [][2]string{{dir, "/project"}, {sdk, "/app"}})
}
