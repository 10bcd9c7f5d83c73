package timeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures/longsession"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline"
)

// longSession is the demo capture followed by a generated session with
// subagents, side queries and compactions built on its requests.
func longSession(t testing.TB, turns int) []exchange.Exchange {
	t.Helper()
	db, err := store.OpenReadOnly("../fixtures/democapture/demo.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	demo, err := db.Exchanges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	base, err := longsession.BaseFrom(demo)
	if err != nil {
		t.Fatal(err)
	}
	gen, _, err := longsession.Collect(context.Background(), base, longsession.Options{
		Turns: turns, Seed: 5, SubagentEvery: 20, SideEvery: 15, CompactEvery: 45})
	if err != nil {
		t.Fatal(err)
	}
	for i := range gen {
		gen[i].ID += int64(len(demo))
	}
	return append(demo, gen...)
}

// summary is what the commands show of a session.
func summary(t *testing.T, s *timeline.Session) string {
	t.Helper()
	type row struct {
		Index  int
		Thread string
		Link   string
		Flags  []string
		Model  string
		Cat    int
		WS     int
		Search int
		Usage  any
	}
	var rows []row
	for _, tu := range s.Turns {
		r := row{Index: tu.Index, Thread: tu.Thread, Link: tu.Link, Model: tu.Decoded.Request.Model,
			Cat: len(tu.Decoded.Catalog), WS: len(tu.Decoded.WorkingSet), Search: len(tu.Decoded.Searches), Usage: tu.Decoded.Response.Usage}
		for _, f := range tu.Flags {
			r.Flags = append(r.Flags, f.Kind+":"+f.Detail)
		}
		rows = append(rows, r)
	}
	b, err := json.Marshal(struct {
		Rows    []row
		Threads []*timeline.Thread
	}{rows, s.Threads})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBuilderSameAsBuild: a session built an exchange at a time, bodies
// dropped, is the session Build makes of the whole capture, and each
// turn's bodies come back through the loader.
func TestBuilderSameAsBuild(t *testing.T) {
	exs := longSession(t, 150)
	want := timeline.Build(exs)

	b := timeline.NewBuilder(false)
	byID := map[int64]exchange.Exchange{}
	for _, ex := range exs {
		byID[ex.ID] = ex
		c := ex
		b.Add(&c)
	}
	loads := 0
	b.SetLoader(func(id int64) (*exchange.Exchange, error) {
		loads++
		ex := byID[id]
		return &ex, nil
	})
	got := b.Session()
	if g, w := summary(t, got), summary(t, want); g != w {
		t.Fatalf("streamed session differs from Build's:\n got %.2000s\nwant %.2000s", g, w)
	}
	dropped := 0
	for i, tu := range got.Turns {
		if tu.Exchange.ReqBody == nil {
			dropped++
		}
		whole := tu.Whole()
		if !bytes.Equal(whole.ReqBody, want.Turns[i].Exchange.ReqBody) || !bytes.Equal(whole.RespBody, want.Turns[i].Exchange.RespBody) {
			t.Fatalf("turn %d: Whole's bodies differ from the capture's", tu.Index)
		}
	}
	if dropped != len(got.Turns) || loads != len(got.Turns) {
		t.Errorf("%d of %d turns had their bodies dropped, %d loads: want all", dropped, len(got.Turns), loads)
	}
}

// BenchmarkBuildLong builds a generated 150-turn session from exchanges
// handed over one at a time, bodies dropped, as the commands do.
func BenchmarkBuildLong(b *testing.B) {
	exs := longSession(b, 150)
	var size int64
	for _, ex := range exs {
		size += int64(len(ex.ReqBody) + len(ex.RespBody))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		bl := timeline.NewBuilder(false)
		for _, ex := range exs {
			c := ex
			bl.Add(&c)
		}
		bl.Session()
	}
}

// TestBuilderGrowing: a Builder asked for its session as the capture
// grows, with turns added in flight and updated when they have ended and
// more turns came after them, gives each time the session Build makes of
// the capture so far; and each Session decodes nothing and analyses only
// the turns added or updated since the last.
func TestBuilderGrowing(t *testing.T) {
	exs := longSession(t, 60)
	b := timeline.NewBuilder(false)
	var sofar []exchange.Exchange
	turns := 0 // turns in the last session
	check := func(what string, updated int) {
		t.Helper()
		dec0, an0 := timeline.BuilderWork(b)
		got := b.Session()
		dec, an := timeline.BuilderWork(b)
		if dec != dec0 || an-an0 != len(got.Turns)-turns+updated {
			t.Fatalf("%s: Session decoded %d exchanges and analysed %d turns: want none and the %d new or updated", what, dec-dec0, an-an0, len(got.Turns)-turns+updated)
		}
		turns = len(got.Turns)
		if kept, stray := timeline.BuilderLinked(b); stray != 0 || kept > turns {
			t.Fatalf("%s: %d turns kept linked of %d, and %d index entries of turns not kept", what, kept, turns, stray)
		}
		if g, w := summary(t, got), summary(t, timeline.Build(sofar)); g != w {
			t.Fatalf("%s: grown session differs from Build's:\n got %.2000s\nwant %.2000s", what, g, w)
		}
	}
	// ended: exchanges shown in flight, to update three exchanges later.
	type later struct {
		at, place int
		ex        exchange.Exchange
	}
	var ended []later
	checks, updates := 0, 0
	for i := range len(exs) + 3 {
		for len(ended) > 0 && ended[0].at == i {
			e := ended[0]
			ended = ended[1:]
			sofar[e.place] = e.ex
			dec0, _ := timeline.BuilderWork(b)
			c := e.ex
			b.Update(&c)
			if dec, _ := timeline.BuilderWork(b); dec != dec0+1 {
				t.Fatalf("Update decoded %d exchanges: want 1", dec-dec0)
			}
			check(fmt.Sprintf("exchange %d ended", e.place), 1)
			updates++
		}
		if i >= len(exs) {
			continue
		}
		ex := exs[i]
		add := ex
		if strings.Contains(ex.URL, "/v1/messages") && ex.Method == "POST" && i%9 == 4 {
			add.State, add.RespBody, add.Chunks, add.Status, add.RespHeaders = exchange.StateInFlight, nil, nil, 0, nil
			ended = append(ended, later{at: i + 3, place: len(sofar), ex: ex})
		}
		sofar = append(sofar, add)
		dec0, _ := timeline.BuilderWork(b)
		c := add
		b.Add(&c)
		if dec, _ := timeline.BuilderWork(b); dec != dec0+1 {
			t.Fatalf("Add decoded %d exchanges: want 1", dec-dec0)
		}
		if i%3 == 0 || add.State == exchange.StateInFlight {
			check(fmt.Sprintf("exchange %d", i), 0)
			checks++
		}
	}
	check("the whole capture", 0)
	if kept, _ := timeline.BuilderLinked(b); kept != turns {
		t.Errorf("%d of the %d turns kept linked once all have ended: want all", kept, turns)
	}
	if checks < 20 || updates < 3 {
		t.Fatalf("only %d checks and %d updates: the session is too short to test growth", checks, updates)
	}
}

// TestContent: on the bundled real session, a turn's request content is
// what it added to its thread, so the echo tool's result is in the
// request of the turn after the call alone, and its input in the
// response of the turn that made the call.
func TestContent(t *testing.T) {
	s := timeline.Build(session.DemoExchanges(t))
	const said = "hello from the demo"
	var inReq, inResp []int
	for _, tu := range s.Turns {
		req, resp := s.Content(tu)
		if strings.Contains(req, said) {
			inReq = append(inReq, tu.Index)
		}
		if strings.Contains(resp, said) {
			inResp = append(inResp, tu.Index)
		}
		if req != strings.ToLower(req) {
			t.Errorf("turn %d: content not in lower case", tu.Index)
		}
	}
	if len(inResp) != 1 || len(inReq) != 1 || inReq[0] != inResp[0]+1 {
		t.Errorf("%q in the requests of %v and the responses of %v; want the call's turn and the next", said, inReq, inResp)
	}
}
