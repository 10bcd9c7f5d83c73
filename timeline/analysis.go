package timeline

import (
	"sort"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/decode"
)

// Texts that mark Claude Code's compaction.
const (
	compactionPrefix   = "CRITICAL: Respond with TEXT ONLY"
	continuationPrefix = "This session is being continued from a previous conversation"
	subagentMarker     = "cc_is_subagent=true"
)

// sideMaxTokens: a request asking for fewer output tokens than this is a
// side query (titles, summaries, quota checks). Claude Code's agent loops
// ask for 32,000 or more.
const sideMaxTokens = 4096

// info is what Build works out about one turn on the way.
type info struct {
	t *Turn
	d *decode.Turn

	msgHash []digest // per message, canonical
	pre     []digest // pre[i]: chain over msgHash[0..i]
	resp    digest   // the assistant message built from the response
	hasResp bool

	client     Client
	side       bool // a side query: never joins an agent thread
	compaction bool // a compaction request
	continued  bool // history restarted after compaction
	subHeader  bool // billing header says cc_is_subagent=true
	// agent names the subagent a request made from a transcript came from
	// (its query source "agent:<id>"): two agents' requests never join
	// one thread, even when they send the same messages (2.0's warm-ups).
	agent string
	// mainChain: a request made from the main conversation of a session
	// file (no agent's): the main agent's, whatever its chain (see
	// LinkRestart).
	mainChain bool

	sysIdx   []int    // original indexes of the non-billing system blocks
	sysHash  []digest // their canonical hashes
	sysKey   digest
	tools    []toolEntry // non-deferred tools, in order
	toolsKey digest
	// allTools is the key of every tool definition, deferred ones too.
	allTools    digest
	nonDeferred int
	betas       []string

	// inline names the tools announced as deferred but sent inline
	// (inlineAnnounced).
	inline []string

	failed bool // HTTP error, error event, or cut off
	empty  bool // complete, but no content
	usage  bool // a usable cache baseline: complete, no error, usage present

	start, end time.Time
	thread     *Thread
	// context is the first turn of the context this one was sent in: its
	// thread's first turn, or the restart (LinkRestart) since.
	context *info
	// src is the analysis a Builder kept that this was copied from.
	src *info
}

type toolEntry struct {
	name string
	hash digest
}

// seed starts every message prefix chain.
var seed = hashBytes([]byte("timeline messages"))

// full is the key of the whole message list.
func (in *info) full() digest {
	if len(in.pre) == 0 {
		return seed
	}
	return in.pre[len(in.pre)-1]
}

// prefixKey is the key of the first n messages.
func (in *info) prefixKey(n int) digest {
	if n == 0 {
		return seed
	}
	return in.pre[n-1]
}

// identity says whether two turns look like the same agent: same system
// prompt (billing header aside) and same non-deferred tools.
func (in *info) identity(o *info) bool {
	return in.sysKey == o.sysKey && in.toolsKey == o.toolsKey
}

// analyse computes a turn's keys.
func analyse(t *Turn, h *hasher) *info {
	d := t.Decoded
	ex := t.Exchange
	in := &info{t: t, d: d, start: ex.Start, end: ex.End}
	if in.end.IsZero() {
		in.end = in.start
	}
	r := &d.Request
	in.msgHash, in.pre = h.messageKeys(r.Messages)
	if len(d.Response.Content) > 0 {
		in.resp = h.message(assistantMessage(d.Response))
		in.hasResp = true
	}

	sys := seed
	for i, b := range r.System {
		if isBillingBlock(b) {
			if strings.Contains(b.Text, subagentMarker) {
				in.subHeader = true
			}
			continue
		}
		bh := h.raw(func() []byte { return canonicalSystemBlock(b) }, "system", b.Text, b.Raw)
		in.sysIdx = append(in.sysIdx, i)
		in.sysHash = append(in.sysHash, bh)
		sys = chain(sys, bh)
	}
	in.sysKey = sys
	tk, all := seed, seed
	for _, tool := range r.Tools {
		th := h.raw(func() []byte { return CanonicalJSON(tool.Raw) }, "tool", "", tool.Raw)
		all = chain(all, th)
		if tool.DeferLoading {
			continue
		}
		in.nonDeferred++
		in.tools = append(in.tools, toolEntry{tool.Name, th})
		tk = chain(tk, th)
	}
	in.toolsKey, in.allTools = tk, all
	in.betas = betaSet(r)
	in.client = detectClient(ex, r)
	in.inline = inlineAnnounced(d)

	resp := &d.Response
	in.failed = failed(t)
	in.empty = !in.failed && len(resp.Content) == 0
	in.usage = !in.failed && resp.Usage.TotalInput() > 0
	return in
}

// classify applies Claude Code's own conventions to its turns: its
// compaction texts, and its side queries (titles, summaries, quota checks
// and token-count probes: no tools, or max_tokens below sideMaxTokens).
// Other clients' requests are all agent turns.
func (in *info) classify() {
	r := &in.d.Request
	qs := querySource(in)
	// Subagents' requests are named "agent:<id>" (an inline sidechain's
	// "agent:"); a transcript is Claude Code's, and holds no side query.
	in.mainChain = r.Transcript != nil && qs == ""
	if !in.client.ClaudeCode() {
		return
	}
	for _, s := range lastUserTexts(r.Messages) {
		if strings.HasPrefix(strings.TrimSpace(s), compactionPrefix) {
			in.compaction = true
		}
	}
	in.continued = startsContinued(r.Messages)
	// A request made from a transcript is no side query (Claude Code
	// writes none there), and its tools are not known.
	in.side = in.compaction || (r.Transcript == nil && in.nonDeferred == 0) || (r.MaxTokens > 0 && r.MaxTokens < sideMaxTokens)
	if r.Transcript != nil && strings.HasPrefix(qs, "agent:") && len(qs) > len("agent:") {
		in.agent = qs
	}
}

// sameRequest reports whether two turns sent the same request apart from
// its messages: model, system prompt (Claude Code's billing header aside,
// which varies per request) and every tool definition.
func (in *info) sameRequest(o *info) bool {
	return in.d.Request.Model == o.d.Request.Model && in.sysKey == o.sysKey && in.allTools == o.allTools
}

// failed reports whether a turn got no usable answer: an HTTP error, an
// error event, or a response that broke off.
func failed(t *Turn) bool {
	r := &t.Decoded.Response
	return t.Exchange.Status >= 400 || r.Error != nil || r.Incomplete || t.Exchange.Status == 0
}

func canonicalSystemBlock(b decode.SystemBlock) []byte {
	if len(b.Raw) > 0 && !isJSONString(b.Raw) {
		return CanonicalJSON(b.Raw)
	}
	return canonicalMessage(&decode.Message{Role: "system", StringContent: true, Text: b.Text})
}

func isJSONString(raw []byte) bool {
	s := strings.TrimSpace(string(raw))
	return strings.HasPrefix(s, `"`)
}

// betaSet is the sorted set of betas a request asked for, header and body.
func betaSet(r *decode.Request) []string {
	set := map[string]bool{}
	for _, b := range r.Betas {
		set[b] = true
	}
	for _, b := range r.BodyBetas {
		set[b] = true
	}
	out := make([]string, 0, len(set))
	for b := range set {
		out = append(out, b)
	}
	sort.Strings(out)
	return out
}

// lastUserTexts returns the texts of the last user message.
func lastUserTexts(ms []*decode.Message) []string {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role != "user" {
			continue
		}
		var out []string
		for _, b := range messageBlocks(ms[i]) {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
		return out
	}
	return nil
}

// startsContinued reports whether the first user message is Claude Code's
// post-compaction summary.
func startsContinued(ms []*decode.Message) bool {
	for _, m := range ms {
		if m.Role != "user" {
			continue
		}
		for _, b := range messageBlocks(m) {
			if b.Type == "text" && strings.Contains(b.Text, continuationPrefix) {
				return true
			}
		}
		return false
	}
	return false
}
