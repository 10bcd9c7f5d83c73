package main

import (
	"fmt"
	"strings"

	"github.com/tsinspect/tsinspect/capture"
)

func runCA(env *cliEnv, args []string) error {
	fs := newFlags(env, "ca", "[--ca-dir DIR] [--intercept HOST,...]", `
Show the local certificate authority that MITM recording uses, creating it
on first use: an ECDSA P-256 CA whose X.509 Name Constraints (critical)
permit only the intercepted hosts and exclude every IP address, so it cannot
vouch for any other site. Its key file is readable by you only (0600).`)
	caDir := fs.String("ca-dir", "", "directory of the CA (default: tsinspect in your config dir)")
	intercept := fs.String("intercept", "", "extra hosts to intercept besides "+capture.DefaultHost+", comma-separated")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError("ca: unexpected argument %q", fs.Arg(0))
	}
	ca, err := loadCA(*caDir, *intercept)
	if err != nil {
		return err
	}
	state := "existing"
	if ca.Created {
		state = "created now"
	}
	fmt.Fprintf(env.stdout, `CA certificate: %s (%s)
CA key:         %s (mode 0600)
SHA-256:        %s
Permits:        %s (no IP addresses)
Expires:        %s

Trust it for one process only, e.g.:
  NODE_EXTRA_CA_CERTS=%s HTTPS_PROXY=http://127.0.0.1:PORT claude
  curl --cacert %s --proxy http://127.0.0.1:PORT https://%s/
'tsinspect record -- COMMAND' sets this up for COMMAND by itself.
`, ca.CertPath, state, ca.KeyPath, ca.Fingerprint(), strings.Join(ca.Cert.PermittedDNSDomains, ", "),
		ca.Cert.NotAfter.Format("2006-01-02"), ca.CertPath, ca.CertPath, capture.DefaultHost)
	return nil
}

func loadCA(dir, intercept string) (*capture.CA, error) {
	if dir == "" {
		d, err := capture.DefaultCADir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	return capture.LoadOrCreateCA(dir, capture.InterceptHosts(splitList(intercept)))
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
