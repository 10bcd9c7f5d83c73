package team

import (
	"encoding/json"
	"sort"
)

// finding is one row of the findings table: one element of a list of a
// session's advice facts (a tool, a search that missed, a blind call, a
// cache break, ...), or one fact that is an object (what deferral saved).
type finding struct {
	kind    string
	seq     int
	subject string
	usd     float64
	detail  string
}

// subjectKeys are the members that name what a finding is about, the
// first present wins; usdKeys those that say what it cost or saved.
var (
	subjectKeys = []string{"name", "tool", "cause", "wanted", "query", "mode"}
	usdKeys     = []string{"usd", "round_trip_usd", "inline_usd", "saved_usd"}
)

// findingsOf splits a session's advice facts (as JSON) into rows keyed by
// the member they come from: every member that is a list of objects
// gives a row per element, every member that is an object one row. A new
// kind of fact needs no change to the schema.
func findingsOf(facts []byte) ([]finding, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(facts, &top); err != nil {
		return nil, err
	}
	kinds := make([]string, 0, len(top))
	for k := range top {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var out []finding
	for _, k := range kinds {
		raw := top[k]
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) == nil {
			for i, el := range list {
				if f, ok := findingOf(k, i, el); ok {
					out = append(out, f)
				}
			}
			continue
		}
		if f, ok := findingOf(k, 0, raw); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// findingOf is the row of one object of kind k; ok is false for what is
// not an object.
func findingOf(k string, seq int, raw json.RawMessage) (finding, bool) {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return finding{}, false
	}
	f := finding{kind: k, seq: seq, detail: string(raw)}
	for _, s := range subjectKeys {
		if v, ok := m[s].(string); ok && v != "" {
			f.subject = v
			break
		}
	}
	for _, u := range usdKeys {
		if v, ok := m[u].(float64); ok {
			f.usd = v
			break
		}
	}
	return f, true
}
