package timeline

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// signed writes n with its sign, a true minus for negatives: −21,480, +12.
func signed(n int64) string {
	if n < 0 {
		return numfmt.Thousands(n)
	}
	return "+" + numfmt.Thousands(n)
}

// bytesText writes a byte count for a person.
func bytesText(n int) string {
	if n == 1 {
		return "1 byte"
	}
	return numfmt.Thousands(int64(n)) + " bytes"
}

// GapText is the time from the start of turn prev's request to the start
// of turn t's, as the cache_break detail and the Cache tab both write it
// ("445 ms", "7 min 3 s"); false when a start is unknown. The cache
// lifetime runs from the previous request's use of the cache, so it is
// measured from its start, not its end.
func GapText(prev, t *Turn) (string, bool) {
	if prev == nil || t == nil || prev.Exchange == nil || t.Exchange == nil || prev.Exchange.Start.IsZero() || t.Exchange.Start.IsZero() {
		return "", false
	}
	return durationText(max(t.Exchange.Start.Sub(prev.Exchange.Start), 0)), true
}

// durationText writes a duration in the largest units that matter:
// "12 s", "7 min 3 s", "1 h 5 min".
func durationText(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		m, s := int(d.Minutes()), int(d.Seconds())%60
		if s == 0 {
			return fmt.Sprintf("%d min", m)
		}
		return fmt.Sprintf("%d min %d s", m, s)
	}
	h, m := int(d.Hours()), int(d.Minutes())%60
	if m == 0 {
		return fmt.Sprintf("%d h", h)
	}
	return fmt.Sprintf("%d h %d min", h, m)
}

// quote quotes s, cut to at most n runes.
func quote(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > n {
		r := []rune(s)
		s = string(r[:n]) + "…"
	}
	return strconv.Quote(s)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func sortInts(a []int) { sort.Ints(a) }
