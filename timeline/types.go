// Package timeline turns decoded turns into a session: it groups turns
// into threads (the main agent, each subagent, side queries), diffs each
// turn against the previous turn of its thread, and raises flags for what
// went wrong. It is pure: no I/O and no UI types.
package timeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
)

// Thread kinds.
const (
	KindMain     = "main"
	KindSubagent = "subagent"
	KindSide     = "side"
	// KindConversation is a conversation of a client other than Claude
	// Code that is neither its first (main) nor started while another was
	// running (subagent): side queries are Claude Code's notion.
	KindConversation = "conversation"
)

// Severities of a flag.
const (
	SeverityInfo    = "info"
	SeverityWarning = "warning"
	SeverityError   = "error"
)

// SeverityRank orders severities, worst first: error 0, warning 1,
// anything else 2.
func SeverityRank(s string) int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// Session is a whole capture, decoded and analysed.
type Session struct {
	Exchanges int       // exchanges in the capture, turns or not
	FirstAt   time.Time // start of the first exchange
	LastAt    time.Time // start of the last exchange
	Turns     []*Turn   // Messages API exchanges, in capture order
	Threads   []*Thread // in order of their first turn
}

// Thread is one conversation: the main agent, a subagent, a side query, or
// another conversation of a client that is not Claude Code.
type Thread struct {
	ID    string // stable within a capture: "main", "sub1", "side1", ...
	Kind  string // KindMain, KindSubagent, KindSide or KindConversation
	Turns []int  // 1-based turn indexes, in order
	// Client is the client that sent the thread's first turn.
	Client Client
	// QuerySource is what Claude Code called the thread's requests (its
	// query_source: sdk, repl_main_thread, an agent's name, compact...)
	// when the capture tells it, as Claude Code's raw-bodies files do;
	// empty otherwise.
	QuerySource string
	// Session is the Claude Code session id of the thread's first turn
	// (the X-Claude-Code-Session-Id header, or the session_id a raw-bodies
	// capture kept), "" when unknown.
	Session string
}

// Turn is one Messages API exchange with what the timeline learned of it.
type Turn struct {
	Index    int    // 1-based, capture order
	Thread   string // Thread.ID
	Exchange *exchange.Exchange
	Decoded  *decode.Turn
	// Client is the client that sent the request (when nothing in the
	// request tells, that of the nearest earlier turn that does).
	Client Client

	// load reads the exchange back whole when Exchange had its bodies
	// dropped (see Builder.SetLoader).
	load func() (*exchange.Exchange, error)
	// dropped is set when a Builder dropped Exchange's bodies.
	dropped bool

	// Prev is the index of the previous turn of the same thread, 0 for
	// the thread's first turn and for a restart (LinkRestart). It is the
	// turn this one continues (its lineage parent): usually the thread's
	// turn just before, but for a branch or a retry of an older step it
	// may be an earlier one.
	Prev int
	// Link says how the turn joined its thread: LinkNew, LinkExtends,
	// LinkRepeat, LinkRetry, LinkPrefix, LinkBranch, LinkHistory,
	// LinkCompaction or LinkRestart.
	Link string

	CatalogAdded, CatalogRemoved []string
	WorkingAdded, WorkingRemoved []string

	// NewSearches are the searches this turn is the first of its thread
	// to carry the result of: its decoded NewSearches less those an
	// earlier turn of the thread carried already (Claude Code sends a
	// request again, the same tool_result in it, after a cut stream or an
	// error). A search is listed and counted on this turn, once.
	NewSearches []decode.Search

	Flags []Flag
}

// Flag is something that went wrong (or is worth knowing) on a turn.
type Flag struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	Detail   string `json:"detail"`

	Tool       string `json:"tool,omitempty"`        // call_before_load, unknown_tool
	Cause      string `json:"cause,omitempty"`       // cache_break
	TokensLost int64  `json:"tokens_lost,omitempty"` // cache_break
	// CacheMissReason is the API's diagnostics.cache_miss_reason type
	// when the response carried one; Agrees says whether it matches Cause.
	CacheMissReason string `json:"cache_miss_reason,omitempty"`
	Agrees          *bool  `json:"agrees,omitempty"`
	// Search is the tool_use id of the search an empty_search, a
	// search_partial or a search_repeated is about.
	Search string `json:"search,omitempty"`
	// Missing are the tools a search_partial's search named and did not
	// load (Tool is the first).
	Missing []string `json:"missing,omitempty"`

	// What a blind call (call_before_load, unknown_tool) led to. Answer
	// is the turn whose request carried the call's tool_result (0 when no
	// later request of the thread does), Refused whether that result is
	// an error (Claude Code refused the call). CallTokens estimates the
	// output tokens the response spent on the call (see [Estimates]).
	// RoundTrip is set when the answering request was made for refused
	// calls alone (no call of the response got a result that is not an
	// error): the whole request was then the price of the refusal. It is
	// set on the first such flag of a turn only, so that the request is
	// counted once. Otherwise ErrorTokens estimates the prompt tokens of
	// the refused call's tool_result in that request.
	Answer      int   `json:"answer,omitempty"`
	Refused     bool  `json:"refused,omitempty"`
	CallTokens  int64 `json:"call_tokens,omitempty"`
	ErrorTokens int64 `json:"error_tokens,omitempty"`
	RoundTrip   bool  `json:"round_trip,omitempty"`
}

// Whole returns the turn's exchange with its bodies: Exchange itself, or,
// when a Builder dropped its bodies, the exchange read back through the
// Builder's loader (Exchange, without bodies, if that fails).
func (t *Turn) Whole() *exchange.Exchange {
	ex, err := t.Load()
	if err != nil {
		return t.Exchange
	}
	return ex
}

// ErrNoBodies is returned by Turn.Load for a turn whose bodies a Builder
// dropped when it has no loader to read them back with.
var ErrNoBodies = errors.New("the bodies of this turn were not kept")

// Load returns the turn's exchange with its bodies, as Whole does, or the
// error that kept them from being read back: a turn whose bodies were
// dropped never comes back with empty ones.
func (t *Turn) Load() (*exchange.Exchange, error) {
	if t.Exchange == nil || !t.dropped {
		return t.Exchange, nil
	}
	if t.load == nil {
		return nil, ErrNoBodies
	}
	ex, err := t.load()
	if err != nil {
		return nil, fmt.Errorf("timeline: read exchange %d: %w", t.Exchange.ID, err)
	}
	if ex == nil {
		return nil, fmt.Errorf("timeline: read exchange %d: %w", t.Exchange.ID, ErrNoBodies)
	}
	return ex, nil
}

// OutputPlaceholder reports whether the turn's output tokens are the
// placeholder Claude Code wrote when the answer began: an answer made from
// a transcript whose last record carries no stop reason holds no final
// count (1.x and 2.1.7–2.1.52 write 1 to 25 output tokens on every record,
// and an answer cut off has none either), so its output tokens, and its
// cost, are lower bounds. The session listing counts the same answers
// (sessionfiles' Summary.OutputPlaceholders).
func (t *Turn) OutputPlaceholder() bool {
	d := t.Decoded
	return d != nil && d.Request.Transcript != nil && d.Response.Status == 200 && d.Response.ID != "" && d.Response.StopReason == "" && d.Response.Error == nil
}
