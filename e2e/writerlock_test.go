package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/internal/testwait"
)

// TestSecondWriterRefused runs two real recorders on one capture: while the
// first has an exchange in flight, a second record, and an import, into
// the same file are refused with one line naming the first's process, and
// change nothing; the first then finishes its exchange, which is recorded
// complete (not marked interrupted by the second).
func TestSecondWriterRefused(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: ping\ndata: {\"n\":0}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		case <-time.After(time.Minute):
		}
		fmt.Fprint(w, "event: ping\ndata: {\"n\":1}\n\n")
	}))
	defer up.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	addr, stop := startRecorder(t, "--db", db, "--mode", "reverse", "--upstream", up.URL)

	// An exchange in flight through the first recorder.
	done := make(chan string, 1)
	go func() {
		resp, err := http.Post("http://"+addr+"/v1/messages", "application/json", strings.NewReader(`{"n":1}`))
		if err != nil {
			done <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- string(b)
	}()
	testwait.Until(t, 20*time.Millisecond, "the exchange is not in the capture in flight", func() bool {
		return countRows(t, db, "in_flight") > 0
	})

	busy := regexp.MustCompile(`^tsinspect: (record|import): ` + regexp.QuoteMeta(db) + ` is being written by another tsinspect \(process \d+\), a record or an import; wait until it ends, or write to another file\n$`)
	code, stdout, stderr := runCLI(t, "record", "--db", db, "--mode", "reverse", "--upstream", up.URL, "--", "true")
	if code != 1 || stdout != "" || !busy.MatchString(stderr) {
		t.Errorf("second record: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "record", "--db", db, "--mode", "bodies", "--", "true")
	if code != 1 || stdout != "" || !busy.MatchString(stderr) {
		t.Errorf("second record, bodies mode: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	har := filepath.Join(dir, "other.har")
	if c, _, e := runCLI(t, "export", db, "--format", "har", "--out", har); c != 0 {
		t.Fatalf("export: %s", e)
	}
	code, stdout, stderr = runCLI(t, "import", har, "--db", db)
	if code != 1 || stdout != "" || !busy.MatchString(stderr) {
		t.Errorf("import into it: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if n := countRows(t, db, ""); n != 1 {
		t.Errorf("%d rows after the refusals, want the first recorder's 1", n)
	}

	close(release)
	if body := <-done; !strings.Contains(body, `"n":1`) {
		t.Errorf("the client got %q", body)
	}
	sum := stop()
	if !strings.Contains(sum, "complete 1, failed or aborted 0, still in flight 0") {
		t.Errorf("the first recorder's summary:\n%s", sum)
	}
	if n := countRows(t, db, "complete"); n != 1 || countRows(t, db, "") != 1 {
		t.Errorf("%d complete rows of %d, want the one exchange complete", n, countRows(t, db, ""))
	}
	// Once it has ended, the capture is anyone's to write.
	if code, _, stderr := runCLI(t, "import", har, "--db", db); code != 0 {
		t.Errorf("import after the recorder ended: exit %d, %s", code, stderr)
	}
}
