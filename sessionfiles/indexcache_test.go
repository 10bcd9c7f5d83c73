//go:build unix

package sessionfiles

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/oddfiles"

	"github.com/tsinspect/tsinspect/internal/cachefile"
)

// Issue 42, item 9: flipped bits in the index changed the listing's
// figures silently. Each flipped bit is now caught: the index is not used,
// the reason is one line, and the next Save rebuilds it, from which the
// listing reads what the sessions hold.
func TestDamagedIndexIsSaidAndRebuilt(t *testing.T) {
	w := twoTurns(t)
	p := w.save(t, "")
	entries, err := List(filepath.Dir(p))
	if err != nil || len(entries) != 1 {
		t.Fatalf("List: %v, %v", entries, err)
	}
	path := filepath.Join(t.TempDir(), "sessions-index.gob")
	ix := LoadIndex(path)
	want, _ := Scan(entries, ix, nil)
	if err := ix.Save(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(good); i += 7 {
		bad := append([]byte(nil), good...)
		bad[i] ^= 0x04
		if err := os.WriteFile(path, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		ix := LoadIndex(path)
		if n := ix.Notice(); !errors.Is(n, cachefile.ErrRebuild) || len(ix.Entries) != 0 {
			t.Fatalf("byte %d flipped: notice %v, %d entries; want the index refused", i, n, len(ix.Entries))
		}
		got, st := Scan(entries, ix, nil)
		if st.Read != 1 || len(got) != 1 || !reflect.DeepEqual(got[0].Usage, want[0].Usage) || got[0].Turns != want[0].Turns {
			t.Fatalf("byte %d flipped: %+v, %+v; want the session read afresh", i, st, got)
		}
		if err := ix.Save(); err != nil {
			t.Fatal(err)
		}
		if again := LoadIndex(path); again.Notice() != nil || len(again.Entries) != 1 {
			t.Fatalf("byte %d flipped: not rebuilt: %v", i, again.Notice())
		}
	}
}

// Issue 42, item 6: a named pipe or a link to /dev/zero in place of the
// index hung the listing or ran it out of memory. It is refused at once,
// in one line, and replaced by the next Save.
func TestIndexThatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo, zero := filepath.Join(dir, "fifo.gob"), filepath.Join(dir, "zero.gob")
	oddfiles.Make(t, fifo, zero)
	for _, p := range []string{fifo, zero} {
		ix := LoadIndex(p)
		if n := ix.Notice(); !errors.Is(n, ErrNotRegular) || strings.Contains(n.Error(), "\n") {
			t.Errorf("%s: notice %v, want one line: not a regular file", filepath.Base(p), n)
		}
		if err := ix.Save(); err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: not replaced by a regular file: %v", filepath.Base(p), err)
		}
	}
}

// Issue 42, item 4: a session's reading went on after its reader left
// (and Ctrl-C waited for it). OpenContext stops reading once its context
// is done, with the context's error.
func TestOpenContextStops(t *testing.T) {
	w := twoTurns(t)
	p := w.save(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if s, err := OpenContext(ctx, p); !errors.Is(err, context.Canceled) || s != nil {
		t.Errorf("OpenContext with its context done = %v, %v; want context.Canceled", s, err)
	}
	s, err := OpenContext(context.Background(), p)
	if err != nil || s.Len() != 2 {
		t.Fatalf("OpenContext = %v, %v", s, err)
	}
	// Later reads are not stopped by the first one's context.
	if _, err := s.Refresh(); err != nil {
		t.Error(err)
	}
}
