package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

// timing measures a turn's exchange: time to first token, duration and
// output tokens per second.
func timing(ex *exchange.Exchange, outputTokens int64) Timing {
	var tm Timing
	if ex == nil || ex.Start.IsZero() {
		return tm
	}
	first := firstToken(ex)
	if !first.IsZero() && first.After(ex.Start) {
		tm.TTFTMs = first.Sub(ex.Start).Milliseconds()
	}
	if !ex.End.IsZero() && ex.End.After(ex.Start) {
		tm.DurationMs = ex.End.Sub(ex.Start).Milliseconds()
		// Below minGeneration the rate says more about buffering than
		// about the model (a stand-in or a replay sends it all at once).
		if gen := ex.End.Sub(first); !first.IsZero() && gen >= minGeneration && outputTokens > 0 {
			tm.OutputTokensPerSecond = float64(outputTokens) / gen.Seconds()
		}
	}
	return tm
}

// minGeneration is the shortest time from first token to end for which
// tokens per second are given.
const minGeneration = 100 * time.Millisecond

// firstToken returns when the first content delta of a streamed response
// arrived (the chunk holding it), else the first response byte.
func firstToken(ex *exchange.Exchange) time.Time {
	body := ex.RespBodyDecoded
	if body == nil {
		body = ex.RespBody
	}
	if at := bytes.Index(body, []byte("content_block_delta")); at >= 0 && len(ex.Chunks) > 0 && ex.RespBodyDecoded == nil {
		for _, c := range ex.Chunks {
			if c.Offset+int64(c.Size) > int64(at) {
				return c.At
			}
		}
	}
	return ex.FirstByte
}

// timingText is a turn's timing for people: "TTFT 812 ms, 3.2 s, 45
// tok/s", "-" when nothing is known.
func timingText(tm Timing) string {
	var parts []string
	if tm.TTFTMs > 0 {
		parts = append(parts, "TTFT "+msText(tm.TTFTMs))
	}
	if tm.DurationMs > 0 {
		parts = append(parts, msText(tm.DurationMs))
	}
	if tm.OutputTokensPerSecond > 0 {
		parts = append(parts, fmt.Sprintf("%.0f tok/s", tm.OutputTokensPerSecond))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// msText writes milliseconds as "812 ms" or "3.2 s".
func msText(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%d ms", ms)
	}
	return fmt.Sprintf("%.1f s", float64(ms)/1000)
}

// timingSummary sums up the turns' timing: the median time to first token,
// the median duration and the median output rate, "" when none is known.
func (r *Report) timingSummary() string {
	var ttft, dur []int64
	var rate []float64
	for _, t := range r.Turns {
		if t.Timing.TTFTMs > 0 {
			ttft = append(ttft, t.Timing.TTFTMs)
		}
		if t.Timing.DurationMs > 0 {
			dur = append(dur, t.Timing.DurationMs)
		}
		if t.Timing.OutputTokensPerSecond > 0 {
			rate = append(rate, t.Timing.OutputTokensPerSecond)
		}
	}
	var parts []string
	if len(ttft) > 0 {
		parts = append(parts, "median time to first token "+msText(median(ttft)))
	}
	if len(dur) > 0 {
		var total int64
		for _, d := range dur {
			total += d
		}
		parts = append(parts, "median duration "+msText(median(dur))+" ("+msText(total)+" in all)")
	}
	if len(rate) > 0 {
		slices.Sort(rate)
		parts = append(parts, fmt.Sprintf("median %.0f output tokens/s", rate[len(rate)/2]))
	}
	return strings.Join(parts, ", ")
}

func median(xs []int64) int64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
