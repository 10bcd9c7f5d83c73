package overhead

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Row is one target's figures.
type Row struct {
	Name     string
	N        int
	Errors   int
	P50, P90 time.Duration // time to first byte
	// Added is P50 less the direct P50.
	Added time.Duration
	// EventP50 is the median delay, from the upstream's write to the
	// client's read, of the slowest event (by median).
	EventP50 time.Duration
	// EventAdded is the largest, over the events, of the median delay of
	// that event less its median delay direct.
	EventAdded time.Duration
	// CPU is the proxy process's processor time per request; 0 when not
	// known.
	CPU time.Duration
}

// Summary is a Result's figures, direct first.
type Summary struct {
	Rows []Row
	// Ratio is tsinspect's Added over mitmproxy's; 0 when either is
	// missing or mitmproxy's is not positive.
	Ratio float64
}

// Summarise computes the figures of r.
func Summarise(r Result) Summary {
	var s Summary
	var direct *Target
	var directEvents []time.Duration
	for _, t := range r.Targets {
		row := Row{Name: t.Name, N: len(t.TTFB), Errors: t.Errors, P50: Quantile(t.TTFB, 0.5), P90: Quantile(t.TTFB, 0.9)}
		if t.CPU > 0 && len(t.TTFB) > 0 {
			row.CPU = t.CPU / time.Duration(len(t.TTFB)+t.Errors)
		}
		ev := make([]time.Duration, len(t.Event))
		for i, ds := range t.Event {
			ev[i] = Quantile(ds, 0.5)
			row.EventP50 = max(row.EventP50, ev[i])
		}
		if direct == nil {
			direct, directEvents = t, ev
		} else {
			row.Added = row.P50 - s.Rows[0].P50
			for i := range ev {
				if i < len(directEvents) {
					row.EventAdded = max(row.EventAdded, ev[i]-directEvents[i])
				}
			}
		}
		s.Rows = append(s.Rows, row)
	}
	var ts, mp *Row
	for i := range s.Rows {
		switch s.Rows[i].Name {
		case "tsinspect":
			ts = &s.Rows[i]
		case "mitmproxy":
			mp = &s.Rows[i]
		}
	}
	if ts != nil && mp != nil && mp.Added > 0 {
		s.Ratio = float64(ts.Added) / float64(mp.Added)
	}
	return s
}

// Print writes the table of r to w.
func Print(w io.Writer, r Result) error {
	s := Summarise(r)
	fmt.Fprintf(w, "%d rounds (round robin), keep-alive, reverse mode, %d SSE events a request\n", r.Rounds, r.Events)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tn\terrors\tTTFB p50\tTTFB p90\tadded p50\tevent delay p50\tevent added\tCPU/request\t")
	for _, row := range s.Rows {
		added, evAdded, cpu := "-", "-", "-"
		if row.Name != "direct" {
			added, evAdded = ms(row.Added), ms(row.EventAdded)
		}
		if row.CPU > 0 {
			cpu = ms(row.CPU)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.Name, row.N, row.Errors, ms(row.P50), ms(row.P90), added, ms(row.EventP50), evAdded, cpu)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("overhead: print: %w", err)
	}
	if s.Ratio != 0 {
		fmt.Fprintf(w, "tsinspect's added p50 is %.2f of mitmproxy's\n", s.Ratio)
	}
	for _, t := range r.Targets {
		if t.FirstError != "" {
			fmt.Fprintf(w, "%s: first error: %s\n", t.Name, t.FirstError)
		}
	}
	for _, sk := range r.Skipped {
		fmt.Fprintf(w, "left out: %s\n", sk)
	}
	fmt.Fprintln(w, "times in ms; event added: the largest, over the events, of its median delay (upstream write to client read) less the same direct;")
	fmt.Fprintln(w, "CPU/request: the proxy process's user+system time over the measured rounds, divided by the requests (10 ms ticks)")
	return nil
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.3f", float64(d)/float64(time.Millisecond))
}

// PrintEvents writes, for each target, the median delay of each event
// (from the upstream's write to the client's read) in ms.
func PrintEvents(w io.Writer, r Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "event delay p50\t")
	for i := range r.Events {
		fmt.Fprintf(tw, "#%d\t", i+1)
	}
	fmt.Fprintln(tw)
	for _, t := range r.Targets {
		fmt.Fprintf(tw, "%s\t", t.Name)
		for _, ds := range t.Event {
			fmt.Fprintf(tw, "%s\t", ms(Quantile(ds, 0.5)))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("overhead: print: %w", err)
	}
	return nil
}
