package gather_test

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/gather"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/source"
)

// copyTree copies the release files of one Claude Code release into a
// temporary projects directory.
func copyTree(t *testing.T, release string) string {
	t.Helper()
	src := filepath.Join("..", "source", "testdata", "releases", release, "projects")
	dst := filepath.Join(t.TempDir(), "projects")
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		defer out.Close()
		_, err = io.Copy(out, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestReadCaches: a second reading takes every session from the cache,
// with the same facts; a session whose file changed, and every session
// under another price table, are read again.
func TestReadCaches(t *testing.T) {
	dir := copyTree(t, "2.1.299")
	cache := filepath.Join(t.TempDir(), "advice-facts.gob")
	items, err := findItems(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 5 {
		t.Fatalf("%d sessions, want the 5 2.1.299 wrote", len(items))
	}
	tab := pricing.Default()
	var progress []gather.Progress
	first, st, err := gather.Read(items, gather.Options{Prices: tab, Cache: cache, Progress: func(p gather.Progress) { progress = append(progress, p) }})
	if err != nil || st.Read != 5 || st.Cached != 0 || len(first) != 5 || len(st.Failed) != 0 {
		t.Fatalf("first reading: %+v, %d facts, %v", st, len(first), err)
	}
	if last := progress[len(progress)-1]; last.Done != 5 || last.Total != 5 || last.Bytes != st.Bytes {
		t.Errorf("progress ended at %+v, read %d bytes", last, st.Bytes)
	}
	second, st, err := gather.Read(items, gather.Options{Prices: tab, Cache: cache})
	if err != nil || st.Read != 0 || st.Cached != 5 {
		t.Fatalf("second reading: %+v, %v", st, err)
	}
	if !reflect.DeepEqual(advice.Advise(first, advice.Options{MinSessions: 1}), advice.Advise(second, advice.Options{MinSessions: 1})) {
		t.Error("the facts from the cache give other advice")
	}
	// One session written again.
	p := items[0].Path
	if err := os.Chtimes(p, time.Now(), time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	items, _ = findItems(dir)
	if _, st, _ = gather.Read(items, gather.Options{Prices: tab, Cache: cache}); st.Read != 1 || st.Cached != 4 {
		t.Errorf("after one session changed: %+v, want 1 read and 4 from the cache", st)
	}
	// Other prices: every session again.
	other := pricing.Default()
	other.Models = other.Models[1:]
	if _, st, _ = gather.Read(items, gather.Options{Prices: other, Cache: cache}); st.Read != 5 {
		t.Errorf("under other prices: %+v, want every session read", st)
	}
}

// findItems is what the catalog finds under dir, as gather reads it.
func findItems(dir string) ([]gather.Item, error) {
	f, err := source.Find(true, dir)
	return f.Found, err
}
