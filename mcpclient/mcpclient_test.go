package mcpclient_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/testwait"
	"github.com/tsinspect/tsinspect/mcpclient"
)

// TestMain turns the test binary into a stdio MCP server when asked, so
// that the stdio transport is tested against a real child process.
func TestMain(m *testing.M) {
	if os.Getenv("MCPCLIENT_TEST_SERVER") == "1" {
		serve(os.Stdin, os.Stdout, os.Getenv("MCPCLIENT_TEST_PAGES") == "1")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serve answers initialize and tools/list (two pages when paged), and
// writes a log line and a notification first, as servers do.
func serve(in io.Reader, out io.Writer, paged bool) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue
		}
		fmt.Fprintln(out, "server log line, not JSON")
		fmt.Fprintln(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`)
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": mcpclient.ProtocolVersion, "serverInfo": map[string]any{"name": "t", "version": "1"}}
		case "tools/list":
			switch {
			case paged && req.Params.Cursor == "":
				result = map[string]any{"tools": []any{map[string]any{"name": "one", "description": "First."}}, "nextCursor": "p2"}
			case paged:
				result = map[string]any{"tools": []any{map[string]any{"name": "two", "description": "Second."}}}
			default:
				result = map[string]any{"tools": []any{map[string]any{"name": "one", "description": "First."}}}
			}
		default:
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "nope"}})
			fmt.Fprintln(out, string(b))
			continue
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
		fmt.Fprintln(out, string(b))
	}
}

func names(t *testing.T, tl *mcpclient.Tools) string {
	t.Helper()
	var out []string
	for _, d := range tl.Defs {
		var x struct{ Name string }
		if err := json.Unmarshal(d, &x); err != nil {
			t.Fatal(err)
		}
		out = append(out, x.Name)
	}
	return strings.Join(out, ",")
}

func TestStdio(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx := testwait.Context(t)
	tl, err := mcpclient.List(ctx, mcpclient.Server{Name: "t", Type: "stdio", Command: exe,
		Env: map[string]string{"MCPCLIENT_TEST_SERVER": "1", "MCPCLIENT_TEST_PAGES": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, tl); got != "one,two" {
		t.Errorf("tools %s, want one,two (both pages)", got)
	}
	if !strings.Contains(string(tl.ServerInfo), `"name":"t"`) {
		t.Errorf("serverInfo %s", tl.ServerInfo)
	}
	_, err = mcpclient.List(ctx, mcpclient.Server{Name: "gone", Type: "stdio", Command: "/nonexistent/mcp-server"})
	if err == nil || !strings.Contains(err.Error(), "mcp gone: start") {
		t.Errorf("missing command: %v", err)
	}
}

func TestHTTP(t *testing.T) {
	for _, sse := range []bool{false, true} {
		var sawSession bool
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer tok" {
				http.Error(w, "no auth", http.StatusUnauthorized)
				return
			}
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.NewDecoder(r.Body).Decode(&req)
			if req.Method != "initialize" && r.Header.Get("Mcp-Session-Id") == "s1" {
				sawSession = true
			}
			w.Header().Set("Mcp-Session-Id", "s1")
			if len(req.ID) == 0 {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			result := `{"serverInfo":{"name":"h"}}`
			if req.Method == "tools/list" {
				result = `{"tools":[{"name":"h1","description":"Over HTTP."}]}`
			}
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
			if sse {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\nevent: message\ndata: %s\n\n", msg)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, msg)
		}))
		ctx, cancel := context.WithTimeout(context.Background(), testwait.Patience)
		tl, err := mcpclient.List(ctx, mcpclient.Server{Name: "h", Type: "http", URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer tok"}})
		cancel()
		if err != nil {
			t.Fatalf("sse %v: %v", sse, err)
		}
		if got := names(t, tl); got != "h1" || !sawSession {
			t.Errorf("sse %v: tools %s, session echoed %v", sse, got, sawSession)
		}
		_, err = mcpclient.List(context.Background(), mcpclient.Server{Name: "h", Type: "http", URL: srv.URL})
		if err == nil || !strings.Contains(err.Error(), "HTTP 401") {
			t.Errorf("no auth: %v", err)
		}
		srv.Close()
	}
}

func TestParseConfigExpands(t *testing.T) {
	t.Setenv("MCPCLIENT_TEST_TOKEN", "s3cret")
	got, err := mcpclient.ParseConfig([]byte(`{"mcpServers":{"a":{"type":"http","url":"${MCPCLIENT_TEST_HOST:-http://127.0.0.1:9}/mcp","headers":{"Authorization":"Bearer ${MCPCLIENT_TEST_TOKEN}"}},"b":{"command":"srv","args":["--root=${MCPCLIENT_TEST_NONE:-/tmp}"],"env":{"T":"${MCPCLIENT_TEST_TOKEN}"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got[0].URL != "http://127.0.0.1:9/mcp" || got[0].Headers["Authorization"] != "Bearer s3cret" || got[1].Args[0] != "--root=/tmp" || got[1].Env["T"] != "s3cret" {
		t.Errorf("%+v", got)
	}
}

func TestParseConfig(t *testing.T) {
	got, err := mcpclient.ParseConfig([]byte(`{"mcpServers":{"b":{"type":"http","url":"http://127.0.0.1:1/mcp"},"a":{"command":"srv","args":["-x"],"env":{"K":"V"}},"c":{"url":"http://127.0.0.1:2"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Name != "a" || got[0].Type != "stdio" || got[0].Args[0] != "-x" || got[1].Type != "http" || got[2].Type != "http" {
		t.Errorf("%+v", got)
	}
	for cfg, want := range map[string]string{
		`{}`:                                   "no mcpServers",
		`{"mcpServers":{"x":{}}}`:              "stdio without a command",
		`{"mcpServers":{"x":{"type":"http"}}}`: "http without a url",
		`{"mcpServers":{"x":{"type":"ws","url":"u"}}}`: `type "ws"`,
		`nope`: "mcp config:",
	} {
		if _, err := mcpclient.ParseConfig([]byte(cfg)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", cfg, err, want)
		}
	}
}

func TestClaudeName(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"demo", "echo"}:         "mcp__demo__echo",
		{"my server", "do.it"}:   "mcp__my_server__do_it",
		{"fs", "read_text-file"}: "mcp__fs__read_text-file",
	} {
		if got := mcpclient.ClaudeName(in[0], in[1]); got != want {
			t.Errorf("ClaudeName%v = %s, want %s", in, got, want)
		}
	}
}
