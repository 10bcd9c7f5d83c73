package recording

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/tsinspect/tsinspect/capture"
	"github.com/tsinspect/tsinspect/internal/shell"
)

// Warnings looks at the environment a recorded client will run with
// and says, one line each, what in it would send the client's traffic past
// the proxy, so that the user learns it before the session rather than
// from an empty capture. hosts are the intercepted hosts (mitm mode);
// upstream is --upstream as given.
func Warnings(mode, upstream string, hosts []string, environ []string) []string {
	get := func(name string) string {
		for _, kv := range environ {
			if k, v, ok := strings.Cut(kv, "="); ok && k == name {
				return v
			}
		}
		return ""
	}
	var out []string
	for _, name := range []string{"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"} {
		if v := get(name); v != "" && v != "0" && !strings.EqualFold(v, "false") {
			out = append(out, fmt.Sprintf("%s is set: Claude Code talks to that cloud's endpoint, not the Messages API, and tsinspect records only the Messages API", name))
		}
	}
	base := get("ANTHROPIC_BASE_URL")
	if mode == capture.ModeReverse {
		if base != "" && upstream == "" {
			out = append(out, fmt.Sprintf("ANTHROPIC_BASE_URL was %s; the client is pointed at tsinspect instead, which forwards to the --upstream URL (add --upstream %s to keep going there)", base, shell.Quote(base)))
		}
		return out
	}
	if base != "" {
		u, err := url.Parse(base)
		switch {
		case err != nil || u.Host == "":
			out = append(out, fmt.Sprintf("ANTHROPIC_BASE_URL %q is not a URL the client can use", base))
		case u.Scheme == "http":
			out = append(out, fmt.Sprintf("ANTHROPIC_BASE_URL is %s, plain HTTP, which an HTTPS proxy never sees: nothing will be recorded; use --mode reverse --upstream %s", base, shell.Quote(base)))
		case !intercepted(u.Hostname(), hosts):
			out = append(out, fmt.Sprintf("ANTHROPIC_BASE_URL sends the client to %s, which is not intercepted: nothing will be recorded; add --intercept %s", u.Hostname(), u.Hostname()))
		}
	}
	for _, name := range []string{"NO_PROXY", "no_proxy"} {
		v := get(name)
		for _, h := range hosts {
			if bypasses(v, h) {
				out = append(out, fmt.Sprintf("%s=%s makes the client bypass the proxy for %s: its traffic will not be recorded", name, v, h))
			}
		}
	}
	return out
}

// intercepted reports whether host is one of hosts.
func intercepted(host string, hosts []string) bool {
	for _, h := range hosts {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// bypasses reports whether the NO_PROXY list noProxy names host: "*", the
// host itself, or a domain it is in (".example.com" or "example.com"),
// with or without a port.
func bypasses(noProxy, host string) bool {
	host = strings.ToLower(host)
	for _, e := range strings.Split(noProxy, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if h, _, err := net.SplitHostPort(e); err == nil {
			e = h
		}
		if e == "*" {
			return true
		}
		e = strings.TrimPrefix(strings.TrimPrefix(e, "*"), ".")
		if e != "" && (host == e || strings.HasSuffix(host, "."+e)) {
			return true
		}
	}
	return false
}

// BaseURLNote says what Claude Code changes in its requests when
// ANTHROPIC_BASE_URL points it elsewhere than Anthropic, as measured with
// releases 2.1.100 to 2.1.331 (docs/recording.md, "What each mode changes").
const BaseURLNote = "note: behind ANTHROPIC_BASE_URL Claude Code sends other requests than to api.anthropic.com: " +
	"3 system blocks instead of 4 (no scope \"global\" block), no diagnostics, up to 4 fewer betas (2.1.300 and later), " +
	"and HEAD /api/hello in place of its other side requests; --mode mitm records what it sends to Anthropic"

// ChildEnv is what record puts in the environment of the client it runs
// (or tells the user to export). A variable the proxy cannot work without
// (ANTHROPIC_BASE_URL in reverse mode, HTTPS_PROXY in mitm mode) is always
// set; any other is set only when the user has not set it, so that the
// recorded client behaves as it would without tsinspect.
type ChildEnv struct {
	// Set holds the KEY=VALUE entries the child gets on top of the
	// environment, in a stable order.
	Set []string
	// Notes say, one line each, what record chose for the child and why.
	Notes []string
	// Warnings say what in the user's own values will change what is
	// recorded.
	Warnings []string
	// MergeCA is the user's NODE_EXTRA_CA_CERTS file, when set: the child
	// must get a bundle of it and the interception CA (Node reads one
	// file), which the caller writes and then names in Set.
	MergeCA string
}

// PlanChild decides the child's environment for mode with the proxy at
// addr and the interception CA at caPath (mitm), given the environment
// the client would otherwise run with.
func PlanChild(mode, addr, caPath string, environ []string) ChildEnv {
	get := func(name string) (string, bool) {
		v, ok := "", false
		for _, kv := range environ {
			if k, val, found := strings.Cut(kv, "="); found && k == name {
				v, ok = val, true
			}
		}
		return v, ok
	}
	var c ChildEnv
	if mode == capture.ModeReverse {
		c.Set = append(c.Set, "ANTHROPIC_BASE_URL=http://"+addr)
		c.Notes = append(c.Notes, BaseURLNote)
		// Releases up to 2.1.300 hold tool search off behind a base URL
		// that is not Anthropic's when ENABLE_TOOL_SEARCH is unset or
		// empty (2.1.328 and 2.1.331 keep it on); any value the user
		// chose is theirs to keep.
		switch v, _ := get("ENABLE_TOOL_SEARCH"); {
		case v == "":
			c.Set = append(c.Set, "ENABLE_TOOL_SEARCH=true")
			c.Notes = append(c.Notes, "ENABLE_TOOL_SEARCH is unset: setting it to true for the child, because Claude Code up to 2.1.300 holds tool search off behind an ANTHROPIC_BASE_URL that is not Anthropic's (2.1.328 and later keep it on); export ENABLE_TOOL_SEARCH yourself (e.g. auto) to choose")
		case ToolSearchOff(v):
			c.Warnings = append(c.Warnings, fmt.Sprintf("ENABLE_TOOL_SEARCH=%s turns tool search off: the client will send every tool inline and the capture will show no ToolSearch (kept as you set it)", v))
		default:
			c.Notes = append(c.Notes, fmt.Sprintf("keeping your ENABLE_TOOL_SEARCH=%s for the child", v))
		}
		return c
	}
	proxy := "http://" + addr
	for _, name := range []string{"HTTPS_PROXY", "https_proxy"} {
		if v, _ := get(name); v != "" && v != proxy {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s was %s; the client goes through tsinspect instead, which connects to the API directly", name, v))
		}
		c.Set = append(c.Set, name+"="+proxy)
	}
	switch v, _ := get("NODE_EXTRA_CA_CERTS"); {
	case v == "" || v == caPath:
		c.Set = append(c.Set, "NODE_EXTRA_CA_CERTS="+caPath)
	default:
		c.MergeCA = v
		c.Notes = append(c.Notes, fmt.Sprintf("NODE_EXTRA_CA_CERTS is %s: the child gets a bundle of those certificates and the interception CA", v))
	}
	return c
}

// ToolSearchOff reports whether an ENABLE_TOOL_SEARCH value turns Claude
// Code's tool search off: 0, false, no or off (any case, blanks around
// ignored), or auto:N with N of 100 or more.
func ToolSearchOff(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	if n, ok := strings.CutPrefix(v, "auto:"); ok {
		f, err := strconv.ParseFloat(n, 64)
		return err == nil && f >= 100
	}
	switch v {
	case "0", "false", "no", "off":
		return true
	}
	return false
}

// WriteCABundle writes the certificates of the user's file and the
// interception CA's into a new file and returns its path; the caller
// removes it when the child is done.
func WriteCABundle(userFile, caPath string) (string, error) {
	user, err := os.ReadFile(userFile)
	if err != nil {
		return "", fmt.Errorf("record: NODE_EXTRA_CA_CERTS: %w", err)
	}
	ca, err := os.ReadFile(caPath)
	if err != nil {
		return "", fmt.Errorf("record: read CA: %w", err)
	}
	f, err := os.CreateTemp("", "tsinspect-ca-bundle-*.pem")
	if err != nil {
		return "", fmt.Errorf("record: CA bundle: %w", err)
	}
	b := append(append(user, '\n'), ca...)
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fmt.Errorf("record: CA bundle: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("record: CA bundle: %w", err)
	}
	return f.Name(), nil
}
