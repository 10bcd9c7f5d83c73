package web

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"

	"github.com/tsinspect/tsinspect/internal/listenaddr"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/source"
)

// DefaultAddr is where 'tsinspect serve' listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8644"

// CheckListen checks a --listen address: host:port, its host an IP
// address or localhost.
func CheckListen(addr string) error {
	host, ok := listenaddr.Host(addr)
	if !ok {
		return fmt.Errorf("--listen %q: want host:port, e.g. %s", addr, DefaultAddr)
	}
	if host != "localhost" && net.ParseIP(host) == nil {
		return fmt.Errorf("--listen %q: want an IP address (127.0.0.1, 0.0.0.0, ::1) or localhost", addr)
	}
	return nil
}

// ParseAllowHosts reads --allow-host: comma-separated host names, no
// port.
func ParseAllowHosts(list string) ([]string, error) {
	var hosts []string
	for _, h := range strings.Split(list, ",") {
		if h = strings.TrimSpace(h); h != "" {
			if strings.ContainsAny(h, "/: ") {
				return nil, fmt.Errorf("--allow-host %q: want host names without a port", h)
			}
			hosts = append(hosts, h)
		}
	}
	return hosts, nil
}

// AddPaths puts each of paths (none: Claude Code's projects directory,
// which must hold sessions) in o.Roots (a directory, a Claude Code
// session file) or o.Files (a file package source opens), and returns
// them; a file it cannot open is an error made by openErr.
func (o *Options) AddPaths(paths []string, openErr func(path string, err error) error) ([]string, error) {
	if len(paths) == 0 {
		root, err := sessionfiles.Root(os.Getenv)
		if err != nil {
			return nil, err
		}
		if _, err := sessionfiles.List(root); err != nil {
			return nil, err // says where it looked, and why that may be
		}
		paths = []string{root}
	}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("serve: %s does not exist", p)
			}
			return nil, fmt.Errorf("serve: %w", err)
		}
		if info.IsDir() || source.KindOf(p).Name == source.KindSession {
			o.Roots = append(o.Roots, p)
			continue
		}
		// A file must be one source opens: a capture, not a pcap to import.
		src, err := source.Open(p)
		if err != nil {
			return nil, openErr(p, err)
		}
		src.Close()
		o.Files = append(o.Files, p)
	}
	return paths, nil
}

// Announce writes what the listing read and its problems to log, then
// what is served, of paths, and the addresses to open to w.
func (s *Server) Announce(w, log io.Writer, paths []string) {
	st := s.Listing()
	for _, p := range st.Problems {
		fmt.Fprintf(log, "tsinspect: warning: %s\n", p)
	}
	if st.Read > 0 {
		fmt.Fprintf(log, "read %s (%s) in %s; %d from the index\n", numfmt.Count(st.Read, "session", "sessions"), numfmt.Bytes(st.Bytes), st.Took.Round(1e6), st.Cached)
	}
	what := s.audience()
	fmt.Fprintf(w, "Serving %s of %s, %s\n", numfmt.Count(st.Sessions, "session", "sessions"), strings.Join(paths, ", "), what)
	for _, u := range URLs(s.opts.Addr, s.opts.Token) {
		fmt.Fprintf(w, "  %s\n", u)
	}
	if s.opts.Token != "" {
		fmt.Fprintln(w, "The token is in the address and printed only here: whoever has it can read these pages.")
	}
	fmt.Fprintln(w, "Ctrl-C stops.")
}

// audience says what the pages show, and to whom, for Announce.
func (s *Server) audience() string {
	switch p := s.opts.Policy; {
	case p == redact.Off && s.opts.Reveal:
		return "everything shown (loopback: this machine alone; every page has a switch to the redacted view)"
	case p == redact.Off:
		return "NOT redacted (--redact off): the pages show what was said, paths and secrets to whoever has the token"
	case s.opts.Reveal:
		return "redacted (" + string(p) + "; every page has a switch to show everything)"
	}
	return "redacted (" + string(s.opts.Policy) + "; --redact off shows everything)"
}

// URLs are the addresses to open: the one served, or for a server on
// every interface each address of this machine's.
func URLs(addr, token string) []string {
	host, port, _ := net.SplitHostPort(addr)
	suffix := "/"
	if token != "" {
		suffix = "/?token=" + token
	}
	hosts := []string{host}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		hosts = nil
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok && !n.IP.IsLinkLocalUnicast() {
					hosts = append(hosts, n.IP.String())
				}
			}
		}
	}
	var out []string
	for _, h := range hosts {
		out = append(out, "http://"+net.JoinHostPort(h, port)+suffix)
	}
	return out
}
