package timeline

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
)

// kinds sets the kind and ID of each thread (in the order they started)
// and each turn's Thread.
func kinds(threads []*Thread, infos []*info) {
	var main *Thread
	for _, in := range infos {
		// A request its client named a subagent's is none of the main
		// agent's (Claude Code 2.0's warm-up agents start first).
		if !in.side && !in.subHeader && !strings.HasPrefix(querySource(in), "agent:") {
			main = in.thread
			break
		}
	}
	// Claude Code's own name for a request, when the capture kept it,
	// says better than the heuristics which thread is the main agent's.
	for _, in := range infos {
		if mainSource(querySource(in)) {
			main = in.thread
			break
		}
	}
	first := map[*Thread]*info{}
	last := map[*Thread]*info{}
	sub := map[*Thread]bool{}
	agent := map[*Thread]bool{}
	for _, in := range infos {
		if first[in.thread] == nil {
			first[in.thread] = in
			agent[in.thread] = !in.side
		}
		if l := last[in.thread]; l == nil || in.end.After(l.end) {
			last[in.thread] = in
		}
		if in.subHeader && !first[in.thread].side {
			sub[in.thread] = true
		}
	}
	nSub, nSide, nConv := 0, 0, 0
	// The agent threads before the one at hand, by system prompt: the
	// latest end of each, and the two prompts that end latest (enough to
	// find one other than the thread's own). Threads come in the order of
	// their first turn.
	var running runningPrompts
	for _, th := range threads {
		f := first[th]
		switch {
		case th == main:
			th.Kind, th.ID = KindMain, "main"
		case agent[th] && !sub[th]:
			// Started while another agent thread with a different system
			// prompt was running: a subagent without a billing header.
			if end, ok := running.otherThan(f.sysKey); ok && !end.Before(f.start) {
				sub[th] = true
			}
		}
		if agent[th] {
			running.add(f.sysKey, last[th].end)
		}
		if th == main {
			continue
		}
		switch q := querySource(f); {
		case q == "":
		case strings.HasPrefix(q, "agent:"):
			sub[th] = true
		case !mainSource(q):
			sub[th] = false // compact, generate_session_title, ...: a side query
		}
		switch {
		case sub[th]:
			nSub++
			th.Kind, th.ID = KindSubagent, "sub"+strconv.Itoa(nSub)
		case !th.Client.ClaudeCode():
			nConv++
			th.Kind, th.ID = KindConversation, "conv"+strconv.Itoa(nConv)
		default:
			nSide++
			th.Kind, th.ID = KindSide, "side"+strconv.Itoa(nSide)
		}
	}
	for _, in := range infos {
		in.t.Thread = in.thread.ID
		if in.thread.QuerySource == "" {
			in.thread.QuerySource = querySource(in)
		}
		if in.thread.Session == "" && in.t.Exchange != nil {
			in.thread.Session = in.t.Exchange.ReqHeader(exchange.SessionHeader)
		}
	}
}

// querySource is Claude Code's query_source of a turn's request, when the
// capture kept it (raw-bodies captures), else "".
func querySource(in *info) string {
	if in == nil || in.t.Exchange == nil {
		return ""
	}
	return in.t.Exchange.ReqHeader(exchange.QuerySourceHeader)
}

// mainSource reports whether a query_source is the main agent's: the
// interactive loop (repl_main_thread, with or without an output style) or
// a -p / SDK run (sdk).
func mainSource(q string) bool {
	return q == "sdk" || q == "repl_main_thread" || strings.HasPrefix(q, "repl_main_thread:")
}

// runningPrompts keeps, for agent threads seen so far, the latest end of
// the threads of each system prompt, and the two prompts whose threads end
// latest.
type runningPrompts struct {
	end  map[digest]time.Time
	best []promptEnd // at most two, latest first
}

type promptEnd struct {
	key digest
	end time.Time
}

// add notes a thread of system prompt key that ended at end.
func (r *runningPrompts) add(key digest, end time.Time) {
	if r.end == nil {
		r.end = map[digest]time.Time{}
	}
	if e, ok := r.end[key]; ok && !end.After(e) {
		return
	}
	r.end[key] = end
	kept := []promptEnd{{key, end}}
	for _, b := range r.best {
		if b.key != key {
			kept = append(kept, b)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].end.After(kept[j].end) })
	r.best = kept[:min(2, len(kept))]
}

// otherThan is the latest end of a thread whose system prompt is not key.
func (r *runningPrompts) otherThan(key digest) (time.Time, bool) {
	for _, b := range r.best {
		if b.key != key {
			return b.end, true
		}
	}
	return time.Time{}, false
}
