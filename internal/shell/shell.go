// Package shell quotes words for a POSIX shell, for the commands and
// exports tsinspect prints for a user to paste.
package shell

import "strings"

// Quote returns s as one shell word: unchanged when it holds nothing a
// shell would read specially, else in single quotes.
func Quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
