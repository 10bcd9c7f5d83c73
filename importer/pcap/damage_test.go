package pcap

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"io"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/importer/pcap/pcaptest"
	"github.com/tsinspect/tsinspect/importer/tlsrec"
)

// tls12Capture records the standard traffic over TLS 1.2 and returns the
// capture file's bytes, the key log and what the proxy recorded.
func tls12Capture(t *testing.T) ([]byte, []byte, []exchange.Exchange) {
	t.Helper()
	u := startUpstream(t, script(), &tls.Config{MaxVersion: tls.VersionTLS12}, pcaptest.Options{})
	recorded := recordThroughProxy(t, u)
	var buf bytes.Buffer
	if err := u.Cap.WritePcap(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), u.KeyLog.Bytes(), recorded
}

func readBytes(t *testing.T, b []byte, keyLog []byte) *Result {
	t.Helper()
	var keys *tlsrec.KeyLog
	if keyLog != nil {
		keys, _ = tlsrec.ParseKeyLogBytes(keyLog)
	}
	res, err := Read(bytes.NewReader(b), int64(len(b)), Options{KeyLog: keys})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func skipped(res *Result, what string) int {
	n := 0
	for _, s := range res.Skipped {
		if strings.Contains(s.What, what) {
			n += s.Count
		}
	}
	return n
}

// TestDamagedCaptures cuts and corrupts a capture and gives wrong keys:
// each time whatever could be read is kept and what was lost is counted.
func TestDamagedCaptures(t *testing.T) {
	file, keyLog, recorded := tls12Capture(t)
	full := readBytes(t, file, keyLog)
	noErrors(t, full)
	if len(full.Exchanges) != len(recorded) {
		t.Fatalf("undamaged: %d exchanges, want %d", len(full.Exchanges), len(recorded))
	}

	t.Run("truncated", func(t *testing.T) {
		cut := file[:pcaptest.InsideRecord(file, len(file)*2/3)]
		res := readBytes(t, cut, keyLog)
		if !strings.Contains(res.Damage, "cut off") {
			t.Errorf("damage %q, want it to say the file is cut off", res.Damage)
		}
		if len(res.Exchanges) == 0 || len(res.Exchanges) > len(recorded) {
			t.Fatalf("kept %d exchanges of %d", len(res.Exchanges), len(recorded))
		}
		complete := 0
		for _, ex := range res.Exchanges {
			if ex.State == exchange.StateComplete {
				complete++
			}
		}
		if complete == 0 || complete == len(recorded) {
			t.Errorf("%d complete exchanges of %d kept from two thirds of the file", complete, len(res.Exchanges))
		}
		t.Logf("damage: %s; kept %d exchanges (%d complete)", res.Damage, len(res.Exchanges), complete)
	})

	t.Run("corrupt record length", func(t *testing.T) {
		bad := append([]byte(nil), file...)
		// Walk to the 30th record and break its length.
		off := 24
		for i := 0; i < 30; i++ {
			off += 16 + int(binary.LittleEndian.Uint32(bad[off+8:]))
		}
		binary.LittleEndian.PutUint32(bad[off+8:], 0xfffffff0)
		res := readBytes(t, bad, keyLog)
		if !strings.Contains(res.Damage, "packet 31") || !strings.Contains(res.Damage, "damaged") {
			t.Errorf("damage %q", res.Damage)
		}
		if res.Packets != 30 || len(res.Exchanges) == 0 {
			t.Errorf("read %d packets, kept %d exchanges", res.Packets, len(res.Exchanges))
		}
	})

	t.Run("no key log", func(t *testing.T) {
		res := readBytes(t, file, nil)
		if len(res.Exchanges) != 0 || skipped(res, "no secrets") != full.Connections {
			t.Errorf("kept %d, skipped %+v", len(res.Exchanges), res.Skipped)
		}
	})

	t.Run("another session's key log", func(t *testing.T) {
		_, other, _ := tls12Capture(t)
		res := readBytes(t, file, other)
		if len(res.Exchanges) != 0 || skipped(res, "no secrets") != full.Connections {
			t.Errorf("kept %d, skipped %+v", len(res.Exchanges), res.Skipped)
		}
	})

	t.Run("wrong secrets", func(t *testing.T) {
		// Keep the client randoms right: only the secrets change, each in
		// its first hex digit (a secret is random: changing a given digit
		// would leave one without it right now and then).
		var fixed []string
		for _, line := range strings.Split(strings.TrimSpace(string(keyLog)), "\n") {
			g := strings.Fields(line)
			first := "0"
			if g[2][0] == '0' {
				first = "1"
			}
			fixed = append(fixed, g[0]+" "+g[1]+" "+first+g[2][1:])
		}
		res := readBytes(t, file, []byte(strings.Join(fixed, "\n")))
		if len(res.Exchanges) != 0 || skipped(res, "do not decrypt") != full.Connections {
			t.Errorf("kept %d, skipped %+v", len(res.Exchanges), res.Skipped)
		}
	})

	t.Run("not a capture", func(t *testing.T) {
		_, err := Read(strings.NewReader("hello"), 5, Options{})
		if err == nil || !strings.Contains(err.Error(), "not a pcap") {
			t.Errorf("err %v", err)
		}
	})
}

// TestConnectTunnel captures a client talking to a forward proxy: a
// CONNECT, then TLS 1.3 inside the tunnel, as Claude Code does with
// HTTPS_PROXY. The client's own key log decrypts it.
func TestConnectTunnel(t *testing.T) {
	u := startUpstream(t, script(), &tls.Config{MinVersion: tls.VersionTLS13}, pcaptest.Options{})
	cap := pcaptest.New(pcaptest.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go tunnel(cap.WrapServer(c))
		}
	}()
	pool := x509.NewCertPool()
	pool.AddCert(u.Cert)
	var keys syncBuffer
	keys.b = &bytes.Buffer{}
	pu, _ := url.Parse("http://" + ln.Addr().String())
	tr := &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: pool, KeyLogWriter: &keys, ServerName: "api.test"}}
	traffic(t, &http.Client{Transport: tr}, strings.Replace(u.URL, "127.0.0.1", "api.test", 1))
	tr.CloseIdleConnections()
	u.stop(t)
	waitCapture(t, cap)
	var buf bytes.Buffer
	cap.WritePcapNG(&buf, keys.b.Bytes())
	res := readBytes(t, buf.Bytes(), nil)
	noErrors(t, res)
	sent := u.Server.Exchanges()
	if len(res.Exchanges) != len(sent) || len(sent) != 6 {
		t.Fatalf("imported %d exchanges, the server answered %d", len(res.Exchanges), len(sent))
	}
	sameAsServer(t, sent, res.Exchanges)
	if res.Exchanges[0].Host != "api.test" || !strings.HasPrefix(res.Exchanges[0].URL, "https://api.test:") {
		t.Errorf("host %q url %q", res.Exchanges[0].Host, res.Exchanges[0].URL)
	}
}

// dialer resolves the test's made-up host name to the loopback address.
func tunnel(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != "CONNECT" {
		return
	}
	_, port, _ := net.SplitHostPort(req.Host)
	up, err := net.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		return
	}
	defer up.Close()
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	done := make(chan struct{})
	go func() { io.Copy(up, br); up.(*net.TCPConn).CloseWrite(); close(done) }()
	io.Copy(c, up)
	<-done
}

// sameAsServer checks imported exchanges against what the stand-in
// received and sent, in order of arrival per request body.
func sameAsServer(t *testing.T, sent []fixtures.Logged, got []exchange.Exchange) {
	t.Helper()
	byBody := map[string]exchange.Exchange{}
	for _, ex := range got {
		byBody[ex.Method+string(ex.ReqBody)] = ex
	}
	for i, l := range sent {
		ex, ok := byBody[l.Method+string(l.Body)]
		if !ok {
			t.Errorf("request %d (%s %s) not imported", i, l.Method, l.Path)
			continue
		}
		if !bytes.Equal(ex.RespBody, l.RespWire) || ex.Status != l.Status || ex.State != exchange.StateComplete {
			t.Errorf("request %d (%s): status %d state %s, %d body bytes; server sent %d, %d bytes", i, l.Path, ex.Status, ex.State, len(ex.RespBody), l.Status, len(l.RespWire))
		}
		if !bytes.Equal(ex.Body(), l.RespBody) {
			t.Errorf("request %d (%s): decoded body differs", i, l.Path)
		}
		if !strings.HasSuffix(ex.URL, l.Path) {
			t.Errorf("request %d: URL %q, path %q", i, ex.URL, l.Path)
		}
	}
}

// TestTLS13AES256WithCurl has curl, restricted to TLS_AES_256_GCM_SHA384,
// talk to the TLS 1.3 server: Go never picks that suite between two Go
// peers, and it is the one that runs the key schedule on SHA-384.
func TestTLS13AES256WithCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not installed")
	}
	u := startUpstream(t, script(), &tls.Config{MinVersion: tls.VersionTLS13}, pcaptest.Options{})
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: u.Cert.Raw}), 0o600)
	body := `{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":true,"messages":[{"role":"user","content":"from curl"}]}`
	out, err := exec.Command(curl, "-sS", "--http1.1", "--tlsv1.3", "--tls13-ciphers", "TLS_AES_256_GCM_SHA384",
		"--cacert", ca, "-H", "content-type: application/json", "-H", "x-api-key: sk-ant-test",
		"--data-binary", body, u.URL+"/v1/messages").CombinedOutput()
	if err != nil {
		t.Skipf("curl cannot do TLS 1.3 with that suite here: %v %s", err, out)
	}
	u.stop(t)
	res := readBytes(t, func() []byte { var b bytes.Buffer; u.Cap.WritePcapNG(&b, u.KeyLog.Bytes()); return b.Bytes() }(), nil)
	noErrors(t, res)
	if res.Suites["TLS_AES_256_GCM_SHA384"] != 1 {
		t.Errorf("suites %v", res.Suites)
	}
	sameAsServer(t, u.Server.Exchanges(), res.Exchanges)
	if len(res.Exchanges) != 1 || !bytes.Contains(res.Exchanges[0].RespBody, []byte("message_stop")) {
		t.Errorf("%d exchanges", len(res.Exchanges))
	}
}

// TestRandomDamage flips bytes and cuts the file at random places: reading
// never panics nor fails, and never finds more exchanges than there were.
func TestRandomDamage(t *testing.T) {
	file, keyLog, recorded := tls12Capture(t)
	keys, _ := tlsrec.ParseKeyLogBytes(keyLog)
	rng := mathrand.New(mathrand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		bad := append([]byte(nil), file...)
		for j := 0; j < 1+rng.IntN(8); j++ {
			bad[24+rng.IntN(len(bad)-24)] ^= byte(1 + rng.IntN(255))
		}
		if i%3 == 0 {
			bad = bad[:24+rng.IntN(len(bad)-24)]
		}
		res, err := Read(bytes.NewReader(bad), int64(len(bad)), Options{KeyLog: keys})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if len(res.Exchanges) > len(recorded) {
			t.Fatalf("case %d: %d exchanges from a damaged file of %d", i, len(res.Exchanges), len(recorded))
		}
	}
}

// relink rewrites a pcap of Ethernet frames to another link type: the
// Ethernet header of every packet is replaced by head(ethertype).
func relink(t *testing.T, file []byte, linkType uint32, head func(etherType []byte) []byte) []byte {
	t.Helper()
	out := append([]byte(nil), file[:24]...)
	binary.LittleEndian.PutUint32(out[20:], linkType)
	for off := 24; off < len(file); {
		n := int(binary.LittleEndian.Uint32(file[off+8:]))
		frame := file[off+16 : off+16+n]
		rec := append([]byte(nil), file[off:off+16]...)
		pkt := append(head(frame[12:14]), frame[14:]...)
		binary.LittleEndian.PutUint32(rec[8:], uint32(len(pkt)))
		binary.LittleEndian.PutUint32(rec[12:], uint32(len(pkt)))
		out = append(append(out, rec...), pkt...)
		off += 16 + n
	}
	return out
}

// TestLinkTypes reads the same traffic captured on other kinds of
// interface: Linux "any" (cooked v1 and v2), BSD loopback and raw IP.
func TestLinkTypes(t *testing.T) {
	file, keyLog, recorded := tls12Capture(t)
	for _, c := range []struct {
		name string
		lt   uint32
		head func([]byte) []byte
	}{
		{"linux-sll", 113, func(et []byte) []byte { return append(make([]byte, 14), et...) }},
		{"linux-sll2", 276, func(et []byte) []byte { return append(append([]byte{}, et...), make([]byte, 18)...) }},
		{"bsd-loopback", 0, func([]byte) []byte { return []byte{2, 0, 0, 0} }},
		{"raw-ip", 101, func([]byte) []byte { return nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := readBytes(t, relink(t, file, c.lt, c.head), keyLog)
			noErrors(t, res)
			if len(res.Exchanges) != len(recorded) {
				t.Errorf("%d exchanges, want %d", len(res.Exchanges), len(recorded))
			}
		})
	}
}

// TestCutInHeader: a pcapng cut inside its first block reads nothing and
// says why.
func TestCutInHeader(t *testing.T) {
	var buf bytes.Buffer
	pcaptest.New(pcaptest.Options{}).WritePcapNG(&buf, nil)
	b := buf.Bytes()[:20]
	_, err := Read(bytes.NewReader(b), int64(len(b)), Options{})
	if err == nil || !strings.Contains(err.Error(), "cut off") {
		t.Errorf("err %v", err)
	}
}
