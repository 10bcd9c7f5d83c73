// Package numfmt formats numbers for people: token counts with thousands
// separators and byte sizes, the same way in every table, report and
// screen.
package numfmt

import (
	"fmt"
	"strconv"
	"strings"
)

// Thousands formats n with comma separators and a true minus sign for
// negatives: 21480 -> "21,480", -4946 -> "−4,946".
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteString("−")
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Bytes renders a byte count in decimal units: 512 B, 91.7 kB, 1.2 MB.
func Bytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
}

// Plural picks the word for n: one when n is 1, many otherwise.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count renders n and the word for it: "1 turn", "2 turns", "1,200 turns".
func Count(n int, one, many string) string {
	return Thousands(int64(n)) + " " + Plural(n, one, many)
}
