package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/store"
)

// A canary is a private value planted in a capture. Its token (a word
// made for the test, or the value itself) must appear in no report written
// under the policies it names. Reached says the value reaches the report's
// text when nothing is redacted: the test then also checks that --redact
// off shows it, which proves the redactor (and not the report's shape) is
// what removed it.
type canary struct {
	where   string
	token   string
	strict  bool // only absent under strict (MCP server names)
	reached bool
}

// Planted values of the recorded session (real Claude Code against the
// stand-in).
const (
	cPrompt      = "cnry01"                          // the user's prompt
	cPromptMail  = "cnry02@example.org"              // an e-mail in the prompt
	cQueryMail   = "cnry03@qzx.example"              // an e-mail in a ToolSearch query
	cQueryPath   = "/srv/cnry04/qzx.dat"             // a path in a ToolSearch query
	cToolInput   = "cnry05"                          // a tool input (echoed back as the tool's output)
	cInputKey    = "sk-ant-api03-cnry06AbCdEf012345" // an API key in a tool input
	cThinking    = "cnry07"                          // thinking
	cErrKey      = "sk-ant-api03-cnry08ZyXwVu987654" // an API key in an API error message
	cErrMail     = "cnry09@example.com"              // an e-mail in an API error message
	cErrHost     = "cnry10.internal.example"         // a host name in an API error message
	cErrIP       = "10.66.77.88"                     // an address in an API error message
	cAnswer      = "cnry11"                          // the final answer text
	cReadPath    = "/home/cnry12/notes/private.txt"  // a path in a Read tool input
	cEventSecret = "cnry13"                          // in an SSE error event's message (a bearer token)
)

// Planted values of the synthetic exchanges.
const (
	cSessionHdr = "cnry14-sess-8842-aa11"                            // X-Claude-Code-Session-Id
	cGatewayKey = "cnry15gw-5566-key"                                // a gateway's header
	cForwarded  = "192.168.77.12"                                    // X-Forwarded-For
	cDevice     = "cnry16dev00112233445566"                          // metadata.user_id device_id
	cAccount    = "3f2a9c1e-7b6d-4e5f-8a9b-0c1d2e3f4a5b"             // metadata.user_id account_uuid
	cSystem     = "cnry17"                                           // system prompt text
	cHome       = "/home/cnry18user/cnry-proj"                       // working directory in the system prompt
	cSysMail    = "cnry19@corp.example"                              // e-mail in the system prompt
	cUserText   = "cnry20"                                           // user message text
	cImage      = "Q05SWTIxIHNlY3JldCBpbWFnZSBieXRlcyAwMTIzNDU2Nzg5" // base64 image data
	cThinking2  = "cnry22"                                           // thinking in the history
	cInput2     = "cnry23"                                           // a tool input
	cResultErr  = "cnry24"                                           // a tool_result error text (quoted by a flag)
	cResultMail = "cnry25@example.org"                               // an e-mail in that tool_result
	cStopMail   = "cnry26@example.org"                               // a stop sequence
	cRetryText  = "cnry27"                                           // text a retry added to the last user message
	cOrg        = "cnry28org"                                        // an organisation in a 529 error message
	cOrgIP      = "172.16.5.4"                                       // an address in that message
	cConnHost   = "cnry29.edge.example"                              // a host in the exchange's error
	cConnIP     = "10.20.30.40"                                      // an address in the exchange's error
	cServer     = "zorgsrv"                                          // an MCP server name (strict)
)

func canaries() []canary {
	return []canary{
		{"prompt text", cPrompt, false, false},
		{"e-mail in the prompt", cPromptMail, false, false},
		{"e-mail in a ToolSearch query", cQueryMail, false, true},
		{"path in a ToolSearch query", "cnry04", false, true},
		{"tool input and output", cToolInput, false, false},
		{"API key in a tool input", cInputKey, false, false},
		{"thinking", cThinking, false, false},
		{"API key in an API error message", cErrKey, false, true},
		{"e-mail in an API error message", cErrMail, false, true},
		{"host name in an API error message", cErrHost, false, true},
		{"IP address in an API error message", cErrIP, false, true},
		{"final answer text", cAnswer, false, false},
		{"path in a Read input", "cnry12", false, false},
		{"bearer token in an error event", cEventSecret, false, true},
		{"session header", cSessionHdr, false, false},
		{"gateway header", cGatewayKey, false, false},
		{"X-Forwarded-For address", cForwarded, false, false},
		{"metadata.user_id device_id", cDevice, false, false},
		{"metadata.user_id account_uuid", cAccount, false, false},
		{"system prompt text", cSystem, false, false},
		{"home directory in the system prompt", "cnry18", false, false},
		{"e-mail in the system prompt", cSysMail, false, false},
		{"user message text", cUserText, false, false},
		{"base64 image", cImage, false, false},
		{"thinking in the history", cThinking2, false, false},
		{"tool input", cInput2, false, false},
		{"tool_result error text", cResultErr, false, true},
		{"e-mail in a tool_result error", cResultMail, false, true},
		{"e-mail in a stop sequence", cStopMail, false, true},
		{"text a retry added", cRetryText, false, true},
		{"organisation in a 529 message", cOrg, false, true},
		{"IP address in a 529 message", cOrgIP, false, true},
		{"host name in a connection error", cConnHost, false, true},
		{"IP address in a connection error", cConnIP, false, true},
		{"MCP server name", cServer, true, true},
		{"MCP server name of the recorded session", "demo", true, true},
	}
}

// TestRedactionCanaries records a session with the real Claude Code in
// which secrets flow through the prompt, tool inputs and outputs,
// thinking, ToolSearch queries and API errors, adds exchanges with
// secrets in the places Claude Code cannot be steered to (headers,
// metadata, system prompt, images, tool_result errors quoted by flags,
// stop sequences, retries, connection errors), and checks the exact bytes
// of the reports the binary writes in every format: none of the canaries
// under the default policy, nor the MCP server names under strict, while
// --redact off shows those that reach a report's text. Set
// TSINSPECT_KEEP_CANARY to a directory to keep the nine reports.
func TestRedactionCanaries(t *testing.T) {
	kit.RequireClaude(t)
	rec := recordRuns(t, run{script: canaryScript(), opts: session.Options{
		Prompt:  cPrompt + " please plan the quarter and mail " + cPromptMail,
		Allowed: []string{"Read"},
	}})
	natural := naturalSecrets(t, rec.db)
	addSynthetic(t, rec.db)

	dir := t.TempDir()
	if d := os.Getenv("TSINSPECT_KEEP_CANARY"); d != "" {
		dir = d
	}
	write := func(policy, format string) string {
		t.Helper()
		out := filepath.Join(dir, fmt.Sprintf("report-%s.%s", policy, format))
		code, stdout, stderr := runCLI(t, "report", rec.db, "--format", format, "--redact", policy, "--out", out)
		if code != 0 || stdout != "" {
			t.Fatalf("report --format %s --redact %s: exit %d stdout %q stderr %s", format, policy, code, stdout, stderr)
		}
		if policy == "off" != strings.Contains(stderr, "warning: --redact off") {
			t.Errorf("--redact %s: stderr %q", policy, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	formats := []string{"json", "markdown", "html"}
	for _, policy := range []string{"default", "strict", "off"} {
		for _, format := range formats {
			raw := write(policy, format)
			text := readable(raw)
			if format == "json" && !json.Valid([]byte(raw)) {
				t.Errorf("%s/%s: not JSON", policy, format)
			}
			for _, c := range canaries() {
				found := strings.Contains(strings.ToLower(raw), strings.ToLower(c.token)) ||
					strings.Contains(strings.ToLower(text), strings.ToLower(c.token))
				switch {
				case policy == "off" && c.reached && !found && c.token != "demo":
					t.Errorf("off/%s: %s (%q) is not in the unredacted report: the canary does not test anything", format, c.where, c.token)
				case policy == "default" && !c.strict && found, policy == "strict" && found:
					t.Errorf("%s/%s: %s (%q) is in the report:\n%s", policy, format, c.where, c.token, around(text, c.token))
				}
			}
			if policy == "off" {
				continue
			}
			for _, v := range natural {
				if strings.Contains(raw, v) || strings.Contains(text, v) {
					t.Errorf("%s/%s: the recorded session's own %q is in the report:\n%s", policy, format, v, around(text, v))
				}
			}
			checkStillUseful(t, policy, format, text)
		}
	}
}

// checkStillUseful checks that a redacted report still says what tool
// search did.
func checkStillUseful(t *testing.T, policy, format, text string) {
	t.Helper()
	server := "demo"
	if policy == "strict" {
		server = "s1"
	}
	want := []string{
		"select:mcp__" + server + "__echo", // a query, kept
		"frobnicate [email-",               // a query, scrubbed
		"call_before_load", "empty_search", "api_error", "retry", "stop_sequence_anomaly", "stream_incomplete",
		"[secret-", "[path-",
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s/%s: the redacted report lacks %q", policy, format, w)
		}
	}
}

// readable undoes the escapes of the three formats: JSON's, HTML's,
// Markdown's backslashes and word joiners.
func readable(s string) string {
	s = html.UnescapeString(s)
	s = strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\n`, "\n", `\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(s)
	s = strings.ReplaceAll(s, "\u2060", "")
	return regexp.MustCompile(`\\([\\`+"`"+`*_\[\]<>|~#@&])`).ReplaceAllString(s, "$1")
}

// around shows where a string sits in a text.
func around(text, s string) string {
	i := strings.Index(strings.ToLower(text), strings.ToLower(s))
	if i < 0 {
		return "(only in the raw bytes)"
	}
	return text[max(0, i-200):min(len(text), i+len(s)+200)]
}

// canaryScript is the stand-in's script for the recorded half: an HTTP
// 500 whose message holds secrets (retried), a keyword ToolSearch with an
// e-mail and a path that matches nothing, a select search, a call of the
// loaded tool with secrets in its input, a Read of a private path, a call
// before load, an SSE error event with a bearer token (retried), and a
// final answer.
func canaryScript() fixtures.Script {
	const echo = "mcp__demo__echo"
	errMsg := fmt.Sprintf("upstream %s (%s) rejected key %s for %s", cErrHost, cErrIP, cErrKey, cErrMail)
	return fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: {
		{fixtures.HTTPError(http.StatusInternalServerError, "api_error", errMsg),
			fixtures.ToolSearch("frobnicate "+cQueryMail+" "+cQueryPath, 5).WithThinking(cThinking + " the user wants the plan")},
		{fixtures.ToolSearch("select:"+echo, 5)},
		{fixtures.CallTool(echo, map[string]any{"text": cToolInput + " with key " + cInputKey})},
		{fixtures.CallTool("Read", map[string]any{"file_path": cReadPath})},
		{fixtures.CallTool("mcp__demo__action_3", map[string]any{"target": "inbox", "count": 1})},
		{fixtures.StreamError("overloaded_error", "Overloaded; Authorization: Bearer "+cEventSecret+"tok9988776655"),
			fixtures.Text("Done: " + cAnswer + " the plan is ready.")},
	}}}
}

// naturalSecrets returns what the recorded session holds of its own that
// no report may show: the metadata.user_id identifiers, the session
// header, and the temporary home and working directories.
func naturalSecrets(t *testing.T, db string) []string {
	t.Helper()
	s, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	exs, err := s.Exchanges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	add := func(v string) {
		if len(v) >= 8 {
			out = append(out, v)
		}
	}
	dirRe := regexp.MustCompile(`/tmp/[^\s"'\\]+`)
	for _, ex := range exs {
		add(ex.ReqHeader("X-Claude-Code-Session-Id"))
		var body struct {
			Metadata struct {
				UserID string `json:"user_id"`
			} `json:"metadata"`
		}
		if json.Unmarshal(ex.ReqBody, &body) == nil && body.Metadata.UserID != "" {
			var ids map[string]string
			if json.Unmarshal([]byte(body.Metadata.UserID), &ids) == nil {
				for _, v := range ids {
					add(v)
				}
			}
		}
		for _, d := range dirRe.FindAllString(string(ex.ReqBody), -1) {
			add(d)
		}
	}
	if len(out) < 3 {
		t.Fatalf("the recorded session holds no session id, device id or temporary path: %v", out)
	}
	return out
}

// addSynthetic appends to the capture a thread Claude Code could have
// sent but cannot be steered to send: secrets in headers, metadata, the
// system prompt, an image, thinking, a tool input, a tool_result error
// that a call_before_load flag quotes, a stop sequence, a retry's added
// text, a 529 error message, and a connection error.
func addSynthetic(t *testing.T, path string) {
	t.Helper()
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now().Add(time.Hour)
	n := 0
	insert := func(body any, status int, resp string, state exchange.State, errText string) {
		t.Helper()
		req, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		at := start.Add(time.Duration(n) * time.Second)
		n++
		ct := "application/json"
		if strings.HasPrefix(resp, "event:") {
			ct = "text/event-stream"
		}
		ex := &exchange.Exchange{Source: "mitm", Start: at, FirstByte: at.Add(10 * time.Millisecond), End: at.Add(20 * time.Millisecond),
			Method: "POST", URL: "https://api.anthropic.com/v1/messages?beta=true", Host: "api.anthropic.com",
			ReqHeaders: []exchange.Header{
				{Name: "Content-Type", Value: "application/json"},
				{Name: "Authorization", Value: "Bearer " + cGatewayKey + "-bearer"},
				{Name: "X-Claude-Code-Session-Id", Value: cSessionHdr},
				{Name: "X-Gateway-Key", Value: cGatewayKey},
				{Name: "X-Forwarded-For", Value: cForwarded},
			},
			ReqBody: req, Status: status,
			RespHeaders: []exchange.Header{{Name: "Content-Type", Value: ct}, {Name: "Retry-After", Value: "3"}},
			RespBody:    []byte(resp), State: state, Error: errText}
		if err := db.Insert(context.Background(), ex); err != nil {
			t.Fatal(err)
		}
	}
	userID, _ := json.Marshal(map[string]string{"device_id": cDevice, "account_uuid": cAccount, "session_id": cSessionHdr})
	tool := func(name, desc string, deferred bool) map[string]any {
		m := map[string]any{"name": name, "description": desc, "input_schema": map[string]any{"type": "object", "properties": map[string]any{"title": map[string]any{"type": "string"}}}}
		if deferred {
			m["defer_loading"] = true
		}
		return m
	}
	create, closeIssue := "mcp__"+cServer+"__create_issue", "mcp__"+cServer+"__close_issue"
	tools := []any{
		tool("Bash", "Run a shell command.", false),
		tool("ToolSearch", "Search the deferred tools.", false),
		tool("DeferredToolPlaceholder", "Never call this tool.", true),
		tool(create, "Create an issue.", true),
	}
	user0 := map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "<system-reminder>\nThe following deferred tools are now available via ToolSearch. Their schemas are NOT loaded — calling them directly will fail with InputValidationError. Use ToolSearch with query \"select:<name>[,<name>...]\" to load tool schemas before calling them:\n" + create + "\n" + closeIssue + "\n</system-reminder>"},
		map[string]any{"type": "text", "text": cUserText + " please file the invoice issue for " + cPromptMail},
		map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": cImage}},
	}}
	searchUse := map[string]any{"type": "tool_use", "id": "toolu_01SynthSearchAAAAAAAAAAAA", "name": "ToolSearch", "input": map[string]any{"query": "select:" + create, "max_results": 5}}
	asst1 := map[string]any{"role": "assistant", "content": []any{
		map[string]any{"type": "thinking", "thinking": cThinking2 + " the invoice is private", "signature": "c2lnbmF0dXJl"},
		searchUse,
	}}
	user1 := map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "toolu_01SynthSearchAAAAAAAAAAAA", "content": []any{map[string]any{"type": "tool_reference", "tool_name": create}}},
		map[string]any{"type": "text", "text": "Tool loaded."},
	}}
	request := func(msgs ...any) map[string]any {
		return map[string]any{
			"model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": false,
			"metadata": map[string]any{"user_id": string(userID)},
			"system": []any{
				map[string]any{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.328; cc_entrypoint=cli;"},
				map[string]any{"type": "text", "text": "You help with issues. " + cSystem + " secret instructions. Working directory: " + cHome + ". Escalate to " + cSysMail + ".", "cache_control": map[string]any{"type": "ephemeral"}},
			},
			"tools": tools, "messages": msgs,
		}
	}
	message := func(id string, content []any, stop string, stopSeq any) string {
		b, _ := json.Marshal(map[string]any{"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": content, "stop_reason": stop, "stop_sequence": stopSeq,
			"usage": map[string]any{"input_tokens": 12, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 4000, "output_tokens": 30}})
		return string(b)
	}
	// 1: the model calls close_issue, whose schema was never loaded.
	call := map[string]any{"type": "tool_use", "id": "toolu_01SynthCallBBBBBBBBBBBBBB", "name": closeIssue,
		"input": map[string]any{"title": cInput2 + " close the invoice issue", "token": "sk-ant-api03-" + cInput2 + "Zz00112233"}}
	insert(request(user0, asst1, user1), 200, message("msg_01SynthOneCCCCCCCCCCCCCC", []any{call}, "tool_use", nil), exchange.StateComplete, "")
	// 2: its tool_result is an error holding secrets; the reply is empty
	// and ends on a stop sequence the request never set.
	asst2 := map[string]any{"role": "assistant", "content": []any{call}}
	result := map[string]any{"type": "tool_result", "tool_use_id": "toolu_01SynthCallBBBBBBBBBBBBBB", "is_error": true,
		"content": cResultErr + " close_issue failed: credentials of " + cResultMail + " refused for /opt/" + cResultErr + "/bin"}
	user2 := map[string]any{"role": "user", "content": []any{result}}
	insert(request(user0, asst1, user1, asst2, user2), 200, message("msg_01SynthTwoDDDDDDDDDDDDDD", []any{}, "stop_sequence", "\n\nEND "+cStopMail), exchange.StateComplete, "")
	// 3: the client asks again with a text added to the last user
	// message; the API is overloaded.
	user3 := map[string]any{"role": "user", "content": []any{result, map[string]any{"type": "text", "text": cRetryText + " please try again"}}}
	overloaded := fmt.Sprintf(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded for org %s from %s"},"request_id":"req_01SynthEEEEEEEEEEEEEEEEEE"}`, cOrg, cOrgIP)
	insert(request(user0, asst1, user1, asst2, user3), 529, overloaded, exchange.StateComplete, "")
	// 4: the same again; the connection breaks mid-stream.
	cut := "event: message_start\ndata: " + `{"type":"message_start","message":{"id":"msg_01SynthFourFFFFFFFFFFFFF","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":12,"cache_read_input_tokens":4000,"cache_creation_input_tokens":0,"output_tokens":1}}}` + "\n\n"
	insert(request(user0, asst1, user1, asst2, user3), 200, cut, exchange.StateUpstreamFailed,
		fmt.Sprintf("read tcp %s:443: connection reset by %s", cConnIP, cConnHost))
}
