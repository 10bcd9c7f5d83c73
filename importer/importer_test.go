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
	if err := har.Write(&buf, exs, "test"); err != nil {
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
		case <-time.After(5 * time.Second):
			t.Fatalf("import of %s blocked", path)
		}
	}
}
