package textout

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/tsinspect/tsinspect/coverage"
	"github.com/tsinspect/tsinspect/internal/termsafe"
	"github.com/tsinspect/tsinspect/store"
)

// The --json output of exchanges, turns and searches is JSON Lines: one
// object per line, fields never renamed or removed (new ones may appear),
// times in RFC 3339 UTC. Turns are the report's turn objects (see
// 'tsinspect report'); exchanges and searches are the objects below.

// jsonExchange is one line of 'exchanges --json'.
type jsonExchange struct {
	ID         int64      `json:"id"`
	Start      time.Time  `json:"start"`
	FirstByte  *time.Time `json:"first_byte"`
	End        *time.Time `json:"end"`
	Method     string     `json:"method"`
	URL        string     `json:"url"`
	Path       string     `json:"path"`
	Status     int        `json:"status"`
	ReqBytes   int64      `json:"request_bytes"`
	RespBytes  int64      `json:"response_bytes"`
	DurationMs int64      `json:"duration_ms"`
	State      string     `json:"state"`
	Error      string     `json:"error"`
}

// jsonSearch is a search line of 'searches --json'.
type jsonSearch struct {
	Kind     string         `json:"kind"` // "search"
	Turn     int            `json:"turn"`
	Thread   string         `json:"thread"`
	Tool     string         `json:"tool"`
	Server   bool           `json:"server"`
	Mode     string         `json:"mode"`
	Query    string         `json:"query"`
	Outcome  string         `json:"outcome"`
	Detail   string         `json:"detail"`
	Results  []string       `json:"results"`
	CalledAt map[string]int `json:"called_at"`
}

// jsonTool is a tool line of 'searches --tools ... --json'.
type jsonTool struct {
	Kind        string `json:"kind"` // "tool"
	Name        string `json:"name"`
	Deferred    bool   `json:"deferred"`
	Turns       int    `json:"turns"`
	FoundBy     []int  `json:"found_by"`  // turns of the searches that loaded it
	MissedBy    []int  `json:"missed_by"` // turns of select: searches that named it and missed
	FirstLoaded int    `json:"first_loaded"`
	Calls       int    `json:"calls"`
	Blind       int    `json:"blind"`
	FirstCall   int    `json:"first_call"`
}

// JSONLines writes each value on a line of its own (the turns of 'turns
// --json' are the report's turn objects, written so).
func JSONLines[T any](w io.Writer, xs []T) error {
	// encoding/json escapes the C0 controls; the Writer escapes the
	// C1 and bidirectional ones as JSON does, so the values are the same.
	enc := json.NewEncoder(termsafe.Writer(w))
	enc.SetEscapeHTML(false)
	for _, x := range xs {
		if err := enc.Encode(x); err != nil {
			return fmt.Errorf("write json: %w", err)
		}
	}
	return nil
}

// ExchangesJSON writes 'exchanges --json': an object per exchange.
func ExchangesJSON(w io.Writer, rows []store.Summary) error {
	return JSONLines(w, exchangeLines(rows))
}

// SearchesJSON writes 'searches --json': an object per search (kind
// "search"), then per tool (kind "tool").
func SearchesJSON(w io.Writer, searches []*coverage.Search, tools []*coverage.Tool) error {
	var lines []any
	for _, q := range searches {
		lines = append(lines, searchLine(q))
	}
	for _, tl := range tools {
		lines = append(lines, toolLine(tl))
	}
	return JSONLines(w, lines)
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func exchangeLines(rows []store.Summary) []jsonExchange {
	out := make([]jsonExchange, 0, len(rows))
	for _, r := range rows {
		path := r.URL
		if u, err := url.Parse(r.URL); err == nil {
			path = u.RequestURI()
		}
		j := jsonExchange{ID: r.ID, Start: r.Start.UTC(), FirstByte: timeOrNil(r.FirstByte), End: timeOrNil(r.End),
			Method: r.Method, URL: r.URL, Path: path, Status: r.Status, ReqBytes: r.ReqBytes, RespBytes: r.RespBytes,
			State: string(r.State), Error: r.Error}
		if !r.End.IsZero() {
			j.DurationMs = r.End.Sub(r.Start).Milliseconds()
		}
		out = append(out, j)
	}
	return out
}

func searchLine(s *coverage.Search) jsonSearch {
	j := jsonSearch{Kind: "search", Turn: s.Turn, Thread: s.Thread, Tool: s.Tool, Server: s.Server, Mode: s.Mode,
		Query: s.Query, Outcome: s.Outcome, Detail: s.Detail, Results: append([]string{}, s.Results...), CalledAt: map[string]int{}}
	for k, v := range s.CalledAt {
		j.CalledAt[k] = v
	}
	return j
}

func toolLine(t *coverage.Tool) jsonTool {
	j := jsonTool{Kind: "tool", Name: t.Name, Deferred: t.Deferred, Turns: t.Turns, FoundBy: []int{}, MissedBy: []int{},
		FirstLoaded: t.FirstLoaded, Calls: t.Calls, Blind: t.Blind, FirstCall: t.FirstCall}
	for _, s := range t.FoundBy {
		j.FoundBy = append(j.FoundBy, s.Turn)
	}
	for _, s := range t.MissedBy {
		j.MissedBy = append(j.MissedBy, s.Turn)
	}
	return j
}
