package sessionfiles

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseSince reads a time to list sessions since: a date (2026-11-01), or
// a span back from now (36h, 7d).
func ParseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		return t, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if d, err := strconv.Atoi(n); err == nil && d >= 0 {
			return now.AddDate(0, 0, -d), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("want a date (2026-11-01) or a span (36h, 7d)")
}
