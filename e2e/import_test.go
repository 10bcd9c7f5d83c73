package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/importer/pcap/pcaptest"
)

// tlsTraffic is a session with the stand-in over real TLS, captured as
// packets on the server's side.
type tlsTraffic struct {
	cap    *pcaptest.Capture
	keyLog []byte
	sent   []fixtures.Logged
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// tlsStandIn is the scripted API served over TLS on 127.0.0.1 (certified
// for that address and api.anthropic.com), every connection captured as
// packets and every session's secrets logged.
type tlsStandIn struct {
	addr   string
	leaf   *x509.Certificate
	cap    *pcaptest.Capture
	keys   *lockedBuffer
	server *fixtures.Server
	srv    *http.Server
}

func startTLSStandIn(t *testing.T, sc fixtures.Script, opts fixtures.Options, cfg *tls.Config) *tlsStandIn {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "api.anthropic.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"api.anthropic.com"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	s := &tlsStandIn{keys: &lockedBuffer{}, cap: pcaptest.New(pcaptest.Options{}), server: fixtures.NewServer(sc, opts)}
	s.leaf, _ = x509.ParseCertificate(der)
	cfg = cfg.Clone()
	cfg.Certificates = []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}
	cfg.NextProtos = []string{"http/1.1"}
	cfg.KeyLogWriter = s.keys
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.srv = &http.Server{Handler: s.server}
	go s.srv.Serve(tls.NewListener(s.cap.Listener(ln), cfg))
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// stop closes the server and its connections, so that the capture holds
// their ends.
func (s *tlsStandIn) stop() {
	s.srv.Close()
	time.Sleep(30 * time.Millisecond)
}

// captureTLS serves the toolsearch scenario over TLS with cfg and sends
// it a streamed turn, a compressed JSON turn, count_tokens, a GET and
// extra (a request body of that many bytes, 0 for none), with the test
// API key.
func captureTLS(t *testing.T, cfg *tls.Config, extra int) tlsTraffic {
	t.Helper()
	sc, _ := fixtures.Scenario("toolsearch")
	s := startTLSStandIn(t, sc, fixtures.Options{Gzip: true}, cfg)
	pool := x509.NewCertPool()
	pool.AddCert(s.leaf)
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "api.anthropic.com"},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, s.addr)
		},
	}
	client := &http.Client{Transport: tr}
	do := func(method, path, body string) {
		req, _ := http.NewRequest(method, "https://api.anthropic.com"+path, strings.NewReader(body))
		if body == "" {
			req.Body = nil
		}
		req.Header.Set("X-Api-Key", session.APIKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	turn := func(stream bool, text string) string {
		return fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":%v,"tools":[{"name":"ToolSearch","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":%q}]}`, stream, text)
	}
	do("POST", "/v1/messages?beta=true", turn(true, "use the demo tools"))
	do("POST", "/v1/messages", turn(false, "compressed, please"))
	do("POST", "/v1/messages/count_tokens", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`)
	do("GET", "/api/hello", "")
	if extra > 0 {
		do("POST", "/v1/messages/count_tokens", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"`+strings.Repeat("a", extra)+`"}]}`)
	}
	tr.CloseIdleConnections()
	s.stop()
	return tlsTraffic{cap: s.cap, keyLog: s.keys.b.Bytes(), sent: s.server.Exchanges()}
}

func (tt tlsTraffic) write(t *testing.T, dir string, ng, embed bool) (file, keyLog string) {
	t.Helper()
	var buf bytes.Buffer
	file = filepath.Join(dir, "traffic.pcap")
	if ng {
		file += "ng"
		var secrets []byte
		if embed {
			secrets = tt.keyLog
		}
		tt.cap.WritePcapNG(&buf, secrets)
	} else {
		tt.cap.WritePcap(&buf)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	keyLog = filepath.Join(dir, "keys.txt")
	os.WriteFile(keyLog, tt.keyLog, 0o600)
	return file, keyLog
}

// checkAgainstServer compares a capture with what the stand-in received
// and sent, byte for byte.
func checkAgainstServer(t *testing.T, got []exchange.Exchange, sent []fixtures.Logged) {
	t.Helper()
	if len(got) != len(sent) {
		t.Fatalf("capture holds %d exchanges, the server handled %d", len(got), len(sent))
	}
	for i, l := range sent {
		ex := got[i]
		if ex.Method != l.Method || urlPath(ex.URL) != l.Path || !bytes.Equal(ex.ReqBody, l.Body) {
			t.Errorf("exchange %d: %s %s, server saw %s %s", i+1, ex.Method, ex.URL, l.Method, l.Path)
		}
		if ex.Status != l.Status || !bytes.Equal(ex.RespBody, l.RespWire) || !bytes.Equal(ex.Body(), l.RespBody) || ex.State != exchange.StateComplete {
			t.Errorf("exchange %d: status %d state %s, %d body bytes; server sent %d, %d bytes", i+1, ex.Status, ex.State, len(ex.RespBody), l.Status, len(l.RespWire))
		}
		if ex.Source != "import:pcap" || ex.Host != "api.anthropic.com" {
			t.Errorf("exchange %d: source %q host %q", i+1, ex.Source, ex.Host)
		}
		if !strings.HasPrefix(ex.ReqHeader("X-Api-Key"), exchange.FingerprintPrefix) {
			t.Errorf("exchange %d: x-api-key %q", i+1, ex.ReqHeader("X-Api-Key"))
		}
	}
}

// assertOneLine checks that stderr is one line, "tsinspect: ...want...".
func assertOneLine(t *testing.T, stderr, want string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "tsinspect: ") || !strings.Contains(stderr, want) {
		t.Errorf("stderr %q: want one line 'tsinspect: ...%s...'", stderr, want)
	}
}

// assertRefused checks a run given bad input: the exit code, a one-line
// error naming want, no panic and, when it fails, nothing on standard
// output (which may be a file the user redirected it to).
func assertRefused(t *testing.T, code int, stdout, stderr string, wantCode int, want string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("exit %d, want %d (stderr %q)", code, wantCode, stderr)
	}
	if wantCode != 0 && stdout != "" {
		t.Errorf("standard output is not empty: %.200q", stdout)
	}
	assertOneLine(t, stderr, want)
	if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine") {
		t.Errorf("panic: %s", stderr)
	}
}

// TestImportPacketCaptures imports a TLS 1.2 pcap with a key log file and
// a TLS 1.3 pcapng with its secrets embedded: each gives the exchanges the
// server handled, byte for byte, with the API key only as a fingerprint,
// and the capture lists and decodes like a recorded one.
func TestImportPacketCaptures(t *testing.T) {
	for _, c := range []struct {
		name      string
		cfg       *tls.Config
		ng, embed bool
	}{
		{"tls12-pcap-keylog", &tls.Config{MaxVersion: tls.VersionTLS12}, false, false},
		{"tls13-pcapng-embedded", &tls.Config{MinVersion: tls.VersionTLS13}, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tt := captureTLS(t, c.cfg, 0)
			dir := t.TempDir()
			file, keyLog := tt.write(t, dir, c.ng, c.embed)
			db := filepath.Join(dir, "out.db")
			args := []string{"import", file, "--db", db}
			if !c.embed {
				args = append(args, "--keylog", keyLog)
			}
			code, _, stderr := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			assertOneLine(t, stderr, fmt.Sprintf("imported %d exchanges from %s (%s, 1 TLS connection decrypted) into %s", len(tt.sent), filepath.Base(file), strings.TrimPrefix(filepath.Ext(file), "."), db))
			checkAgainstServer(t, session.ReadCapture(t, db), tt.sent)
			assertNotOnDisk(t, db, session.APIKey)
			if code, out, stderr := runCLI(t, "exchanges", db); code != 0 || strings.Count(out, "complete") != len(tt.sent) {
				t.Errorf("exchanges: exit %d\n%s%s", code, out, stderr)
			}
			if code, out, stderr := runCLI(t, "turns", db); code != 0 || !strings.Contains(out, "tool_use") {
				t.Errorf("turns: exit %d\n%s%s", code, out, stderr)
			}
		})
	}
	t.Run("progress bar", func(t *testing.T) {
		tt := captureTLS(t, &tls.Config{MinVersion: tls.VersionTLS13}, 5<<20)
		dir := t.TempDir()
		file, _ := tt.write(t, dir, true, true)
		code, _, stderr := runCLI(t, "import", file, "--db", filepath.Join(dir, "out.db"))
		if code != 0 || !strings.Contains(stderr, "\rimporting traffic.pcapng [") || !strings.Contains(stderr, "100%") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		if !strings.Contains(stderr, "imported 5 exchanges") {
			t.Errorf("stderr %q", stderr)
		}
	})
}

// TestImportDamage: damaged input, missing or wrong keys, and files of the
// wrong kind each give a one-line error; whatever could be read is kept and
// counted.
func TestImportDamage(t *testing.T) {
	tt := captureTLS(t, &tls.Config{MaxVersion: tls.VersionTLS12}, 0)
	dir := t.TempDir()
	file, keyLog := tt.write(t, dir, false, false)
	full, _ := os.ReadFile(file)

	cut := filepath.Join(dir, "cut.pcap")
	os.WriteFile(cut, full[:pcaptest.InsideRecord(full, len(full)*3/4)], 0o600)
	other := captureTLS(t, &tls.Config{MaxVersion: tls.VersionTLS12}, 0)
	otherKeys := filepath.Join(dir, "other-keys.txt")
	os.WriteFile(otherKeys, other.keyLog, 0o600)
	wrongKeys := filepath.Join(dir, "wrong-keys.txt")
	var wrong []string
	for _, line := range strings.Split(strings.TrimSpace(string(tt.keyLog)), "\n") {
		f := strings.Fields(line)
		wrong = append(wrong, f[0]+" "+f[1]+" "+strings.Repeat("5a", 48))
	}
	os.WriteFile(wrongKeys, []byte(strings.Join(wrong, "\n")), 0o600)
	notJSON := filepath.Join(dir, "session.har")
	os.WriteFile(notJSON, []byte("<html>not a HAR</html>"), 0o600)
	cutHAR := filepath.Join(dir, "cut.har")
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("hello"), 0o600)
	otherJSON := filepath.Join(dir, "other.json")
	os.WriteFile(otherJSON, []byte(`{"items":[1,2,3]}`), 0o600)
	trace, err := os.ReadFile(filepath.Join("..", "importer", "claudetrace", "testdata", "claude-trace-1.0.9.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cutTrace := filepath.Join(dir, "cut.jsonl")
	os.WriteFile(cutTrace, append(append([]byte{}, trace...), trace[:len(trace)/2]...), 0o600)
	emptyDir := filepath.Join(dir, "emptydir")
	os.Mkdir(emptyDir, 0o700)

	// A HAR cut off after its first entry.
	harDB := filepath.Join(dir, "forhar.db")
	if code, _, stderr := runCLI(t, "import", file, "--keylog", keyLog, "--db", harDB); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	if code, _, stderr := runCLI(t, "export", harDB, "--format", "har", "--out", cutHAR); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	h, _ := os.ReadFile(cutHAR)
	second := bytes.Index(h, []byte(`"startedDateTime"`))
	second += bytes.Index(h[second+1:], []byte(`"startedDateTime"`)) + 1
	os.WriteFile(cutHAR, h[:second+30], 0o600)

	cases := []struct {
		name string
		args []string
		code int
		want []string
		kept int
	}{
		{"truncated pcap", []string{"import", cut, "--keylog", keyLog}, 4, []string{"cut off", "kept"}, -1},
		{"no key log", []string{"import", file}, 1, []string{"1 TLS connection with no secrets in the key log", "kept 0 exchanges"}, 0},
		{"another session's key log", []string{"import", file, "--keylog", otherKeys}, 1, []string{"no secrets in the key log"}, 0},
		{"wrong secrets", []string{"import", file, "--keylog", wrongKeys}, 1, []string{"do not decrypt (wrong key log?)"}, 0},
		{"key log that is no key log", []string{"import", file, "--keylog", notes}, 1, []string{"no usable secrets"}, 0},
		{"HAR that is not JSON", []string{"import", notJSON}, 1, []string{"not a HAR file: invalid character '<'"}, 0},
		{"HAR cut off", []string{"import", cutHAR}, 4, []string{"the JSON breaks after entry 1", "kept 1 exchange"}, 1},
		{"not a capture at all", []string{"import", notes}, 1, []string{"unknown format: it is text starting \"hello\""}, 0},
		{"JSON of no known tool", []string{"import", otherJSON}, 1, []string{"unknown format: it is JSON, but neither a HAR"}, 0},
		{"claude-trace log cut off", []string{"import", cutTrace}, 4, []string{"the last line (2) is cut off", "kept 1 exchange"}, 1},
		{"directory that holds no bodies", []string{"import", emptyDir}, 1, []string{"not a Claude Code raw-bodies directory"}, 0},
		{"missing file", []string{"import", filepath.Join(dir, "none.pcap")}, 1, []string{"no such file"}, 0},
		{"no --db", []string{"import", file}, 2, []string{"--db FILE is required"}, 0},
		{"two files", []string{"import", file, cut}, 2, []string{"want one FILE"}, 0},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := filepath.Join(dir, fmt.Sprintf("c%d.db", i))
			args := c.args
			if c.code != 2 {
				args = append(args, "--db", db)
			}
			code, _, stderr := runCLI(t, args...)
			if code != c.code {
				t.Errorf("exit %d, want %d: %s", code, c.code, stderr)
			}
			for _, w := range c.want {
				assertOneLine(t, stderr, w)
			}
			if strings.Contains(stderr, "panic") {
				t.Fatal(stderr)
			}
			if c.kept < 0 {
				rows := session.ReadCapture(t, db)
				if len(rows) == 0 || len(rows) > len(tt.sent) {
					t.Errorf("kept %d exchanges", len(rows))
				}
				if !strings.Contains(stderr, fmt.Sprintf("kept %d exchange", len(rows))) {
					t.Errorf("stderr %q does not count the %d kept", stderr, len(rows))
				}
			} else if c.kept > 0 {
				if rows := session.ReadCapture(t, db); len(rows) != c.kept {
					t.Errorf("kept %d exchanges, want %d", len(rows), c.kept)
				}
			}
		})
	}
}

// TestHARRoundTrip exports a capture as HAR and imports it again: with
// --redact off --exact every exchange comes back as it was; with --redact
// off alone every body is in the file once, and a response compressed on
// the wire comes back decoded (as HAR keeps it), all else as it was; by
// default (redacted) the same turns and searches come back. No credential
// is in any HAR.
func TestHARRoundTrip(t *testing.T) {
	tt := captureTLS(t, &tls.Config{MinVersion: tls.VersionTLS13}, 0)
	dir := t.TempDir()
	file, _ := tt.write(t, dir, true, true)
	src := filepath.Join(dir, "src.db")
	if code, _, stderr := runCLI(t, "import", file, "--db", src); code != 0 {
		t.Fatal(stderr)
	}
	har := filepath.Join(dir, "s.har")
	code, _, stderr := runCLI(t, "export", src, "--format", "har", "--redact", "off", "--exact", "--out", har)
	if code != 0 {
		t.Fatal(stderr)
	}
	warning, exported, _ := strings.Cut(stderr, "\n")
	if !strings.Contains(warning, "warning: --redact off: the HAR holds every body as recorded") {
		t.Errorf("no warning for the raw export: %q", stderr)
	}
	assertOneLine(t, exported, fmt.Sprintf("exported %d exchanges to %s (bodies as recorded)", len(tt.sent), har))
	b, _ := os.ReadFile(har)
	if bytes.Contains(b, []byte(session.APIKey)) {
		t.Fatal("the API key is in the HAR")
	}
	var doc struct {
		Log struct {
			Version string
			Entries []json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Log.Version != "1.2" || len(doc.Log.Entries) != len(tt.sent) {
		t.Fatalf("HAR: %v, version %q, %d entries", err, doc.Log.Version, len(doc.Log.Entries))
	}
	_, stdout, _ := runCLI(t, "export", src, "--format", "har", "--redact", "off", "--exact")
	if stdout != string(b) {
		t.Error("export to standard output differs from --out")
	}
	back := filepath.Join(dir, "back.db")
	if code, _, stderr := runCLI(t, "import", har, "--db", back); code != 0 {
		t.Fatal(stderr)
	}
	want, got := session.ReadCapture(t, src), session.ReadCapture(t, back)
	if len(got) != len(want) {
		t.Fatalf("%d exchanges back, %d exported", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if g.Source != "import:har" {
			t.Errorf("source %q", g.Source)
		}
		w.ID, g.ID, w.Source, g.Source = 0, 0, "", ""
		w.ReqRef, g.ReqRef = exchange.BodyRef{}, exchange.BodyRef{} // how each file stored the body
		if !reflect.DeepEqual(w, g) {
			t.Errorf("exchange %d changed:\n got %+v\nwant %+v", i+1, g, w)
		}
	}
	// Without --exact: smaller, and the same but for compressed bodies.
	compact := filepath.Join(dir, "compact.har")
	if code, _, stderr := runCLI(t, "export", src, "--format", "har", "--redact", "off", "--out", compact); code != 0 {
		t.Fatal(stderr)
	}
	if cb, _ := os.ReadFile(compact); len(cb) >= len(b) || bytes.Contains(cb, []byte(`"requestBody"`)) {
		t.Errorf("default HAR %d bytes, --exact %d: body copies not left out", len(cb), len(b))
	}
	back2 := filepath.Join(dir, "back2.db")
	if code, _, stderr := runCLI(t, "import", compact, "--db", back2); code != 0 {
		t.Fatal(stderr)
	}
	for i, g := range session.ReadCapture(t, back2) {
		w := want[i]
		if !bytes.Equal(g.ReqBody, w.ReqBody) || !bytes.Equal(g.Body(), w.Body()) || g.Status != w.Status || !g.Start.Equal(w.Start) || g.State != w.State {
			t.Errorf("exchange %d from the default HAR: body or metadata changed", i+1)
		}
	}
	// Redacted (the default): the same turns and searches come back.
	redacted := filepath.Join(dir, "redacted.har")
	if code, _, stderr := runCLI(t, "export", src, "--format", "har", "--out", redacted); code != 0 {
		t.Fatal(stderr)
	}
	back3 := filepath.Join(dir, "back3.db")
	if code, _, stderr := runCLI(t, "import", redacted, "--db", back3); code != 0 {
		t.Fatal(stderr)
	}
	for _, cmd := range []string{"searches", "exchanges"} {
		_, w, _ := runCLI(t, cmd, src)
		_, g, _ := runCLI(t, cmd, back3)
		if cmd == "exchanges" {
			// The redacted bodies are shorter: compare all but the sizes.
			w, g = strings.Join(strings.Fields(w)[:8], " "), strings.Join(strings.Fields(g)[:8], " ")
		}
		if w != g {
			t.Errorf("%s of the redacted HAR's import:\n%s\nwant\n%s", cmd, g, w)
		}
	}
	if code, _, stderr := runCLI(t, "export", src, "--format", "csv"); code != 2 || !strings.Contains(stderr, `--format "csv"`) {
		t.Errorf("bad format: exit %d %s", code, stderr)
	}
}

// TestImportMitmproxyHAR has mitmproxy (Debian package mitmproxy) proxy
// requests to the stand-in and dump them as HAR, then imports that HAR:
// each exchange has the body the server sent, the API key only as a
// fingerprint.
func TestImportMitmproxyHAR(t *testing.T) {
	mitmdump, hardump := findMitmdump(t)
	sc, _ := fixtures.Scenario("toolsearch")
	stand, up := session.StandIn(t, sc, fixtures.Options{Gzip: true})
	dir := t.TempDir()
	harFile := filepath.Join(dir, "mitm.har")
	flowFile := filepath.Join(dir, "mitm.flow")
	port := freeLoopbackPort(t)
	args := []string{"-q", "--mode", "reverse:" + up, "--listen-host", "127.0.0.1", "--listen-port", strconv.Itoa(port),
		"--set", "hardump=" + harFile, "--set", "confdir=" + filepath.Join(dir, "conf"), "-w", flowFile}
	if hardump != "" {
		args = append(args, "-s", hardump)
	}
	cmd := exec.Command(mitmdump, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(patience)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mitmdump did not start:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, r := range []struct{ path, body string }{
		{"/v1/messages?beta=true", `{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":true,"tools":[{"name":"ToolSearch","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"use the demo tools"}]}`},
		{"/v1/messages/count_tokens", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`},
	} {
		req, _ := http.NewRequest("POST", base+r.path, strings.NewReader(r.body))
		req.Header.Set("X-Api-Key", session.APIKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req) // asks for gzip, so count_tokens comes compressed
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatalf("mitmdump did not stop:\n%s", out.String())
	}
	if _, err := os.Stat(harFile); err != nil {
		t.Fatalf("mitmdump wrote no HAR: %v\n%s", err, out.String())
	}
	db := filepath.Join(dir, "mitm.db")
	code, _, stderr := runCLI(t, "import", harFile, "--db", db)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	assertOneLine(t, stderr, "imported 2 exchanges from mitm.har (har)")
	got := session.ReadCapture(t, db)
	sent := stand.Exchanges()
	if len(got) != 2 || len(sent) != 2 {
		t.Fatalf("%d exchanges imported, server handled %d", len(got), len(sent))
	}
	for i, l := range sent {
		ex := got[i]
		if !bytes.Equal(ex.ReqBody, l.Body) || !bytes.Equal(ex.Body(), l.RespBody) || ex.Status != l.Status || ex.Source != "import:har" {
			t.Errorf("exchange %d: %s %s status %d, body %d bytes; server: %s, %d bytes", i+1, ex.Method, ex.URL, ex.Status, len(ex.Body()), l.Path, len(l.RespBody))
		}
	}
	if got[1].RespHeader("Content-Encoding") != "gzip" {
		t.Errorf("count_tokens came back without its gzip header: %v", got[1].RespHeaders)
	}
	assertNotOnDisk(t, db, session.APIKey)
	if code, out, _ := runCLI(t, "turns", db); code != 0 || !strings.Contains(out, "tool_use") {
		t.Errorf("turns: exit %d\n%s", code, out)
	}

	// The same traffic from the flow dump mitmdump wrote beside the HAR:
	// bytes as on the wire, the gzip body still encoded.
	flowDB := filepath.Join(dir, "flow.db")
	code, _, stderr = runCLI(t, "import", flowFile, "--db", flowDB)
	if code != 0 {
		t.Fatalf("import flow dump: exit %d: %s", code, stderr)
	}
	assertOneLine(t, stderr, "imported 2 exchanges from mitm.flow (mitmproxy)")
	assertOneLine(t, stderr, "mitmproxy lacks: no SSE timing")
	flows := session.ReadCapture(t, flowDB)
	if len(flows) != 2 {
		t.Fatalf("%d exchanges from the flow dump", len(flows))
	}
	for i, l := range sent {
		ex := flows[i]
		if !bytes.Equal(ex.ReqBody, l.Body) || !bytes.Equal(ex.Body(), l.RespBody) || ex.Status != l.Status || ex.Source != "import:mitmproxy" {
			t.Errorf("flow %d: %s %s status %d, body %d bytes; server: %s, %d bytes", i+1, ex.Method, ex.URL, ex.Status, len(ex.Body()), l.Path, len(l.RespBody))
		}
	}
	if flows[1].RespHeader("Content-Encoding") != "gzip" || bytes.Equal(flows[1].RespBody, flows[1].Body()) {
		t.Errorf("count_tokens body not kept encoded: %v", flows[1].RespHeaders)
	}
	assertNotOnDisk(t, flowDB, session.APIKey)
}

// findMitmdump returns mitmdump and, for releases before 10.1 (which lack
// the built-in hardump option), the har_dump script their package ships.
func findMitmdump(t *testing.T) (string, string) {
	t.Helper()
	kit.Skips.Short(t, "mitmproxy")
	skip := func(why string) {
		if os.Getenv("TSINSPECT_REQUIRE_MITMPROXY") != "" {
			t.Fatal(why + " (TSINSPECT_REQUIRE_MITMPROXY is set)")
		}
		skipFor(t, "mitmproxy", installMitmproxy, why+": install Debian's mitmproxy package (apt-get install mitmproxy) to run this test; TSINSPECT_REQUIRE_MITMPROXY=1 makes it a failure")
	}
	bin, err := exec.LookPath("mitmdump")
	if err != nil {
		skip("mitmdump not on PATH")
	}
	out, _ := exec.Command(bin, "--version").CombinedOutput()
	m := regexp.MustCompile(`Mitmproxy:\s*(\d+)\.(\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		skip("cannot tell mitmdump's version: " + strings.TrimSpace(string(out)))
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major > 10 || (major == 10 && minor >= 1) {
		return bin, ""
	}
	// Older releases: the har_dump example addon, from the package's files.
	list, _ := exec.Command("dpkg", "-L", "mitmproxy").Output()
	for _, line := range strings.Split(string(list), "\n") {
		if strings.HasSuffix(line, "/har_dump.py") {
			return bin, line
		}
	}
	skip(fmt.Sprintf("mitmproxy %s.%s has no hardump option and its har_dump.py example is not installed", m[1], m[2]))
	return "", ""
}

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestReplayServerWithClaudeCode records real Claude Code against the
// stand-in, then points a new Claude Code run at `tsinspect replay-server`
// for that capture: it sends the same sequence of requests, each answered
// by the recorded response at its place, and finishes.
func TestReplayServerWithClaudeCode(t *testing.T) {
	kit.RequireClaude(t)
	sc, _ := fixtures.Scenario("toolsearch")
	_, up := session.StandIn(t, sc, fixtures.Options{})
	const prompt = "use the demo tools"
	rec := kit.Record(t, up, session.Options{Mode: "reverse", Prompt: prompt})
	if rec.Err != nil {
		t.Fatalf("record: %v\n%s", rec.Err, rec.Output)
	}
	recorded := session.ReadCapture(t, rec.DB)
	var want []int64
	for _, ex := range recorded {
		if ex.Method == "POST" && urlPath(ex.URL) == "/v1/messages?beta=true" {
			want = append(want, ex.ID)
		}
	}
	if len(want) < 3 {
		t.Fatalf("recorded %d Messages requests, want at least 3", len(want))
	}

	// The replay server, as a user runs it.
	srv := exec.Command(kit.Tsinspect, "replay-server", rec.DB, "--listen", "127.0.0.1:0")
	stdout, _ := srv.StdoutPipe()
	var replayLog lockedBuffer
	srv.Stderr = &replayLog
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	addr := ""
	sc2 := bufio.NewScanner(stdout)
	for sc2.Scan() {
		if m := regexp.MustCompile(`at http://(127\.0\.0\.1:\d+)`).FindStringSubmatch(sc2.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		t.Fatalf("replay-server printed no address; stderr: %s", replayLog.b.String())
	}
	go io.Copy(io.Discard, stdout)

	// Claude Code again, same prompt and tools, a fresh HOME.
	claude := claudeCommand(t, t.TempDir(), prompt, "ANTHROPIC_BASE_URL=http://"+addr, "ENABLE_TOOL_SEARCH=true")
	var out bytes.Buffer
	claude.Stdout, claude.Stderr = &out, &out
	timer := time.AfterFunc(3*time.Minute, func() { claude.Process.Kill() })
	err := claude.Run()
	timer.Stop()
	srv.Process.Signal(syscall.SIGINT)
	srv.Wait()
	log := replayLog.b.String()
	if err != nil {
		t.Fatalf("claude against the replay: %v\n%s\nreplay log:\n%s", err, out.String(), log)
	}
	if !strings.Contains(out.String(), "The echo tool answered: hello") {
		t.Errorf("claude's answer: %s", out.String())
	}
	// Every Messages request was answered by the recorded one at its
	// place, in recorded order; nothing went unanswered.
	var got []int64
	re := regexp.MustCompile(`(?m)^replay: \d+ (\S+) (\S+) -> (?:recorded #(\d+)|no recorded response)`)
	for _, m := range re.FindAllStringSubmatch(log, -1) {
		if m[3] == "" {
			t.Errorf("unanswered: %s %s", m[1], m[2])
			continue
		}
		if m[1] == "POST" && m[2] == "/v1/messages?beta=true" {
			id, _ := strconv.ParseInt(m[3], 10, 64)
			got = append(got, id)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("replayed Messages requests matched %v, recorded order %v\nreplay log:\n%s", got, want, log)
	}
	if !strings.Contains(log, fmt.Sprintf("replay served %d requests, 0 without a recorded response", len(re.FindAllString(log, -1)))) {
		t.Errorf("replay summary missing or wrong:\n%s", log)
	}
	t.Logf("replay log:\n%s", log)
}

// claudeCommand is `claude -p prompt` with the demo MCP server and its
// tools allowed, run in dir with a fresh HOME and the test API key, as
// session.Kit runs it; extraEnv is added to its environment.
func claudeCommand(t *testing.T, dir, prompt string, extraEnv ...string) *exec.Cmd {
	t.Helper()
	mcp := filepath.Join(dir, "mcp.json")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"command": kit.MCPDemo, "args": []string{"-actions=40"}}}})
	if err := os.WriteFile(mcp, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	allowed := []string{"ToolSearch", "mcp__demo__echo"}
	for i := 0; i < 40; i++ {
		allowed = append(allowed, fmt.Sprintf("mcp__demo__action_%d", i))
	}
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o700)
	cmd := exec.Command(kit.Claude, "-p", prompt, "--mcp-config", mcp, "--strict-mcp-config",
		"--allowedTools", strings.Join(allowed, ","), "--model", "claude-sonnet-4-5")
	cmd.Dir = dir
	cmd.Env = session.ClaudeEnv(home)
	cmd.Env = append(cmd.Env, extraEnv...)
	return cmd
}

// TestImportClaudeCodeCapture records real Claude Code through
// `tsinspect record --mode reverse` to the stand-in served over TLS 1.3,
// while the stand-in's side of every connection is captured as packets.
// Importing the packets (secrets embedded in the pcapng) gives the
// recorder's exchanges, byte for byte.
func TestImportClaudeCodeCapture(t *testing.T) {
	kit.RequireClaude(t)
	sc, _ := fixtures.Scenario("toolsearch")
	s := startTLSStandIn(t, sc, fixtures.Options{Gzip: true}, &tls.Config{MinVersion: tls.VersionTLS13})
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.leaf.Raw}), 0o600)
	recDB := filepath.Join(dir, "recorded.db")
	claude := claudeCommand(t, dir, "use the demo tools")
	rec := exec.Command(kit.Tsinspect, append([]string{"record", "--db", recDB, "--mode", "reverse",
		"--upstream", "https://" + s.addr, "--upstream-ca", ca, "--quiet", "--"}, claude.Args...)...)
	rec.Dir, rec.Env = claude.Dir, claude.Env
	if out, err := rec.CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	s.stop()
	var buf bytes.Buffer
	s.cap.WritePcapNG(&buf, s.keys.b.Bytes())
	file := filepath.Join(dir, "claude.pcapng")
	os.WriteFile(file, buf.Bytes(), 0o600)
	impDB := filepath.Join(dir, "imported.db")
	code, _, stderr := runCLI(t, "import", file, "--db", impDB)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	recorded, imported := session.ReadCapture(t, recDB), session.ReadCapture(t, impDB)
	if len(recorded) < 3 || len(imported) != len(recorded) {
		t.Fatalf("imported %d exchanges, recorded %d", len(imported), len(recorded))
	}
	key := func(ex exchange.Exchange) string { return ex.Method + " " + ex.URL + "\x00" + string(ex.ReqBody) }
	byKey := map[string]exchange.Exchange{}
	for _, ex := range imported {
		byKey[key(ex)] = ex
	}
	for _, r := range recorded {
		g, ok := byKey[key(r)]
		if !ok {
			t.Errorf("recorded %s %s (%d bytes) not imported", r.Method, r.URL, len(r.ReqBody))
			continue
		}
		// The recorder keeps the headers the client sent it; the packets
		// hold what the proxy sent on, without hop-by-hop headers.
		if a, b := endToEnd(g.ReqHeaders), endToEnd(r.ReqHeaders); a != b {
			t.Errorf("%s: request headers differ:\nimported %s\nrecorded %s", r.URL, a, b)
		}
		if fmt.Sprint(g.RespHeaders) != fmt.Sprint(r.RespHeaders) || g.Status != r.Status || g.State != r.State || g.Error != r.Error ||
			!bytes.Equal(g.RespBody, r.RespBody) || !bytes.Equal(g.RespBodyDecoded, r.RespBodyDecoded) || g.Host != r.Host {
			t.Errorf("%s: response differs: imported %d %s %q %d bytes, recorded %d %s %q %d bytes",
				r.URL, g.Status, g.State, g.Error, len(g.RespBody), r.Status, r.State, r.Error, len(r.RespBody))
		}
	}
	assertNotOnDisk(t, impDB, session.APIKey)
	t.Logf("%d exchanges of real Claude Code traffic imported from %d packets as recorded", len(imported), s.cap.Packets())
}

// endToEnd renders headers without the hop-by-hop ones a proxy drops.
func endToEnd(hs []exchange.Header) string {
	var out []string
	for _, h := range hs {
		switch strings.ToLower(h.Name) {
		case "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "proxy-authorization":
			continue
		}
		out = append(out, h.Name+": "+h.Value)
	}
	return strings.Join(out, "\n")
}

// TestImportOtherTools imports the recorded test data of the tools that
// keep parsed exchanges through the CLI: one line says what was imported
// and what the format lacks, and 'exchanges' and the report say it again.
func TestImportOtherTools(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ file, format string }{
		{"claudetrace/testdata/claude-trace-1.0.9.jsonl", "claude-trace"},
		{"claudetap/testdata/claude-tap.jsonl", "claude-tap"},
		{"mitmflow/testdata/mitmproxy-8.1.1.flow", "mitmproxy"},
		{"vcr/testdata/ruby-vcr.yml", "Ruby VCR"},
		{"rawbodies/testdata/claude-code-2.1.328", "raw-bodies"},
	} {
		t.Run(c.format, func(t *testing.T) {
			db := filepath.Join(dir, strings.ReplaceAll(c.format, " ", "-")+".db")
			code, _, stderr := runCLI(t, "import", filepath.Join("..", "importer", c.file), "--db", db)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			assertOneLine(t, stderr, "("+c.format+") into "+db+"; "+c.format+" lacks: ")
			code, out, stderr := runCLI(t, "exchanges", db)
			if code != 0 || !strings.Contains(out, "POST") || !strings.Contains(stderr, " lack: ") {
				t.Errorf("exchanges: exit %d, stderr %q\n%s", code, stderr, out)
			}
			code, out, _ = runCLI(t, "report", "--format", "markdown", db)
			if code != 0 || !strings.Contains(out, "imported from ") || !strings.Contains(out, "which lacks: ") {
				t.Errorf("report: exit %d\n%.800s", code, out)
			}
		})
	}
}
