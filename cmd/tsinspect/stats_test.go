package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/fixtures/democapture"
	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/store"
)

func runArgs(t testing.TB, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(&cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func TestStatsDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.db", "team/b.db"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, democapture.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.db"), []byte("not a capture"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runArgs(t, "stats", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "skipped notes.db") {
		t.Errorf("stderr does not name the skipped file: %q", errs)
	}
	for _, want := range []string{"2 captures", "mcp__demo (server)", "a.db, team/b.db"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runArgs(t, "stats", "--json", filepath.Join(dir, "a.db"))
	var js struct {
		Captures int `json:"captures"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil || js.Captures != 1 {
		t.Errorf("--json of one capture: exit %d, %q", code, out)
	}
	// A file named on the command line that is not a capture is an error.
	if code, _, errs := runArgs(t, "stats", filepath.Join(dir, "notes.db")); code == 0 || !strings.Contains(errs, "notes.db") {
		t.Errorf("stats of a non-capture: exit %d, %q", code, errs)
	}
}

// makeLongCapture writes a capture of about turns Messages turns: the
// demo session's exchanges over and over, one second apart.
func makeLongCapture(tb testing.TB, path string, turns int) {
	tb.Helper()
	src := filepath.Join(tb.TempDir(), "demo.db")
	if err := os.WriteFile(src, democapture.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
	}
	in, err := store.OpenReadOnly(src)
	if err != nil {
		tb.Fatal(err)
	}
	exs, err := in.Exchanges(context.Background())
	in.Close()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := store.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer out.Close()
	base := exs[0].Start
	n := 0
	for round := 0; n < turns; round++ {
		for i := range exs {
			ex := exs[i]
			ex.ID = 0
			shift := time.Duration(round*len(exs)+i)*time.Second - ex.Start.Sub(base)
			ex.Start = ex.Start.Add(shift)
			ex.End = ex.End.Add(shift)
			if err := out.Insert(context.Background(), &ex); err != nil {
				tb.Fatal(err)
			}
			if strings.HasSuffix(strings.SplitN(ex.URL, "?", 2)[0], "/v1/messages") {
				n++
			}
		}
	}
}

// BenchmarkStats100x200 sums 100 captures of about 200 turns each: run
// with go test -run '^$' -bench Stats100 ./cmd/tsinspect.
func BenchmarkStats100x200(b *testing.B) {
	dir := b.TempDir()
	first := filepath.Join(dir, "c000.db")
	makeLongCapture(b, first, 200)
	data, err := os.ReadFile(first)
	if err != nil {
		b.Fatal(err)
	}
	for i := 1; i < statsBenchCaptures; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("c%03d.db", i)), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	before := cpuTime(b)
	b.ResetTimer()
	for range b.N {
		code, out, errs := runArgs(b, "stats", "--json", dir)
		if code != 0 || !strings.Contains(out, fmt.Sprintf(`"captures": %d`, statsBenchCaptures)) {
			b.Fatalf("exit %d: %s", code, errs)
		}
	}
	b.StopTimer()
	// CPU seconds say more than wall time on a shared machine.
	b.ReportMetric((cpuTime(b)-before).Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime is the user and system time of this process so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// statsBenchCaptures is how many captures BenchmarkStats100x200 reads.
const statsBenchCaptures = 100
