package exchange

import (
	"net/http"
	"strings"
)

// IsHopHeader reports whether name, in any case, is a hop-by-hop header
// field (RFC 9110 section 7.6.1, and Proxy-Connection), which a proxy or a
// replay does not pass on: each connection has its own.
func IsHopHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// ConnectionOptions returns the header names that the values of a
// Connection header list, canonicalised: they are hop-by-hop too.
func ConnectionOptions(values []string) []string {
	var out []string
	for _, v := range values {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" && !strings.EqualFold(f, "close") && !strings.EqualFold(f, "keep-alive") {
				out = append(out, http.CanonicalHeaderKey(f))
			}
		}
	}
	return out
}

// IsHop reports whether the field name of a message whose Connection
// header names options is not to be passed on.
func IsHop(name string, options []string) bool {
	if IsHopHeader(name) {
		return true
	}
	name = http.CanonicalHeaderKey(name)
	for _, o := range options {
		if o == name {
			return true
		}
	}
	return false
}

// RemoveHopHeaders deletes from h the hop-by-hop fields and those its
// Connection header names, as net/http/httputil's reverse proxy does.
func RemoveHopHeaders(h http.Header) {
	options := ConnectionOptions(h.Values("Connection"))
	for k := range h {
		if IsHop(k, options) {
			delete(h, k)
		}
	}
}
