package source

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/timeline"
)

// TestMadeReadsAsBodies holds the reading of requests made from a
// transcript, and of answers, as their parts (sessionfiles.Session.StreamMade:
// no body written and parsed back) to the reading of their bodies, on every public
// session and every release's session: each turn decodes alike, and the
// timeline links, diffs and flags alike.
func TestMadeReadsAsBodies(t *testing.T) {
	made, answers := 0, 0
	for _, path := range independentFiles(t) {
		s, err := sessionfiles.Open(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		read := func(parts bool) ([][]byte, *timeline.Session) {
			b := timeline.NewBuilder(false)
			c := decode.NewParts()
			var turns [][]byte
			stream := s.Stream
			if parts {
				stream = s.StreamMade
			}
			if err := stream(context.Background(), func(ex *exchange.Exchange) error {
				if parts && ex.ReqMade != nil {
					made++
					if ex.ReqBody != nil {
						t.Errorf("%s: exchange %d has both a body and its parts", path, ex.ID)
					}
				}
				if parts && ex.RespMade != nil {
					answers++
					if len(ex.RespBody) > 0 {
						t.Errorf("%s: exchange %d has both a response body and its parts", path, ex.ID)
					}
				}
				if !parts && ex.RespMade != nil {
					t.Errorf("%s: exchange %d: Stream handed an answer as its parts", path, ex.ID)
				}
				d := decode.DecodeWith(ex, c)
				j, err := json.Marshal(d)
				if err != nil {
					t.Fatal(err)
				}
				turns = append(turns, j)
				b.Add(ex)
				return nil
			}); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return turns, b.Session()
		}
		bodies, want := read(false)
		parts, got := read(true)
		if len(bodies) != len(parts) {
			t.Fatalf("%s: %d requests from the parts, %d from the bodies", path, len(parts), len(bodies))
		}
		for i := range bodies {
			if !bytes.Equal(bodies[i], parts[i]) {
				t.Errorf("%s: request %d decodes differently from its parts:\n got %.800s\nwant %.800s", path, i+1, parts[i], bodies[i])
				break
			}
		}
		if g, w := turnsView(got), turnsView(want); g != w {
			t.Errorf("%s: the timeline from the parts differs from the bodies':\n got %.2000s\nwant %.2000s", path, g, w)
		}
	}
	if made == 0 || answers == 0 {
		t.Fatalf("%d requests and %d answers were handed as their parts", made, answers)
	}
}

func turnsView(s *timeline.Session) string {
	var out bytes.Buffer
	for _, tu := range s.Turns {
		fmt.Fprintf(&out, "%d %s %d %s +%v -%v ws+%v ws-%v", tu.Index, tu.Thread, tu.Prev, tu.Link, tu.CatalogAdded, tu.CatalogRemoved, tu.WorkingAdded, tu.WorkingRemoved)
		for _, f := range tu.Flags {
			fmt.Fprintf(&out, " [%s %s %s %d]", f.Kind, f.Cause, f.Detail, f.TokensLost)
		}
		for _, ns := range tu.NewSearches {
			fmt.Fprintf(&out, " search %s %q %v", ns.ToolUseID, ns.Query, ns.Results)
		}
		out.WriteByte('\n')
	}
	return out.String()
}

// TestReleasedSessionRebuildsWhole holds a session whose reading is done
// (sessionfiles.Session.Release: the user records' messages dropped) to
// rebuilding every request and answer as before, on every public and
// release session, and to refusing to read on.
func TestReleasedSessionRebuildsWhole(t *testing.T) {
	n := 0
	defer func() {
		if n < 1000 {
			t.Errorf("%d exchanges rebuilt: too few to tell", n)
		}
	}()
	for _, path := range independentFiles(t) {
		whole, err := sessionfiles.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		released, err := sessionfiles.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		released.Release()
		for id := int64(1); id <= int64(whole.Len()); id++ {
			n++
			want, err1 := whole.Get(id)
			got, err2 := released.Get(id)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: exchange %d: %v, %v", path, id, err1, err2)
			}
			if !bytes.Equal(got.ReqBody, want.ReqBody) || !bytes.Equal(got.RespBody, want.RespBody) || got.Status != want.Status || got.Error != want.Error {
				t.Fatalf("%s: exchange %d differs once released:\n got %.300s\nwant %.300s", path, id, got.ReqBody, want.ReqBody)
			}
		}
		if _, err := released.Refresh(); err == nil {
			t.Errorf("%s: a released session read on", path)
		}
	}
}

// TestSchemasFromTheReading holds the deferred tools' schemas a session's
// reading finds (ReadFileSchemas) to reading its files for them again
// (sessionfiles.DeferredSchemas), on every public and release session.
func TestSchemasFromTheReading(t *testing.T) {
	found := 0
	for _, path := range independentFiles(t) {
		_, _, got, err := ReadFileSchemas(context.Background(), path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		s, err := sessionfiles.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sessionfiles.DeferredSchemas(sessionfiles.Entry{Path: s.Path, Agents: s.Agents})
		if err != nil {
			continue // a session of subagents' files alone: no main file to read again
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: the reading found %v, the files hold %v", path, got, want)
		}
		found += len(want)
	}
	if found == 0 {
		t.Error("no session keeps schemas apart: the test tells nothing")
	}
}
