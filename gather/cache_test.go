//go:build unix

package gather_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/gather"
	"github.com/tsinspect/tsinspect/pricing"
)

// Issue 42, item 9: flipped bits in the advice cache changed figures
// silently. Now a damaged cache is said once, in one line, read afresh
// and rebuilt: the advice is the same as from the sessions themselves.
func TestDamagedCacheIsSaidOnceAndRebuilt(t *testing.T) {
	dir := copyTree(t, "2.1.299")
	cache := filepath.Join(t.TempDir(), "advice-facts.gob")
	items, err := findItems(dir)
	if err != nil {
		t.Fatal(err)
	}
	tab := pricing.Default()
	first, _, err := gather.Read(items, gather.Options{Prices: tab, Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	want := advice.Advise(first, advice.Options{MinSessions: 1})
	good, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	// A bit flipped in every 97th byte past the header, one at a time.
	flipped := 0
	for i := len(good) / 2; i < len(good); i += 97 {
		bad := append([]byte(nil), good...)
		bad[i] ^= 0x10
		if err := os.WriteFile(cache, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		got, st, err := gather.Read(items, gather.Options{Prices: tab, Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		said := 0
		for _, w := range st.Warnings {
			if strings.Contains(w, "advice cache") && strings.Contains(w, "damaged") {
				said++
			}
		}
		if said != 1 || st.Cached != 0 || st.Read != len(items) {
			t.Fatalf("byte %d flipped: %+v; want the damage said once and every session read", i, st)
		}
		if !reflect.DeepEqual(advice.Advise(got, advice.Options{MinSessions: 1}), want) {
			t.Fatalf("byte %d flipped: other advice", i)
		}
		// Rebuilt: the next reading takes all from it, and says nothing.
		if _, st, _ := gather.Read(items, gather.Options{Prices: tab, Cache: cache}); st.Cached != len(items) || len(st.Warnings) != 0 {
			t.Fatalf("after byte %d was flipped the cache was not rebuilt: %+v", i, st)
		}
		flipped++
	}
	if flipped < 3 {
		t.Fatalf("only %d flips tried", flipped)
	}
}

const fullDiskEnv = "TSINSPECT_TEST_FULL_DISK"

// Issue 42, item 14: on a full disk 'advise' left a partial
// advice-facts.gob.tmp behind. A child process whose files cannot grow
// past 4 KB reads the sessions: the save fails with an error and the
// cache's directory holds nothing.
func TestFullDiskLeavesNoTemporaryFile(t *testing.T) {
	if env := os.Getenv(fullDiskEnv); env != "" {
		dir, cache, _ := strings.Cut(env, string(os.PathListSeparator))
		items, err := findItems(dir)
		if err != nil {
			t.Fatal(err)
		}
		lim := syscall.Rlimit{Cur: 4096, Max: 4096}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatalf("setrlimit: %v", err)
		}
		if _, _, err := gather.Read(items, gather.Options{Prices: pricing.Default(), Cache: cache}); err == nil {
			t.Fatal("saving the cache past a 4 KB limit succeeded")
		}
		return
	}
	dir := copyTree(t, "2.1.299")
	cacheDir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFullDiskLeavesNoTemporaryFile$", "-test.count=1")
	cmd.Env = append(os.Environ(), fullDiskEnv+"="+dir+string(os.PathListSeparator)+filepath.Join(cacheDir, "advice-facts.gob"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	if names, _ := os.ReadDir(cacheDir); len(names) != 0 {
		t.Errorf("after a failed save the cache's directory holds %v, want nothing", names)
	}
}
