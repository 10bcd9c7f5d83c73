package pcap

import (
	"bytes"
	"crypto/tls"
	"net/http"
	"testing"

	"github.com/tsinspect/tsinspect/importer/pcap/pcaptest"
	"github.com/tsinspect/tsinspect/importer/tlsrec"
)

// fuzzSeeds returns small real captures to start from: plain HTTP in
// small, reordered segments (pcap and pcapng), and TLS 1.2 with its key
// log.
func fuzzSeeds(tb testing.TB) (seeds [][]byte, keyLog []byte) {
	tb.Helper()
	u := startUpstream(tb, script(), nil, pcaptest.Options{MSS: 200, Reorder: true})
	traffic(tb, &http.Client{Transport: &http.Transport{}}, u.URL)
	u.stop(tb)
	for _, ng := range []bool{false, true} {
		var buf bytes.Buffer
		var err error
		if ng {
			err = u.Cap.WritePcapNG(&buf, nil)
		} else {
			err = u.Cap.WritePcap(&buf)
		}
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, buf.Bytes())
	}
	t := startUpstream(tb, script(), &tls.Config{MaxVersion: tls.VersionTLS12}, pcaptest.Options{})
	recordThroughProxy(tb, t)
	var buf bytes.Buffer
	if err := t.Cap.WritePcap(&buf); err != nil {
		tb.Fatal(err)
	}
	return append(seeds, buf.Bytes()), t.KeyLog.Bytes()
}

// FuzzRead feeds arbitrary bytes to the importer: it must never panic,
// and it may fail only with an error. Inputs that once crashed it are kept
// in testdata/fuzz/FuzzRead.
//
// Run: go test ./importer/pcap -run '^$' -fuzz FuzzRead -fuzztime 10m
func FuzzRead(f *testing.F) {
	seeds, keyLog := fuzzSeeds(f)
	for _, s := range seeds {
		f.Add(s)
	}
	keys, err := tlsrec.ParseKeyLogBytes(keyLog)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := Read(bytes.NewReader(b), int64(len(b)), Options{KeyLog: keys})
		if err == nil && res == nil {
			t.Fatal("Read returned neither a result nor an error")
		}
	})
}
