package decode

import (
	"encoding/json"
	"time"
)

// Version identifies the decoder's output. Anything cached from a Turn is
// stamped with it, and must be recomputed when it changes.
const Version = 1

// Request kinds.
const (
	KindMessages    = "messages"     // POST /v1/messages
	KindCountTokens = "count_tokens" // POST /v1/messages/count_tokens
	KindOther       = "other"        // anything else
)

// How a tool got into the working set (WorkingTool.Via).
const (
	// ViaAlways: a tool sent without defer_loading; its schema is always
	// in the prompt.
	ViaAlways = "always"
	// ViaSearch: a deferred tool loaded by a tool_reference in the message
	// history (a client ToolSearch tool_result or a server
	// tool_search_tool_result).
	ViaSearch = "search"
	// ViaAddition: a deferred tool made available by a tool_addition block
	// in the message history.
	ViaAddition = "addition"
	// ViaRestored: a deferred tool that the client still sends in tools
	// although no reference to it is left in the history (Claude Code
	// after compaction). Whether the API shows its schema is not
	// documented; it is shown for what it is.
	ViaRestored = "restored"
	// ViaResponseSearch (ToolCall.Via only): a tool loaded by a server-side
	// search earlier in the same response.
	ViaResponseSearch = "response_search"
	// ViaUnrecorded (ToolCall.Via only): in a request made from a
	// transcript, which does not hold the tools sent, a call of a tool that
	// is neither a deferred one loaded nor in the catalog: one sent whole
	// (Claude Code's own tools, MCP tools loaded up front), or one that
	// does not exist, which only its result can tell.
	ViaUnrecorded = "unrecorded"
)

// Search modes (Search.Mode).
const (
	ModeSelect   = "select"   // "select:A,B": exact names
	ModeRequired = "required" // a term starts with "+"
	ModePrefix   = "prefix"   // a single mcp__server style token
	ModeKeyword  = "keyword"  // any other client query
	ModeRegex    = "regex"    // server tool_search_tool_regex
	ModeBM25     = "bm25"     // server tool_search_tool_bm25
)

// PlaceholderTool is the deferred stand-in tool Claude Code sends so that
// the tools list is never made of deferred tools only. It is never a
// working-set or catalog tool.
const PlaceholderTool = "DeferredToolPlaceholder"

// ClientSearchTool is the name of Claude Code's client-side search tool.
const ClientSearchTool = "ToolSearch"

// Turn is one decoded exchange: the request, the response rebuilt from the
// wire, and what tool search looked like from this request alone.
type Turn struct {
	ExchangeID int64 `json:"exchange_id,omitempty"`
	// DecoderVersion is Version at the time of decoding.
	DecoderVersion int `json:"decoder_version"`

	Request  Request  `json:"request"`
	Response Response `json:"response"`

	// Catalog is the sorted list of deferred tool names this request
	// announces (see CatalogEvents for where each came from).
	Catalog []string `json:"catalog,omitempty"`
	// CatalogEvents are the announcements and removals, in message order.
	CatalogEvents []CatalogEvent `json:"catalog_events,omitempty"`

	// WorkingSet lists, in tools order, the tools whose schemas the model
	// can call in this request, with how each got there. The server
	// tool-search tools are included (they are callable);
	// DeferredToolPlaceholder never is.
	WorkingSet []WorkingTool `json:"working_set,omitempty"`
	// Unreferenced lists deferred tools present in tools (placeholder
	// excluded) that no tool_reference or tool_addition in the history
	// loads. With a client-side search (Claude Code) they are in the
	// working set as ViaRestored; with a server-side search they are the
	// not-yet-loaded catalog and are not in the working set.
	Unreferenced []string `json:"unreferenced,omitempty"`
	// MissingReferences lists tool names loaded by a reference in the
	// history that are absent from tools (the API answers 400 "Tool
	// reference 'X' not found in available tools").
	MissingReferences []string `json:"missing_references,omitempty"`

	// Searches holds every tool search visible to this turn: client
	// searches (ToolSearch, or any tool_use answered with tool_reference
	// blocks) and server searches, from the request history and from the
	// response, in order.
	Searches []*Search `json:"searches,omitempty"`
	// NewSearches are the searches whose result is new in this turn: a
	// client search answered in the last user message, or a server search
	// answered in this response. A report lists a search on this turn.
	NewSearches []Search `json:"new_searches,omitempty"`

	// ToolCalls are the tool_use and server_tool_use blocks of the response.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`

	// LastUser describes the last user message of the request.
	LastUser LastUser `json:"last_user"`

	// Problems lists everything malformed met while decoding. A Turn is
	// always produced; what could not be decoded is left empty.
	Problems []string `json:"problems,omitempty"`

	cache *Parts // while decoding with DecodeWith
	// cached[i] is set, while decoding with Parts, when message i is a
	// cached part (its blocks are shared with other Turns).
	cached []bool
	// While decoding with Parts a request body the store named
	// (layout.go): the body, the layout recorded of it, and what an
	// earlier body's layout says of it.
	body   []byte
	layout *layout
	prior  prior
	// Cursors into layout.spans (seek) for knownEnd and messageSpan.
	known, recorded int
}

// Request is the decoded request body and the headers that matter.
type Request struct {
	Kind   string `json:"kind"`
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	Size   int    `json:"size"` // body bytes, decoded

	Model     string `json:"model,omitempty"`
	MaxTokens int64  `json:"max_tokens,omitempty"`
	Stream    bool   `json:"stream,omitempty"`

	// SystemIsString is set when system was a plain string; System then
	// holds it as one text block.
	SystemIsString bool          `json:"system_is_string,omitempty"`
	System         []SystemBlock `json:"system,omitempty"`
	Tools          []Tool        `json:"tools,omitempty"`
	Messages       []*Message    `json:"messages,omitempty"`

	StopSequences []string        `json:"stop_sequences,omitempty"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
	Diagnostics   json.RawMessage `json:"diagnostics,omitempty"`

	// Betas are the anthropic-beta header values, comma-split, in order.
	Betas []string `json:"betas,omitempty"`
	// BodyBetas is the body's "betas" field.
	BodyBetas []string `json:"body_betas,omitempty"`

	// CacheMarkers lists every cache_control marker, in prefix order
	// (tools, system, messages).
	CacheMarkers []CacheMarker `json:"cache_markers,omitempty"`

	// Other holds the remaining top-level fields (thinking, tool_choice,
	// context_management, output_config, ...) as sent.
	Other map[string]json.RawMessage `json:"other,omitempty"`

	// Transcript is set for a request tsinspect made from the transcript
	// of Claude Code's session files (exchange.TranscriptMember): only its
	// messages and model are known.
	Transcript *Transcript `json:"transcript,omitempty"`
}

// Transcript is what a request made from a transcript says beyond its
// messages.
type Transcript struct {
	// CatalogRecorded: the release wrote the deferred-tool catalog, so the
	// catalog is known; without it no call can be told to be blind.
	CatalogRecorded bool `json:"catalog_recorded"`
	// Restored are the deferred tools a compaction kept loaded.
	Restored []string `json:"loaded_before_compaction,omitempty"`
}

// CacheControl is a cache_control marker.
type CacheControl struct {
	Type string `json:"type,omitempty"`
	TTL  string `json:"ttl,omitempty"`
}

// CacheMarker says where a cache_control marker sits.
type CacheMarker struct {
	// Where is "tool", "system", "message" or "request" (top-level).
	Where string `json:"where"`
	// Index is the tool, system block or message index (-1 for "request").
	Index int `json:"index"`
	// Block is the content block index within the message, -1 otherwise.
	Block int    `json:"block"`
	Type  string `json:"type,omitempty"`
	TTL   string `json:"ttl,omitempty"`
}

// SystemBlock is one block of the system prompt.
type SystemBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	CacheControl *CacheControl   `json:"cache_control,omitempty"`
	Raw          json.RawMessage `json:"raw,omitempty"`
}

// Tool is one entry of the request's tools.
type Tool struct {
	Name         string `json:"name"`
	Type         string `json:"type,omitempty"` // empty for custom tools
	DeferLoading bool   `json:"defer_loading,omitempty"`
	// ServerSearch is set for the server tool-search tools
	// (tool_search_tool_regex_* / tool_search_tool_bm25_*).
	ServerSearch bool `json:"server_search,omitempty"`
	// Placeholder is set for Claude Code's DeferredToolPlaceholder.
	Placeholder  bool          `json:"placeholder,omitempty"`
	CacheControl *CacheControl `json:"cache_control,omitempty"`
	// Raw is the definition byte-exact as sent, to hash or diff.
	Raw json.RawMessage `json:"raw"`
}

// Message is one entry of the request's messages.
type Message struct {
	Role string `json:"role"`
	// StringContent is set when content was a plain string, held in Text.
	StringContent bool    `json:"string_content,omitempty"`
	Text          string  `json:"text,omitempty"`
	Blocks        []Block `json:"blocks,omitempty"`
}

// Block is a content block, of a request message or of the response. The
// typed fields are filled for the types that have them; Raw always holds
// the whole block.
type Block struct {
	Type string `json:"type"`

	// Text is a text block's text (a tool_result's is ResultText).
	Text      string `json:"text,omitempty"`
	Thinking  string `json:"thinking,omitempty"`  // thinking
	Signature string `json:"signature,omitempty"` // thinking

	// tool_use, server_tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// PartialInput holds the streamed input_json_delta text when it did
	// not parse as JSON (Input is then empty).
	PartialInput string `json:"partial_input,omitempty"`

	// tool_result, tool_search_tool_result, web_search_tool_result, ...
	ToolUseID string `json:"tool_use_id,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	// References are the tool names of the tool_reference entries of a
	// tool_result or tool_search_tool_result, in order.
	References []string `json:"references,omitempty"`
	// ErrorCode is a tool_search_tool_result_error's error_code.
	ErrorCode string `json:"error_code,omitempty"`

	// ToolName is the tool named by a tool_reference, tool_addition or
	// tool_removal block.
	ToolName string `json:"tool_name,omitempty"`

	CacheControl *CacheControl   `json:"cache_control,omitempty"`
	Raw          json.RawMessage `json:"raw,omitempty"`
}

// Response is the response as the client saw it: the final message
// rebuilt from the SSE events, or the JSON body.
type Response struct {
	Status          int    `json:"status"`
	ContentType     string `json:"content_type,omitempty"`
	ContentEncoding string `json:"content_encoding,omitempty"`
	RequestID       string `json:"request_id,omitempty"` // request-id header
	Size            int    `json:"size"`                 // body bytes, decoded

	// Streamed is set when the body was an SSE stream.
	Streamed bool `json:"streamed,omitempty"`
	// Incomplete is set when a stream ended before message_stop, or the
	// exchange itself did not complete.
	Incomplete bool `json:"incomplete,omitempty"`

	ID           string          `json:"id,omitempty"`
	Model        string          `json:"model,omitempty"`
	Role         string          `json:"role,omitempty"`
	Content      []Block         `json:"content,omitempty"`
	StopReason   string          `json:"stop_reason,omitempty"`
	StopSequence *string         `json:"stop_sequence,omitempty"`
	StopDetails  json.RawMessage `json:"stop_details,omitempty"`

	// Usage is the final usage: message_start's, overwritten field by field
	// by message_delta's (cumulative) counts.
	Usage Usage `json:"usage"`
	// StartUsage is message_start's usage as sent, for streams.
	StartUsage json.RawMessage `json:"start_usage,omitempty"`

	Diagnostics     json.RawMessage  `json:"diagnostics,omitempty"`
	CacheMissReason *CacheMissReason `json:"cache_miss_reason,omitempty"`

	// Error is an error body, or an SSE error event (possibly after 200).
	Error *APIError `json:"error,omitempty"`

	// Events lists the SSE events in arrival order.
	Events []Event `json:"events,omitempty"`
	// UnknownEvents are the events (and deltas) the decoder did not know;
	// they are kept and otherwise ignored.
	UnknownEvents []UnknownEvent `json:"unknown_events,omitempty"`

	// Other holds a JSON body that is neither a message nor an error.
	Other json.RawMessage `json:"other,omitempty"`
}

// Usage holds the token counts of a response.
type Usage struct {
	InputTokens              int64          `json:"input_tokens"`
	OutputTokens             int64          `json:"output_tokens"`
	CacheReadInputTokens     int64          `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64          `json:"cache_creation_input_tokens"`
	CacheCreation            *CacheCreation `json:"cache_creation,omitempty"`
	// Speed is usage.speed: "fast" for a request answered in fast mode
	// (billed at the model's fast-mode rates), "" or "standard" else.
	Speed string `json:"speed,omitempty"`
	// WebSearchRequests is server_tool_use.web_search_requests: the server's
	// web searches, billed per search on top of tokens.
	WebSearchRequests int64 `json:"web_search_requests,omitempty"`
	// ServerToolUse and Iterations are kept as sent.
	ServerToolUse json.RawMessage `json:"server_tool_use,omitempty"`
	Iterations    json.RawMessage `json:"iterations,omitempty"`
	// Raw is the whole (merged) usage object.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// TotalInput returns the whole prompt size: input plus cache creation
// plus cache read.
func (u Usage) TotalInput() int64 {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// CacheCreation splits cache_creation_input_tokens by TTL.
type CacheCreation struct {
	Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
}

// CacheMissReason is diagnostics.cache_miss_reason of a response.
type CacheMissReason struct {
	Type                   string          `json:"type"`
	CacheMissedInputTokens int64           `json:"cache_missed_input_tokens,omitempty"`
	Raw                    json.RawMessage `json:"raw,omitempty"`
}

// APIError is an error body or event.
type APIError struct {
	Type      string `json:"type"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
	// Event is set when the error came as an SSE error event.
	Event bool `json:"event,omitempty"`
}

// Event is one SSE event.
type Event struct {
	// Name is the event: field, or the data's "type" when there was none.
	Name string `json:"name"`
	// Offset is the byte offset of the event in the decoded body.
	Offset int64 `json:"offset"`
	// At is the arrival time of the chunk holding the event's last byte;
	// zero when the exchange has no chunk times, or its body was encoded
	// (chunk offsets then count encoded bytes).
	At time.Time `json:"at,omitzero"`
}

// UnknownEvent is an event, or a delta type, the decoder does not know.
type UnknownEvent struct {
	Name string          `json:"name"`
	Data json.RawMessage `json:"data,omitempty"`
}

// CatalogEvent is one announcement or removal of deferred tools.
type CatalogEvent struct {
	// Message and Block locate it (Block -1 for string content).
	Message int `json:"message"`
	Block   int `json:"block"`
	// Form is "reminder" (the "deferred tools are now available / no
	// longer available" text), "available-deferred-tools", "tool_addition",
	// "tool_removal", or "tools" (defer_loading entries of tools; Message
	// is then -1).
	Form string `json:"form"`
	// Remove is set for removals.
	Remove bool     `json:"remove,omitempty"`
	Names  []string `json:"names"`
	// Len is the announcement's own size in bytes: from its first line
	// through its last name (or closing tag) for a text announcement, the
	// block for a tool_addition or tool_removal; 0 for the tools form. A
	// text block often holds much else besides (Claude Code puts the
	// list in a system message with the environment and the agent types).
	Len int `json:"len,omitempty"`
}

// WorkingTool is one tool of the working set.
type WorkingTool struct {
	Name     string `json:"name"`
	Via      string `json:"via"`
	Deferred bool   `json:"deferred,omitempty"`
}

// Location places a content block: in request message Message, or in the
// response (Response set, Message -1).
type Location struct {
	Response bool `json:"response,omitempty"`
	Message  int  `json:"message"`
	Block    int  `json:"block"`
}

// Search is one tool search and its result.
type Search struct {
	// Server is set for server-side searches (server_tool_use).
	Server    bool   `json:"server,omitempty"`
	ToolUseID string `json:"tool_use_id"`
	Tool      string `json:"tool"`
	// Query is the query (client), the pattern (regex) or the query (bm25).
	Query string `json:"query"`
	// MaxResults is max_results (client) or limit (regex); 0 if unset.
	MaxResults int64  `json:"max_results,omitempty"`
	Mode       string `json:"mode"`
	// Selected lists the names of a "select:" query.
	Selected []string        `json:"selected,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`

	Call Location `json:"call"`
	// HasResult is set once the result is found; Result locates it.
	HasResult bool     `json:"has_result"`
	Result    Location `json:"result"`
	// New is set when the result is new in this turn.
	New bool `json:"new,omitempty"`

	// Results are the tool names the result loaded.
	Results []string `json:"results,omitempty"`
	// NoMatch is set for a client result starting "No matching deferred
	// tools found".
	NoMatch bool `json:"no_match,omitempty"`
	// ToolLoaded is set when a "Tool loaded." text block sits beside the
	// client tool_result.
	ToolLoaded bool   `json:"tool_loaded,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
	ErrorCode  string `json:"error_code,omitempty"`
	// Text is the result's text content, if any.
	Text string `json:"text,omitempty"`
}

// ToolCall is a tool_use (or server_tool_use) block of the response.
type ToolCall struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input,omitempty"`
	Block  int             `json:"block"`
	Server bool            `json:"server,omitempty"`
	// Loaded is set when the tool is in the request's working set, or was
	// loaded by a server search earlier in this response.
	Loaded bool `json:"loaded"`
	// Via is the working-set provenance, or ViaResponseSearch.
	Via       string `json:"via,omitempty"`
	InCatalog bool   `json:"in_catalog"`
}

// LastUser describes the last user message of the request.
type LastUser struct {
	// Message is its index, -1 when there is none.
	Message     int          `json:"message"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
	// HasToolReference is set when a tool_result holds a tool_reference.
	HasToolReference bool `json:"has_tool_reference,omitempty"`
	// ToolLoaded is set when a "Tool loaded." text block is present.
	ToolLoaded bool `json:"tool_loaded,omitempty"`
}

// ToolResult is a tool_result block of the last user message.
type ToolResult struct {
	ToolUseID  string `json:"tool_use_id"`
	IsError    bool   `json:"is_error,omitempty"`
	raw        json.RawMessage
	References []string `json:"references,omitempty"`
	Block      int      `json:"block"`
}

// InWorkingSet reports whether name is in the turn's working set.
func (t *Turn) InWorkingSet(name string) bool {
	_, ok := t.WorkingVia(name)
	return ok
}

// WorkingVia returns how name got into the working set.
func (t *Turn) WorkingVia(name string) (string, bool) {
	for _, w := range t.WorkingSet {
		if w.Name == name {
			return w.Via, true
		}
	}
	return "", false
}

// InCatalog reports whether name is in the turn's catalog.
func (t *Turn) InCatalog(name string) bool {
	return containsSorted(t.Catalog, name)
}
