package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// synthetic makes a session of n turns: a main thread that searches for a
// tool every 10 turns and calls it on the next, with a side query every 25
// turns, and a cache_break flag every 40.
func synthetic(n int) *timeline.Session {
	catalog := make([]string, 0, 56)
	for i := 0; i < 40; i++ {
		catalog = append(catalog, fmt.Sprintf("mcp__demo__action_%d", i))
	}
	catalog = append(catalog, "mcp__demo__echo")
	always := []string{"Agent", "Bash", "Edit", "Read", "Skill", "ToolSearch", "Write"}
	s := &timeline.Session{Exchanges: n + 2, FirstAt: t0, LastAt: t0.Add(time.Duration(n) * time.Second)}
	cc := timeline.Client{Family: timeline.ClientClaudeCode, Name: "Claude Code", Version: "2.1.328"}
	main := &timeline.Thread{ID: "main", Kind: timeline.KindMain, Client: cc}
	side := &timeline.Thread{ID: "side1", Kind: timeline.KindSide, Client: cc}
	s.Threads = []*timeline.Thread{main, side}
	var loaded []string
	prevMain := 0
	for i := 1; i <= n; i++ {
		ex := &exchange.Exchange{ID: int64(i + 2), Start: t0.Add(time.Duration(i) * time.Second), Status: 200}
		d := &decode.Turn{ExchangeID: ex.ID, DecoderVersion: decode.Version}
		d.Request.Kind = decode.KindMessages
		d.Request.Model = "claude-sonnet-4-5"
		d.Response = decode.Response{Status: 200, ID: fmt.Sprintf("msg_%04d", i), StopReason: "tool_use",
			Usage: decode.Usage{InputTokens: 3, CacheReadInputTokens: int64(20000 + 100*i), CacheCreationInputTokens: 120, OutputTokens: 40}}
		t := &timeline.Turn{Index: i, Exchange: ex, Decoded: d}
		if i%25 == 0 {
			t.Thread = side.ID
			d.Request.Model = "claude-haiku-4-5"
			d.Response.StopReason = "end_turn"
			side.Turns = append(side.Turns, i)
			s.Turns = append(s.Turns, t)
			continue
		}
		t.Thread, t.Prev = main.ID, prevMain
		prevMain = i
		main.Turns = append(main.Turns, i)
		d.Catalog = catalog
		for _, a := range always {
			d.WorkingSet = append(d.WorkingSet, decode.WorkingTool{Name: a, Via: decode.ViaAlways})
		}
		if i%10 == 1 && i > 1 {
			name := catalog[(i/10)%len(catalog)]
			d.NewSearches = []decode.Search{{ToolUseID: fmt.Sprintf("toolu_%04d", i-1), Tool: "ToolSearch",
				Query: "select:" + name, Mode: decode.ModeSelect, Selected: []string{name}, MaxResults: 5,
				HasResult: true, New: true, Results: []string{name}, ToolLoaded: true}}
			t.NewSearches = d.NewSearches
			loaded = append(loaded, name)
			t.WorkingAdded = []string{name}
			d.ToolCalls = []decode.ToolCall{{ID: fmt.Sprintf("toolu_%04d", i), Name: name, Loaded: true, Via: decode.ViaSearch, InCatalog: true}}
		} else if i%10 == 0 {
			d.ToolCalls = []decode.ToolCall{{ID: fmt.Sprintf("toolu_%04d", i), Name: "ToolSearch", Loaded: true, Via: decode.ViaAlways}}
		}
		for _, l := range loaded {
			d.WorkingSet = append(d.WorkingSet, decode.WorkingTool{Name: l, Via: decode.ViaSearch, Deferred: true})
		}
		if i%40 == 0 {
			t.Flags = append(t.Flags, timeline.Flag{Kind: "cache_break", Severity: timeline.SeverityWarning,
				Detail: "cache read fell", Cause: "tools_changed", TokensLost: 20000})
		}
		s.Turns = append(s.Turns, t)
	}
	return s
}

func TestBuildSynthetic(t *testing.T) {
	s := synthetic(60)
	r := Build(s, "9.9.9")
	if r.SchemaVersion != 1 || r.Generator != "tsinspect 9.9.9" {
		t.Errorf("header %d %q", r.SchemaVersion, r.Generator)
	}
	if r.Capture.Exchanges != 62 || r.Capture.Turns != 60 || !r.Capture.FirstAt.Equal(t0) {
		t.Errorf("capture %+v", r.Capture)
	}
	if len(r.Threads) != 2 || r.Threads[0].ID != "main" || len(r.Threads[1].Turns) != 2 {
		t.Errorf("threads %+v", r.Threads)
	}
	if got := r.Threads[1].Models; len(got) != 1 || got[0] != "claude-haiku-4-5" {
		t.Errorf("side models %v", got)
	}
	t11 := r.Turns[10]
	if t11.Index != 11 || len(t11.ToolSearches) != 1 || t11.ToolSearches[0].Mode != "select" ||
		t11.ToolSearches[0].Results[0] != "mcp__demo__action_1" || t11.ToolSearches[0].MaxResults != 5 {
		t.Errorf("turn 11 searches %+v", t11.ToolSearches)
	}
	if len(t11.WorkingSet.Added) != 1 || t11.WorkingSet.Via["mcp__demo__action_1"] != "search" || t11.WorkingSet.Count != 8 {
		t.Errorf("turn 11 working set %+v", t11.WorkingSet)
	}
	if t11.Catalog.Count != 41 || t11.Prev != 10 {
		t.Errorf("turn 11 catalog %+v prev %d", t11.Catalog, t11.Prev)
	}
	if r.Capture.Flags["cache_break"] != 1 {
		t.Errorf("flag counts %v", r.Capture.Flags)
	}
	kinds, turns := r.FlagKinds()
	if len(kinds) != 1 || kinds[0] != "cache_break" || fmt.Sprint(turns["cache_break"]) != "[40]" {
		t.Errorf("FlagKinds %v %v", kinds, turns)
	}
}

// TestNoNulls checks that every array of an empty or sparse report is
// written as [], and that only the documented fields may be null.
func TestNoNulls(t *testing.T) {
	sparse := &timeline.Session{Exchanges: 3,
		Turns: []*timeline.Turn{
			{Index: 1, Thread: "main"},                                   // nothing decoded
			{Index: 2, Thread: "main", Prev: 1, Decoded: &decode.Turn{}}, // nothing in it
			{Index: 3, Thread: "main", Prev: 2, Decoded: &decode.Turn{NewSearches: []decode.Search{{}}}, NewSearches: []decode.Search{{}}}, // empty search
		},
		Threads: []*timeline.Thread{{ID: "main", Kind: timeline.KindMain}},
	}
	for name, s := range map[string]*timeline.Session{"nil": nil, "empty": {}, "sparse": sparse} {
		var buf bytes.Buffer
		if err := JSON(s, &buf, Options{Version: "1"}); err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		walkNulls(t, name, "", v)
	}
}

// mayBeNull are the fields documented as null when unknown.
var mayBeNull = map[string]bool{"first_at": true, "last_at": true, "at": true, "stop_sequence": true, "cost": true}

func walkNulls(t *testing.T, name, path string, v any) {
	switch v := v.(type) {
	case nil:
		key := path[strings.LastIndexByte(path, '.')+1:]
		if !mayBeNull[key] {
			t.Errorf("%s: %s is null", name, path)
		}
	case map[string]any:
		for k, x := range v {
			walkNulls(t, name, path+"."+k, x)
		}
	case []any:
		for i, x := range v {
			walkNulls(t, name, fmt.Sprintf("%s[%d]", path, i), x)
		}
	}
}

// TestRedactable checks that a report changed after Build (as a redactor
// would) is written as changed, nil slices included.
func TestRedactable(t *testing.T) {
	r := Build(synthetic(12), "1")
	for i := range r.Turns {
		r.Turns[i].WorkingSet.Names = nil
		r.Turns[i].Model = "redacted"
	}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte(`"names": null`)) || !bytes.Contains(buf.Bytes(), []byte(`"names": []`)) ||
		bytes.Contains(buf.Bytes(), []byte(`"model": "claude-sonnet`)) {
		t.Errorf("redacted report:\n%.2000s", buf.String())
	}
}

func TestSchemaFields(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(synthetic(11), &buf, Options{Version: "1"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Capture map[string]json.RawMessage   `json:"capture"`
		Threads []map[string]json.RawMessage `json:"threads"`
		Turns   []map[string]json.RawMessage `json:"turns"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	need := func(what string, m map[string]json.RawMessage, keys ...string) {
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("%s has no %q", what, k)
			}
		}
	}
	need("capture", doc.Capture, "exchanges", "turns", "first_at", "last_at")
	need("thread", doc.Threads[0], "id", "kind", "turns")
	turn := doc.Turns[10]
	need("turn", turn, "index", "thread", "at", "model", "status", "response_id", "stop_reason",
		"stop_sequence", "usage", "catalog", "working_set", "tool_searches", "tool_calls", "flags")
	var sub struct {
		Usage      map[string]json.RawMessage   `json:"usage"`
		Catalog    map[string]json.RawMessage   `json:"catalog"`
		WorkingSet map[string]json.RawMessage   `json:"working_set"`
		Searches   []map[string]json.RawMessage `json:"tool_searches"`
		Calls      []map[string]json.RawMessage `json:"tool_calls"`
	}
	raw, _ := json.Marshal(turn)
	json.Unmarshal(raw, &sub)
	need("usage", sub.Usage, "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
	need("catalog", sub.Catalog, "count", "added", "removed")
	need("working_set", sub.WorkingSet, "count", "names", "added", "removed")
	need("search", sub.Searches[0], "tool_use_id", "query", "mode", "results")
	need("call", sub.Calls[0], "id", "name", "loaded")
	if string(turn["at"]) != `"2026-03-01T12:00:11Z"` {
		t.Errorf("at = %s, want RFC 3339 UTC", turn["at"])
	}
}

func TestWriteError(t *testing.T) {
	err := JSON(synthetic(3), failWriter{}, Options{})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("err = %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

// BenchmarkReport builds and writes the JSON report of a synthetic
// 200-turn session (41-tool catalog, a growing working set, a search every
// ten turns).
func BenchmarkReport(b *testing.B) {
	s := synthetic(200)
	var buf bytes.Buffer
	if err := JSON(s, &buf, Options{Version: "bench"}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if err := JSON(s, io.Discard, Options{Version: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuild measures Build alone on the same session.
func BenchmarkBuild(b *testing.B) {
	s := synthetic(200)
	b.ReportAllocs()
	for b.Loop() {
		Build(s, "bench")
	}
}
