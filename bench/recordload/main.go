// Command recordload measures 'tsinspect record' under load: it builds
// tsinspect, runs 'record --mode reverse' into a new capture, sends it the
// requests of a generated long session (fixtures/longsession) at a fixed
// rate against an upstream of its own on 127.0.0.1, and prints the
// recorder's peak memory, how far its writer fell behind and the capture's
// size against the bytes recorded (see internal/bench/recload).
//
//	go run ./bench/recordload [-turns 1000] [-rate 10] [-compact 350] [-dir DIR]
//
// Run it from the module root. Timings vary on a shared machine: repeat.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/tsinspect/tsinspect/internal/bench/recload"
)

func main() {
	turns := flag.Int("turns", 1000, "requests to send")
	rate := flag.Float64("rate", 10, "requests started per second")
	compact := flag.Int("compact", 350, "compact the main thread after this many turns (bounds the request size; 0: never)")
	dir := flag.String("dir", "", "directory for the binary and the capture (default: a new temporary one, removed)")
	flag.Parse()
	if err := run(*turns, *rate, *compact, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "recordload:", err)
		os.Exit(1)
	}
}

func run(turns int, rate float64, compact int, dir string) error {
	ctx := context.Background()
	bin, dir, base, cleanup, err := recload.Setup(ctx, dir, "recordload-")
	if err != nil {
		return err
	}
	defer cleanup()
	r, err := recload.Run(ctx, base, recload.Options{Bin: bin, Dir: dir, Turns: turns, Rate: rate, CompactEvery: compact})
	recload.Print(os.Stdout, r)
	return err
}
