package sessionfiles

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestMessagesOfEachChain holds each made request's messages, made a
// request at a time from the lists made before (messagesOf), to the walk
// of its whole chain, on every public and release session.
func TestMessagesOfEachChain(t *testing.T) {
	var files []string
	for _, glob := range []string{"public/*/*.jsonl", "releases/*/projects/*/*.jsonl"} {
		f, _ := filepath.Glob(filepath.Join("..", "source", "testdata", glob))
		files = append(files, f...)
	}
	checked := 0
	for _, f := range files {
		s, err := Open(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, q := range s.reqs {
			if !q.transcript || q.from == nil {
				continue
			}
			var want []int32
			for e := q.from.msgs; e != nil; e = e.prev {
				want = append(want, s.tr.closeRun(e.node))
			}
			slices.Reverse(want)
			if q.from.role != "" {
				want = append(want, s.tr.closeRun(q.from))
			}
			if !slices.Equal(q.msgs, want) {
				t.Fatalf("%s: a request sent at %s: messages %v, its chain %v", f, q.at, q.msgs, want)
			}
			checked++
		}
	}
	if len(files) > 0 && checked < 500 {
		t.Errorf("%d requests checked in %d files", checked, len(files))
	}
}
