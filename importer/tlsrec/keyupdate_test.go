package tlsrec

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/importer/httpflow"
)

func plainRecord(typ byte, body []byte) []byte {
	h := []byte{typ, 3, 3, 0, 0}
	binary.BigEndian.PutUint16(h[3:], uint16(len(body)))
	return append(h, body...)
}

func handshake(typ byte, body []byte) []byte {
	return append([]byte{typ, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body...)
}

// seal13 protects one TLS 1.3 record with a and moves its sequence on.
func seal13(a *aeadState, inner byte, data []byte) []byte {
	plain := append(append([]byte(nil), data...), inner)
	n := len(plain) + a.aead.Overhead()
	hdr := []byte{recordApplicationData, 3, 3, byte(n >> 8), byte(n)}
	ct := a.aead.Seal(nil, a.nonce(), plain, hdr)
	a.seq++
	return append(hdr, ct...)
}

// TestKeyUpdate builds a TLS 1.3 ChaCha20 exchange by hand in which the
// server updates its keys mid-stream: the records after the KeyUpdate open
// with the next traffic secret.
func TestKeyUpdate(t *testing.T) {
	var cr, sr [32]byte
	rand.Read(cr[:])
	rand.Read(sr[:])
	cs, ss := make([]byte, 32), make([]byte, 32)
	rand.Read(cs)
	rand.Read(ss)
	st := suites[0x1303]

	ch := []byte{3, 3}
	ch = append(ch, cr[:]...)
	ch = append(ch, 0, 0, 2, 0x13, 0x03, 1, 0, 0, 0)
	sh := []byte{3, 3}
	sh = append(sh, sr[:]...)
	sh = append(sh, 0, 0x13, 0x03, 0, 0, 6, 0, 43, 0, 2, 3, 4)

	cw, _ := trafficKeys(st, cs)
	sw, _ := trafficKeys(st, ss)
	var client, server httpflow.Stream
	at := time.Unix(1700000000, 0)
	client.Append(plainRecord(recordHandshake, handshake(1, ch)), at)
	client.Append(seal13(cw, recordApplicationData, []byte("GET / HTTP/1.1\r\n\r\n")), at.Add(time.Millisecond))
	server.Append(plainRecord(recordHandshake, handshake(2, sh)), at)
	server.Append(plainRecord(recordChangeCipherSpec, []byte{1}), at)
	server.Append(seal13(sw, recordApplicationData, []byte("hello ")), at.Add(2*time.Millisecond))
	server.Append(seal13(sw, recordHandshake, handshake(24, []byte{0})), at.Add(3*time.Millisecond))
	sw.update()
	server.Append(seal13(sw, recordApplicationData, []byte("world")), at.Add(4*time.Millisecond))

	log := fmt.Sprintf("CLIENT_TRAFFIC_SECRET_0 %s %s\nSERVER_TRAFFIC_SECRET_0 %s %s\n",
		hex.EncodeToString(cr[:]), hex.EncodeToString(cs), hex.EncodeToString(cr[:]), hex.EncodeToString(ss))
	keys, _ := ParseKeyLogBytes([]byte(log))
	pc, ps, sess, err := Decrypt(&client, &server, keys)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Version != VersionTLS13 || sess.CipherSuite != 0x1303 {
		t.Errorf("session %+v", sess)
	}
	if got := string(pc.Prefix(100)); got != "GET / HTTP/1.1\r\n\r\n" {
		t.Errorf("client %q", got)
	}
	if got := ps.Prefix(100); !bytes.Equal(got, []byte("hello world")) {
		t.Errorf("server %q", got)
	}
	if len(ps.Segments) != 2 || !ps.Segments[1].At.Equal(at.Add(4*time.Millisecond)) {
		t.Errorf("segments %+v", ps.Segments)
	}
}
