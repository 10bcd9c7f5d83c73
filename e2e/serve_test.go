package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/fixtures/democapture"
)

// tsinspect serve, as a user runs it: it prints the address to open,
// serves the sessions and a capture beside them, refuses another Host,
// writes nothing (not even the listing's index, in its cache directory),
// and stops on Ctrl-C with status 0.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	projects := filepath.Join(dir, "projects")
	if err := os.CopyFS(projects, os.DirFS("../source/testdata/releases/2.1.299/projects")); err != nil {
		t.Fatal(err)
	}
	capture := filepath.Join(dir, "demo.db")
	if err := os.WriteFile(capture, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	srv := startServe(t, []string{"XDG_CACHE_HOME=" + cache, "HOME=" + filepath.Join(dir, "home")}, projects, capture, "--listen", "127.0.0.1:0")
	url, printed, stderr := srv.url, srv.printed, srv.stderr
	if !strings.HasPrefix(printed[0], "Serving 6 sessions of "+projects+", "+capture+", everything shown (loopback") {
		t.Errorf("first line %q", printed[0])
	}
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(url + "api/sessions")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rows []struct{ Key string } `json:"rows"`
	}
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || len(got.Rows) != 6 {
		t.Errorf("sessions: %d rows, %v", len(got.Rows), err)
	}
	// A capture written while served (here appended to by 'import') is
	// read again from where it stopped: its row counts the new turns.
	turns := func() int {
		resp, err := c.Get(url + "api/sessions")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct {
			Counts struct{ Turns int } `json:"counts"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		return got.Counts.Turns
	}
	before := turns()
	other := filepath.Join(dir, "other.db")
	if err := os.WriteFile(other, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	har := filepath.Join(dir, "demo.har")
	for _, args := range [][]string{{"export", other, "--format", "har", "--out", har}, {"import", har, "--db", capture}} {
		if out, err := exec.Command(kit.Tsinspect, args...).CombinedOutput(); err != nil {
			t.Fatalf("tsinspect %s: %v\n%s", args[0], err, out)
		}
	}
	// Asked again until the listing has read it (go test's -timeout
	// bounds it): the demo capture's seven turns again.
	for turns() != before+7 {
		time.Sleep(200 * time.Millisecond)
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.Host = "rebind.example:80"
	if resp, err := c.Do(req); err != nil || resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("another Host: %v %v", resp, err)
	} else {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if err := srv.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// go test's -timeout bounds the wait.
	if err := srv.wait(); err != nil {
		t.Errorf("serve ended with %v: %s", err, stderr.String())
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("serve wrote in its cache directory: %v", err)
	}
	if strings.Contains(stderr.String(), "tsinspect: ") {
		t.Errorf("serve complained: %s", stderr.String())
	}
}

// served is a 'tsinspect serve' run on loopback: the address it printed
// (and its token, when it asks for one), what it printed up to it, and
// what it writes on standard error.
type served struct {
	cmd        *exec.Cmd
	url, token string
	printed    []string
	stderr     *strings.Builder
	done       chan error // the process's end, once its output is read
	ended      bool
}

// serveAddress is the line serve prints the address to open on.
var serveAddress = regexp.MustCompile(`^  (http://127\.0\.0\.1:\d+/)(?:\?token=(\S+))?$`)

// startServe runs tsinspect serve with args, env added to the
// environment, until it prints the address to open (go test's -timeout
// bounds the wait); the process is killed when the test ends, unless it
// ended (wait).
func startServe(t *testing.T, env []string, args ...string) *served {
	t.Helper()
	s := &served{cmd: exec.Command(kit.Tsinspect, append([]string{"serve"}, args...)...), stderr: &strings.Builder{}, done: make(chan error, 1)}
	s.cmd.Env = append(os.Environ(), env...)
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !s.ended {
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		s.done <- s.cmd.Wait()
	}()
	for s.url == "" {
		l, ok := <-lines
		if !ok {
			t.Fatalf("serve ended before it printed its address: %q, %s", s.printed, s.stderr.String())
		}
		s.printed = append(s.printed, l)
		if m := serveAddress.FindStringSubmatch(l); m != nil {
			s.url, s.token = m[1], m[2]
		}
	}
	go func() {
		for range lines { // the rest of its output, not to block it
		}
	}()
	return s
}

// wait waits for serve to end and returns how it ended.
func (s *served) wait() error {
	err := <-s.done
	s.ended = true
	return err
}
