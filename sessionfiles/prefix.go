package sessionfiles

import (
	"errors"
	"fmt"
	"strings"
)

// MinPrefix is the fewest characters of a session ID that name a session
// (LooksLikeSession, Resolve).
const MinPrefix = 4

// ErrNotOne is what the errors for a session ID prefix that is too short,
// or that more than one session starts with, are (errors.Is).
var ErrNotOne = errors.New("not one session")

// notOne is an error that is ErrNotOne, with its own message.
type notOne struct{ msg string }

func (e *notOne) Error() string        { return e.msg }
func (e *notOne) Is(target error) bool { return target == ErrNotOne }

// ShortPrefix reports whether arg reads as the start of a session ID too
// short to be taken for one: one to MinPrefix-1 hexadecimal digits.
func ShortPrefix(arg string) bool {
	if arg == "" || len(arg) >= MinPrefix {
		return false
	}
	for _, c := range arg {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// TooShort is the error for a prefix shorter than MinPrefix that sessions
// under root start with, saying which; nil when none does (or root holds
// no sessions), so that arg is then taken for what else it may name.
func TooShort(root, arg string) error {
	list, err := List(root)
	if err != nil {
		return nil
	}
	found := startingWith(list, arg)
	if len(found) == 0 {
		return nil
	}
	return &notOne{fmt.Sprintf("open session %s: %q is too short for a session ID (give at least %d characters); %s", arg, arg, MinPrefix, Candidates(found))}
}

// startingWith returns the entries whose ID starts with prefix, in list
// order.
func startingWith(list []Entry, prefix string) []Entry {
	var found []Entry
	for _, e := range list {
		if strings.HasPrefix(e.ID, prefix) {
			found = append(found, e)
		}
	}
	return found
}

// Candidates says which sessions a prefix could name: "it could be
// 3f2a91c0 (project, last written 2026-05-01 10:32), ..." for the first
// five (newest first, as List orders them) and how many more.
func Candidates(found []Entry) string {
	const shown = 5
	var parts []string
	for i, e := range found {
		if i == shown {
			parts = append(parts, fmt.Sprintf("and %d more ('tsinspect sessions' lists them)", len(found)-shown))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s, last written %s)", shortID(e.ID), e.Project, e.ModTime.Local().Format("2006-01-02 15:04")))
	}
	what := "it could be"
	if len(found) == 1 {
		what = "it is the start of"
	}
	return what + " " + strings.Join(parts, ", ")
}
