package capture

import (
	"fmt"
	"io"
	"strings"
)

// WriteInfo writes for a user where the CA's files are, what it permits,
// until when, and how to trust it; rot, when not nil, is the rotation that
// made it, said first, with what clients must do about it after.
func (ca *CA) WriteInfo(w io.Writer, rot *Rotation) {
	state := "existing"
	if ca.Created {
		state = "created now"
	}
	if rot != nil {
		old := "an unreadable CA"
		if rot.Fingerprint != "" {
			old = fmt.Sprintf("SHA-256 %s, permitting %s", rot.Fingerprint, strings.Join(rot.Permitted, ", "))
		}
		fmt.Fprintf(w, "Replaced:       %s\n", old)
		for _, p := range []string{rot.CertPath, rot.KeyPath} {
			if p != "" {
				fmt.Fprintf(w, "Old file kept:  %s\n", p)
			}
		}
	}
	fmt.Fprintf(w, `CA certificate: %s (%s)
CA key:         %s (mode 0600)
SHA-256:        %s
Permits:        %s (no IP addresses)
Expires:        %s

Trust it for one process only, e.g.:
  NODE_EXTRA_CA_CERTS=%s HTTPS_PROXY=http://127.0.0.1:PORT claude
  curl --cacert %s --proxy http://127.0.0.1:PORT https://%s/
'tsinspect record -- COMMAND' sets this up for COMMAND by itself.
`, ca.CertPath, state, ca.KeyPath, ca.Fingerprint(), strings.Join(ca.Cert.PermittedDNSDomains, ", "),
		ca.Cert.NotAfter.Format("2006-01-02"), ca.CertPath, ca.CertPath, DefaultHost)
	if rot != nil {
		fmt.Fprintf(w, `
The old CA no longer signs anything. Clients that trusted it must trust the
new one: restart those started with NODE_EXTRA_CA_CERTS=%s (they read
the file at start), and replace any copy of the old certificate you gave a
client (curl --cacert, SSL_CERT_FILE, REQUESTS_CA_BUNDLE, a system or
browser trust store) with the new file.
`, ca.CertPath)
	}
}

// ShowCA is 'tsinspect ca': it loads the CA in dir (the default
// directory when ""), making it on first use for the default host and
// the extra intercept hosts, or with rotate replaces it by a new one
// (RotateCA), and writes what it is to w (WriteInfo).
func ShowCA(w io.Writer, dir string, intercept []string, rotate bool) error {
	resolved, err := CADir(dir)
	if err != nil {
		return err
	}
	var ca *CA
	var rot *Rotation
	if rotate {
		ca, rot, err = RotateCA(resolved, InterceptHosts(intercept))
	} else {
		ca, err = OpenCA(dir, intercept, LoadOrCreateCA)
	}
	if err != nil {
		return err
	}
	ca.WriteInfo(w, rot)
	return nil
}
