package recording

import (
	"fmt"
	"net/url"
	"regexp"

	"github.com/tsinspect/tsinspect/internal/listenaddr"
)

// CheckListen refuses a listen address that is not HOST:PORT, or, unless
// allowRemote, not a loopback address.
func CheckListen(addr string, allowRemote bool) error {
	host, ok := listenaddr.Host(addr)
	if !ok {
		return fmt.Errorf("--listen %q: want HOST:PORT, e.g. 127.0.0.1:8080", addr)
	}
	if listenaddr.Loopback(host) || allowRemote {
		return nil
	}
	return fmt.Errorf("--listen %q is not a loopback address; add --allow-remote if you mean it", addr)
}

// CheckUpstream refuses an upstream that is not an http:// or https://
// URL with a host ("" is fine). A password in it is never printed.
func CheckUpstream(upstream string) error {
	if upstream == "" {
		return nil
	}
	u, err := url.Parse(upstream)
	if err != nil {
		return fmt.Errorf("--upstream does not parse as a URL: want an http:// or https:// URL")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--upstream %q: want an http:// or https:// URL", u.Redacted())
	}
	return nil
}

// hostName is a DNS name, or an IP address written as one.
var hostName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$`)

// CheckHosts refuses an --intercept list holding something that is not a
// host name (a URL, a port, a space).
func CheckHosts(hosts []string) error {
	for _, h := range hosts {
		if !hostName.MatchString(h) {
			return fmt.Errorf("--intercept %q: want host names separated by commas (no scheme, port or path), e.g. api.example.com", h)
		}
	}
	return nil
}
