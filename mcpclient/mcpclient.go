// Package mcpclient lists the tools of MCP servers named in a Claude Code
// style --mcp-config file, over stdio (a command it starts) or streamable
// HTTP, with MCP's initialize and tools/list (following nextCursor). It
// does nothing else with a server: no tool is called.
package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// ProtocolVersion is the MCP protocol version the client asks for.
const ProtocolVersion = "2025-06-18"

// Server is one entry of the config's mcpServers.
type Server struct {
	Name string
	// Type is "stdio", "http" or "sse" (the config's type; stdio when a
	// command is given and no type).
	Type    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
}

// Config reads a Claude Code --mcp-config file ({"mcpServers": {...}}),
// servers sorted by name.
func Config(path string) ([]Server, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcp config: %w", err)
	}
	return ParseConfig(b)
}

// ParseConfig parses the text of an --mcp-config file.
func ParseConfig(b []byte) ([]Server, error) {
	var cfg struct {
		MCPServers map[string]struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("mcp config: %w", err)
	}
	if len(cfg.MCPServers) == 0 {
		return nil, errors.New("mcp config: no mcpServers")
	}
	var out []Server
	for name, s := range cfg.MCPServers {
		// Claude Code expands ${VAR} (and ${VAR:-default}) in these.
		sv := Server{Name: name, Type: s.Type, Command: expand(s.Command), URL: expand(s.URL), Env: map[string]string{}, Headers: map[string]string{}}
		for _, a := range s.Args {
			sv.Args = append(sv.Args, expand(a))
		}
		for k, v := range s.Env {
			sv.Env[k] = expand(v)
		}
		for k, v := range s.Headers {
			sv.Headers[k] = expand(v)
		}
		if sv.Type == "" {
			sv.Type = "stdio"
			if sv.Command == "" && sv.URL != "" {
				sv.Type = "http"
			}
		}
		switch {
		case sv.Type == "stdio" && sv.Command == "":
			return nil, fmt.Errorf("mcp config: server %s: stdio without a command", name)
		case (sv.Type == "http" || sv.Type == "sse") && sv.URL == "":
			return nil, fmt.Errorf("mcp config: server %s: %s without a url", name, sv.Type)
		case sv.Type != "stdio" && sv.Type != "http" && sv.Type != "sse":
			return nil, fmt.Errorf("mcp config: server %s: type %q: want stdio or http", name, sv.Type)
		}
		out = append(out, sv)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Tools is what tools/list returned.
type Tools struct {
	Server     string
	ServerInfo json.RawMessage // initialize's serverInfo
	// Defs are the tool definitions as the server sent them.
	Defs []json.RawMessage
}

// rpc is one JSON-RPC exchange: send a request (or a notification, id 0)
// and return its result.
type rpc interface {
	call(ctx context.Context, id int, method string, params any) (json.RawMessage, error)
	close() error
}

// List starts (or connects to) the server, initialises it and lists its
// tools. ctx bounds the whole exchange.
func List(ctx context.Context, s Server) (*Tools, error) {
	var c rpc
	var err error
	switch s.Type {
	case "stdio":
		c, err = startStdio(ctx, s)
	case "http":
		c = &httpRPC{url: s.URL, headers: s.Headers}
	default:
		return nil, fmt.Errorf("mcp %s: transport %s is not supported (use stdio or http)", s.Name, s.Type)
	}
	if err != nil {
		return nil, err
	}
	defer c.close()
	init, err := c.call(ctx, 1, "initialize", map[string]any{
		"protocolVersion": ProtocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "tsinspect", "version": "probe"},
	})
	if err != nil {
		return nil, fmt.Errorf("mcp %s: initialize: %w", s.Name, err)
	}
	var info struct {
		ServerInfo json.RawMessage `json:"serverInfo"`
	}
	_ = json.Unmarshal(init, &info)
	if _, err := c.call(ctx, 0, "notifications/initialized", nil); err != nil {
		return nil, fmt.Errorf("mcp %s: initialized: %w", s.Name, err)
	}
	out := &Tools{Server: s.Name, ServerInfo: info.ServerInfo}
	cursor := ""
	for id := 2; ; id++ {
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		res, err := c.call(ctx, id, "tools/list", params)
		if err != nil {
			return nil, fmt.Errorf("mcp %s: tools/list: %w", s.Name, err)
		}
		var page struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &page); err != nil {
			return nil, fmt.Errorf("mcp %s: tools/list: %w", s.Name, err)
		}
		out.Defs = append(out.Defs, page.Tools...)
		if page.NextCursor == "" || page.NextCursor == cursor || id > 1000 {
			return out, nil
		}
		cursor = page.NextCursor
	}
}

// message is a JSON-RPC message read from a server.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func request(id int, method string, params any) ([]byte, error) {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != 0 {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	return json.Marshal(m)
}

// answer returns the result of msg when it answers id; ok false when msg
// is something else (a notification, a server request).
func answer(msg message, id int) (json.RawMessage, bool, error) {
	if string(msg.ID) != fmt.Sprint(id) || msg.Method != "" {
		return nil, false, nil
	}
	if msg.Error != nil {
		return nil, true, fmt.Errorf("error %d: %s", msg.Error.Code, msg.Error.Message)
	}
	return msg.Result, true, nil
}

// stdioRPC talks to a server it started, one JSON message per line.
type stdioRPC struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte
	stderr *bytes.Buffer
}

func startStdio(ctx context.Context, s Server) (*stdioRPC, error) {
	cmd := exec.CommandContext(ctx, s.Command, s.Args...)
	cmd.Env = os.Environ()
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("mcp %s: %w", s.Name, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("mcp %s: %w", s.Name, err)
	}
	r := &stdioRPC{cmd: cmd, in: in, lines: make(chan []byte, 16), stderr: &bytes.Buffer{}}
	cmd.Stderr = &limited{w: r.stderr, n: 4096}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("mcp %s: start %s: %w", s.Name, s.Command, err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			r.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(r.lines)
	}()
	return r, nil
}

func (r *stdioRPC) call(ctx context.Context, id int, method string, params any) (json.RawMessage, error) {
	b, err := request(id, method, params)
	if err != nil {
		return nil, err
	}
	if _, err := r.in.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("write: %w%s", err, r.said())
	}
	if id == 0 {
		return nil, nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no answer: %w%s", ctx.Err(), r.said())
		case line, ok := <-r.lines:
			if !ok {
				return nil, fmt.Errorf("the server exited%s", r.said())
			}
			var msg message
			if json.Unmarshal(line, &msg) != nil {
				continue // a log line on stdout
			}
			if res, ok, err := answer(msg, id); ok {
				return res, err
			}
		}
	}
}

// said quotes the start of what the server wrote on stderr.
func (r *stdioRPC) said() string {
	s := strings.TrimSpace(r.stderr.String())
	if s == "" {
		return ""
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return fmt.Sprintf(" (its stderr: %q)", s)
}

func (r *stdioRPC) close() error {
	r.in.Close()
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-timeAfter():
		_ = r.cmd.Process.Kill()
		return <-done
	}
}

// limited keeps the first n bytes written to it.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// httpRPC talks to a streamable-HTTP server: each message is a POST; the
// answer is JSON or an SSE stream.
type httpRPC struct {
	url     string
	headers map[string]string
	session string
}

func (h *httpRPC) call(ctx context.Context, id int, method string, params any) (json.RawMessage, error) {
	b, err := request(id, method, params)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", ProtocolVersion)
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	if h.session != "" {
		req.Header.Set("Mcp-Session-Id", h.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		h.session = s
	}
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if id == 0 {
		return nil, nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		var data strings.Builder
		for sc.Scan() {
			line := sc.Text()
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				data.WriteString(strings.TrimPrefix(d, " "))
				continue
			}
			if line == "" && data.Len() > 0 {
				var msg message
				if json.Unmarshal([]byte(data.String()), &msg) == nil {
					if res, ok, err := answer(msg, id); ok {
						return res, err
					}
				}
				data.Reset()
			}
		}
		if data.Len() > 0 {
			var msg message
			if json.Unmarshal([]byte(data.String()), &msg) == nil {
				if res, ok, err := answer(msg, id); ok {
					return res, err
				}
			}
		}
		return nil, errors.New("the event stream ended without the answer")
	}
	var msg message
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		return nil, fmt.Errorf("answer: %w", err)
	}
	res, ok, err := answer(msg, id)
	if !ok {
		return nil, errors.New("the answer is not for this request")
	}
	return res, err
}

func (h *httpRPC) close() error { return nil }

// ClaudeName is the name Claude Code gives an MCP server's tool:
// mcp__SERVER__TOOL, each part with characters other than letters,
// digits, _ and - replaced by _.
func ClaudeName(server, tool string) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, s)
	}
	return "mcp__" + clean(server) + "__" + clean(tool)
}

// expand replaces ${VAR} and ${VAR:-default} with the environment's
// values, as Claude Code does in an MCP config.
func expand(s string) string {
	return os.Expand(s, func(k string) string {
		name, def, hasDef := strings.Cut(k, ":-")
		if v := os.Getenv(name); v != "" || !hasDef {
			return v
		}
		return def
	})
}
