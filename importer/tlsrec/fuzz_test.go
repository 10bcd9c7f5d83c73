package tlsrec

import (
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/importer/httpflow"
)

// FuzzParseKeyLog parses arbitrary key logs: no panic, and a key log never
// holds more sessions than it has lines.
//
// Run: go test ./importer/tlsrec -run '^$' -fuzz FuzzParseKeyLog -fuzztime 10m
func FuzzParseKeyLog(f *testing.F) {
	f.Add([]byte("CLIENT_RANDOM 0000000000000000000000000000000000000000000000000000000000000000 " +
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f\n"))
	f.Add([]byte("# comment\nCLIENT_HANDSHAKE_TRAFFIC_SECRET 00 11\nSERVER_TRAFFIC_SECRET_0 zz yy\n\n"))
	f.Add([]byte("CLIENT_TRAFFIC_SECRET_0 " + string(make([]byte, 64)) + " 00\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKeyLogBytes(b)
		if err != nil {
			return
		}
		lines := 1
		for _, c := range b {
			if c == '\n' {
				lines++
			}
		}
		if k.Sessions() > lines {
			t.Fatalf("%d sessions from %d lines", k.Sessions(), lines)
		}
	})
}

// FuzzDecrypt feeds arbitrary bytes as the two directions of a TLS
// connection, split into a few reads: no panic, and nothing decrypted
// without keys.
//
// Run: go test ./importer/tlsrec -run '^$' -fuzz FuzzDecrypt -fuzztime 10m
func FuzzDecrypt(f *testing.F) {
	hello := []byte{0x16, 0x03, 0x01, 0x00, 0x2d, 0x01, 0x00, 0x00, 0x29, 0x03, 0x03}
	hello = append(hello, make([]byte, 32)...)
	hello = append(hello, 0x00, 0x00, 0x02, 0x13, 0x01, 0x01, 0x00)
	f.Add(hello, []byte{0x16, 0x03, 0x03, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00})
	f.Add([]byte{0x17, 0x03, 0x03, 0xff, 0xff}, []byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28})
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, client, server []byte) {
		var cs, ss httpflow.Stream
		at := time.Unix(1700000000, 0)
		for i, b := range [][]byte{client, server} {
			s := &cs
			if i == 1 {
				s = &ss
			}
			for len(b) > 0 {
				n := min(len(b), 7+len(b)/3)
				s.Append(b[:n], at)
				b = b[n:]
			}
		}
		pc, ps, _, err := Decrypt(&cs, &ss, &KeyLog{})
		if err == nil && (pc.Len() > 0 || ps.Len() > 0) {
			t.Fatal("decrypted something without keys")
		}
	})
}
