package report

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tsinspect/tsinspect/timeline"
)

// ErrUnknownKind is wrapped by ParseKinds' error for a name that is not a
// flag kind.
var ErrUnknownKind = errors.New("unknown flag kind")

// ParseKinds splits a comma-separated list of flag kinds (report
// --fail-on); "" is none. An empty item, or one that is not a kind of
// timeline.Kinds, is an error.
func ParseKinds(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var kinds []string
	for _, k := range strings.Split(list, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			return nil, fmt.Errorf("%q: empty kind in the list", list)
		}
		if !slices.Contains(timeline.Kinds(), k) {
			return nil, fmt.Errorf("%w %q (kinds: %s)", ErrUnknownKind, k, strings.Join(timeline.Kinds(), ", "))
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}

// FailOnSummary returns a one-line account of the flags of the given
// kinds in r ("fail-on: cache_break on turns 3, 7; empty_search on turn
// 2"), or "" when there are none.
func FailOnSummary(r *Report, kinds []string) string {
	want := map[string]bool{}
	for _, k := range kinds {
		want[k] = true
	}
	order, turns := r.FlagKinds()
	var parts []string
	n := 0
	for _, k := range order {
		if !want[k] {
			continue
		}
		ts := turns[k]
		n += len(ts)
		word := "turn"
		if len(ts) > 1 {
			word = "turns"
		}
		nums := make([]string, len(ts))
		for i, t := range ts {
			nums[i] = fmt.Sprint(t)
		}
		parts = append(parts, fmt.Sprintf("%s on %s %s", k, word, strings.Join(nums, ", ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "fail-on: " + strings.Join(parts, "; ")
}
