package overhead

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary serve as the yardsticks' process.
func TestMain(m *testing.M) {
	if served, err := ServeYardstick(os.Args); served {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestQuantile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5}, {0.9, 9}, {1, 10}, {0, 1}} {
		if got := Quantile(ds, c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if Quantile(nil, 0.5) != 0 {
		t.Error("Quantile of nothing is not 0")
	}
	if ds[0] != 5 {
		t.Error("Quantile sorted its argument")
	}
}

func TestSummarise(t *testing.T) {
	ms := time.Millisecond
	r := Result{Events: 2, Targets: []*Target{
		{Name: "direct", TTFB: []time.Duration{1 * ms, 1 * ms, 1 * ms}, Event: [][]time.Duration{{ms}, {2 * ms}}},
		{Name: "tsinspect", TTFB: []time.Duration{2 * ms, 2 * ms, 9 * ms}, Event: [][]time.Duration{{ms}, {5 * ms}}, CPU: 30 * ms},
		{Name: "mitmproxy", TTFB: []time.Duration{5 * ms, 5 * ms, 5 * ms}, Event: [][]time.Duration{{4 * ms}, {2 * ms}}},
	}}
	s := Summarise(r)
	ts, mp := s.Rows[1], s.Rows[2]
	if ts.Added != ms || mp.Added != 4*ms || s.Ratio != 0.25 {
		t.Errorf("added %v and %v, ratio %v; want 1ms, 4ms, 0.25", ts.Added, mp.Added, s.Ratio)
	}
	if ts.EventAdded != 3*ms || mp.EventAdded != 3*ms || ts.EventP50 != 5*ms {
		t.Errorf("event added %v and %v, slowest event %v; want 3ms, 3ms, 5ms", ts.EventAdded, mp.EventAdded, ts.EventP50)
	}
	if ts.CPU != 10*ms || s.Rows[0].CPU != 0 {
		t.Errorf("CPU a request %v (direct %v), want 10ms (0)", ts.CPU, s.Rows[0].CPU)
	}
}

// TestMeasureDirect runs the upstream and the direct target only: every
// request is counted, each stream checked, each event timed.
func TestMeasureDirect(t *testing.T) {
	res, err := Measure(context.Background(), Config{Requests: 5, Warmup: 1, Gaps: []time.Duration{0, time.Millisecond, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Targets) != 1 || res.Rounds != 5 || res.Events != 4 {
		t.Fatalf("%d targets, %d rounds, %d events; want 1, 5, 4", len(res.Targets), res.Rounds, res.Events)
	}
	d := res.Targets[0]
	if d.Errors != 0 || len(d.TTFB) != 5 || len(d.Event) != 4 || len(d.Event[3]) != 5 {
		t.Fatalf("direct: %d errors (%s), %d times, %d events", d.Errors, d.FirstError, len(d.TTFB), len(d.Event))
	}
	for _, ttfb := range d.TTFB {
		if ttfb <= 0 || ttfb > 5*time.Second {
			t.Errorf("time to first byte %v", ttfb)
		}
	}
	if len(res.Skipped) != 2 || !strings.Contains(strings.Join(res.Skipped, "\n"), "no mitmdump given") {
		t.Errorf("skipped %q", res.Skipped)
	}
}

// TestMeasureYardsticks runs both yardsticks in processes of their own:
// every stream through them arrives whole and in time.
func TestMeasureYardsticks(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	floor, relay := Yardsticks(self)
	res, err := Measure(context.Background(), Config{Requests: 5, Warmup: 1, Gaps: []time.Duration{0, time.Millisecond, 0}, Floor: floor, Relay: relay})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range res.Targets {
		names = append(names, tg.Name)
		if tg.Errors != 0 || len(tg.TTFB) != 5 {
			t.Errorf("%s: %d errors (%s), %d times; want 0, 5", tg.Name, tg.Errors, tg.FirstError, len(tg.TTFB))
		}
	}
	if got := strings.Join(names, ","); got != "direct,go-floor,tcp-relay" {
		t.Errorf("targets %s", got)
	}
}
