package tlsrec

import (
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/importer/httpflow"
)

func TestParseKeyLog(t *testing.T) {
	cr := strings.Repeat("ab", 32)
	log := strings.Join([]string{
		"# comment",
		"",
		"CLIENT_RANDOM " + cr + " " + strings.Repeat("01", 48),
		"CLIENT_TRAFFIC_SECRET_0 " + cr + " " + strings.Repeat("02", 32),
		"RSA 0011 2233",
		"CLIENT_RANDOM " + cr + " 0102", // master secret too short
		"SERVER_TRAFFIC_SECRET_0 nothex " + strings.Repeat("02", 32),
		"just two",
	}, "\n")
	k, err := ParseKeyLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if k.Sessions() != 1 {
		t.Errorf("sessions %d", k.Sessions())
	}
	if n, first := k.BadLines(); n != 3 || !strings.Contains(first, "line 6") {
		t.Errorf("bad lines %d %q", n, first)
	}
	var random [32]byte
	for i := range random {
		random[i] = 0xab
	}
	if len(k.secret(random, labelMasterSecret)) != 48 || len(k.secret(random, labelClientTraffic0)) != 32 {
		t.Error("secrets not kept")
	}
}

// TestPRF checks the TLS 1.2 PRF against a published test vector for
// P_SHA256 (the IETF TLS list's vectors used by many implementations).
func TestPRF(t *testing.T) {
	secret := []byte{0x9b, 0xbe, 0x43, 0x6b, 0xa9, 0x40, 0xf0, 0x17, 0xb1, 0x76, 0x52, 0x84, 0x9a, 0x71, 0xdb, 0x35}
	seed := []byte{0xa0, 0xba, 0x9f, 0x93, 0x6c, 0xda, 0x31, 0x18, 0x27, 0xa6, 0xf7, 0x96, 0xff, 0xd5, 0x19, 0x8c}
	want := []byte{0xe3, 0xf2, 0x29, 0xba, 0x72, 0x7b, 0xe1, 0x7b, 0x8d, 0x12, 0x26, 0x20, 0x55, 0x7c, 0xd4, 0x53}
	got := prf12(suites[0xc02f].hash(), secret, "test label", seed, 100)
	if len(got) != 100 || string(got[:16]) != string(want) {
		t.Errorf("PRF = %x", got[:16])
	}
}

func TestNotTLS(t *testing.T) {
	var c, s httpflow.Stream
	c.Append([]byte("GET / HTTP/1.1\r\n\r\n"), time.Time{})
	if _, _, _, err := Decrypt(&c, &s, nil); err != ErrNotTLS {
		t.Errorf("err %v", err)
	}
	var h httpflow.Stream
	h.Append([]byte{22, 3, 1, 0, 5, 1, 0, 0, 1}, time.Time{}) // a hello cut short
	if _, _, _, err := Decrypt(&h, &s, nil); err != ErrNoHandshake {
		t.Errorf("err %v", err)
	}
}
