package timeline

import (
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
)

// How a turn joined its thread (Turn.Link).
const (
	// LinkNew: the turn starts a thread.
	LinkNew = "new"
	// LinkExtends: its messages are the parent's messages, then the
	// assistant message built from the parent's response, then more.
	LinkExtends = "extends"
	// LinkRepeat: its messages are exactly the parent's: the same request
	// sent again (a retry after a failure, or a repeat).
	LinkRepeat = "repeat"
	// LinkRetry: the same step asked again after the parent (whose
	// messages are the same but for the last user message) failed, was
	// cut off or came back empty, with that last message rebuilt: Claude
	// Code adds a nudge after an empty reply.
	LinkRetry = "retry"
	// LinkPrefix: its messages start with the parent's messages, but what
	// follows is not the parent's response (the response failed or was
	// rewritten by the client).
	LinkPrefix = "prefix"
	// LinkBranch: it shares its first messages with the parent, then
	// differs from it: the same conversation asked again with a changed
	// last message (Claude Code re-asking for a compaction summary, or
	// resending after editing a message).
	LinkBranch = "branch"
	// LinkHistory: its history holds the parent's response (tool_use ids,
	// thinking signatures or texts) although earlier messages changed: a
	// client that rewrote old messages, or resumed with a restructured
	// history.
	LinkHistory = "history"
	// LinkCompaction: the history restarted with a summary ("This session
	// is being continued from a previous conversation...") and the turn was
	// linked to the thread that was compacted.
	LinkCompaction = "compaction"
	// LinkRestart: a turn of the main conversation of Claude Code's session
	// file whose chain starts again (its context cleared, or its link to the
	// records before it missing from the file) joined the main agent's
	// thread. It continues no earlier turn (Prev is 0): no cache break,
	// catalog or working-set change, or repeated search is measured across
	// it. What is counted once per thread (a search's first carrying turn,
	// a flag raised once) still counts once across it.
	LinkRestart = "restart"
)

// oneMessageFailed is the byLast key under which the turns of one message
// that failed or came back empty are kept (no prefix of a real message
// list hashes to it): the only ones a first request can retry.
var oneMessageFailed = digest{0xff, 'o', 'n', 'e'}

// linker links turns into threads: it holds the indexes each turn is
// linked through, of the turns before it.
type linker struct {
	infos []*info
	// byFull maps the key of a whole message list to the turns (0-based)
	// that sent exactly it.
	byFull map[digest][]int
	// firstWith maps the key of the first i messages, for i shorter than
	// the whole list, to the first turn whose messages start so (the later
	// ones are found from it: byBranch). A turn adds only the prefixes no
	// turn had before, so the index grows with the messages, not with the
	// turns times their history.
	firstWith map[digest]int
	// byLast maps the key of all messages but the last to the turns whose
	// messages are those and one more (retryOf).
	byLast map[digest][]int
	// byFP maps a fingerprint of a response block to the turns whose
	// response held it.
	byFP map[string][]int
	// seen maps a unique fingerprint (tool use id, thinking signature),
	// tagged with the turn's class, to the latest turn holding it in its
	// response; held maps one to where histories hold it (latestHolding).
	seen map[string]int
	held map[string][]heldAt
	// tip is the last turn (0-based) of each thread so far.
	tip map[*Thread]int
	// main is the thread of the latest turn of a session file's main
	// conversation so far (mainChain), nil before one.
	main *Thread
	// linked, with a Builder's memo, is how the turns were linked so far.
	linked *linked
}

// newLinker returns a linker for infos. With memo (a Builder's), it goes
// on from the turns the builds before linked and kept, and with their
// indexes, and memo keeps what it links; the caller takes out what was
// linked but not kept (l.linked.rollback) once the build is done.
func newLinker(infos []*info, memo *analysed) *linker {
	l := &linker{infos: infos}
	if memo == nil {
		l.byFull, l.firstWith, l.byLast, l.byFP, l.seen, l.held = map[digest][]int{}, map[digest]int{}, map[digest][]int{}, map[string][]int{}, map[string]int{}, map[string][]heldAt{}
		return l
	}
	l.linked = memo.linked.reuse(infos)
	memo.linked = l.linked
	l.byFull, l.firstWith, l.byLast, l.byFP, l.seen, l.held = l.linked.byFull, l.linked.firstWith, l.linked.byLast, l.linked.byFP, l.linked.seen, l.linked.held
	return l
}

// link assigns every turn to a thread, sets Prev and Link, and returns
// the threads in the order they started.
//
// A turn is linked from the turns before it alone. With l.linked (a
// Builder's), the turns a build before linked and kept are set as they
// were, without looking again, and linking goes on from there; the turns
// it links are kept too while they and every one before them have ended
// (one in flight may still change), and the indexes the others add are
// taken out again when the build is done (linked.rollback).
func (l *linker) link() []*Thread {
	l.tip = map[*Thread]int{}
	var threads []*Thread
	kept := l.linked
	start := 0
	if kept != nil {
		for range kept.threads {
			threads = append(threads, &Thread{})
		}
		for k := range kept.n {
			in, t := l.infos[k], l.infos[k].t
			t.Client = in.client
			th := threads[kept.thread[k]]
			switch {
			case kept.how[k] == LinkRestart:
				t.Link = LinkRestart
			case kept.parent[k] < 0:
				th.Client = in.client
				t.Link = LinkNew
			default:
				t.Prev = kept.parent[k] + 1
				t.Link = kept.how[k]
			}
			in.thread = th
			l.joined(in)
			th.Turns = append(th.Turns, t.Index)
			l.tip[th] = k
		}
		start = kept.n
	}
	index := map[*Thread]int{}
	for i, th := range threads {
		index[th] = i
	}
	for k := start; k < len(l.infos); k++ {
		in := l.infos[k]
		parent, how := l.parent(k)
		t := in.t
		t.Client = in.client
		switch {
		case parent < 0 && in.mainChain && !in.side && l.main != nil:
			// The main conversation again, its chain started anew: the
			// main agent's thread goes on.
			in.thread, how = l.main, LinkRestart
			t.Link = LinkRestart
		case parent < 0:
			th := &Thread{Client: in.client}
			index[th] = len(threads)
			threads = append(threads, th)
			in.thread = th
			t.Link = LinkNew
		default:
			in.thread = l.infos[parent].thread
			t.Prev = parent + 1
			t.Link = how
		}
		l.joined(in)
		in.thread.Turns = append(in.thread.Turns, t.Index)
		l.tip[in.thread] = k
		if kept != nil {
			if k == kept.n && !kept.pending && in.src != nil && t.Exchange.State != exchange.StateInFlight {
				kept.keep(in, parent, how, index[in.thread], parent < 0 && how != LinkRestart)
			} else {
				kept.pending = true // from here on, what is indexed is taken out again
			}
		}
		l.index(k, in)
	}
	return threads
}

// joined notes that in has joined its thread: the context it was sent in,
// and the main conversation's thread, which the first main-chain turn that
// starts a thread starts (a later one may have been linked by its history
// into another agent's thread: that one does not become the main
// conversation's).
func (l *linker) joined(in *info) {
	t := in.t
	in.context = in
	if t.Prev > 0 {
		in.context = l.infos[t.Prev-1].context
	}
	if in.mainChain && l.main == nil && t.Link == LinkNew {
		l.main = in.thread
	}
}

// index adds turn k to the indexes later turns are linked through.
func (l *linker) index(k int, in *info) {
	// The assistant messages of the history no earlier turn had at their
	// place (after the same messages): where they hold a unique block is
	// kept once, for every later turn that holds them there too.
	ms := in.d.Request.Messages
	for j := len(in.pre) - 1; j >= 0 && !l.known(in.pre[j]); j-- {
		if ms[j].Role != "assistant" {
			continue
		}
		for _, fp := range fingerprints(ms[j].Blocks, true) {
			l.held[fp] = append(l.held[fp], heldAt{prefix: in.pre[j], at: j, first: k})
			if kept := l.linked; kept != nil && kept.pending {
				kept.undo = append(kept.undo, undo{held: fp})
			}
		}
	}
	l.addTo(l.byFull, in.full(), k)
	if len(in.msgHash) == 1 && (in.failed || in.empty) {
		l.addTo(l.byLast, oneMessageFailed, k)
	}
	if n := len(in.pre); n >= 2 {
		l.addTo(l.byLast, in.pre[n-2], k)
	}
	// The prefixes no earlier turn had: a turn that had a prefix had the
	// shorter ones too, so the first one found ends the walk.
	for i := len(in.pre) - 1; i >= 1; i-- {
		key := in.pre[i-1]
		if _, ok := l.firstWith[key]; ok {
			break
		}
		l.firstWith[key] = k
		if kept := l.linked; kept != nil && kept.pending {
			kept.undo = append(kept.undo, undo{first: true, key: key})
		}
	}
	for _, fp := range fingerprints(in.d.Response.Content, true) {
		l.addFP(fp, k)
		l.see(classed(fp, in.side), k)
	}
	for _, fp := range fingerprints(in.d.Response.Content, false) {
		l.addFP(fp, k)
	}
}

func (l *linker) addTo(m map[digest][]int, key digest, k int) {
	m[key] = append(m[key], k)
	if kept := l.linked; kept != nil && kept.pending {
		kept.undo = append(kept.undo, undo{m: m, key: key})
	}
}

func (l *linker) addFP(fp string, k int) {
	l.byFP[fp] = append(l.byFP[fp], k)
	if kept := l.linked; kept != nil && kept.pending {
		kept.undo = append(kept.undo, undo{fp: fp})
	}
}

func (l *linker) see(key string, k int) {
	if kept := l.linked; kept != nil && kept.pending {
		prev, had := l.seen[key]
		kept.undo = append(kept.undo, undo{seen: key, prev: prev, had: had})
	}
	l.seen[key] = k
}

// parent finds the earlier turn that turn k continues, and how; -1 when it
// starts a thread. Side queries only continue side queries and agent turns
// only agent turns.
func (l *linker) parent(k int) (int, string) {
	in := l.infos[k]
	p, how := l.byPrefix(k, in.side)
	if how != LinkRepeat {
		if q := l.retryOf(k); q >= 0 {
			return q, LinkRetry
		}
	}
	after := -1 // where the history goes past the parent's messages and response
	if p >= 0 {
		after = len(l.infos[p].msgHash)
		if how == LinkExtends {
			after++
		}
	}
	switch {
	case p >= 0 && (how == LinkRepeat || !l.assistantAfter(k, after)):
		// The history is the parent's (and its response), then only user
		// input: nothing later to look for.
		return p, how
	case p >= 0:
		// Assistant messages follow the shared prefix: the history may
		// hold the response of a later turn whose own messages were
		// rewritten since. The turn whose response comes latest is the
		// closer ancestor.
		if h := l.byHistory(k, in.side); h > p {
			return h, LinkHistory
		}
		return p, how
	}
	// No earlier turn's messages are a prefix of these. The latest turn
	// that either shares the first messages (a branch) or whose blocks the
	// history holds is the closest relative.
	h, br := l.byHistory(k, in.side), l.byBranch(k, in.side)
	switch {
	case br >= 0 && br >= h:
		return br, LinkBranch
	case h >= 0 && in.continued:
		return h, LinkCompaction
	case h >= 0:
		return h, LinkHistory
	}
	if in.continued && !in.side {
		if p := l.compacted(k); p >= 0 {
			return p, LinkCompaction
		}
	}
	return -1, LinkNew
}

// assistantAfter reports whether turn k has an assistant message at index
// from or later.
func (l *linker) assistantAfter(k, from int) bool {
	ms := l.infos[k].d.Request.Messages
	for i := max(from, 0); i < len(ms); i++ {
		if ms[i].Role == "assistant" {
			return true
		}
	}
	return false
}

// byPrefix looks for the earlier turn whose messages are the longest
// prefix of turn k's: the same messages (a repeat), or a prefix followed by
// its response (extends), or a prefix followed by something else.
func (l *linker) byPrefix(k int, side bool) (int, string) {
	in := l.infos[k]
	n := len(in.msgHash)
	for i := n; i >= 1; i-- {
		best, bestRank := -1, 0
		for _, p := range l.byFull[in.prefixKey(i)] {
			pi := l.infos[p]
			if pi.side != side || pi.agent != in.agent {
				continue
			}
			rank := 1 // prefix
			switch {
			case i == n:
				if !l.repeatable(p, k) {
					continue
				}
				rank = 3
			case pi.hasResp && in.msgHash[i] == pi.resp:
				rank = 2
			}
			// Later turns win ties: they are the tip of the lineage.
			if rank > bestRank || (rank == bestRank && p > best) {
				best, bestRank = p, rank
			}
		}
		if best >= 0 {
			switch bestRank {
			case 3:
				return best, LinkRepeat
			case 2:
				return best, LinkExtends
			}
			return best, LinkPrefix
		}
	}
	return -1, ""
}

// byBranch looks for the earlier turn sharing the longest run of first
// messages with turn k, where both go on differently after it.
func (l *linker) byBranch(k int, side bool) int {
	in := l.infos[k]
	for i := len(in.msgHash) - 1; i >= 1; i-- {
		key := in.prefixKey(i)
		first, ok := l.firstWith[key]
		if !ok || first >= k {
			continue
		}
		// The turns that start so are the first one and later ones: the
		// latest of them is looked for from k back.
		for p := k - 1; p >= first; p-- {
			if pi := l.infos[p]; pi.side == side && len(pi.pre) > i && pi.pre[i-1] == key {
				return p
			}
		}
	}
	return -1
}

// retryOf finds the failed, cut or empty turn that turn k asks again:
// the same request (model, system prompt, tools), the same number of
// messages, all but the last the same, ended before k started, and not
// continued by any later turn. -1 when there is none. A first request
// has no earlier messages to share, so its one message must say the
// same, whitespace and added text aside ("Warmup" asked again as
// "Warmup\n").
func (l *linker) retryOf(k int) int {
	in := l.infos[k]
	n := len(in.msgHash)
	if n == 0 {
		return -1
	}
	ok := func(q int) bool {
		qi := l.infos[q]
		return qi.side == in.side && qi.agent == in.agent && len(qi.msgHash) == n && (qi.failed || qi.empty) &&
			l.tip[qi.thread] == q && !qi.end.After(in.start) && qi.sameRequest(in) && qi.t.Exchange.State != exchange.StateInFlight
	}
	best := -1
	if n == 1 {
		now := strings.TrimSpace(strings.Join(lastUserTexts(in.d.Request.Messages), "\n"))
		// Only the earlier failed or empty turns of one message can be
		// asked again so: byLast keeps them under oneMessageFailed.
		cands := l.byLast[oneMessageFailed]
		for i := len(cands) - 1; i >= 0; i-- {
			q := cands[i]
			if q >= k || !ok(q) || len(l.infos[q].msgHash) != 1 {
				continue
			}
			was := strings.TrimSpace(strings.Join(lastUserTexts(l.infos[q].d.Request.Messages), "\n"))
			if was != "" && strings.HasPrefix(now, was) {
				return q
			}
		}
		return -1
	}
	for _, q := range l.byLast[in.prefixKey(n-1)] {
		if ok(q) && q > best {
			best = q
		}
	}
	return best
}

// repeatable reports whether turn k, whose messages are exactly turn p's,
// is the same request sent again: the same model, system prompt and tools,
// sent after p ended, and p failed, came back empty, or is the last turn
// of its thread. Requests that overlap (parallel subagents started with
// the same prompt, Claude Code's warmups and token-count probes) or differ
// in model, system prompt or tools are different requests.
func (l *linker) repeatable(p, k int) bool {
	pi, in := l.infos[p], l.infos[k]
	if !pi.sameRequest(in) || pi.end.After(in.start) || pi.t.Exchange.State == exchange.StateInFlight {
		return false
	}
	return pi.failed || pi.empty || l.tip[pi.thread] == p
}

// byHistory links a turn whose earlier messages changed (so no prefix
// matches) through the responses its history still holds. Tool use ids and
// thinking signatures are unique; texts are not, so a text only decides
// among the turns of the thread a unique block points to, or, without one,
// prefers a turn with the same system prompt and tools, then the latest.
func (l *linker) byHistory(k int, side bool) int {
	in := l.infos[k]
	ms := in.d.Request.Messages
	candidates := func(fps []string) []int {
		var out []int
		seen := map[int]bool{}
		for _, fp := range fps {
			for _, p := range l.byFP[fp] {
				if l.infos[p].side == side && !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
		sort.Ints(out)
		return out
	}
	// The latest assistant message holding a unique block.
	anchor, anchorMsg := -1, -1
	for j := len(ms) - 1; j >= 0 && anchor < 0; j-- {
		if ms[j].Role != "assistant" {
			continue
		}
		fps := fingerprints(ms[j].Blocks, true)
		if c := candidates(fps); len(c) > 0 {
			anchor, anchorMsg = c[len(c)-1], j
		}
		// A turn whose history holds the block is in the same lineage
		// even when no response was recorded; the latest is the closest.
		for _, fp := range fps {
			if p := l.latestHolding(fp, side, k, anchor); p > anchor {
				anchor, anchorMsg = p, j
			}
		}
	}
	// A later assistant message (a text reply) may point to a later turn
	// of the anchor's thread.
	for j := len(ms) - 1; j > anchorMsg; j-- {
		if ms[j].Role != "assistant" {
			continue
		}
		c := candidates(fingerprints(ms[j].Blocks, false))
		best := -1
		for _, p := range c {
			switch {
			case anchor >= 0:
				if l.infos[p].thread == l.infos[anchor].thread && p > anchor {
					best = p
				}
			case best < 0 || (l.infos[p].identity(in) && !l.infos[best].identity(in)) ||
				(l.infos[p].identity(in) == l.infos[best].identity(in) && p > best):
				best = p
			}
		}
		if best >= 0 {
			return best
		}
	}
	return anchor
}

// heldAt is where a history holds a unique block: in message at, after
// the messages whose prefix key is prefix (that message included); first
// is the first turn that held it so.
type heldAt struct {
	prefix digest
	at     int
	first  int
}

// known reports whether an earlier turn's messages began with those of
// the prefix key.
func (l *linker) known(prefix digest) bool {
	if _, ok := l.firstWith[prefix]; ok {
		return true
	}
	return len(l.byFull[prefix]) > 0
}

// latestHolding is the latest turn before k, later than after, of the
// class side that holds the unique block fp in its response or its
// history; -1 when there is none.
func (l *linker) latestHolding(fp string, side bool, k, after int) int {
	best := after
	if p, ok := l.seen[classed(fp, side)]; ok && p > best {
		best = p
	}
	for _, h := range l.held[fp] {
		for q := k - 1; q > best && q >= h.first; q-- {
			if qi := l.infos[q]; qi.side == side && len(qi.pre) > h.at && qi.pre[h.at] == h.prefix {
				best = q
				break
			}
		}
	}
	if best == after {
		return -1
	}
	return best
}

// classed tags a fingerprint with a turn class.
func classed(fp string, side bool) string {
	if side {
		return "side\x00" + fp
	}
	return "agent\x00" + fp
}

// fingerprints lists what identifies a response's blocks in a later
// history: tool use ids and thinking signatures (unique), or texts.
func fingerprints(blocks []decode.Block, unique bool) []string {
	var out []string
	for _, bl := range blocks {
		switch {
		case unique && bl.ID != "" && (bl.Type == "tool_use" || bl.Type == "server_tool_use" || bl.Type == "mcp_tool_use"):
			out = append(out, "id\x00"+bl.ID)
		case unique && bl.Signature != "":
			out = append(out, "sig\x00"+bl.Signature)
		case !unique && bl.Type == "text" && strings.TrimSpace(bl.Text) != "":
			h := hashBytes([]byte(bl.Text))
			out = append(out, "text\x00"+string(h[:]))
		}
	}
	return out
}

// compacted finds the thread a post-compaction turn k continues: the
// thread whose history the latest earlier compaction request summarised,
// else the latest thread of the same agent with the same system prompt and
// tools. It returns that thread's last turn before k.
func (l *linker) compacted(k int) int {
	in := l.infos[k]
	for c := k - 1; c >= 0; c-- {
		ci := l.infos[c]
		if !ci.compaction {
			continue
		}
		if p := l.agentAncestor(c); p >= 0 {
			return l.tip[l.infos[p].thread]
		}
		break
	}
	for p := k - 1; p >= 0; p-- {
		pi := l.infos[p]
		// Two agents' requests never join one thread (info.agent): a
		// subagent whose system prompt and tools are the main agent's
		// does not take the main conversation's compaction.
		if !pi.side && pi.agent == in.agent && pi.mainChain == in.mainChain && pi.identity(in) && l.tip[pi.thread] == p {
			return p
		}
	}
	return -1
}

// agentAncestor finds the agent turn whose history compaction request c
// carries.
func (l *linker) agentAncestor(c int) int {
	if p, _ := l.byPrefix(c, false); p >= 0 {
		return p
	}
	return l.byHistory(c, false)
}
