package main

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/tsinspect/tsinspect/capture"
)

// envWarnings looks at the environment a recorded client will run with
// and says, one line each, what in it would send the client's traffic past
// the proxy, so that the user learns it before the session rather than
// from an empty capture. hosts are the intercepted hosts (mitm mode);
// upstream is --upstream as given.
func envWarnings(mode, upstream string, hosts []string, environ []string) []string {
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
			out = append(out, fmt.Sprintf("ANTHROPIC_BASE_URL was %s; the client is pointed at tsinspect instead, which forwards to the --upstream URL (add --upstream %s to keep going there)", base, shellQuote(base)))
		}
		return out
	}
	if base != "" {
		u, err := url.Parse(base)
		switch {
		case err != nil || u.Host == "":
			out = append(out, fmt.Sprintf("ANTHROPIC_BASE_URL %q is not a URL the client can use", base))
		case u.Scheme == "http":
			out = append(out, fmt.Sprintf("ANTHROPIC_BASE_URL is %s, plain HTTP, which an HTTPS proxy never sees: nothing will be recorded; use --mode reverse --upstream %s", base, shellQuote(base)))
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
