package source

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tsinspect/tsinspect/internal/bench/tile"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/report"
)

// BenchmarkReportGrowth is what `tsinspect report` does, in one process:
// read a long session from its files, redact the report, write it as JSON,
// for sessions of 1,000 and 10,000 requests made from public session 25
// (tool results padded to tile.RealResultBytes, as bench/scale makes them). Its ns/turn
// says whether the work per turn grows with the session; bench/scale
// measures the command, each run in its own process (BENCHMARKS.md).
//
//	go test ./source -run '^$' -bench ReportGrowth -benchtime 3x
func BenchmarkReportGrowth(b *testing.B) {
	matches, _ := filepath.Glob(filepath.Join("testdata", "public", "25-*", "*.jsonl"))
	if len(matches) != 1 {
		b.Fatalf("public session 25: found %v, want its one file", matches)
	}
	src, err := os.ReadFile(matches[0])
	if err != nil {
		b.Fatal(err)
	}
	tab := pricing.Default()
	for _, n := range []int{1000, 10000} {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
		body, err := tile.Session(src, tile.Options{Requests: n, SessionID: id, ResultBytes: tile.RealResultBytes})
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(b.TempDir(), id+".jsonl")
		if err := os.WriteFile(path, body, 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			turns := 0
			for i := 0; i < b.N; i++ {
				bl, err := Load(path, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				r, shared := redact.Report(bl, "bench", tab, redact.Default)
				if err := shared.Write(io.Discard, "json", report.RenderOptions{Redaction: redact.Describe(redact.Default)}); err != nil {
					b.Fatal(err)
				}
				turns = len(r.Turns)
			}
			if turns < n {
				b.Fatalf("%d turns in the report, want at least %d", turns, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/turn")
		})
	}
}
