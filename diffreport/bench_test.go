package diffreport_test

import (
	"context"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tsinspect/tsinspect/diffreport"
	"github.com/tsinspect/tsinspect/fixtures/longsession"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/store"
)

// The budget: diffing two 1,000-turn sessions costs no more than reading
// both. BenchmarkRead1000Pair reads two generated 1,000-turn captures as
// the command does; BenchmarkCompare1000Pair is what diff adds once they
// are read (pricing both, aligning, writing the text), on two sessions
// that differ throughout (other seeds: every turn's content differs, the
// worst case for the alignment) and on two of the same content.

// longCapture writes a generated capture of n turns and returns its path.
func longCapture(b *testing.B, n int, seed uint64) string {
	b.Helper()
	demo, err := store.OpenReadOnly("../fixtures/democapture/demo.db")
	if err != nil {
		b.Fatal(err)
	}
	exs, err := demo.Exchanges(context.Background())
	demo.Close()
	if err != nil {
		b.Fatal(err)
	}
	base, err := longsession.BaseFrom(exs)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "long.db")
	db, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := longsession.Generate(context.Background(), db, base, longsession.Options{Turns: n, Seed: seed}); err != nil {
		b.Fatal(err)
	}
	return path
}

func readPair(b *testing.B, paths [2]string) [2]diffreport.Input {
	var ins [2]diffreport.Input
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bl, _, err := source.ReadFile(context.Background(), p)
			if err != nil {
				b.Error(err)
				return
			}
			ins[i] = diffreport.Input{Name: p, Session: bl.Session(), Exchanges: bl.Exchanges()}
		}()
	}
	wg.Wait()
	return ins
}

var pairs = map[string][2]uint64{"differing": {5, 6}, "same": {5, 5}}

func BenchmarkRead1000Pair(b *testing.B) {
	paths := [2]string{longCapture(b, 1000, 5), longCapture(b, 1000, 6)}
	b.ResetTimer()
	for b.Loop() {
		readPair(b, paths)
	}
}

func BenchmarkCompare1000Pair(b *testing.B) {
	for _, name := range []string{"differing", "same"} {
		b.Run(name, func(b *testing.B) {
			seeds := pairs[name]
			ins := readPair(b, [2]string{longCapture(b, 1000, seeds[0]), longCapture(b, 1000, seeds[1])})
			tab := pricing.Default()
			b.ResetTimer()
			for b.Loop() {
				r := diffreport.Build(ins[0], ins[1], diffreport.Options{Prices: tab, Tools: "mcp__srv1__"})
				if err := r.WriteText(io.Discard, diffreport.Width); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
