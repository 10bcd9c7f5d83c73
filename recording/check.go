package recording

import (
	"fmt"
	"net/url"
	"regexp"

	"github.com/tsinspect/tsinspect/capture"
	"github.com/tsinspect/tsinspect/internal/listenaddr"
	"github.com/tsinspect/tsinspect/internal/shell"
)

// Check checks, before anything is opened, the flags of 'tsinspect
// record' that c holds: the mode, no proxy flag (set says which were
// given) nor --otlp with --mode bodies, then --listen (allowRemote: any
// address), --upstream and --intercept.
func (c Config) Check(allowRemote, otlp bool, set func(flag string) bool) error {
	if c.Mode != capture.ModeMITM && c.Mode != capture.ModeReverse && c.Mode != ModeBodies {
		return fmt.Errorf("--mode %q: want mitm, reverse or bodies", c.Mode)
	}
	if c.Mode == ModeBodies {
		for _, name := range []string{"intercept", "upstream-ca", "allow-remote", "listen", "ca-dir"} {
			if set(name) {
				return fmt.Errorf("--%s applies to the proxy modes, not to --mode bodies", name)
			}
		}
		if otlp {
			return fmt.Errorf("--otlp does not work with --mode bodies yet; send the capture afterwards with 'tsinspect export %s --format otlp'", shell.Quote(c.DB))
		}
	}
	if err := CheckListen(c.Listen, allowRemote); err != nil {
		return err
	}
	if err := CheckUpstream(c.Upstream); err != nil {
		return err
	}
	return CheckHosts(c.Intercept)
}

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
