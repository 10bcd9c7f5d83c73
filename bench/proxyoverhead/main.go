// Command proxyoverhead measures the time to first byte and the delay of
// each server-sent event that a recording proxy adds, in reverse mode with
// keep-alive and a small request: direct, through `tsinspect record --mode
// reverse` (recording into a capture in a temporary directory) and through
// mitmdump in reverse mode with streaming on, when it is on PATH. Requests
// go to the three in turn, so the machine's load falls on all alike.
//
//	go run ./bench/proxyoverhead [-n 300] [-time 60s] [-gaps 0,0,20ms,50ms,0] [-tsinspect BIN] [-baseline BIN] [-mitmdump BIN] [-floor] [-events]
//
// Without -tsinspect the command builds ./cmd/tsinspect first (run it from
// the module's root).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/internal/bench/overhead"
)

func main() {
	if served, err := overhead.ServeYardstick(os.Args); served {
		if err != nil {
			fmt.Fprintln(os.Stderr, "proxyoverhead:", err)
			os.Exit(1)
		}
		return
	}
	n := flag.Int("n", 300, "measured requests to each target")
	warmup := flag.Int("warmup", 20, "warm-up requests to each target, not counted")
	maxTime := flag.Duration("time", 60*time.Second, "bound on the measured rounds")
	bin := flag.String("tsinspect", "", "tsinspect binary (default: build ./cmd/tsinspect)")
	mitm := flag.String("mitmdump", "", "mitmdump binary (default: mitmdump on PATH, if any)")
	baseline := flag.String("baseline", "", "another tsinspect `binary` (an earlier build) to measure in the same rounds")
	pause := flag.Duration("pause", 0, "sleep after each round")
	floor := flag.Bool("floor", false, "add yardsticks, each in a process of its own: a bare Go reverse proxy recording nothing, and a TCP relay with no HTTP")
	events := flag.Bool("events", false, "also print the median delay of each event")
	gapList := flag.String("gaps", "0,0,20ms,50ms,0", "the upstream's pauses before each event after the first, comma-separated (0 for none)")
	noMitm := flag.Bool("no-mitmproxy", false, "leave mitmproxy out")
	flag.Parse()
	if *noMitm {
		*mitm = "-"
	}
	gaps, err := parseGaps(*gapList)
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxyoverhead: -gaps:", err)
		os.Exit(2)
	}
	if err := run(*n, *warmup, *maxTime, *pause, gaps, *bin, *baseline, *mitm, *floor, *events); err != nil {
		fmt.Fprintln(os.Stderr, "proxyoverhead:", err)
		os.Exit(1)
	}
}

// parseGaps reads the -gaps list.
func parseGaps(list string) ([]time.Duration, error) {
	var gaps []time.Duration
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "0" {
			gaps = append(gaps, 0)
			continue
		}
		d, err := time.ParseDuration(f)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%q is not a pause (want e.g. 0 or 20ms)", f)
		}
		gaps = append(gaps, d)
	}
	return gaps, nil
}

func run(n, warmup int, maxTime, pause time.Duration, gaps []time.Duration, bin, baseline, mitm string, floor, events bool) error {
	dir, err := os.MkdirTemp("", "proxyoverhead-")
	if err != nil {
		return fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		bin = filepath.Join(dir, "tsinspect")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/tsinspect").CombinedOutput(); err != nil {
			return fmt.Errorf("build tsinspect: %w\n%s", err, out)
		}
	}
	switch mitm {
	case "":
		mitm, _ = exec.LookPath("mitmdump")
	case "-":
		mitm = ""
	}
	var floorCmd, relayCmd []string
	if floor {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		floorCmd, relayCmd = overhead.Yardsticks(self)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := overhead.Measure(ctx, overhead.Config{
		Tsinspect: bin, Baseline: baseline, Mitmdump: mitm, Requests: n, Warmup: warmup, MaxTime: maxTime, Pause: pause, Gaps: gaps, Dir: dir, Floor: floorCmd, Relay: relayCmd,
	})
	if err != nil {
		return err
	}
	if err := overhead.Print(os.Stdout, res); err != nil {
		return err
	}
	if events {
		return overhead.PrintEvents(os.Stdout, res)
	}
	return nil
}
