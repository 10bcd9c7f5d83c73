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
	cmd := exec.Command(kit.Tsinspect, "serve", projects, capture, "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache, "HOME="+filepath.Join(dir, "home"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	exited := false
	defer func() {
		if !exited {
			cmd.Process.Kill()
			<-done
		}
	}()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		done <- cmd.Wait()
	}()
	var printed []string
	url := ""
	deadline := time.After(60 * time.Second)
	for url == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended before it printed its address: %q, %s", printed, stderr.String())
			}
			printed = append(printed, l)
			if m := regexp.MustCompile(`^  (http://127\.0\.0\.1:\d+/)$`).FindStringSubmatch(l); m != nil {
				url = m[1]
			}
		case <-deadline:
			t.Fatalf("no address printed in 60 s: %q, %s", printed, stderr.String())
		}
	}
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
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		exited = true
		if err != nil {
			t.Errorf("serve ended with %v: %s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10 s of Ctrl-C")
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("serve wrote in its cache directory: %v", err)
	}
	if strings.Contains(stderr.String(), "tsinspect: ") {
		t.Errorf("serve complained: %s", stderr.String())
	}
}
