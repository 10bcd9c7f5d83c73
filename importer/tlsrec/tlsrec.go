// Package tlsrec decrypts captured TLS 1.2 and 1.3 connections with the
// secrets of an NSS key log: it reads the record layer of both directions,
// takes the client random and the negotiated version and cipher suite from
// the hellos, derives the traffic keys (TLS 1.3: HKDF-Expand-Label from
// CLIENT/SERVER_TRAFFIC_SECRET_0; TLS 1.2: the PRF key block from the
// CLIENT_RANDOM master secret) and opens every application data record.
//
// The AEAD suites are supported: AES-128-GCM, AES-256-GCM and
// ChaCha20-Poly1305, in both versions. It is the only package that imports
// golang.org/x/crypto.
package tlsrec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"sort"
	"time"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/tsinspect/tsinspect/importer/httpflow"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrNotTLS: the client's data does not start with a TLS handshake.
	ErrNotTLS = errors.New("not a TLS connection")
	// ErrNoHandshake: the hellos are missing or cut off, so the session
	// cannot be identified (the capture began after the handshake, or the
	// server never answered).
	ErrNoHandshake = errors.New("TLS handshake not in the capture")
	// ErrUnsupported: a protocol version or cipher suite this package
	// cannot decrypt.
	ErrUnsupported = errors.New("unsupported TLS version or cipher suite")
	// ErrNoKey: the key log has no secrets for the session.
	ErrNoKey = errors.New("no secrets for this TLS session in the key log")
	// ErrBadKey: the key log has secrets for the session but they do not
	// decrypt it.
	ErrBadKey = errors.New("the key log's secrets do not decrypt this TLS session")
	// ErrCorrupt: a record could not be read or opened after others
	// were; the stream stops there.
	ErrCorrupt = errors.New("damaged TLS record")
)

// TLS protocol versions.
const (
	VersionTLS12 = 0x0303
	VersionTLS13 = 0x0304
)

// Record content types.
const (
	recordChangeCipherSpec = 20
	recordAlert            = 21
	recordHandshake        = 22
	recordApplicationData  = 23
)

// maxRecordLength is the largest record body allowed: 2^14 plus the
// expansion TLS 1.2 permits.
const maxRecordLength = 16384 + 2048

// Session describes a decrypted connection.
type Session struct {
	Version      uint16
	CipherSuite  uint16
	ServerName   string // SNI, "" if none was sent
	ClientRandom [32]byte
}

// SuiteName returns the IANA name of a supported cipher suite, or its
// number in hex.
func SuiteName(id uint16) string {
	if s, ok := suites[id]; ok {
		return s.name
	}
	return fmt.Sprintf("0x%04x", id)
}

// LooksLikeTLS reports whether b starts like a TLS handshake record.
func LooksLikeTLS(b []byte) bool {
	return len(b) >= 3 && b[0] == recordHandshake && b[1] == 3 && b[2] <= 4
}

// suite is what decryption needs to know about a cipher suite.
type suite struct {
	name   string
	tls13  bool
	keyLen int
	chacha bool
	sha384 bool
}

var suites = map[uint16]suite{
	0x1301: {"TLS_AES_128_GCM_SHA256", true, 16, false, false},
	0x1302: {"TLS_AES_256_GCM_SHA384", true, 32, false, true},
	0x1303: {"TLS_CHACHA20_POLY1305_SHA256", true, 32, true, false},

	0x009c: {"TLS_RSA_WITH_AES_128_GCM_SHA256", false, 16, false, false},
	0x009d: {"TLS_RSA_WITH_AES_256_GCM_SHA384", false, 32, false, true},
	0x009e: {"TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", false, 16, false, false},
	0x009f: {"TLS_DHE_RSA_WITH_AES_256_GCM_SHA384", false, 32, false, true},
	0xc02b: {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", false, 16, false, false},
	0xc02c: {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", false, 32, false, true},
	0xc02f: {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", false, 16, false, false},
	0xc030: {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", false, 32, false, true},
	0xcca8: {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", false, 32, true, false},
	0xcca9: {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", false, 32, true, false},
	0xccaa: {"TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256", false, 32, true, false},
}

func (s suite) hash() func() hash.Hash {
	if s.sha384 {
		return sha512.New384
	}
	return sha256.New
}

// record is one TLS record and the time its last byte arrived.
type record struct {
	typ    byte
	header [5]byte
	body   []byte
	at     time.Time
}

// records splits a stream into records. It returns those it could read and,
// when the stream does not end on a record boundary, why.
func records(s *httpflow.Stream) ([]record, error) {
	var (
		buf  []byte
		ends []int // end offset of each segment in buf
	)
	for _, seg := range s.Segments {
		buf = append(buf, seg.Data...)
		ends = append(ends, len(buf))
	}
	timeOf := func(off int) time.Time {
		i := sort.Search(len(ends), func(i int) bool { return ends[i] > off })
		if i >= len(ends) {
			return time.Time{}
		}
		return s.Segments[i].At
	}
	var out []record
	for off := 0; off < len(buf); {
		if len(buf)-off < 5 {
			return out, fmt.Errorf("%w: the stream ends inside a record header", ErrCorrupt)
		}
		h := buf[off : off+5]
		n := int(binary.BigEndian.Uint16(h[3:5]))
		if h[0] < recordChangeCipherSpec || h[0] > 24 || h[1] != 3 || n > maxRecordLength {
			return out, fmt.Errorf("%w at byte %d", errBadHeader, off)
		}
		if len(buf)-off-5 < n {
			return out, fmt.Errorf("%w: the stream ends inside a record", ErrCorrupt)
		}
		end := off + 5 + n
		r := record{typ: h[0], body: buf[off+5 : end], at: timeOf(end - 1)}
		copy(r.header[:], h)
		out = append(out, r)
		off = end
	}
	return out, nil
}

// hello holds what the hellos tell.
type hello struct {
	clientRandom [32]byte
	sni          string
	haveClient   bool
	serverRandom [32]byte
	version      uint16
	suite        uint16
	haveServer   bool
}

// helloRetryRandom is the ServerHello random of a HelloRetryRequest.
var helloRetryRandom = [32]byte{
	0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
	0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
}

// handshakeMessages returns the plaintext handshake messages at the start of
// a direction: those in handshake records before the first encrypted one.
// In TLS 1.2 a ChangeCipherSpec ends them; in TLS 1.3 it is a no-op.
func handshakeMessages(recs []record, stopAtCCS bool) [][]byte {
	var buf []byte
	for _, r := range recs {
		if r.typ == recordApplicationData || (r.typ == recordChangeCipherSpec && stopAtCCS) {
			break
		}
		if r.typ == recordHandshake {
			buf = append(buf, r.body...)
		}
	}
	var msgs [][]byte
	for len(buf) >= 4 {
		n := int(buf[1])<<16 | int(buf[2])<<8 | int(buf[3])
		if len(buf)-4 < n {
			break
		}
		msgs = append(msgs, buf[:4+n])
		buf = buf[4+n:]
	}
	return msgs
}

// parseClientHello reads the random and SNI of a ClientHello message.
func parseClientHello(h *hello, m []byte) bool {
	if len(m) < 4+2+32+1 || m[0] != 1 {
		return false
	}
	b := m[4:]
	copy(h.clientRandom[:], b[2:34])
	h.haveClient = true
	b = b[34:]
	b, ok := skipVec(b, 1) // session id
	if !ok {
		return true
	}
	if b, ok = skipVec(b, 2); !ok { // cipher suites
		return true
	}
	if b, ok = skipVec(b, 1); !ok { // compression methods
		return true
	}
	exts, ok := vec(b, 2)
	if !ok {
		return true
	}
	forEachExtension(exts, func(typ uint16, data []byte) {
		if typ != 0 { // server_name
			return
		}
		list, ok := vec(data, 2)
		if !ok || len(list) < 3 || list[0] != 0 {
			return
		}
		if name, ok := vec(list[1:], 2); ok {
			h.sni = string(name)
		}
	})
	return true
}

// parseServerHello reads the random, version and suite of a ServerHello;
// it reports false for a HelloRetryRequest or a malformed message.
func parseServerHello(h *hello, m []byte) bool {
	if len(m) < 4+2+32+1 || m[0] != 2 {
		return false
	}
	b := m[4:]
	version := binary.BigEndian.Uint16(b[0:2])
	var random [32]byte
	copy(random[:], b[2:34])
	if random == helloRetryRandom {
		return false
	}
	b, ok := skipVec(b[34:], 1)
	if !ok || len(b) < 3 {
		return false
	}
	h.suite = binary.BigEndian.Uint16(b[0:2])
	b = b[3:]
	if exts, ok := vec(b, 2); ok {
		forEachExtension(exts, func(typ uint16, data []byte) {
			if typ == 43 && len(data) == 2 { // supported_versions
				version = binary.BigEndian.Uint16(data)
			}
		})
	}
	h.serverRandom = random
	h.version = version
	h.haveServer = true
	return true
}

func vec(b []byte, lenBytes int) ([]byte, bool) {
	if len(b) < lenBytes {
		return nil, false
	}
	n := 0
	for i := 0; i < lenBytes; i++ {
		n = n<<8 | int(b[i])
	}
	if len(b)-lenBytes < n {
		return nil, false
	}
	return b[lenBytes : lenBytes+n], true
}

func skipVec(b []byte, lenBytes int) ([]byte, bool) {
	v, ok := vec(b, lenBytes)
	if !ok {
		return nil, false
	}
	return b[lenBytes+len(v):], true
}

func forEachExtension(b []byte, f func(typ uint16, data []byte)) {
	for len(b) >= 4 {
		typ := binary.BigEndian.Uint16(b[0:2])
		data, ok := vec(b[2:], 2)
		if !ok {
			return
		}
		f(typ, data)
		b = b[4+len(data):]
	}
}

// Decrypt reads a TLS connection and returns the application data of each
// direction in plaintext, each piece timed by the arrival of the record that
// carried it. On error the plaintext decrypted so far is still returned, the
// stream marked Lost where it stops.
func Decrypt(client, server *httpflow.Stream, keys *KeyLog) (plainClient, plainServer httpflow.Stream, sess Session, err error) {
	plainClient = httpflow.Stream{Closed: client.Closed, Lost: client.Lost}
	plainServer = httpflow.Stream{Closed: server.Closed, Lost: server.Lost}
	if !LooksLikeTLS(client.Prefix(3)) {
		return plainClient, plainServer, sess, ErrNotTLS
	}
	crecs, cerr := records(client)
	srecs, serr := records(server)

	var h hello
	for _, m := range handshakeMessages(crecs, false) {
		if parseClientHello(&h, m) {
			break
		}
	}
	for _, m := range handshakeMessages(srecs, false) {
		if m[0] == 2 && parseServerHello(&h, m) {
			break
		}
	}
	if !h.haveClient || !h.haveServer {
		return plainClient, plainServer, sess, ErrNoHandshake
	}
	sess = Session{Version: h.version, CipherSuite: h.suite, ServerName: h.sni, ClientRandom: h.clientRandom}
	st, ok := suites[h.suite]
	if !ok || (h.version != VersionTLS12 && h.version != VersionTLS13) || st.tls13 != (h.version == VersionTLS13) {
		return plainClient, plainServer, sess, fmt.Errorf("%w: version 0x%04x, cipher suite %s", ErrUnsupported, h.version, SuiteName(h.suite))
	}

	var cdir, sdir direction
	if st.tls13 {
		cdir, sdir, err = keys13(st, keys, h.clientRandom)
	} else {
		cdir, sdir, err = keys12(st, keys, &h)
	}
	if err != nil {
		return plainClient, plainServer, sess, err
	}
	cres := cdir.open(crecs, &plainClient)
	sres := sdir.open(srecs, &plainServer)
	// A stream that stops inside a record lost its end if the sender
	// closed it (else the capture just stopped); a bad header is damage.
	plainClient.Lost = plainClient.Lost || lostEnd(cerr, client)
	plainServer.Lost = plainServer.Lost || lostEnd(serr, server)
	switch {
	case cres.badKey || sres.badKey, cres.opened+sres.opened == 0 && cres.tried+sres.tried > 0:
		return plainClient, plainServer, sess, ErrBadKey
	case cres.failed || sres.failed:
		return plainClient, plainServer, sess, fmt.Errorf("%w: a record failed to decrypt after %d did", ErrCorrupt, cres.opened+sres.opened)
	case errors.Is(cerr, errBadHeader):
		return plainClient, plainServer, sess, cerr
	case errors.Is(serr, errBadHeader):
		return plainClient, plainServer, sess, serr
	}
	return plainClient, plainServer, sess, nil
}

// errBadHeader marks a record header that cannot be one: the stream is
// damaged there.
var errBadHeader = fmt.Errorf("%w: bad record header", ErrCorrupt)

func lostEnd(err error, s *httpflow.Stream) bool {
	return errors.Is(err, errBadHeader) || (err != nil && s.Closed)
}

// direction is the decryption state of one direction of a connection.
type direction struct {
	suite suite
	// TLS 1.3: handshake keys (optional) and application keys.
	hs, app *aeadState
	// TLS 1.2: the keys in force after ChangeCipherSpec.
	keys12 *aeadState
}

// openResult counts what open did.
type openResult struct {
	opened int  // records opened with the application (or 1.2) keys
	tried  int  // encrypted records seen
	badKey bool // the first record that must open with the keys did not
	failed bool // a record failed after others had opened
}

func (d *direction) open(recs []record, out *httpflow.Stream) openResult {
	if d.suite.tls13 {
		return d.open13(recs, out)
	}
	return d.open12(recs, out)
}

func (d *direction) open12(recs []record, out *httpflow.Stream) openResult {
	var res openResult
	encrypted := false
	for _, r := range recs {
		if !encrypted {
			if r.typ == recordChangeCipherSpec {
				encrypted = true
			}
			continue
		}
		res.tried++
		plain, err := d.keys12.open12(r)
		if err != nil {
			if res.opened == 0 {
				res.badKey = true
			} else {
				res.failed = true
			}
			out.Lost = true
			return res
		}
		res.opened++
		if r.typ == recordApplicationData {
			out.Append(plain, r.at)
		}
	}
	return res
}

func (d *direction) open13(recs []record, out *httpflow.Stream) openResult {
	var res openResult
	inApp := false
	for _, r := range recs {
		if r.typ != recordApplicationData {
			continue // plaintext hellos, compatibility ChangeCipherSpec
		}
		res.tried++
		if !inApp {
			// Handshake records come first; the first record that opens
			// with the application keys (sequence 0) ends them.
			if plain, typ, err := d.app.open13(r); err == nil {
				inApp = true
				res.opened++
				d.deliver13(plain, typ, r.at, out)
				continue
			}
			if d.hs != nil {
				if _, _, err := d.hs.open13(r); err != nil {
					res.badKey = true
					out.Lost = true
					return res
				}
			}
			continue
		}
		plain, typ, err := d.app.open13(r)
		if err != nil {
			res.failed = true
			out.Lost = true
			return res
		}
		res.opened++
		d.deliver13(plain, typ, r.at, out)
	}
	return res
}

// deliver13 handles one opened TLS 1.3 record: application data goes to
// out; a KeyUpdate moves the direction to its next traffic secret.
func (d *direction) deliver13(plain []byte, typ byte, at time.Time, out *httpflow.Stream) {
	switch typ {
	case recordApplicationData:
		out.Append(plain, at)
	case recordHandshake:
		for len(plain) >= 4 {
			n := int(plain[1])<<16 | int(plain[2])<<8 | int(plain[3])
			if len(plain)-4 < n {
				return
			}
			if plain[0] == 24 { // key_update
				d.app.update()
			}
			plain = plain[4+n:]
		}
	}
}

// aeadState is one direction's record protection.
type aeadState struct {
	aead cipher.AEAD
	iv   []byte // 12-byte IV, or the 4-byte salt of TLS 1.2 GCM
	seq  uint64
	// TLS 1.2 AES-GCM carries an 8-byte explicit nonce in each record.
	explicitNonce bool
	// TLS 1.3: the traffic secret, for KeyUpdate.
	secret []byte
	suite  suite
}

func newAEAD(s suite, key []byte) (cipher.AEAD, error) {
	if s.chacha {
		return chacha20poly1305.New(key)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (a *aeadState) nonce() []byte {
	n := make([]byte, 12)
	copy(n, a.iv)
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], a.seq)
	for i := 0; i < 8; i++ {
		n[4+i] ^= seq[i]
	}
	return n
}

// open12 opens a TLS 1.2 record.
func (a *aeadState) open12(r record) ([]byte, error) {
	body := r.body
	var nonce []byte
	if a.explicitNonce {
		if len(body) < 8 {
			return nil, ErrCorrupt
		}
		nonce = append(append([]byte(nil), a.iv...), body[:8]...)
		body = body[8:]
	} else {
		nonce = a.nonce()
	}
	if len(body) < a.aead.Overhead() {
		return nil, ErrCorrupt
	}
	var ad [13]byte
	binary.BigEndian.PutUint64(ad[:8], a.seq)
	ad[8] = r.typ
	copy(ad[9:11], r.header[1:3])
	binary.BigEndian.PutUint16(ad[11:], uint16(len(body)-a.aead.Overhead()))
	plain, err := a.aead.Open(nil, nonce, body, ad[:])
	if err != nil {
		return nil, err
	}
	a.seq++
	return plain, nil
}

// open13 opens a TLS 1.3 record and returns its inner content and type.
// The sequence number moves on only when the record opened.
func (a *aeadState) open13(r record) ([]byte, byte, error) {
	plain, err := a.aead.Open(nil, a.nonce(), r.body, r.header[:])
	if err != nil {
		return nil, 0, err
	}
	a.seq++
	i := len(plain) - 1
	for i >= 0 && plain[i] == 0 {
		i--
	}
	if i < 0 {
		return nil, 0, ErrCorrupt
	}
	return plain[:i], plain[i], nil
}

// update moves a TLS 1.3 direction to its next traffic secret (KeyUpdate).
func (a *aeadState) update() {
	next, err := expandLabel(a.suite.hash(), a.secret, "traffic upd", a.suite.hash()().Size())
	if err != nil {
		return
	}
	if n, err := trafficKeys(a.suite, next); err == nil {
		*a = *n
	}
}

// expandLabel is TLS 1.3's HKDF-Expand-Label with an empty context.
func expandLabel(h func() hash.Hash, secret []byte, label string, length int) ([]byte, error) {
	full := "tls13 " + label
	info := make([]byte, 0, 4+len(full))
	info = binary.BigEndian.AppendUint16(info, uint16(length))
	info = append(info, byte(len(full)))
	info = append(info, full...)
	info = append(info, 0) // context
	return hkdf.Expand(h, secret, string(info), length)
}

// trafficKeys derives a TLS 1.3 direction's key and IV from its traffic
// secret.
func trafficKeys(s suite, secret []byte) (*aeadState, error) {
	key, err := expandLabel(s.hash(), secret, "key", s.keyLen)
	if err != nil {
		return nil, err
	}
	iv, err := expandLabel(s.hash(), secret, "iv", 12)
	if err != nil {
		return nil, err
	}
	aead, err := newAEAD(s, key)
	if err != nil {
		return nil, err
	}
	return &aeadState{aead: aead, iv: iv, secret: secret, suite: s}, nil
}

func keys13(s suite, keys *KeyLog, cr [32]byte) (c, sv direction, err error) {
	cs, ss := keys.secret(cr, labelClientTraffic0), keys.secret(cr, labelServerTraffic0)
	if cs == nil || ss == nil {
		return c, sv, ErrNoKey
	}
	c.suite, sv.suite = s, s
	if c.app, err = trafficKeys(s, cs); err != nil {
		return c, sv, fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	if sv.app, err = trafficKeys(s, ss); err != nil {
		return c, sv, fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	// The handshake secrets are optional; with them, a wrong key log is
	// told from a connection without application data.
	if hs := keys.secret(cr, labelClientHandshake); hs != nil {
		c.hs, _ = trafficKeys(s, hs)
	}
	if hs := keys.secret(cr, labelServerHandshake); hs != nil {
		sv.hs, _ = trafficKeys(s, hs)
	}
	return c, sv, nil
}

func keys12(s suite, keys *KeyLog, h *hello) (c, sv direction, err error) {
	master := keys.secret(h.clientRandom, labelMasterSecret)
	if master == nil {
		return c, sv, ErrNoKey
	}
	ivLen := 4
	if s.chacha {
		ivLen = 12
	}
	seed := append(append([]byte(nil), h.serverRandom[:]...), h.clientRandom[:]...)
	block := prf12(s.hash(), master, "key expansion", seed, 2*s.keyLen+2*ivLen)
	ck, sk := block[:s.keyLen], block[s.keyLen:2*s.keyLen]
	civ, siv := block[2*s.keyLen:2*s.keyLen+ivLen], block[2*s.keyLen+ivLen:]
	c.suite, sv.suite = s, s
	for _, d := range []struct {
		dir     *direction
		key, iv []byte
	}{{&c, ck, civ}, {&sv, sk, siv}} {
		aead, err := newAEAD(s, d.key)
		if err != nil {
			return c, sv, fmt.Errorf("%w: %v", ErrBadKey, err)
		}
		d.dir.keys12 = &aeadState{aead: aead, iv: d.iv, explicitNonce: !s.chacha, suite: s}
	}
	return c, sv, nil
}

// prf12 is the TLS 1.2 PRF (RFC 5246 section 5): P_hash(secret, label +
// seed).
func prf12(h func() hash.Hash, secret []byte, label string, seed []byte, n int) []byte {
	labelSeed := append([]byte(label), seed...)
	mac := hmac.New(h, secret)
	mac.Write(labelSeed)
	a := mac.Sum(nil) // A(1)
	out := make([]byte, 0, n+mac.Size())
	for len(out) < n {
		mac.Reset()
		mac.Write(a)
		mac.Write(labelSeed)
		out = mac.Sum(out)
		mac.Reset()
		mac.Write(a)
		a = mac.Sum(nil)
	}
	return out[:n]
}
