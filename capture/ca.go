package capture

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// CA file names inside the CA directory.
const (
	CACertFile = "tsinspect-ca.pem"
	CAKeyFile  = "tsinspect-ca-key.pem"
)

// CA is the per-user certificate authority that signs the leaf
// certificates presented to intercepted clients. Its certificate carries
// critical X.509 Name Constraints: it can vouch only for the intercepted
// host names, and for no IP address at all, so a leaked key cannot be used
// against any other site.
type CA struct {
	Cert     *x509.Certificate
	CertPath string
	KeyPath  string
	// Created is true when this call made a new CA (first use, or
	// RotateCA).
	Created bool

	key *ecdsa.PrivateKey

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

// DefaultCADir returns the per-user directory holding the CA.
func DefaultCADir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("ca: find config dir: %w", err)
	}
	return filepath.Join(dir, "tsinspect"), nil
}

// NotPermittedError is returned by LoadOrCreateCA when the CA in a
// directory exists but does not permit every host asked for. The CA is
// never replaced on its own: clients trust it by its key, so a new one is
// made only by RotateCA, on request.
type NotPermittedError struct {
	Dir         string
	Fingerprint string
	Permitted   []string // hosts the existing CA permits
	Missing     []string // hosts asked for that it does not
}

func (e *NotPermittedError) Error() string {
	return fmt.Sprintf("ca: the CA in %s permits %s, not %s", e.Dir, strings.Join(e.Permitted, ", "), strings.Join(e.Missing, ", "))
}

// ExpiredError is returned by LoadOrCreateCA when the CA in a directory
// has expired; RotateCA replaces it.
type ExpiredError struct {
	Dir      string
	NotAfter time.Time
}

func (e *ExpiredError) Error() string {
	return fmt.Sprintf("ca: the CA in %s expired on %s", e.Dir, e.NotAfter.Format(time.DateOnly))
}

// LoadOrCreateCA loads the CA in dir, or creates one permitting hosts when
// the directory holds none. An existing CA is never replaced: when it does
// not permit every host in hosts the error is a *NotPermittedError, when it
// has expired an *ExpiredError, and a directory holding only one of the
// two files is an error too. RotateCA makes a new CA in their place.
func LoadOrCreateCA(dir string, hosts []string) (*CA, error) {
	ca, err := LoadCA(dir, hosts)
	if errors.Is(err, ErrNoCA) {
		return createCA(dir, filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile), hosts)
	}
	return ca, err
}

// ErrNoCA is returned by LoadCA when the directory holds no CA at all.
var ErrNoCA = errors.New("ca: no CA yet")

// LoadCA is LoadOrCreateCA without the creating: when dir holds no CA the
// error wraps ErrNoCA.
func LoadCA(dir string, hosts []string) (*CA, error) {
	certPath := filepath.Join(dir, CACertFile)
	keyPath := filepath.Join(dir, CAKeyFile)
	ca, err := loadCA(certPath, keyPath)
	switch {
	case err == nil:
		if missing := notPermitted(ca, hosts); len(missing) > 0 {
			return nil, &NotPermittedError{Dir: dir, Fingerprint: ca.Fingerprint(), Permitted: ca.Cert.PermittedDNSDomains, Missing: missing}
		}
		if time.Now().After(ca.Cert.NotAfter) {
			return nil, &ExpiredError{Dir: dir, NotAfter: ca.Cert.NotAfter}
		}
		return ca, nil
	case errors.Is(err, os.ErrNotExist):
		if exists(certPath) || exists(keyPath) {
			return nil, fmt.Errorf("ca: %s holds only one of %s and %s: %w", dir, CACertFile, CAKeyFile, err)
		}
		return nil, fmt.Errorf("%w in %s", ErrNoCA, dir)
	default:
		return nil, err
	}
}

// notPermitted returns the hosts of hosts that ca does not permit.
func notPermitted(ca *CA, hosts []string) []string {
	var missing []string
	for _, h := range normaliseHosts(hosts) {
		if !slices.Contains(ca.Cert.PermittedDNSDomains, h) {
			missing = append(missing, h)
		}
	}
	return missing
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// Rotation describes the CA that RotateCA replaced.
type Rotation struct {
	Fingerprint string    // SHA-256 of the old certificate, as CA.Fingerprint prints it
	Permitted   []string  // hosts the old CA permitted
	NotAfter    time.Time // when the old CA expires
	// CertPath and KeyPath are where the old files were moved (each empty
	// when that file was missing). They keep their modes: the key stays
	// 0600.
	CertPath, KeyPath string
}

// RotateCA makes a new CA in dir permitting the union of hosts and of the
// hosts the existing CA permits, and moves the existing files aside, next
// to the new ones, with the time of the rotation in their names. The
// returned Rotation describes the old CA; it is nil when dir held none.
// An old CA that cannot be parsed is moved aside all the same (its
// Fingerprint is then empty).
func RotateCA(dir string, hosts []string) (*CA, *Rotation, error) {
	certPath := filepath.Join(dir, CACertFile)
	keyPath := filepath.Join(dir, CAKeyFile)
	if !exists(certPath) && !exists(keyPath) {
		ca, err := createCA(dir, certPath, keyPath, hosts)
		return ca, nil, err
	}
	rot := &Rotation{}
	if old, err := loadCA(certPath, keyPath); err == nil {
		rot.Fingerprint = old.Fingerprint()
		rot.Permitted = old.Cert.PermittedDNSDomains
		rot.NotAfter = old.Cert.NotAfter
		hosts = append(slices.Clone(old.Cert.PermittedDNSDomains), hosts...)
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	var err error
	if rot.KeyPath, err = moveAside(keyPath, stamp); err != nil {
		return nil, nil, err
	}
	if rot.CertPath, err = moveAside(certPath, stamp); err != nil {
		return nil, nil, err
	}
	ca, err := createCA(dir, certPath, keyPath, hosts)
	if err != nil {
		return nil, nil, err
	}
	return ca, rot, nil
}

// moveAside renames path to a name beside it carrying stamp
// (tsinspect-ca.pem becomes tsinspect-ca.20261122T205650Z.pem), never over
// an existing file, and returns the new name; "" when path does not exist.
func moveAside(path, stamp string) (string, error) {
	if !exists(path) {
		return "", nil
	}
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	for i := 1; i < 100; i++ {
		dst := base + "." + stamp + ext
		if i > 1 {
			dst = fmt.Sprintf("%s.%s-%d%s", base, stamp, i, ext)
		}
		if exists(dst) {
			continue
		}
		// A hard link never replaces an existing name, so two rotations in
		// the same second cannot overwrite each other's files.
		if err := os.Link(path, dst); err != nil {
			if errors.Is(err, os.ErrExist) {
				continue
			}
			return "", fmt.Errorf("ca: keep old %s: %w", path, err)
		}
		if err := os.Remove(path); err != nil {
			return "", fmt.Errorf("ca: keep old %s: %w", path, err)
		}
		return dst, nil
	}
	return "", fmt.Errorf("ca: keep old %s: too many rotations at %s", path, stamp)
}

func loadCA(certPath, keyPath string) (*CA, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, fmt.Errorf("ca: read %s: %w", certPath, err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("ca: read %s: %w", keyPath, err)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("ca: %s or %s is not PEM", certPath, keyPath)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("ca: parse %s: %w", certPath, err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("ca: parse %s: %w", keyPath, err)
	}
	return &CA{Cert: cert, CertPath: certPath, KeyPath: keyPath, key: key, leaves: map[string]*tls.Certificate{}}, nil
}

func createCA(dir, certPath, keyPath string, hosts []string) (*CA, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("ca: create %s: %w", dir, err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ca: generate key: %w", err)
	}
	permitted := normaliseHosts(hosts)
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:                serial,
		Subject:                     pkix.Name{CommonName: "tsinspect local interception CA", Organization: []string{"tsinspect"}},
		NotBefore:                   now.Add(-time.Hour),
		NotAfter:                    now.AddDate(2, 0, 0),
		IsCA:                        true,
		BasicConstraintsValid:       true,
		MaxPathLenZero:              true,
		KeyUsage:                    x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         permitted,
		ExcludedIPRanges: []*net.IPNet{
			{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)},
			{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)},
		},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("ca: create certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("ca: parse new certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("ca: marshal key: %w", err)
	}
	if err := writeFileAtomic(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	return &CA{Cert: cert, CertPath: certPath, KeyPath: keyPath, Created: true, key: key, leaves: map[string]*tls.Certificate{}}, nil
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("ca: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("ca: write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("ca: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("ca: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("ca: write %s: %w", path, err)
	}
	return nil
}

func normaliseHosts(hosts []string) []string {
	var out []string
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" || slices.Contains(out, h) {
			continue
		}
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

func randomSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return nil, fmt.Errorf("ca: serial: %w", err)
	}
	return n, nil
}

// Fingerprint returns the SHA-256 fingerprint of the CA certificate as
// colon-separated upper-case hex, the form browsers and openssl print.
func (ca *CA) Fingerprint() string {
	sum := sha256.Sum256(ca.Cert.Raw)
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	var b strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[i : i+2])
	}
	return b.String()
}

// Leaf returns a certificate for host signed by the CA, made once per host
// and cached.
func (ca *CA) Leaf(host string) (*tls.Certificate, error) {
	host = strings.ToLower(host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ca.mu.Lock()
	defer ca.mu.Unlock()
	if c, ok := ca.leaves[host]; ok {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ca: leaf key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	notAfter := now.AddDate(0, 0, 30)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("ca: sign leaf for %s: %w", host, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("ca: parse leaf: %w", err)
	}
	c := &tls.Certificate{Certificate: [][]byte{der, ca.Cert.Raw}, PrivateKey: key, Leaf: leaf}
	ca.leaves[host] = c
	return c, nil
}

// Pool returns a certificate pool holding only the CA, for clients in
// tests.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}
