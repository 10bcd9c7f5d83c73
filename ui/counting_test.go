package ui

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/source"
)

// TestCountingPassesMadeRequestsOn: the count the open view keeps of what
// it read hands the session files' requests on as their parts (what a
// whole reading needs), and counts them.
func TestCountingPassesMadeRequestsOn(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "source", "testdata", "public", "25-*", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no public session 25")
	}
	src, err := source.OpenFiles(files[0])
	if err != nil {
		t.Fatal(err)
	}
	cs := &counting{Source: src}
	var s source.Source = cs
	m, ok := s.(source.MadeStreamer)
	if !ok {
		t.Fatal("counting hides the source's made requests")
	}
	made := 0
	if _, err := m.StreamMade(context.Background(), func(ex *exchange.Exchange) error {
		if ex.ReqMade != nil {
			made++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if made == 0 || cs.n.Load() < int64(made) {
		t.Errorf("%d made requests handed on, %d counted", made, cs.n.Load())
	}
}
