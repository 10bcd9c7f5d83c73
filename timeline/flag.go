package timeline

import (
	"fmt"
	"sort"

	"github.com/tsinspect/tsinspect/decode"
)

// ruleView is what a rule sees of a build: the turns, by their place
// (0-based), and for a turn, what the rest of its thread says. The checks
// of the flag kinds (flagkinds.go) run on a flagRun; a test can run one on
// a view made by hand.
type ruleView interface {
	// turn returns what was worked out about turn k: its Turn, decoded
	// exchange and analysis, linked (Prev, Link) and with its
	// NewSearches set.
	turn(k int) *info
	// ref names turn k for a person.
	ref(k int) string
	// resultFor finds the tool_result answering tool use id in a later
	// turn of k's thread: that turn and the block, or -1 and nil.
	resultFor(k int, id string) (int, *decode.Block)
	// earlierFlag reports whether an earlier turn of k's thread has a flag
	// of kind, naming the tool name when name is not "".
	earlierFlag(k int, kind, name string) bool
	// earlierSearch finds the first earlier turn of k's context (its
	// thread since the latest restart: LinkRestart) that carried the
	// answer to a search asking what key does (searchKey): that turn and
	// the search, or -1.
	earlierSearch(k int, key string) (int, decode.Search)
	// next returns the places (0-based) of the turns of k's thread after
	// k, in order.
	next(k int) []int
}

// flagRun is one run of the flag kinds' checks over the turns of a
// build, once they are linked.
type flagRun struct {
	infos []*info
	// flagged holds the flags of the turns flag has been through, by
	// thread and kind.
	flagged map[flagKey]bool
	// est measures the parts of turns for the blind-call figures.
	est *Estimates
	// searched holds, by context and searchKey, the first turn flag has
	// been through that carried a search's answer.
	searched map[searchAt]int
}

// searchAt names the searches of one context (info.context: a thread, or
// its part since a restart) that ask the same.
type searchAt struct {
	context *info
	key     string
}

// turn returns the analysis of turn k.
func (run *flagRun) turn(k int) *info { return run.infos[k] }

// flag runs the check of every flag kind, in the table's order, over
// every turn, and gives each flag its kind's name and severity.
func (run *flagRun) flag() {
	run.flagged = map[flagKey]bool{}
	run.searched = map[searchAt]int{}
	for k, in := range run.infos {
		for _, r := range flagKinds {
			for _, f := range r.check(run, k) {
				f.Kind, f.Severity = r.Kind, r.Severity
				in.t.Flags = append(in.t.Flags, f)
			}
		}
		run.blindOutcome(k)
		// Later turns of the thread (of the context, for searches) look
		// these up (earlierFlag, earlierSearch).
		for _, s := range in.t.NewSearches {
			at := searchAt{in.context, searchKey(s)}
			if _, seen := run.searched[at]; !seen && s.HasResult {
				run.searched[at] = k
			}
		}
		for _, f := range in.t.Flags {
			run.flagged[flagKey{in.thread, f.Kind, ""}] = true
			if f.Kind == FlagDeferredInline || f.Kind == FlagReferenceNotSent {
				for n := range flagNames(f) {
					run.flagged[flagKey{in.thread, f.Kind, n}] = true
				}
			}
		}
	}
}

// blindOutcome fills in what each blind-call flag of turn k led to: the
// turn that answered the call, whether it was refused, and the tokens
// the refusal cost (see Flag.Answer).
func (run *flagRun) blindOutcome(k int) {
	in := run.infos[k]
	blind := false
	for _, f := range in.t.Flags {
		blind = blind || f.Kind == FlagCallBeforeLoad || f.Kind == FlagUnknownTool
	}
	if !blind {
		return
	}
	if run.est == nil {
		run.est = NewEstimates()
	}
	d := in.d
	outRate, _ := OutputRate(d)
	// The round trip that carried the answers back was wasted when no call
	// of the response got a result that is not an error.
	wasted := true
	for _, c := range d.ToolCalls {
		if c.Server {
			continue
		}
		if l, res := run.resultFor(k, c.ID); l < 0 || !refused(res) {
			wasted = false
		}
	}
	roundTrip := false
	used := map[int]bool{}
	for i := range in.t.Flags {
		f := &in.t.Flags[i]
		if f.Kind != FlagCallBeforeLoad && f.Kind != FlagUnknownTool {
			continue
		}
		var call *decode.ToolCall
		for j := range d.ToolCalls {
			if c := &d.ToolCalls[j]; c.Name == f.Tool && !c.Server && !c.Loaded && !used[j] {
				call, used[j] = c, true
				break
			}
		}
		if call == nil {
			continue
		}
		if call.Block >= 0 && call.Block < len(d.Response.Content) {
			f.CallTokens = Tokens(blockBytes(&d.Response.Content[call.Block]), outRate)
		}
		l, res := run.resultFor(k, call.ID)
		if l < 0 {
			continue
		}
		f.Answer = run.infos[l].t.Index
		f.Refused = refused(res)
		if !f.Refused {
			continue
		}
		switch {
		case wasted && !roundTrip:
			f.RoundTrip, roundTrip = true, true
		case wasted:
			// Its error is part of the request the first flag counts whole.
		default:
			rate, _ := run.est.PromptRate(run.infos[l].d)
			f.ErrorTokens = Tokens(len(res.Raw), rate)
		}
	}
}

// refused reports whether a tool_result says the client refused the call:
// an error, or one of Claude Code's refusals.
func refused(res *decode.Block) bool {
	if res == nil {
		return false
	}
	if res.IsError {
		return true
	}
	for _, s := range []string{decode.InputValidationText, decode.NoSuchToolText} {
		if res.ResultContains(s) {
			return true
		}
	}
	return false
}

// flagKey names the flags of one kind in one thread, or those of them
// that name a tool (earlierFlag).
type flagKey struct {
	thread *Thread
	kind   string
	name   string
}

// ref names turn k for a person: its place in its thread and in the
// capture.
func (run *flagRun) ref(k int) string {
	in := run.infos[k]
	for i, idx := range in.thread.Turns {
		if idx == in.t.Index {
			return fmt.Sprintf("turn %d of this thread (#%d)", i+1, in.t.Index)
		}
	}
	return fmt.Sprintf("turn #%d", in.t.Index)
}

// later returns the turns of k's thread after k, by their 1-based index
// (a part of Thread.Turns, which is in order).
func (run *flagRun) later(k int) []int {
	in := run.infos[k]
	ts := in.thread.Turns
	return ts[sort.SearchInts(ts, in.t.Index+1):]
}

// next returns the places of the turns of k's thread after k.
func (run *flagRun) next(k int) []int {
	var out []int
	for _, idx := range run.later(k) {
		out = append(out, idx-1)
	}
	return out
}

// resultFor finds the tool_result answering tool use id in a later turn of
// k's thread: that turn and the block, or -1.
func (run *flagRun) resultFor(k int, id string) (int, *decode.Block) {
	if id == "" {
		return -1, nil
	}
	for _, idx := range run.later(k) {
		l := idx - 1
		ms := run.infos[l].d.Request.Messages
		for i := len(ms) - 1; i >= 0; i-- {
			for j := range ms[i].Blocks {
				bl := &ms[i].Blocks[j]
				if bl.Type == "tool_result" && bl.ToolUseID == id {
					return l, bl
				}
			}
		}
	}
	return -1, nil
}

// earlierFlag reports whether an earlier turn of k's thread has a flag of
// kind, naming the tool name when name is not "" (as flagNames reads it).
//
// The rules run turn by turn in capture order, so the flags flag has
// gathered so far are those of the earlier turns.
func (run *flagRun) earlierFlag(k int, kind, name string) bool {
	return run.flagged[flagKey{run.infos[k].thread, kind, name}]
}

// earlierSearch finds the first earlier turn of k's context (its thread
// since the latest restart) that carried the answer to a search asking
// what key does.
//
// The rules run turn by turn in capture order, so the searches flag has
// gathered so far are those of the earlier turns.
func (run *flagRun) earlierSearch(k int, key string) (int, decode.Search) {
	j, ok := run.searched[searchAt{run.infos[k].context, key}]
	if !ok {
		return -1, decode.Search{}
	}
	for _, s := range run.infos[j].t.NewSearches {
		if searchKey(s) == key {
			return j, s
		}
	}
	return -1, decode.Search{}
}
