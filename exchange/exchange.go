// Package exchange holds the domain type that flows through tsinspect: one
// HTTP request and its response, as they crossed the wire. It has no
// dependencies so that capture, store, decode and the importers can share it.
package exchange

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sort"
	"strings"
	"time"
)

// State says how far an exchange got.
type State string

// The states an exchange can be in.
const (
	// StateInFlight: the request was seen, the response has not ended yet
	// (or the recorder stopped before it did).
	StateInFlight State = "in_flight"
	// StateComplete: the response body was read to its end.
	StateComplete State = "complete"
	// StateClientAborted: the client went away before the response ended.
	StateClientAborted State = "client_aborted"
	// StateUpstreamFailed: the upstream could not be reached, or its
	// response broke off.
	StateUpstreamFailed State = "upstream_failed"
	// StateInterrupted: the recorder itself ended (crashed, was killed or
	// lost power) while the exchange was in flight; a later recorder
	// opening the capture settles such rows to this state. What was
	// recorded of the response is kept, but it may have gone on.
	StateInterrupted State = "interrupted"
)

// Header is one header line. Order and spelling are kept as seen.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Chunk is one read of the response body as it arrived from upstream.
type Chunk struct {
	Offset int64     `json:"offset"` // byte offset of the chunk in RespBody
	Size   int       `json:"size"`
	At     time.Time `json:"at"` // arrival time
}

// Exchange is one recorded request/response pair.
type Exchange struct {
	ID        int64
	Source    string // "mitm", "reverse", "import:har", ...
	Start     time.Time
	FirstByte time.Time // first response byte; zero if none
	End       time.Time

	Method string
	URL    string // absolute URL as the client addressed it
	Host   string

	ReqHeaders []Header
	ReqBody    []byte
	// ReqRef, when the store read the exchange, names ReqBody and what it
	// shares with an earlier request body. Whoever changes ReqBody clears
	// it.
	ReqRef BodyRef
	// ReqMade, when set, is the request body as the parts tsinspect made
	// it from, and ReqBody is nil: only a reader that asked for them gets
	// these (sessionfiles.Session.StreamMade).
	ReqMade *Made

	Status      int
	RespHeaders []Header
	// RespBody is the response body exactly as received from upstream
	// (still compressed if it was sent compressed).
	RespBody []byte
	// RespMade, when set, is the response body as the parts tsinspect
	// made it from, and RespBody is empty: handed only to a reader that
	// asked for its requests' parts (ReqMade).
	RespMade *MadeAnswer
	// RespBodyDecoded is RespBody with its Content-Encoding removed, or nil
	// when the body was not encoded (or could not be decoded).
	RespBodyDecoded []byte
	Chunks          []Chunk

	Error string
	State State
}

// BodyRef names a stored body by the key of its content, and says that
// its first Prefix bytes are those of the body keyed Base: the store keeps
// a body as what it adds to an earlier one, and a reader may reuse what it
// worked out for those bytes rather than read them again. Equal keys name
// equal bytes within one capture. The zero BodyRef says nothing.
type BodyRef struct {
	Key    string
	Base   string
	Prefix int
}

// Body returns the response body with any content encoding removed.
func (e *Exchange) Body() []byte {
	if e.RespBodyDecoded != nil {
		return e.RespBodyDecoded
	}
	return e.RespBody
}

// ReqHeader returns the first request header with the given name
// (case-insensitive), or "".
func (e *Exchange) ReqHeader(name string) string { return lookup(e.ReqHeaders, name) }

// RespHeader returns the first response header with the given name
// (case-insensitive), or "".
func (e *Exchange) RespHeader(name string) string { return lookup(e.RespHeaders, name) }

func lookup(hs []Header, name string) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// credentialHeaders are never written to disk: only a fingerprint is kept.
var credentialHeaders = map[string]bool{
	"x-api-key":           true,
	"authorization":       true,
	"proxy-authorization": true,
	"cookie":              true,
	"set-cookie":          true,
}

// IsCredential reports whether a header carries a credential that must not
// be stored.
func IsCredential(name string) bool { return credentialHeaders[strings.ToLower(name)] }

// FingerprintPrefix starts every value that replaced a credential.
const FingerprintPrefix = "[redacted sha256:"

// Fingerprint returns the stored stand-in for a credential value: the first
// 12 hex digits of its SHA-256, enough to tell two keys apart and useless to
// recover one.
func Fingerprint(value string) string {
	sum := sha256.Sum256([]byte(value))
	return FingerprintPrefix + hex.EncodeToString(sum[:6]) + "]"
}

// SafeHeaders converts h to a Header list in a stable order (sorted by
// name, values in order) with every credential replaced by its fingerprint.
func SafeHeaders(h http.Header) []Header {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]Header, 0, len(names))
	for _, k := range names {
		for _, v := range h[k] {
			if IsCredential(k) {
				v = Fingerprint(v)
			}
			out = append(out, Header{Name: k, Value: v})
		}
	}
	return out
}

// Scrub replaces credential values in hs by their fingerprints, in place,
// and returns hs. Values already fingerprinted are left alone.
func Scrub(hs []Header) []Header {
	for i, h := range hs {
		if IsCredential(h.Name) && !strings.HasPrefix(h.Value, FingerprintPrefix) {
			hs[i].Value = Fingerprint(h.Value)
		}
	}
	return hs
}

// Made is a request body tsinspect made (from the transcript of Claude
// Code's session files), handed as the parts it is made of instead of its
// bytes: {"messages":[Messages...],"model":Model,TranscriptMember:Member}
// ("model" left out when Model is ""). A reader that keeps what it works
// out of each message need not have the body written and parsed back.
type Made struct {
	// Messages are the elements of the messages array, in order. The
	// requests of a conversation may hand out one array of parts: two
	// lists that begin at the same element of one array hold the same
	// parts as far as the shorter goes.
	Messages []MadePart
	// Model is the body's model; Member its TranscriptMember, as JSON.
	Model  string
	Member []byte
	// Size is the length of the body the parts make, in bytes.
	Size int
}

// MadeAnswer is a response body tsinspect made (from the records of
// Claude Code's session files that hold one answer), handed as the parts
// it is made of: the JSON object of Members, in order, whose "content"
// member (its Value nil) is the array of Content.
type MadeAnswer struct {
	// Members are the message's members, sorted by key, one of each.
	Members []MadeMember
	// Content are the elements of the content array, in order.
	Content [][]byte
	// Size is the length of the body the parts make, in bytes.
	Size int
}

// MadeMember is one member of a MadeAnswer: its key, and its value as
// JSON.
type MadeMember struct {
	Key   string
	Value []byte
}

// MadePart is one message of a Made body. Within one source, every
// request that holds the same message holds the same MadePart: the same
// Key and the same JSON, which nobody changes.
type MadePart struct {
	Key  int64
	JSON []byte
}
