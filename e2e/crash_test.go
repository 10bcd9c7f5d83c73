package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/store"
)

// sseUpstream streams, for a request whose body is its id, 12 SSE events
// 15 ms apart that name the id.
func sseUpstream(t *testing.T) string {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fl, _ := w.(http.Flusher)
		for i := 0; i < 12; i++ {
			fmt.Fprintf(w, "event: ping\ndata: {\"id\":%q,\"n\":%d}\n\n", id, i)
			fl.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(15 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(up.Close)
	return up.URL
}

type received struct {
	body []byte
}

// TestKill9DuringConcurrentStreams kills the recorder with SIGKILL while
// 32 clients stream through it, twice on the same file. Every exchange
// recorded as complete holds the bytes its client received; the exchanges
// the file held complete just before the kill are all there; the file
// passes integrity_check; the next record marks the rows left in flight
// interrupted and appends to the file.
func TestKill9DuringConcurrentStreams(t *testing.T) {
	up := sseUpstream(t)
	db := filepath.Join(t.TempDir(), "s.db")
	leftInFlight := 0 // rows in flight at the kills, to be settled later
	for round := 0; round < 2; round++ {
		cmd := exec.Command(kit.Tsinspect, "record", "--db", db, "--mode", "reverse", "--upstream", up, "--quiet")
		out := &lockedBuffer{}
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = out, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		addr := ""
		re := regexp.MustCompile(`via (127\.0\.0\.1:\d+)`)
		for deadline := time.Now().Add(patience); addr == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			out.mu.Lock()
			if m := re.FindStringSubmatch(out.b.String()); m != nil {
				addr = m[1]
			}
			out.mu.Unlock()
		}
		if addr == "" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no address; stderr: %s", stderr.String())
		}

		var mu sync.Mutex
		got := map[string]received{}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for c := 0; c < 32; c++ {
			wg.Add(1)
			go func(c int) {
				defer wg.Done()
				for i := 0; i < 40 && ctx.Err() == nil; i++ {
					id := fmt.Sprintf("r%d-c%d-%d", round, c, i)
					req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addr+"/v1/messages", strings.NewReader(id))
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						return
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"n":11`)) {
						return
					}
					mu.Lock()
					got[id] = received{body: b}
					mu.Unlock()
				}
			}(c)
		}
		// Kill once the clients have had 32 exchanges and the file
		// holds some complete (those must survive the kill) and, when
		// it can be caught, one in flight (it must be settled later).
		recorded := map[string]bool{}
		for deadline := time.Now().Add(patience); ; time.Sleep(5 * time.Millisecond) {
			mu.Lock()
			n := len(got)
			mu.Unlock()
			flying := false
			if n >= 32 {
				clear(recorded)
				if rd, err := store.OpenReadOnly(db); err == nil {
					rows, _ := rd.Exchanges(context.Background())
					rd.Close()
					for _, ex := range rows {
						switch ex.State {
						case exchange.StateComplete:
							recorded[string(ex.ReqBody)] = true
						case exchange.StateInFlight:
							flying = true
						}
					}
				}
			}
			// Past half the patience, any moment with complete rows will do.
			if len(recorded) > 0 && (flying || time.Now().After(deadline.Add(-patience/2))) || time.Now().After(deadline) {
				break
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		cancel()
		wg.Wait()

		rd, err := store.OpenReadOnly(db)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := rd.Exchanges(context.Background())
		rd.Close()
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]exchange.Exchange{}
		inFlight := 0
		for _, ex := range rows {
			byID[string(ex.ReqBody)] = ex
			if ex.State == exchange.StateInFlight {
				inFlight++
			}
		}
		mu.Lock()
		early := 0
		for id, r := range got {
			ex, ok := byID[id]
			if ok && ex.State == exchange.StateComplete && !bytes.Equal(ex.RespBody, r.body) {
				t.Errorf("round %d: %s recorded complete with a body that differs from what the client received", round, id)
			}
		}
		for id := range recorded {
			early++
			if ex, ok := byID[id]; !ok || ex.State != exchange.StateComplete {
				t.Errorf("round %d: %s was recorded complete before the kill but is not after it", round, id)
			}
		}
		clientComplete := len(got)
		mu.Unlock()
		if clientComplete < 32 || early == 0 {
			t.Fatalf("round %d: only %d exchanges completed (%d recorded complete before the kill); the test did not load the recorder", round, clientComplete, early)
		}
		leftInFlight += inFlight
		checkIntegrity(t, db)
		t.Logf("round %d: %d complete at the clients, %d rows, %d in flight at the kill", round, clientComplete, len(rows), inFlight)
	}

	// A later record settles the rows left in flight and appends.
	before := countRows(t, db, "")
	addr, stop := startRecorder(t, "--db", db, "--mode", "reverse", "--upstream", up)
	resp, err := http.Post("http://"+addr+"/v1/messages", "text/plain", strings.NewReader("after"))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	stderr := stop()
	if leftInFlight == 0 {
		// The kills all came between two exchanges: nothing to settle.
		t.Fatalf("no exchange was in flight at any of the kills: nothing was tested of settling them")
	}
	if !strings.Contains(stderr, "marked interrupted") {
		t.Errorf("record did not say it settled the rows left in flight:\n%s", stderr)
	}
	if n := countRows(t, db, "in_flight"); n != 0 {
		t.Errorf("%d rows still in flight after a later record", n)
	}
	if n := countRows(t, db, "interrupted"); n == 0 {
		t.Error("no row marked interrupted")
	}
	if after := countRows(t, db, ""); after != before+1 {
		t.Errorf("%d rows after appending one to %d", after, before)
	}
	checkIntegrity(t, db)
	if code, out, _ := runCLI(t, "exchanges", db); code != 0 || !strings.Contains(out, "interrupted") {
		t.Errorf("exchanges does not show the interrupted rows (exit %d)", code)
	}
}

func sqliteRO(t *testing.T, db string) *sql.DB {
	t.Helper()
	s, err := sql.Open("sqlite3", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func checkIntegrity(t *testing.T, db string) {
	t.Helper()
	var res string
	if err := sqliteRO(t, db).QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity_check: %q, %v", res, err)
	}
}

// countRows counts the exchanges in state, or all when state is "".
func countRows(t *testing.T, db, state string) int {
	t.Helper()
	var n int
	q, args := `SELECT count(*) FROM exchange`, []any{}
	if state != "" {
		q, args = q+` WHERE state = ?`, []any{state}
	}
	if err := sqliteRO(t, db).QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSecondSignalStillSummarises sends SIGTERM twice within a
// millisecond: the recorder still finishes the capture and prints its
// summary.
func TestSecondSignalStillSummarises(t *testing.T) {
	up := sseUpstream(t)
	db := filepath.Join(t.TempDir(), "s.db")
	for i, sigs := range [][]syscall.Signal{{syscall.SIGTERM, syscall.SIGTERM}, {syscall.SIGINT, syscall.SIGTERM}, {syscall.SIGINT, syscall.SIGINT}, {syscall.SIGTERM, syscall.SIGINT}} {
		cmd := exec.Command(kit.Tsinspect, "record", "--db", db, "--mode", "reverse", "--upstream", up)
		out := &lockedBuffer{}
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = out, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			out.mu.Lock()
			ready := strings.Contains(out.b.String(), "Ctrl-C to stop")
			out.mu.Unlock()
			if ready {
				break
			}
		}
		// A stream under way makes the shutdown take a while; the second
		// signal comes after the first has been handled, with a gap that
		// grows with each case, up to a few milliseconds.
		out.mu.Lock()
		addr := regexp.MustCompile(`via (127\.0\.0\.1:\d+)`).FindStringSubmatch(out.b.String())
		out.mu.Unlock()
		if addr == nil {
			t.Fatal("no address")
		}
		resp, err := http.Post("http://"+addr[1]+"/v1/messages", "text/plain", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		go func() { io.Copy(io.Discard, resp.Body); resp.Body.Close() }()
		cmd.Process.Signal(sigs[0])
		time.Sleep(time.Duration(1+3*i) * time.Millisecond)
		cmd.Process.Signal(sigs[1])
		err = cmd.Wait()
		if !strings.Contains(stderr.String(), "tsinspect: recorded") {
			t.Errorf("%v: no summary after two signals (%v):\n%s", sigs, err, stderr.String())
		}
	}
}

// TestUpstreamPasswordAndOpenCapture: a password in --upstream reaches
// neither the capture file nor the output, and an existing capture that
// other users could read is made 0600, with its -wal and -shm, and a
// warning.
func TestUpstreamPasswordAndOpenCapture(t *testing.T) {
	up := sseUpstream(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	makeCapture(t, db, 1)
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	withPassword := strings.Replace(up, "http://", "http://alice:pw-canary-5cc1@", 1)
	addr, stop, stdout := startRecorderOut(t, "--db", db, "--mode", "reverse", "--upstream", withPassword)
	resp, err := http.Post("http://"+addr+"/v1/messages", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	stderr := stop()
	if !strings.Contains(stderr, "open to other users (mode 0644); made it 0600") {
		t.Errorf("no warning about the capture's mode:\n%s", stderr)
	}
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		if st, err := os.Stat(p); err == nil && st.Mode().Perm() != 0o600 {
			t.Errorf("%s is %04o, want 0600", p, st.Mode().Perm())
		}
	}
	var meta string
	if err := sqliteRO(t, db).QueryRow(`SELECT value FROM meta WHERE key = 'upstream'`).Scan(&meta); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(meta, "pw-canary-5cc1") || !strings.Contains(meta, "alice") {
		t.Errorf("meta upstream = %q, want the user without the password", meta)
	}
	for _, p := range []string{db, db + "-wal"} {
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte("pw-canary-5cc1")) {
			t.Errorf("the password is in %s", filepath.Base(p))
		}
	}
	if strings.Contains(stderr+stdout(), "pw-canary-5cc1") {
		t.Error("the password was printed")
	}
}

// TestCredentialCanaryInNoOutput sends credentials in every header that
// carries one (and gets a cookie back), then looks for them in every file
// and every line tsinspect writes: the capture with its -wal, exchanges,
// turns, searches, reports in each format and policy, and the HAR export.
func TestCredentialCanaryInNoOutput(t *testing.T) {
	canaries := []string{"sk-ant-api03-canaryKEY7f3", "canaryBEARERq81", "canaryPROXYz20", "canaryCOOKIEm55", "canarySETCOOKIEk09", "canaryUPSTREAMpw4"}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Set-Cookie", "sid="+canaries[4]+"; HttpOnly")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`)
	}))
	defer up.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	upstream := strings.Replace(up.URL, "http://", "http://u:"+canaries[5]+"@", 1)
	addr, stop, stdout := startRecorderOut(t, "--db", db, "--mode", "reverse", "--upstream", upstream)
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages", strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hello"}]}`))
	req.Header.Set("x-api-key", canaries[0])
	req.Header.Set("Authorization", "Bearer "+canaries[1])
	req.Header.Set("Proxy-Authorization", "Basic "+canaries[2])
	req.Header.Set("Cookie", "session="+canaries[3])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	outputs := map[string]string{"record stderr": stop(), "record stdout": stdout()}
	for _, args := range [][]string{
		{"exchanges", db}, {"turns", db}, {"searches", db},
		{"export", db, "--format", "har"},
		{"report", db, "--format", "json"}, {"report", db, "--format", "markdown"}, {"report", db, "--format", "html"},
		{"report", db, "--format", "json", "--redact", "off"}, {"report", db, "--format", "html", "--redact", "off"},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
		outputs[strings.Join(args[:1], " ")+" "+strings.Join(args[2:], " ")] = out + errOut
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err == nil {
			outputs["file "+e.Name()] = string(b)
		}
	}
	if !strings.Contains(strings.ToLower(outputs["export --format har"]), `"x-api-key"`) {
		t.Fatal("the HAR export lacks the request headers: the test would prove nothing")
	}
	for where, text := range outputs {
		for _, c := range canaries {
			if strings.Contains(text, c) {
				t.Errorf("%s holds the credential %q", where, c)
			}
		}
	}
}

// TestNonLoopbackListenRefused: record and replay-server refuse every
// listen address that is not loopback unless --allow-remote is given, and
// the files tsinspect creates (capture, report, export) are 0600.
func TestNonLoopbackListenRefused(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	makeCapture(t, db, 1)
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.168.1.1:0", "10.0.0.1:0", "172.16.0.1:0", "[fe80::1]:0", "[2001:db8::1]:0", "example.com:0", "8.8.8.8:0", "127.0.0.1.nip.io:0"} {
		for _, args := range [][]string{
			{"record", "--db", filepath.Join(dir, "r.db"), "--listen", addr},
			{"replay-server", db, "--listen", addr},
		} {
			code, _, stderr := runBounded(t, 20*time.Second, args...)
			if code != 2 || !strings.Contains(stderr, "not a loopback address") {
				t.Errorf("%s --listen %s: exit %d: %s", args[0], addr, code, stderr)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "r.db")); err == nil {
		t.Error("a refused record created its capture")
	}
	for _, args := range [][]string{
		{"report", db, "--out", filepath.Join(dir, "r.json")},
		{"export", db, "--format", "har", "--out", filepath.Join(dir, "e.har")},
	} {
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	for _, name := range []string{"s.db", "r.json", "e.har"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want mode 0600", name, err)
		}
	}
}

// TestCaptureFileSizeLimit runs the recorder with a file-size limit that
// the capture outgrows mid-session (as a full disk would stop it): every
// request still gets its whole response, one warning is printed, and the
// summary counts the failed writes and the exchanges lost.
func TestCaptureFileSizeLimit(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/octet-stream")
		// Bytes that do not compress, so that the capture outgrows the
		// limit whatever the store's compression and however many writes
		// an exchange takes.
		n := r.URL.Query().Get("n")
		body := make([]byte, 200<<10)
		rand.NewChaCha8([32]byte{n[0]}).Read(body)
		w.Write(body)
	}))
	defer up.Close()
	db := filepath.Join(t.TempDir(), "s.db")
	// ulimit -f counts 1024-byte blocks in sh and bash.
	cmd := exec.Command("sh", "-c", `ulimit -f 1024 && exec "$0" "$@"`, kit.Tsinspect, "record", "--db", db, "--mode", "reverse", "--upstream", up.URL)
	out := &lockedBuffer{}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var addr []string
	re := regexp.MustCompile(`via (127\.0\.0\.1:\d+)`)
	for deadline := time.Now().Add(patience); addr == nil && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		out.mu.Lock()
		addr = re.FindStringSubmatch(out.b.String())
		out.mu.Unlock()
	}
	if addr == nil {
		t.Fatalf("no address: %s", stderr.String())
	}
	for i := 0; i < 12; i++ {
		n := string(rune('a' + i))
		resp, err := http.Post("http://"+addr[1]+"/v1/messages?n="+n, "text/plain", strings.NewReader(strings.Repeat(n, 1000)))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || len(b) != 200<<10 {
			t.Fatalf("request %d: %d bytes, %v: the traffic was affected", i, len(b), err)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	e := stderr.String()
	if strings.Count(e, "cannot write to the capture") != 1 {
		t.Errorf("want one warning when writing fails, got:\n%s", e)
	}
	if !regexp.MustCompile(`\d+ writes to the capture FAILED`).MatchString(e) || !regexp.MustCompile(`\d+ exchanges? lost`).MatchString(e) {
		t.Errorf("the summary does not count what was lost:\n%s", e)
	}
	if n := countRows(t, db, ""); n == 0 || n >= 12 {
		t.Errorf("%d rows in the capture: want those written before the limit", n)
	}
	checkIntegrity(t, db)
}

// TestCaptureMadeReadOnlyMidSession takes every write permission off the
// capture and its -wal and -shm files while recording: the recorder keeps
// the files it opened, so traffic goes on and nothing is lost, no warning
// is printed, and the permissions are as the user left them.
func TestCaptureMadeReadOnlyMidSession(t *testing.T) {
	up := sseUpstream(t)
	db := filepath.Join(t.TempDir(), "ro.db")
	addr, stop := startRecorder(t, "--db", db, "--mode", "reverse", "--upstream", up, "--quiet")
	body := `{"model":"claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	send := func(n int) {
		for range n {
			if code := sendWithKey(t, "POST", "http://"+addr+"/v1/messages", body); code != 200 {
				t.Fatalf("status %d", code)
			}
		}
	}
	send(3)
	files, _ := filepath.Glob(db + "*")
	if len(files) < 2 {
		t.Fatalf("capture files %v, want the database and its WAL", files)
	}
	for _, f := range files {
		if err := os.Chmod(f, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	send(3)
	stderr := stop()
	if strings.Contains(stderr, "cannot write") || !strings.Contains(stderr, "recorded 6 exchanges") || !strings.Contains(stderr, "complete 6") {
		t.Errorf("summary after the files were made read-only:\n%s", stderr)
	}
	if n := countRows(t, db, "complete"); n != 6 {
		t.Errorf("%d complete rows, want 6", n)
	}
	if fi, err := os.Stat(db); err != nil || fi.Mode().Perm() != 0o444 {
		t.Errorf("the capture's mode was changed back: %v", fi.Mode())
	}
	checkIntegrity(t, db)
}
