// Package report writes a session as a machine-readable report: what the
// capture holds, its threads, and for every turn the model, status, usage,
// the catalog and working set with their changes, the tool searches whose
// results the turn carries, the tool calls of its response and the flags
// the timeline raised.
//
// A report is built in two steps so that other packages can transform it in
// between (a redactor, for one): [Build] turns a timeline.Session into a
// plain [Report] value, and [Report.WriteJSON], [Report.WriteMarkdown] or
// [Report.WriteHTML] writes it. [JSON] does both. Every turn also lists its
// tool definitions (a hash and a token count, never the schema) and what
// they cost; [TokenSummary] sums that per thread.
//
// The JSON field names are a contract (schema_version 1): fields may be
// added, never renamed or removed. Arrays are written as [] when empty,
// never null. Times are RFC 3339 in UTC, null when unknown.
package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tsinspect/tsinspect/timeline"
)

// SchemaVersion is the report format's version, written as schema_version.
const SchemaVersion = 1

// Options tune JSON.
type Options struct {
	// Version is the tsinspect release, written in "generator".
	Version string
}

// JSON builds the report of s and writes it to w as indented JSON.
func JSON(s *timeline.Session, w io.Writer, opts Options) error {
	return Build(s, opts.Version).WriteJSON(w)
}

// WriteJSON writes r to w as indented JSON followed by a newline. Nil
// slices in r are written as [] all the same.
func (r *Report) WriteJSON(w io.Writer) error {
	r.fillNil()
	// Written a field, and a turn, at a time: the same bytes as encoding
	// the whole report at once, without holding all of them (twice, as
	// encoded and as indented) for a long session.
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	value := func(prefix string, v any) error {
		buf.Reset()
		enc.SetIndent(prefix, "  ")
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	}
	field := func(name string, v any, last bool) error {
		bw.WriteString("  \"" + name + "\": ")
		if err := value("  ", v); err != nil {
			return err
		}
		if !last {
			bw.WriteString(",")
		}
		_, err := bw.WriteString("\n")
		return err
	}
	err := func() error {
		bw.WriteString("{\n")
		for _, f := range []struct {
			name string
			v    any
		}{{"schema_version", r.SchemaVersion}, {"generator", r.Generator}, {"capture", r.Capture}, {"threads", r.Threads}} {
			if err := field(f.name, f.v, false); err != nil {
				return err
			}
		}
		if len(r.Turns) == 0 {
			if err := field("turns", r.Turns, false); err != nil {
				return err
			}
		} else {
			bw.WriteString("  \"turns\": [\n")
			for i := range r.Turns {
				bw.WriteString("    ")
				if err := value("    ", &r.Turns[i]); err != nil {
					return err
				}
				if i < len(r.Turns)-1 {
					bw.WriteString(",")
				}
				bw.WriteString("\n")
			}
			bw.WriteString("  ],\n")
		}
		if err := field("token_summary", r.TokenSummary, false); err != nil {
			return err
		}
		if err := field("costs", r.Costs, true); err != nil {
			return err
		}
		bw.WriteString("}\n")
		return bw.Flush()
	}()
	if err != nil {
		return fmt.Errorf("report: write json: %w", err)
	}
	return nil
}

// Report is the whole report. It holds plain values only (no pointers into
// the session), so that it can be changed freely before it is written.
type Report struct {
	SchemaVersion int      `json:"schema_version"`
	Generator     string   `json:"generator"`
	Capture       Capture  `json:"capture"`
	Threads       []Thread `json:"threads"`
	Turns         []Turn   `json:"turns"`
	// TokenSummary sums, per thread, what tool definitions cost and what
	// deferring them saved.
	TokenSummary TokenSummary `json:"token_summary"`
	// Costs is the session's price in US dollars, from the built-in price
	// table unless [Report.Price] gave another.
	Costs *Costs `json:"costs"`
}

// Capture summarises the capture file.
type Capture struct {
	// Exchanges counts every recorded exchange, Messages API or not.
	Exchanges int `json:"exchanges"`
	// Turns counts the Messages API exchanges.
	Turns   int        `json:"turns"`
	FirstAt *time.Time `json:"first_at"`
	LastAt  *time.Time `json:"last_at"`
	// Flags counts the flags of all turns by kind.
	Flags map[string]int `json:"flags"`
	// Clients lists the clients of the turns (their User-Agent), and
	// Betas the anthropic-beta values they sent, each in order of first
	// appearance.
	Clients []string `json:"clients"`
	Betas   []string `json:"betas"`
	// Sources lists, for turns that were imported from (or recorded in) a
	// format that keeps less than a proxy recording, where they came from
	// and what that format lacks. Absent for proxy recordings.
	Sources []Source `json:"sources,omitempty"`
}

// Source is a kind of origin of a capture's turns that lacks some of what
// a recording has.
type Source struct {
	// Source is the exchanges' source: "import:claude-trace", "bodies"...
	Source string `json:"source"`
	Turns  int    `json:"turns"`
	// Lacks says what the format does not keep, one phrase each.
	Lacks []string `json:"lacks"`
}

// Thread is one conversation.
type Thread struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"` // main, subagent, side or conversation
	Turns []int  `json:"turns"`
	// Client is the client that sent the thread's first turn: family
	// (claude-code, sdk or other), name and version.
	Client timeline.Client `json:"client"`
	// Models lists the request models of the thread's turns, in order of
	// first use.
	Models []string `json:"models"`
	// QuerySource is what Claude Code called the thread's requests, when
	// the capture tells it (raw-bodies captures): sdk, repl_main_thread,
	// an agent's name...
	QuerySource string `json:"query_source,omitempty"`
	// Session is the Claude Code session id of the thread's first turn,
	// given when the capture holds more than one session.
	Session string `json:"session,omitempty"`
}

// Turn is one Messages API exchange.
type Turn struct {
	Index  int    `json:"index"`
	Thread string `json:"thread"`
	// Prev is the index of the previous turn of the same thread, 0 for the
	// thread's first and for a restart.
	Prev int `json:"prev"`
	// Link says how the turn joined its thread: new, extends, repeat,
	// retry, prefix, branch, history, compaction or restart (the main
	// conversation of a session file started again: its context cleared,
	// or the record it continues missing from the file).
	Link       string     `json:"link"`
	ExchangeID int64      `json:"exchange_id"`
	At         *time.Time `json:"at"`
	// Model is the request's model; ResponseModel is the response's when
	// it differs.
	Model         string `json:"model"`
	ResponseModel string `json:"response_model,omitempty"`
	// Status is the HTTP status, 0 when no response arrived.
	Status int `json:"status"`
	// Incomplete is set when the response (or the exchange) did not end
	// properly: a cut stream, a client that went away.
	Incomplete bool `json:"incomplete"`
	// Error is the API error of the response, if any.
	Error *Error `json:"error,omitempty"`
	// ResponseID is the message id, "" when there was no message.
	ResponseID   string  `json:"response_id"`
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	Usage        Usage   `json:"usage"`
	// OutputPlaceholder: the output tokens are the placeholder Claude
	// Code wrote when the answer began (timeline.Turn.OutputPlaceholder),
	// a lower bound.
	OutputPlaceholder bool `json:"output_placeholder,omitempty"`
	// Cost is the turn's price in US dollars; null when it was not priced
	// (no price table, or none for the model).
	Cost *Cost `json:"cost"`
	// Client is the request's User-Agent ("claude-cli/2.1.328 (external,
	// cli)"); Betas its anthropic-beta values.
	Client string   `json:"client"`
	Betas  []string `json:"betas"`
	Timing Timing   `json:"timing"`

	Catalog    Catalog    `json:"catalog"`
	WorkingSet WorkingSet `json:"working_set"`
	// Unreferenced lists deferred tools sent in tools without any
	// tool_reference or tool_addition left in the history to load them
	// (Claude Code after a compaction).
	Unreferenced []string `json:"unreferenced"`
	// MissingReferences lists tools loaded by a reference in the history
	// but absent from tools (the API answers 400 for those).
	MissingReferences []string `json:"missing_references"`

	// ToolSearches are the searches whose result is new in this turn: a
	// client search answered in the request's last user message, or a
	// server search answered in the response.
	ToolSearches []Search   `json:"tool_searches"`
	ToolCalls    []ToolCall `json:"tool_calls"`
	Flags        []Flag     `json:"flags"`
	// Problems lists what could not be decoded.
	Problems []string `json:"problems"`

	// ToolDefinitions lists the request's tools as sent, each with a hash
	// and a size in tokens instead of its schema.
	ToolDefinitions []ToolDefinition `json:"tool_definitions"`
	// ToolTokens is what the tool definitions cost this request, and what
	// they would have cost with every deferred tool inlined.
	ToolTokens ToolTokens `json:"tool_tokens"`

	// Conversation is the turn's messages, readable: set by
	// [Report.AddConversation] for an unredacted report only (every
	// redaction policy but off leaves it out).
	Conversation *Conversation `json:"conversation,omitempty"`
}

// Conversation is what a turn's request added to its thread (its new
// messages: the prompt, tool results, reminders) and its response.
type Conversation struct {
	Added    []Message `json:"added"`
	Response Message   `json:"response"`
}

// Message is one message, readable.
type Message struct {
	Role  string `json:"role"`
	Parts []Part `json:"parts"`
}

// Part is a piece of a message: text, thinking, a tool call (name, id,
// input as JSON), a tool result (the call's id, the tool's name, its text,
// whether it is an error), or another block as JSON.
type Part struct {
	Kind    string `json:"kind"`
	Name    string `json:"name,omitempty"`
	ID      string `json:"id,omitempty"`
	Text    string `json:"text"`
	IsError bool   `json:"is_error,omitempty"`
}

// AddConversation fills each turn's Conversation from the session the
// report was built of. A report meant to be shared must not carry it: the
// redaction policies but off drop it.
func (r *Report) AddConversation(s *timeline.Session) {
	for i := range r.Turns {
		rt := &r.Turns[i]
		t := s.Turn(rt.Index)
		if t == nil || t.Decoded == nil {
			continue
		}
		added, resp := s.Conversation(t, false)
		c := &Conversation{Added: make([]Message, 0, len(added)), Response: message(resp)}
		for _, m := range added {
			c.Added = append(c.Added, message(m))
		}
		rt.Conversation = c
	}
}

func message(m timeline.Said) Message {
	out := Message{Role: m.Role, Parts: make([]Part, 0, len(m.Parts))}
	for _, p := range m.Parts {
		out.Parts = append(out.Parts, Part{Kind: p.Kind, Name: p.Name, ID: p.ID, Text: p.Text, IsError: p.IsError})
	}
	return out
}

// Timing is how long a turn took; a figure is 0 when unknown.
type Timing struct {
	// TTFTMs is the time to first token: from the request's start to the
	// arrival of the first content delta (of the first response byte
	// when the response is not a stream), in milliseconds.
	TTFTMs int64 `json:"ttft_ms"`
	// DurationMs is from the request's start to the response's end.
	DurationMs int64 `json:"duration_ms"`
	// OutputTokensPerSecond is the output tokens over the time from the
	// first token to the end.
	OutputTokensPerSecond float64 `json:"output_tokens_per_second"`
}

// Error is an API error.
type Error struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	// Event is set when the error came as an SSE error event.
	Event bool `json:"event,omitempty"`
}

// Usage holds the token counts of a response.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	// CacheCreation5m and CacheCreation1h split the cache writes by TTL
	// when the response said so (cache_creation.ephemeral_*_input_tokens).
	CacheCreation5m int64 `json:"cache_creation_5m,omitempty"`
	CacheCreation1h int64 `json:"cache_creation_1h,omitempty"`
	// Speed is "fast" for a request answered in fast mode (billed at the
	// model's fast-mode rates); WebSearchRequests the server's web
	// searches, billed per search.
	Speed             string `json:"speed,omitempty"`
	WebSearchRequests int64  `json:"web_search_requests,omitempty"`
}

// Catalog is the deferred tools announced to the model, and how that list
// changed since the previous turn of the thread.
type Catalog struct {
	Count   int      `json:"count"`
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	// NotRecorded: the turn was made from a transcript whose release
	// wrote no catalog, so no call can be told to be blind.
	NotRecorded bool `json:"not_recorded,omitempty"`
}

// WorkingSet is the tools whose schemas the model can call, in tools
// order, and how that set changed since the previous turn of the thread.
type WorkingSet struct {
	Count   int      `json:"count"`
	Names   []string `json:"names"`
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	// Via says how each name got there: always, search, addition,
	// restored.
	Via map[string]string `json:"via"`
	// DeferredOnly: the turn was made from a transcript, which does not
	// hold the tools sent; the set holds the deferred tools loaded only.
	DeferredOnly bool `json:"deferred_only,omitempty"`
}

// Search is one tool search and its result.
type Search struct {
	ToolUseID string `json:"tool_use_id"`
	// Tool is the search tool's name (ToolSearch, tool_search_tool_regex,
	// ...); Server is set for server-side searches.
	Tool   string `json:"tool"`
	Server bool   `json:"server"`
	Query  string `json:"query"`
	// Mode is select, keyword, required, prefix, regex or bm25.
	Mode string `json:"mode"`
	// Selected lists the names of a select: query.
	Selected []string `json:"selected"`
	// MaxResults is max_results (or a regex search's limit), 0 if unset.
	MaxResults int64 `json:"max_results"`
	// Results are the tools the result loaded, in order.
	Results []string `json:"results"`
	// NoMatch is set when the search answered "No matching deferred tools
	// found".
	NoMatch bool `json:"no_match"`
	// ToolLoaded is set when Claude Code's "Tool loaded." text sits beside
	// the result.
	ToolLoaded bool   `json:"tool_loaded"`
	IsError    bool   `json:"is_error"`
	ErrorCode  string `json:"error_code,omitempty"`
}

// ToolCall is a tool_use or server_tool_use block of the response.
type ToolCall struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Server bool   `json:"server"`
	// Loaded is set when the tool's schema was in the request's working
	// set (or loaded earlier in the same response); Via says how.
	Loaded    bool   `json:"loaded"`
	Via       string `json:"via"`
	InCatalog bool   `json:"in_catalog"`
}

// Flag is something the timeline noticed on a turn.
type Flag struct {
	Kind            string `json:"kind"`
	Severity        string `json:"severity"`
	Detail          string `json:"detail"`
	Tool            string `json:"tool,omitempty"`
	Cause           string `json:"cause,omitempty"`
	TokensLost      int64  `json:"tokens_lost,omitempty"`
	CacheMissReason string `json:"cache_miss_reason,omitempty"`
	Agrees          *bool  `json:"agrees,omitempty"`
	Search          string `json:"search,omitempty"`
	// For a blind call: the turn that answered it, whether the answer
	// refused it, the output tokens spent on the call, the tokens of the
	// error result, and whether the answering request served refused
	// calls alone (see timeline.Flag).
	Answer      int   `json:"answer,omitempty"`
	Refused     bool  `json:"refused,omitempty"`
	CallTokens  int64 `json:"call_tokens,omitempty"`
	ErrorTokens int64 `json:"error_tokens,omitempty"`
	RoundTrip   bool  `json:"round_trip,omitempty"`
	// CostUSD is what the flag cost in US dollars, set by [Report.Price]:
	// for a cache_break, its lost tokens billed again instead of read; for
	// a blind call, what the refusal wasted (the call's output tokens and
	// the request that carried the error back, or the error's own tokens
	// when that request was needed anyway; 0 when the call ran all the
	// same; absent when the capture does not hold the answer).
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// FlagKinds returns the kinds of the flags in r with the turns each was
// raised on, kinds in order of first appearance.
func (r *Report) FlagKinds() (kinds []string, turns map[string][]int) {
	turns = map[string][]int{}
	for _, t := range r.Turns {
		for _, f := range t.Flags {
			if _, ok := turns[f.Kind]; !ok {
				kinds = append(kinds, f.Kind)
			}
			if ts := turns[f.Kind]; len(ts) == 0 || ts[len(ts)-1] != t.Index {
				turns[f.Kind] = append(ts, t.Index)
			}
		}
	}
	return kinds, turns
}

// Write writes r in format: "json", "markdown", else HTML.
func (r *Report) Write(w io.Writer, format string, opts RenderOptions) error {
	switch format {
	case "json":
		return r.WriteJSON(w)
	case "markdown":
		return r.WriteMarkdown(w, opts)
	}
	return r.WriteHTML(w, opts)
}
