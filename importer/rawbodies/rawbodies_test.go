package rawbodies

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

// The testdata directory was written by Claude Code 2.1.328 run with
// OTEL_LOG_RAW_API_BODIES=file:DIR against the scripted stand-in API, whose
// first answer was an HTTP 500 and whose second (the retry) the text
// "Hi there.".
const recorded = "testdata/claude-code-2.1.328"

func TestRecordedDirectory(t *testing.T) {
	if !Looks(recorded) {
		t.Fatal("Looks = false for a raw-bodies directory")
	}
	d := Open(recorded, Options{})
	cs, err := d.Scan(true)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || d.BadLines != 0 {
		t.Fatalf("got %d changes, %d bad lines (%s), want 2 and 0", len(cs), d.BadLines, d.FirstBad)
	}
	var ok, failed *exchange.Exchange
	for i := range cs {
		switch cs[i].Exchange.State {
		case exchange.StateComplete:
			ok = &cs[i].Exchange
		case exchange.StateUpstreamFailed:
			failed = &cs[i].Exchange
		}
	}
	if ok == nil || failed == nil {
		t.Fatalf("want one complete and one failed exchange, got %+v", cs)
	}
	if ok.Status != 200 || !bytes.Contains(ok.RespBody, []byte("Hi there.")) || ok.RespHeader("Request-Id") == "" {
		t.Errorf("answered exchange: status %d, request-id %q, body %.80s", ok.Status, ok.RespHeader("Request-Id"), ok.RespBody)
	}
	if ok.ReqHeader(QuerySourceHeader) != "sdk" || ok.ReqHeader(SessionHeader) == "" {
		t.Errorf("query source %q, session %q", ok.ReqHeader(QuerySourceHeader), ok.ReqHeader(SessionHeader))
	}
	if !strings.Contains(ok.ReqHeader("Anthropic-Beta"), "claude-code-20250219") {
		t.Errorf("Anthropic-Beta = %q, want the body's betas", ok.ReqHeader("Anthropic-Beta"))
	}
	if ok.Source != "import:raw-bodies" || ok.Start.IsZero() || ok.Start.Year() != 2026 {
		t.Errorf("source %q start %v", ok.Source, ok.Start)
	}
	if failed.Status != 0 || !strings.Contains(failed.Error, "no answer") || len(failed.ReqBody) == 0 {
		t.Errorf("unanswered exchange: status %d error %q", failed.Status, failed.Error)
	}
}

// TestLive reads a directory while it is written, as record --mode bodies
// does: a request appears in flight and is completed by its index line.
func TestLive(t *testing.T) {
	dir := t.TempDir()
	d := Open(dir, Options{Source: "bodies", Secrets: []string{"my-secret-key-123"}})
	if cs, err := d.Scan(false); err != nil || len(cs) != 0 {
		t.Fatalf("empty dir: %v %v", cs, err)
	}
	req := `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"key my-secret-key-123 and sk-ant-api03-abcdefghijklmnopqrstuvwxyz"}]}`
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.request.json", req[:20]) // still being written
	if cs, _ := d.Scan(false); len(cs) != 0 {
		t.Fatalf("half-written request gave %d changes", len(cs))
	}
	write("a.request.json", req)
	cs, _ := d.Scan(false)
	if len(cs) != 1 || cs[0].Key != "a.request.json" || cs[0].Exchange.State != exchange.StateInFlight {
		t.Fatalf("request: %+v", cs)
	}
	if b := cs[0].Exchange.ReqBody; bytes.Contains(b, []byte("my-secret-key-123")) || bytes.Contains(b, []byte("sk-ant-api03")) || d.Redacted != 2 {
		t.Errorf("credentials left in %s (redacted %d)", b, d.Redacted)
	}
	if cs, _ := d.Scan(false); len(cs) != 0 {
		t.Fatalf("second scan repeated %d changes", len(cs))
	}
	write("req_1.response.json", `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
	line := `{"timestamp":"2026-11-22T20:51:10.741Z","session_id":"s1","query_source":"repl_main_thread","model":"m","request_id":"req_1","message_id":"msg_1","request_file":"a.request.json","response_file":"req_1.response.json"}`
	write(IndexFile, line) // no newline yet: not complete
	if cs, _ := d.Scan(false); len(cs) != 0 {
		t.Fatalf("incomplete index line gave %d changes", len(cs))
	}
	write(IndexFile, line+"\n"+`{"broken`+"\n")
	cs, _ = d.Scan(false)
	if len(cs) != 1 || cs[0].Key != "a.request.json" || cs[0].Exchange.State != exchange.StateComplete || cs[0].Exchange.Status != 200 {
		t.Fatalf("answer: %+v", cs)
	}
	if cs[0].Exchange.ReqHeader(QuerySourceHeader) != "repl_main_thread" {
		t.Errorf("query source %q", cs[0].Exchange.ReqHeader(QuerySourceHeader))
	}
	write("b.request.json", req)
	cs, _ = d.Scan(true)
	if len(cs) != 1 || cs[0].Key != "b.request.json" || cs[0].Exchange.State != exchange.StateUpstreamFailed {
		t.Fatalf("final: %+v", cs)
	}
	if d.BadLines != 1 {
		t.Errorf("bad lines %d, want 1 (the broken last line)", d.BadLines)
	}
}

func TestNotRawBodies(t *testing.T) {
	if Looks(t.TempDir()) {
		t.Error("Looks = true for an empty directory")
	}
}

// TestIndexBeforeResponse: Claude Code may append the index line before the
// response file is complete; the line waits for it.
func TestIndexBeforeResponse(t *testing.T) {
	dir := t.TempDir()
	w := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w("a.request.json", `{"model":"m","messages":[]}`)
	w("r.response.json", `{"id":"msg`)
	w(IndexFile, `{"timestamp":"2026-11-22T20:51:10.741Z","request_file":"a.request.json","response_file":"r.response.json"}`+"\n")
	d := Open(dir, Options{})
	cs, _ := d.Scan(false)
	if len(cs) != 0 || d.BadLines != 0 {
		t.Fatalf("half-written response: %d changes, %d bad", len(cs), d.BadLines)
	}
	w("r.response.json", `{"id":"msg_1","content":[]}`)
	cs, _ = d.Scan(false)
	if len(cs) != 1 || cs[0].Exchange.State != exchange.StateComplete || d.BadLines != 0 {
		t.Fatalf("completed response: %+v, %d bad", cs, d.BadLines)
	}
}

// TestResponseCutOff: a response file still incomplete at the end keeps its
// request, marked failed, and is counted as bad.
func TestResponseCutOff(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"a.request.json":  `{"model":"m","messages":[]}`,
		"r.response.json": `{"id":"msg`,
		IndexFile:         `{"timestamp":"2026-11-22T20:51:10.741Z","request_file":"a.request.json","response_file":"r.response.json"}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := Open(dir, Options{})
	cs, _ := d.Scan(true)
	if len(cs) != 1 || cs[0].Exchange.State != exchange.StateUpstreamFailed || !strings.Contains(cs[0].Exchange.Error, "cut off") || d.BadLines != 1 {
		t.Fatalf("got %+v, %d bad", cs, d.BadLines)
	}
}

// FuzzDir reads a directory of a fuzzed index and request file; the
// recorded directory's own files are the seeds.
func FuzzDir(f *testing.F) {
	idx, _ := os.ReadFile(filepath.Join(recorded, IndexFile))
	reqs, _ := filepath.Glob(filepath.Join(recorded, "*.request.json"))
	for _, r := range reqs {
		b, _ := os.ReadFile(r)
		f.Add(idx, b)
	}
	f.Add([]byte(`{"timestamp":"2026-01-01T00:00:00Z","request_file":"a.request.json","response_file":"../x"}`+"\n"), []byte(`{}`))
	f.Fuzz(func(t *testing.T, index, req []byte) {
		dir := t.TempDir()
		var e Entry
		name := "a.request.json"
		if json.Unmarshal(bytes.SplitN(index, []byte("\n"), 2)[0], &e) == nil && e.RequestFile == filepath.Base(e.RequestFile) && strings.HasSuffix(e.RequestFile, ".request.json") {
			name = e.RequestFile
		}
		os.WriteFile(filepath.Join(dir, IndexFile), index, 0o600)
		os.WriteFile(filepath.Join(dir, name), req, 0o600)
		d := Open(dir, Options{})
		if _, err := d.Scan(false); err != nil {
			t.Fatal(err)
		}
		cs, err := d.Scan(true)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.Exchange.State == "" || c.Exchange.State == exchange.StateInFlight {
				t.Fatalf("final scan left %s in state %q", c.Key, c.Exchange.State)
			}
		}
	})
}

// TestLastLineMissing: Claude Code can exit after writing its last response
// file but before appending the index line that names it; the newest
// unnamed response answers the newest unnamed request.
func TestLastLineMissing(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	files := []struct {
		name, body string
		at         time.Time
	}{
		{"a.request.json", `{"model":"m","messages":[{"role":"user","content":"1"}]}`, now},
		{"r1.response.json", `{"id":"msg_1","content":[]}`, now.Add(100 * time.Millisecond)},
		{"b.request.json", `{"model":"m","messages":[{"role":"user","content":"2"}]}`, now.Add(200 * time.Millisecond)},
		{"r2.response.json", `{"id":"msg_2","content":[]}`, now.Add(300 * time.Millisecond)},
		{IndexFile, `{"timestamp":"` + now.UTC().Format(time.RFC3339Nano) + `","request_file":"a.request.json","response_file":"r1.response.json"}` + "\n", now.Add(100 * time.Millisecond)},
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.body), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, f.at, f.at)
	}
	d := Open(dir, Options{})
	cs, err := d.Scan(true)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 {
		t.Fatalf("%d changes", len(cs))
	}
	for _, c := range cs {
		if c.Exchange.State != exchange.StateComplete {
			t.Errorf("%s: %s %q", c.Key, c.Exchange.State, c.Exchange.Error)
		}
	}
	if b := cs[1].Exchange; cs[1].Key != "b.request.json" || !bytes.Contains(b.RespBody, []byte("msg_2")) {
		t.Errorf("last pair: %s answered by %s", cs[1].Key, b.RespBody)
	}
}
