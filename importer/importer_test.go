package importer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/importer/har"
	"github.com/tsinspect/tsinspect/internal/testwait"
)

type sink struct{ exs []exchange.Exchange }

// to returns an opener of s.
func (s *sink) to() func() (Sink, error) { return func() (Sink, error) { return s, nil } }

func (s *sink) Insert(_ context.Context, ex *exchange.Exchange) error {
	s.exs = append(s.exs, *ex)
	return nil
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		head, name, want string
	}{
		{"\xd4\xc3\xb2\xa1rest", "x.bin", FormatPcap},
		{"\x4d\x3c\xb2\xa1rest", "x", FormatPcap},
		{"\x0a\x0d\x0d\x0arest", "x", FormatPcapNG},
		{"\xef\xbb\xbf  \n{\"log\"", "x", FormatHAR},
		{"garbage", "x.har", FormatHAR},
		{"garbage", "x.pcapng", FormatPcapNG},
		{"garbage", "x.txt", ""},
		{`{"request":{"timestamp":1.5,"method":"POST","url":"http://x"},"response":null,"logged_at":"x"}`, "x", FormatClaudeTrace},
		{`{"timestamp": "2026-01-01T00:00:00", "request_id": "a", "turn": 1, "duration_ms": 3, "request": {}}`, "x", FormatClaudeTap},
		{`{"http_interactions":[]}`, "x.json", FormatVCR},
		{"---\nversion: 2\ninteractions:\n- id: 0\n", "x", FormatVCR},
		{"interactions:\n- request:\n", "x", FormatVCR},
		{"90340:4:type;4:http;7:version;2:17#", "x", FormatMitmproxy},
		{"garbage", "x.flow", FormatMitmproxy},
		{`{"items":[]}`, "x.json", ""},
		{"{\n  \"log\": {\n    \"version\": \"1.2\"", "export.json", FormatHAR},
	} {
		if got := Detect([]byte(c.head), c.name); got != c.want {
			t.Errorf("Detect(%q, %q) = %q, want %q", c.head, c.name, got, c.want)
		}
	}
}

func write(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestImportHARWithProgress imports a HAR big enough for a progress bar.
func TestImportHARWithProgress(t *testing.T) {
	var exs []exchange.Exchange
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 40; i++ {
		exs = append(exs, exchange.Exchange{
			Start: t0.Add(time.Duration(40-i) * time.Second), Method: "POST", URL: "https://api.anthropic.com/v1/messages",
			ReqBody: bytes.Repeat([]byte("x"), 10000), RespBody: []byte("{}"), Status: 200, State: exchange.StateComplete,
		})
	}
	var buf bytes.Buffer
	if err := har.Write(&buf, exs, "test", har.Options{Exact: true}); err != nil {
		t.Fatal(err)
	}
	path := write(t, "s.har", buf.Bytes())
	var progress bytes.Buffer
	var s sink
	rep, err := Import(context.Background(), path, s.to(), Options{Progress: &progress, ProgressMin: 100 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Imported != 40 || rep.Format != FormatHAR || rep.Problem() != "" {
		t.Errorf("report %+v", rep)
	}
	for i := 1; i < len(s.exs); i++ {
		if s.exs[i].Start.Before(s.exs[i-1].Start) {
			t.Fatal("not inserted oldest first")
		}
	}
	if !strings.Contains(progress.String(), "100%") || !strings.HasSuffix(progress.String(), "\n") || !strings.Contains(progress.String(), "\r") {
		t.Errorf("progress %q", progress.String())
	}
	// A small file draws no bar.
	progress.Reset()
	Import(context.Background(), path, (&sink{}).to(), Options{Progress: &progress})
	if progress.Len() != 0 {
		t.Errorf("bar for a small file: %q", progress.String())
	}
}

func TestImportErrors(t *testing.T) {
	ctx := context.Background()
	notJSON := write(t, "x.har", []byte("this is not JSON"))
	if _, err := Import(ctx, notJSON, (&sink{}).to(), Options{}); !errors.Is(err, har.ErrNotHAR) || !strings.Contains(err.Error(), "invalid character") {
		t.Errorf("not JSON: %v", err)
	}
	unknown := write(t, "x.txt", []byte("hello"))
	if _, err := Import(ctx, unknown, (&sink{}).to(), Options{}); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("unknown: %v", err)
	}
	pcapFile := write(t, "x.pcap", []byte("\xd4\xc3\xb2\xa1"))
	badKeys := write(t, "keys.txt", []byte("nothing useful here\n"))
	if _, err := Import(ctx, pcapFile, (&sink{}).to(), Options{KeyLog: badKeys}); err == nil || !strings.Contains(err.Error(), "no usable secrets") {
		t.Errorf("bad key log: %v", err)
	}
	if _, err := Import(ctx, pcapFile, (&sink{}).to(), Options{}); err == nil || !strings.Contains(err.Error(), "file header is cut off") {
		t.Errorf("cut pcap: %v", err)
	}
}

// TestImportRecordedFormats imports the recorded test data of every
// format of the recon family through Import: each is detected, imported
// and says what it lacks.
func TestImportRecordedFormats(t *testing.T) {
	for _, c := range []struct {
		path, format string
		n            int
	}{
		{"claudetrace/testdata/claude-trace-1.0.9.jsonl", FormatClaudeTrace, 1},
		{"claudetap/testdata/claude-tap.jsonl", FormatClaudeTap, 3},
		{"mitmflow/testdata/mitmproxy-8.1.1.flow", FormatMitmproxy, 2},
		{"vcr/testdata/vcrpy.yaml", "vcrpy", 2},
		{"vcr/testdata/ruby-vcr.yml", "Ruby VCR", 2},
		{"vcr/testdata/go-vcr-format2-errors.yaml", "go-vcr format 2", 2},
		{"rawbodies/testdata/claude-code-2.1.328", FormatRawBodies, 2},
	} {
		t.Run(c.format, func(t *testing.T) {
			var s sink
			rep, err := Import(context.Background(), c.path, s.to(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Format != c.format || rep.Imported != c.n || len(s.exs) != c.n || rep.Problem() != "" {
				t.Errorf("format %q, imported %d (%d), problem %q; want %q, %d", rep.Format, rep.Imported, len(s.exs), rep.Problem(), c.format, c.n)
			}
			if len(rep.Limits) == 0 {
				t.Error("no limits said")
			}
			for i := 1; i < len(s.exs); i++ {
				if s.exs[i].Start.Before(s.exs[i-1].Start) {
					t.Errorf("exchange %d starts before the one before it", i)
				}
			}
		})
	}
}

// TestUnknownFormats: a file of no known format gets one line saying what
// it looks like, never a misleading format error.
func TestUnknownFormats(t *testing.T) {
	for _, c := range []struct {
		name, content, want string
	}{
		{"a.gz", "\x1f\x8b\x08\x00rest", "gzip-compressed"},
		{"a.db", "SQLite format 3\x00rest", "SQLite database"},
		{"index.jsonl", `{"timestamp":"x","request_file":"a.request.json","response_file":"b.response.json"}`, "import the directory that holds it"},
		{"x.json", `{"items":[1]}`, "it is JSON, but neither a HAR"},
		{"x.txt", "hello world", `text starting "hello world"`},
		{"x.bin", "\x00\x01\x02\x03", "binary data"},
		{"empty", "", "the file is empty"},
		// What claude -p --output-format stream-json prints, its init
		// record whole, or cut by the head read (many tools listed).
		{"stream.jsonl", `{"type":"system","subtype":"init","session_id":"5eed2f3e-0b37-463a-b3bf-cb4a841b1c6c","tools":["Bash"]}` + "\n" + `{"type":"result","subtype":"success","session_id":"5eed2f3e-0b37-463a-b3bf-cb4a841b1c6c"}` + "\n",
			"printed for session 5eed2f3e-0b37-463a-b3bf-cb4a841b1c6c, which holds no requests; the session's own file does: 'tsinspect open 5eed2f3e'"},
		{"cut.jsonl", `{"type":"system","subtype":"init","session_id":"5eed2f3e-0b37-463a-b3bf-cb4a841b1c6c","tools":["` + strings.Repeat("mcp__x__tool\",\"", 8000),
			"printed for session 5eed2f3e-0b37-463a-b3bf-cb4a841b1c6c"},
	} {
		p := write(t, c.name, []byte(c.content))
		_, err := Import(context.Background(), p, (&sink{}).to(), Options{})
		if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line with %q", c.name, err, c.want)
		}
	}
	// A Claude Code session file without request records (before 2.1.300)
	// is imported from its transcript, with what that lacks.
	p := write(t, "t.jsonl", []byte(`{"parentUuid":null,"sessionId":"s","type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}`+"\n"+
		`{"parentUuid":"u1","sessionId":"s","type":"assistant","uuid":"u2","message":{"id":"m1","model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}}`+"\n"))
	s := &sink{}
	rep, err := Import(context.Background(), p, s.to(), Options{})
	if err != nil || rep.Imported != 1 || len(s.exs) != 1 || s.exs[0].Source != exchange.SourceTranscript {
		t.Fatalf("session without request records: %v %+v", err, rep)
	}
	if !strings.Contains(strings.Join(rep.Limits, "; "), "not in the transcript") {
		t.Errorf("limits %q do not say what the transcript lacks", rep.Limits)
	}
}

// TestProgressOtherFormats: the progress bar is drawn for the formats of
// the recon family too.
func TestProgressOtherFormats(t *testing.T) {
	var out bytes.Buffer
	rep, err := Import(context.Background(), "mitmflow/testdata/mitmproxy-8.1.1.flow", (&sink{}).to(), Options{Progress: &out, ProgressMin: 1024})
	if err != nil || rep.Imported != 2 {
		t.Fatalf("import: %v %+v", err, rep)
	}
	if !strings.Contains(out.String(), "importing mitmproxy-8.1.1.flow [") || !strings.Contains(out.String(), "100%") {
		t.Errorf("progress: %q", out.String())
	}
}

// TestSpecialInputs: a named pipe does not block, and a pipe or a device
// gets a message that says what it is.
func TestSpecialInputs(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "in.pcap")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	for path, want := range map[string]string{
		fifo:                                     "is a pipe",
		fmt.Sprintf("/proc/self/fd/%d", pr.Fd()): "is a pipe",
		"/dev/null":                              "is a device",
		t.TempDir():                              "is a directory",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := Import(context.Background(), path, (&sink{}).to(), Options{})
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: err %v, want %q", path, err, want)
			}
		case <-time.After(testwait.Patience):
			t.Fatalf("import of %s blocked", path)
		}
	}
}

// TestImportSessionWhileWritten: a session imported while Claude Code
// writes it, then again when it has ended, gives each request once, with
// its answer: the request still waiting at the first import is left for
// the second (it once stayed as a failed turn beside its answer).
func TestImportSessionWhileWritten(t *testing.T) {
	lines := []string{
		`{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-11-20T10:00:00.000Z","message":{"role":"user","content":"hi"}}`,
		`{"type":"api-request-shape","shapeHash":"h","shape":{"system":[],"tools":[]}}`,
		`{"type":"api-request","id":"r1","sessionId":"s","timestamp":"2026-11-20T10:00:01.000Z","shapeHash":"h","params":{"model":"claude-sonnet-4-5"},"keep":0,"tail":[]}`,
	}
	answer := `{"type":"assistant","uuid":"u2","parentUuid":"u1","sessionId":"s","requestRef":"r1","timestamp":"2026-11-20T10:00:02.000Z","message":{"id":"m1","model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}}`
	p := write(t, "s.jsonl", []byte(strings.Join(lines, "\n")+"\n"))
	s := &sink{}
	rep, err := Import(context.Background(), p, s.to(), Options{})
	if err != nil || rep.Imported != 0 || len(rep.Skipped) != 1 || rep.Skipped[0].Count != 1 {
		t.Fatalf("while written: %v %+v", err, rep)
	}
	if err := os.WriteFile(p, []byte(strings.Join(append(lines, answer), "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err = Import(context.Background(), p, s.to(), Options{})
	if err != nil || rep.Imported != 1 || rep.Incomplete != 0 || len(s.exs) != 1 || s.exs[0].Status != 200 {
		t.Fatalf("when ended: %v %+v, %d exchanges", err, rep, len(s.exs))
	}
}
