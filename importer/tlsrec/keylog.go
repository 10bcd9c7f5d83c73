package tlsrec

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// The key log labels this package uses (NSS key log format).
const (
	labelMasterSecret    = "CLIENT_RANDOM" // TLS 1.2 and earlier: the master secret
	labelClientHandshake = "CLIENT_HANDSHAKE_TRAFFIC_SECRET"
	labelServerHandshake = "SERVER_HANDSHAKE_TRAFFIC_SECRET"
	labelClientTraffic0  = "CLIENT_TRAFFIC_SECRET_0"
	labelServerTraffic0  = "SERVER_TRAFFIC_SECRET_0"
)

const (
	maxKeyLogLine      = 4096
	clientRandomLength = 32
	maxSecretLength    = 64
	masterSecretLength = 48
)

// KeyLog holds TLS secrets from an NSS key log (the SSLKEYLOGFILE format
// written by browsers, curl, Node and Go's tls.Config.KeyLogWriter), by
// client random. The zero KeyLog is empty and ready to use.
type KeyLog struct {
	secrets map[[clientRandomLength]byte]map[string][]byte
	bad     int
	first   string // the first bad line's problem
}

// ParseKeyLog reads a key log. Lines it cannot use are counted (BadLines)
// rather than failing the whole log; it fails only when reading fails.
func ParseKeyLog(r io.Reader) (*KeyLog, error) {
	k := &KeyLog{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1024), maxKeyLogLine)
	n := 0
	for sc.Scan() {
		n++
		k.addLine(n, sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		return k, fmt.Errorf("key log: line %d: %w", n+1, err)
	}
	return k, nil
}

// ParseKeyLogBytes is ParseKeyLog on a byte slice.
func ParseKeyLogBytes(b []byte) (*KeyLog, error) { return ParseKeyLog(bytes.NewReader(b)) }

func (k *KeyLog) addLine(n int, line []byte) {
	s := strings.TrimSpace(string(line))
	if s == "" || strings.HasPrefix(s, "#") {
		return
	}
	f := strings.Fields(s)
	if len(f) != 3 {
		k.badLine(n, "want LABEL CLIENT_RANDOM SECRET")
		return
	}
	if f[0] == "RSA" {
		return // RSA key exchange pre-master secrets: not used
	}
	cr, err := hex.DecodeString(f[1])
	if err != nil || len(cr) != clientRandomLength {
		k.badLine(n, "client random is not 32 bytes of hex")
		return
	}
	secret, err := hex.DecodeString(f[2])
	if err != nil || len(secret) == 0 || len(secret) > maxSecretLength {
		k.badLine(n, "secret is not hex")
		return
	}
	if f[0] == labelMasterSecret && len(secret) != masterSecretLength {
		k.badLine(n, "CLIENT_RANDOM secret is not 48 bytes")
		return
	}
	k.add(f[0], [clientRandomLength]byte(cr), secret)
}

func (k *KeyLog) add(label string, cr [clientRandomLength]byte, secret []byte) {
	if k.secrets == nil {
		k.secrets = map[[clientRandomLength]byte]map[string][]byte{}
	}
	m := k.secrets[cr]
	if m == nil {
		m = map[string][]byte{}
		k.secrets[cr] = m
	}
	m[label] = secret
}

func (k *KeyLog) badLine(n int, why string) {
	k.bad++
	if k.bad == 1 {
		k.first = fmt.Sprintf("line %d: %s", n, why)
	}
}

// Merge adds o's secrets to k.
func (k *KeyLog) Merge(o *KeyLog) {
	if o == nil {
		return
	}
	for cr, m := range o.secrets {
		for label, s := range m {
			k.add(label, cr, s)
		}
	}
	k.bad += o.bad
	if k.first == "" {
		k.first = o.first
	}
}

// Sessions returns the number of client randoms that have secrets.
func (k *KeyLog) Sessions() int {
	if k == nil {
		return 0
	}
	return len(k.secrets)
}

// BadLines returns how many lines could not be used, and what was wrong
// with the first.
func (k *KeyLog) BadLines() (int, string) {
	if k == nil {
		return 0, ""
	}
	return k.bad, k.first
}

func (k *KeyLog) secret(cr [clientRandomLength]byte, label string) []byte {
	if k == nil {
		return nil
	}
	return k.secrets[cr][label]
}
