package decode

import "strings"

// ShortModel is a model name as a person reads it in a table: without the
// "claude-" prefix every model shares and without a -YYYYMMDD snapshot
// suffix. claude-sonnet-4-5-20250929 is sonnet-4-5; "" stays "".
func ShortModel(m string) string {
	m = strings.TrimPrefix(m, "claude-")
	if i := strings.LastIndexByte(m, '-'); i > 0 && len(m)-i-1 == 8 && allDigits(m[i+1:]) {
		m = m[:i]
	}
	return m
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
