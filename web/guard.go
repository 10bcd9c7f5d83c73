package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// TokenCookie is the cookie that carries the token once a browser has
// shown it (as ?token=).
const TokenCookie = "tsinspect_token"

// NewToken returns a fresh random token (32 bytes, URL-safe base64).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("web: token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Loopback reports whether addr (host:port) names a loopback address, the
// only kind served without a token.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hosts is what a request's Host header may name: the address served,
// under the names that reach it. A name other than these is how a page of
// another site reaches a local server through DNS rebinding: its requests
// carry that site's name.
type hosts struct {
	port  string
	names map[string]bool // lower case, without the port
	// anyLocal accepts any address of this machine's interfaces (a server
	// bound to 0.0.0.0 or ::).
	anyLocal bool
}

// newHosts returns the Host check of a server bound to addr, accepting
// the extra names too.
func newHosts(addr string, extra []string) (*hosts, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("web: address %q: %w", addr, err)
	}
	h := &hosts{port: port, names: map[string]bool{}}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		h.names[strings.ToLower(host)] = true
	case ip.IsUnspecified():
		h.anyLocal = true
		h.names["localhost"] = true
	default:
		h.names[ip.String()] = true
		if ip.IsLoopback() {
			h.names["localhost"] = true
		}
	}
	for _, n := range extra {
		h.names[strings.ToLower(n)] = true
	}
	return h, nil
}

// allows reports whether a Host header names the server.
func (h *hosts) allows(hostHeader string) bool {
	host, port, err := net.SplitHostPort(hostHeader)
	if err != nil {
		host, port = hostHeader, "80"
	}
	if port != h.port {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if ip := net.ParseIP(host); ip != nil {
		if h.names[ip.String()] {
			return true
		}
		if h.anyLocal {
			if ip.IsLoopback() {
				return true
			}
			addrs, err := net.InterfaceAddrs()
			if err != nil {
				return false
			}
			return slices.ContainsFunc(addrs, func(a net.Addr) bool {
				n, ok := a.(*net.IPNet)
				return ok && n.IP.Equal(ip)
			})
		}
		return false
	}
	return h.names[host]
}

// guard wraps next with what every request passes: GET or HEAD only
// (nothing a request asks changes anything), a Host header naming the
// server, the token when the server has one, and headers that keep the
// pages from being framed, sniffed, or reaching anything but the server.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// No client holds the server longer than this by not reading
		// (an event stream moves it on before each event: see
		// eventStream).
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cross-Origin-Resource-Policy", "same-origin")
		if !s.hosts.allows(r.Host) {
			http.Error(w, fmt.Sprintf("tsinspect serve: refused: the Host header %q does not name this server (%s); open the address it printed", r.Host, s.opts.Addr), http.StatusMisdirectedRequest)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			hd.Set("Allow", "GET, HEAD")
			http.Error(w, "tsinspect serve only reads: GET and HEAD alone", http.StatusMethodNotAllowed)
			return
		}
		if s.opts.Token != "" {
			switch given := presented(r); {
			case given == "" || subtle.ConstantTimeCompare([]byte(given), []byte(s.opts.Token)) != 1:
				w.Header().Set("Cache-Control", "no-store")
				http.Error(w, "tsinspect serve: this server needs its token: open the address with ?token= that it printed when it started", http.StatusUnauthorized)
				return
			case r.URL.Query().Get("token") != "":
				// Kept in a cookie, and taken out of the address bar.
				http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: s.opts.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
				q := r.URL.Query()
				q.Del("token")
				http.Redirect(w, r, (&url.URL{Path: onSite(r.URL.Path), RawQuery: q.Encode()}).String(), http.StatusSeeOther)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// onSite is path as an address on this server: one leading slash, so that
// "//evil.example/" (or "/\evil.example/", which browsers read alike) is
// never taken for another host.
func onSite(path string) string {
	return "/" + strings.TrimLeft(path, "/\\")
}

// presented is the token a request carries: ?token=, the cookie, or an
// Authorization: Bearer header.
func presented(r *http.Request) string {
	if t := r.URL.Query().Get("token"); t != "" {
		return t
	}
	if c, err := r.Cookie(TokenCookie); err == nil && c.Value != "" {
		return c.Value
	}
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	return ""
}
