package e2e

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/internal/testwait"
)

// runCLI runs the built binary and returns its exit status and output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(kit.Tsinspect, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func TestBadInputGivesOneLineError(t *testing.T) {
	dir := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	notCapture := filepath.Join(dir, "notes.txt")
	os.WriteFile(notCapture, []byte("hello"), 0o600)
	ca := filepath.Join(dir, "ca")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown flag", []string{"record", "--db", "x.db", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{"unknown command", []string{"recrod"}, 2, `unknown command "recrod"`},
		{"no db", []string{"record"}, 2, "--db FILE is required"},
		{"bad mode", []string{"record", "--db", "x.db", "--mode", "tap"}, 2, `--mode "tap"`},
		{"remote listen", []string{"record", "--db", "x.db", "--listen", "0.0.0.0:9"}, 2, "not a loopback address"},
		{"unwritable db", []string{"record", "--db", filepath.Join(dir, "missing", "dir", "s.db"), "--ca-dir", ca}, 1, "open " + filepath.Join(dir, "missing", "dir", "s.db") + ": "},
		{"port in use", []string{"record", "--db", filepath.Join(dir, "p.db"), "--ca-dir", ca, "--listen", busy.Addr().String()}, 1, "address already in use"},
		{"stand-in port in use", []string{"standin", "--listen", busy.Addr().String(), "--mcp-config", filepath.Join(dir, "m.json")}, 1, "is taken (by another stand-in still running?): serve on another port with --listen 127.0.0.1:PORT, and give record --upstream http://127.0.0.1:PORT"},
		{"command not found", []string{"record", "--db", filepath.Join(dir, "c.db"), "--ca-dir", ca, "--", "no-such-command-xyz"}, 1, `command "no-such-command-xyz" not found`},
		{"command without --", []string{"record", "--db", filepath.Join(dir, "c.db"), "claude"}, 2, "put the command after '--'"},
		{"proxy flag in bodies mode", []string{"record", "--db", filepath.Join(dir, "b.db"), "--mode", "bodies", "--intercept", "api.example.com", "--", "true"}, 2, "--intercept applies to the proxy modes, not to --mode bodies"},
		{"bodies mode, command not found", []string{"record", "--db", filepath.Join(dir, "b.db"), "--mode", "bodies", "--", "no-such-command-xyz"}, 1, `command "no-such-command-xyz" not found`},
		{"exchanges on a text file", []string{"exchanges", notCapture}, 1, "not a tsinspect capture file"},
		{"exchanges on a missing file", []string{"exchanges", filepath.Join(dir, "none.db")}, 1, "does not exist"},
		{"exchanges with an unknown flag after FILE", []string{"exchanges", filepath.Join(dir, "none.db"), "--jsonl"}, 2, "flag provided but not defined: -jsonl (did you mean --json?)"},
		{"serve port in use", []string{"serve", dir, "--listen", busy.Addr().String()}, 1, "address already in use (is another tsinspect serve running? --listen 127.0.0.1:0 picks a free port)"},
		{"serve a text file", []string{"serve", notCapture, "--listen", "127.0.0.1:0"}, 1, "not a tsinspect capture file"},
		{"serve a missing directory", []string{"serve", filepath.Join(dir, "none"), "--listen", "127.0.0.1:0"}, 1, "none does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, c.args...)
			assertRefused(t, code, stdout, stderr, c.code, c.want)
		})
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := runCLI(t, "help")
	if code != 0 || !strings.Contains(out, "record") || !strings.Contains(out, "exchanges") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "record", "-h")
	for _, flag := range []string{"-db", "-mode", "-listen", "-upstream", "-intercept", "-ca-dir", "-allow-remote"} {
		if !strings.Contains(out, flag) {
			t.Errorf("record -h does not mention %s", flag)
		}
	}
	if code != 0 {
		t.Errorf("record -h exit %d", code)
	}
}

// patience bounds a wait for something bound to happen: long enough that
// only a broken machine reaches it, so that a loaded one never fails a
// test. No test here asserts how fast anything is: BENCHMARKS.md names the
// benchmarks that measure it.
const patience = testwait.Patience

// startRecorder runs `tsinspect record` without a command and returns its
// proxy address once it is listening. It is stopped with SIGINT at cleanup
// (or by the returned stop function, which returns its stderr), as a user
// would.
func startRecorder(t *testing.T, args ...string) (addr string, stop func() string) {
	t.Helper()
	addr, stop, _ = startRecorderOut(t, args...)
	return addr, stop
}

// startRecorderOut is startRecorder that also returns what the recorder
// has printed on stdout so far.
func startRecorderOut(t *testing.T, args ...string) (addr string, stop func() string, stdout func() string) {
	t.Helper()
	cmd := exec.Command(kit.Tsinspect, append([]string{"record"}, args...)...)
	out := &lockedBuffer{}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout = func() string {
		out.mu.Lock()
		defer out.mu.Unlock()
		return out.b.String()
	}
	re := regexp.MustCompile(`via (127\.0\.0\.1:\d+)`)
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if m := re.FindStringSubmatch(stdout()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("recorder printed no address; stderr: %s", stderr.String())
	}
	stopped := false
	stop = func() string {
		if !stopped {
			stopped = true
			cmd.Process.Signal(syscall.SIGINT)
			cmd.Wait()
		}
		return stderr.String()
	}
	t.Cleanup(func() { stop() })
	return addr, stop, stdout
}

// sendWithKey sends a request with the test API key, reads the response
// to its end and returns its status.
func sendWithKey(t *testing.T, method, url, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", session.APIKey)
	req.Header.Set("content-type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestRecordLogsFlows: without a command, the recorder prints a line per
// exchange as it completes, and none under --quiet.
func TestRecordLogsFlows(t *testing.T) {
	sc, _ := fixtures.Scenario("toolsearch")
	_, up := session.StandIn(t, sc, fixtures.Options{})
	for _, quiet := range []bool{false, true} {
		args := []string{"--db", filepath.Join(t.TempDir(), "s.db"), "--mode", "reverse", "--upstream", up}
		if quiet {
			args = append(args, "--quiet")
		}
		addr, stop, stdout := startRecorderOut(t, args...)
		for _, r := range []struct{ method, path, body string }{
			{"POST", "/v1/messages/count_tokens", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`},
			{"GET", "/v1/nothing", ""},
		} {
			sendWithKey(t, r.method, "http://"+addr+r.path, r.body)
		}
		stop()
		out := stdout()
		flow := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d{3} POST 127\.0\.0\.1:\d+/v1/messages/count_tokens → 200, \d+ B in (<1ms|\d+ms)$`)
		notFound := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d{3} GET 127\.0\.0\.1:\d+/v1/nothing → 404, `)
		if quiet {
			if flow.MatchString(out) || notFound.MatchString(out) {
				t.Errorf("--quiet printed flows:\n%s", out)
			}
		} else if !flow.MatchString(out) || !notFound.MatchString(out) {
			t.Errorf("no flow lines:\n%s\nstderr: %s", out, stop())
		}
	}
}

// TestRecordWarnsOfBypass: an environment that would send the client past
// the proxy is named before the session, and an empty capture is explained
// after it.
func TestRecordWarnsOfBypass(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(kit.Tsinspect, "record", "--db", filepath.Join(dir, "s.db"), "--ca-dir", filepath.Join(dir, "ca"), "--", "sh", "-c", "true")
	cmd.Env = append(os.Environ(), "NO_PROXY=localhost,.anthropic.com", "ANTHROPIC_BASE_URL=http://127.0.0.1:4000")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{
		"tsinspect: warning: NO_PROXY=localhost,.anthropic.com makes the client bypass the proxy for api.anthropic.com",
		"tsinspect: warning: ANTHROPIC_BASE_URL is http://127.0.0.1:4000, plain HTTP, which an HTTPS proxy never sees",
		"tsinspect: nothing was recorded: sh sent no request through the proxy",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}
}

// TestInterruptAtOnce: SIGINT sent as soon as the proxy's address is
// printed still stops the recorder cleanly, with its summary.
func TestInterruptAtOnce(t *testing.T) {
	for i := 0; i < 5; i++ {
		db := filepath.Join(t.TempDir(), "s.db")
		_, stop := startRecorder(t, "--db", db, "--mode", "reverse", "--upstream", "http://127.0.0.1:9")
		if summary := stop(); !strings.Contains(summary, "recorded 0 exchanges") {
			t.Fatalf("attempt %d: summary %q", i+1, summary)
		}
		if i == 0 {
			code, out, stderr := runCLI(t, "exchanges", db)
			if code != 0 || stderr != "tsinspect: no exchanges recorded in "+db+"\n" || strings.Count(out, "\n") != 1 {
				t.Errorf("exchanges of an empty capture: exit %d, stdout %q, stderr %q", code, out, stderr)
			}
		}
	}
}

func TestUpstreamDownIsA502AndRecorded(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	db := filepath.Join(t.TempDir(), "s.db")
	addr, stop := startRecorder(t, "--db", db, "--mode", "reverse", "--upstream", dead)
	resp, err := http.Post("http://"+addr+"/v1/messages", "application/json", strings.NewReader(`{"model":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Type  string `json:"type"`
		Error struct{ Type, Message string }
	}
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != 502 || body.Type != "error" {
		t.Fatalf("status %d body %+v", resp.StatusCode, body)
	}
	summary := stop()
	if !strings.Contains(summary, "recorded 1 exchange ") {
		t.Errorf("summary: %s", summary)
	}
	rows := session.ReadCapture(t, db)
	if len(rows) != 1 || rows[0].State != exchange.StateUpstreamFailed || rows[0].Status != 502 {
		t.Fatalf("capture: %+v", rows)
	}
}

// TestStreamingThroughTheBinary checks that, through the recorder in each
// mode, every SSE event reaches the client before the upstream sends the
// next one: the upstream waits for the client's word before each event, so
// a recorder that held the stream back would leave the client without it.
// How soon an event passes is capture's BenchmarkStreamEventLag.
func TestStreamingThroughTheBinary(t *testing.T) {
	events := []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop", "message_stop"}
	for _, mode := range []string{"mitm", "reverse"} {
		t.Run(mode, func(t *testing.T) {
			next := make(chan struct{}, len(events))
			var heldBack atomic.Bool
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				for i, e := range events {
					if i > 0 && !heldBack.Load() {
						select {
						case <-next:
						case <-r.Context().Done():
							return
						case <-time.After(patience):
							heldBack.Store(true)
						}
					}
					fmt.Fprintf(w, "event: %s\ndata: {\"type\":%q}\n\n", e, e)
					w.(http.Flusher).Flush()
				}
			}))
			defer up.Close()
			dir := t.TempDir()
			db := filepath.Join(dir, "s.db")
			addr, stop := startRecorder(t, "--db", db, "--mode", mode, "--upstream", up.URL, "--ca-dir", filepath.Join(dir, "ca"))
			client, u := http.DefaultClient, "http://"+addr+"/v1/messages"
			if mode == "mitm" {
				pem, err := os.ReadFile(filepath.Join(dir, "ca", "tsinspect-ca.pem"))
				if err != nil {
					t.Fatal(err)
				}
				pool := x509.NewCertPool()
				pool.AppendCertsFromPEM(pem)
				pu, _ := url.Parse("http://" + addr)
				client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: pool}}}
				u = "https://api.anthropic.com/v1/messages"
			}
			req, _ := http.NewRequest("POST", u, strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
			req.Header.Set("x-api-key", session.APIKey)
			req.Header.Set("content-type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			br := bufio.NewReader(resp.Body)
			for {
				line, err := br.ReadString('\n')
				if name, ok := strings.CutPrefix(line, "event: "); ok {
					got = append(got, strings.TrimSpace(name))
				}
				if line == "\n" {
					next <- struct{}{}
				}
				if err != nil {
					break
				}
			}
			resp.Body.Close()
			if heldBack.Load() {
				t.Fatalf("the upstream waited %v for the client to get an event it had sent: the recorder held the stream back", patience)
			}
			if !slices.Equal(got, events) {
				t.Fatalf("client got events %v, want %v", got, events)
			}
			stop()
			rows := session.ReadCapture(t, db)
			if len(rows) != 1 || rows[0].State != exchange.StateComplete || strings.Count(string(rows[0].RespBody), "event: ") != len(events) {
				t.Fatalf("capture: %d rows, want one complete with the %d events", len(rows), len(events))
			}
		})
	}
}

func TestExchangesListsACapture(t *testing.T) {
	sc, _ := fixtures.Scenario("toolsearch")
	_, up := session.StandIn(t, sc, fixtures.Options{})
	db := filepath.Join(t.TempDir(), "s.db")
	addr, stop := startRecorder(t, "--db", db, "--mode", "reverse", "--upstream", up)
	for i := 0; i < 2; i++ {
		resp, err := http.Post("http://"+addr+"/v1/messages/count_tokens", "application/json", strings.NewReader(fmt.Sprintf(`{"model":"m%d","messages":[]}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// Readable while the recorder is still running. The recorder writes
	// after the reply has gone out, so the second exchange may need a
	// moment to appear.
	var code int
	var out, stderr string
	for deadline := time.Now().Add(patience); ; time.Sleep(50 * time.Millisecond) {
		code, out, stderr = runCLI(t, "exchanges", db)
		if code != 0 || strings.Count(out, "/v1/messages/count_tokens") == 2 || time.Now().After(deadline) {
			break
		}
	}
	if code != 0 || strings.Count(out, "/v1/messages/count_tokens") != 2 {
		t.Fatalf("exchanges while recording: exit %d\n%s%s", code, out, stderr)
	}
	stop()
	_, out, _ = runCLI(t, "exchanges", db)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "POST") || !strings.Contains(lines[1], "complete") {
		t.Errorf("exchanges output:\n%s", out)
	}
}

func TestCACommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ca")
	code, out, stderr := runCLI(t, "ca", "--ca-dir", dir, "--intercept", "gateway.example.com")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{filepath.Join(dir, "tsinspect-ca.pem"), "created now", "SHA-256:", "api.anthropic.com, gateway.example.com", "NODE_EXTRA_CA_CERTS="} {
		if !strings.Contains(out, want) {
			t.Errorf("tsinspect ca output lacks %q:\n%s", want, out)
		}
	}
	fp := regexp.MustCompile(`SHA-256:\s+(\S+)`).FindStringSubmatch(out)
	_, again, _ := runCLI(t, "ca", "--ca-dir", dir, "--intercept", "gateway.example.com")
	if !strings.Contains(again, "(existing)") || fp == nil || !strings.Contains(again, fp[1]) {
		t.Errorf("second run should reuse the same CA:\n%s", again)
	}
}

func TestCAWideningNeedsRotate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ca")
	code, out, stderr := runCLI(t, "ca", "--ca-dir", dir, "--intercept", "gateway.example.com")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	fp := regexp.MustCompile(`SHA-256:\s+(\S+)`).FindStringSubmatch(out)
	if fp == nil {
		t.Fatalf("no fingerprint in:\n%s", out)
	}
	certPath := filepath.Join(dir, "tsinspect-ca.pem")
	before, _ := os.ReadFile(certPath)

	// ca and record with a host the CA does not permit: one line, exit
	// non-zero, the CA unchanged, no capture made.
	db := filepath.Join(t.TempDir(), "s.db")
	for _, args := range [][]string{
		{"ca", "--ca-dir", dir, "--intercept", "other.example.org"},
		{"record", "--db", db, "--ca-dir", dir, "--intercept", "other.example.org", "--", "true"},
	} {
		code, out, stderr := runCLI(t, args...)
		if code == 0 || out != "" {
			t.Errorf("%s: exit %d, stdout %q; want a refusal", args[0], code, out)
		}
		if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "ca --rotate") || !strings.Contains(stderr, "other.example.org") {
			t.Errorf("%s: want one line naming the host and 'ca --rotate', got:\n%s", args[0], stderr)
		}
		if after, _ := os.ReadFile(certPath); !bytes.Equal(after, before) {
			t.Fatalf("%s replaced the CA certificate", args[0])
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused record created the capture file")
	}

	code, out, stderr = runCLI(t, "ca", "--ca-dir", dir, "--intercept", "other.example.org", "--rotate")
	if code != 0 {
		t.Fatalf("rotate: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Replaced:", fp[1], "api.anthropic.com, gateway.example.com\n", "Old file kept:", "created now",
		"api.anthropic.com, gateway.example.com, other.example.org", "must trust the", "NODE_EXTRA_CA_CERTS=" + certPath} {
		if !strings.Contains(out, want) {
			t.Errorf("rotate output lacks %q:\n%s", want, out)
		}
	}
	kept := regexp.MustCompile(`Old file kept:\s+(\S+\.pem)`).FindAllStringSubmatch(out, -1)
	if len(kept) != 2 {
		t.Fatalf("want the old certificate and key kept, got %v", kept)
	}
	if old, _ := os.ReadFile(kept[0][1]); !bytes.Equal(old, before) {
		t.Errorf("%s does not hold the old certificate", kept[0][1])
	}
	if after, _ := os.ReadFile(certPath); bytes.Equal(after, before) {
		t.Error("rotate left the old certificate in place")
	}
	if code, _, stderr := runCLI(t, "ca", "--ca-dir", dir, "--intercept", "other.example.org"); code != 0 {
		t.Errorf("after rotate the host is permitted; got exit %d: %s", code, stderr)
	}
}
