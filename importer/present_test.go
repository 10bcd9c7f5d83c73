package importer

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures/democapture"
	"github.com/tsinspect/tsinspect/importer/har"
	"github.com/tsinspect/tsinspect/store"
)

// TestImportTwiceIntoOneCapture imports files of real Claude Code traffic
// into one capture file: a file imported a second time adds nothing and
// counts what it skipped; a file of other traffic is added; a file holding
// one exchange twice adds both copies to a capture that had neither, the
// second to one that had the first, and nothing to one that had both.
func TestImportTwiceIntoOneCapture(t *testing.T) {
	ctx := context.Background()
	demo := demoExchanges(t)
	dir := t.TempDir()
	harOf := func(name string, exs []exchange.Exchange) string {
		var buf bytes.Buffer
		if err := har.Write(&buf, exs, "test", har.Options{Exact: true}); err != nil {
			t.Fatal(err)
		}
		return write(t, name, buf.Bytes())
	}
	session := harOf("demo.har", demo)
	doubled := harOf("doubled.har", append(append([]exchange.Exchange{}, demo...), demo[len(demo)-1]))

	path := filepath.Join(dir, "c.db")
	var db *store.DB
	open := func() (Sink, error) {
		var err error
		db, err = store.OpenWriter(path, false)
		return db, err
	}
	imp := func(file string) *Report {
		t.Helper()
		rep, err := Import(ctx, file, open, Options{})
		if db != nil {
			db.Close()
			db = nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	stored := func() int {
		t.Helper()
		r, err := store.OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		s, err := r.Summaries(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(s)
	}

	if rep := imp(session); rep.Imported != len(demo) || rep.Present != 0 {
		t.Fatalf("first import: %d imported, %d present; want %d, 0", rep.Imported, rep.Present, len(demo))
	}
	if rep := imp(session); rep.Imported != 0 || rep.Present != len(demo) {
		t.Errorf("second import: %d imported, %d present; want 0, %d", rep.Imported, rep.Present, len(demo))
	}
	if n := stored(); n != len(demo) {
		t.Errorf("the capture holds %d exchanges after two imports of %d", n, len(demo))
	}
	// Other traffic: a claude-trace log of another session.
	if rep := imp(filepath.Join("claudetrace", "testdata", "claude-trace-1.0.9.jsonl")); rep.Imported != 1 || rep.Present != 0 {
		t.Errorf("another file: %d imported, %d present; want 1, 0", rep.Imported, rep.Present)
	}
	if n := stored(); n != len(demo)+1 {
		t.Errorf("the capture holds %d exchanges, want %d", n, len(demo)+1)
	}

	// One exchange twice in one file: each stored exchange stands for one.
	path = filepath.Join(dir, "d.db")
	if rep := imp(doubled); rep.Imported != len(demo)+1 {
		t.Errorf("a file with an exchange twice, into a new capture: %d imported, want %d", rep.Imported, len(demo)+1)
	}
	if rep := imp(doubled); rep.Imported != 0 || rep.Present != len(demo)+1 {
		t.Errorf("again: %d imported, %d present; want 0, %d", rep.Imported, rep.Present, len(demo)+1)
	}
	if rep := imp(session); rep.Imported != 0 || rep.Present != len(demo) {
		t.Errorf("the file without the copy: %d imported, %d present; want 0, %d", rep.Imported, rep.Present, len(demo))
	}
	// The capture holds the exchange once: the file's second copy is added.
	path = filepath.Join(dir, "e.db")
	imp(session)
	if rep := imp(doubled); rep.Imported != 1 || rep.Present != len(demo) {
		t.Errorf("the file with the copy after the one without: %d imported, %d present; want 1, %d", rep.Imported, rep.Present, len(demo))
	}
}

// demoExchanges reads the bundled capture of real Claude Code.
func demoExchanges(t *testing.T) []exchange.Exchange {
	t.Helper()
	p := write(t, "demo.db", democapture.Bytes())
	db, err := store.OpenReadOnly(p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exs, err := db.Exchanges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return exs
}
