package decode

import (
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
)

// BenchmarkDecode decodes each real Claude Code request (about 90 KB, the
// subagent's 48 KB) with a streamed response.
func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{"01-first-request.json", "03-after-tool-call.json", "04-subagent-first-request.json", "05-resumed-on-new-model.json"} {
		ex := sampleExchange(b, name)
		ex.Status = 200
		ex.RespHeaders = []exchange.Header{{Name: "Content-Type", Value: "text/event-stream"}}
		ex.RespBody = []byte(smallStream)
		b.Run(strings.TrimSuffix(name, ".json"), func(b *testing.B) {
			b.SetBytes(int64(len(ex.ReqBody) + len(ex.RespBody)))
			b.ReportAllocs()
			for b.Loop() {
				if turn := Decode(ex); len(turn.Problems) != 0 {
					b.Fatal(turn.Problems)
				}
			}
		})
	}
}

// BenchmarkDecodeStream decodes the largest corpus stream (the
// compaction one, 72 KB of small deltas).
func BenchmarkDecodeStream(b *testing.B) {
	cases := corpusCases(b, "vercel-ai/anthropic-compaction.1.chunks.txt")
	ex := cases[0].ex
	b.SetBytes(int64(len(ex.RespBody)))
	b.ReportAllocs()
	for b.Loop() {
		if turn := Decode(ex); len(turn.Problems) != 0 {
			b.Fatal(turn.Problems)
		}
	}
}
