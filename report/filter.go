package report

import (
	"strings"

	"github.com/tsinspect/tsinspect/filter"
	"github.com/tsinspect/tsinspect/timeline"
)

// FilterFields is what a filter expression (turns --filter) sees of the
// turn, and of its content in session s, the session it was built from.
func (t *Turn) FilterFields(s *timeline.Session) *filter.Fields {
	var req, resp *string
	content := func(request bool) string {
		if req == nil {
			q, r := s.Content(s.Turn(t.Index))
			req, resp = &q, &r
		}
		if request {
			return *req
		}
		return *resp
	}
	f := &filter.Fields{Model: t.Model, Thread: t.Thread,
		Request: func() string { return content(true) }, Response: func() string { return content(false) },
		Tokens: t.Usage.InputTokens + t.Usage.CacheReadInputTokens + t.Usage.CacheCreationInputTokens}
	for _, fl := range t.Flags {
		f.Flags = append(f.Flags, fl.Kind)
	}
	for _, c := range t.ToolCalls {
		f.Tools = append(f.Tools, c.Name)
	}
	if t.Cost != nil {
		f.Cost, f.Priced = t.Cost.USD, true
	}
	f.Text = strings.ToLower(strings.Join(append(append([]string{t.Model, t.Thread, t.StopReason}, f.Flags...), f.Tools...), " "))
	return f
}

// Keep keeps the turns of r in thread (all for ""), with a flag when
// flagged, and matching expr when not nil (s: the session r was built
// from), and returns how many turns r had.
func (r *Report) Keep(s *timeline.Session, thread string, flagged bool, expr filter.Expr) (all int) {
	all = len(r.Turns)
	if thread == "" && !flagged && expr == nil {
		return all
	}
	kept := r.Turns[:0]
	for _, t := range r.Turns {
		if (thread == "" || t.Thread == thread) && (!flagged || len(t.Flags) > 0) && (expr == nil || expr.Match(t.FilterFields(s))) {
			kept = append(kept, t)
		}
	}
	r.Turns = kept
	return all
}
