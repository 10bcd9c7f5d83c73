// Package gather reads many sessions into advice.Facts for the catalog
// (which finds them, and is the one front ends ask): Claude Code's session
// files and capture files, in parallel, one session's timeline at
// a time per worker (dropped once its facts are read), with the facts
// cached in the user's cache directory keyed by each session's size and
// time, so that a second reading reads only the sessions that changed.
package gather

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/internal/cachefile"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/timeline"
)

// Item is one session to read: a Claude Code session (its main file, with
// its subagents' files) or a capture file, as the catalog found it.
type Item = source.Found

// Options say how Read reads.
type Options struct {
	// Prices prices the facts.
	Prices *pricing.Table
	// Cache is the cache file ("" for none); see CachePath. With
	// ReadOnly it is read and never written (the web view writes nothing).
	Cache    string
	ReadOnly bool
	// Workers is how many sessions are read at once (0: one per CPU).
	Workers int
	// Progress, when set, is called after each session read or taken
	// from the cache, one call at a time.
	Progress func(p Progress)
}

// Progress is how far a Read has come.
type Progress struct {
	Done, Total int
	// Bytes is the size of the sessions read so far (not those taken
	// from the cache).
	Bytes int64
}

// Stats says what a Read did.
type Stats struct {
	// Read counts the sessions read, Cached those taken from the cache;
	// Bytes is the size of those read.
	Read, Cached int
	Bytes        int64
	// Failed holds the sessions that could not be read, Warnings the rows
	// or lines left out of those that could, a line each.
	Failed   []error
	Warnings []string
}

// CachePath is the facts cache's file in the user's cache directory,
// beside the session listing's index (never in Claude Code's directory).
func CachePath() (string, error) {
	ix, err := sessionfiles.IndexPath()
	if err != nil {
		return "", fmt.Errorf("gather: %w", err)
	}
	return filepath.Join(filepath.Dir(ix), "advice-facts.gob"), nil
}

// cache is the facts cache: per path, the facts of the session as it was
// at that size and time, read at those prices by that version of Of.
type cache struct {
	Version int
	Entries map[string]cached
}

type cached struct {
	Size    int64
	ModTime int64
	Prices  string
	Facts   *advice.Facts
}

// pricesKey fingerprints a price table: facts priced at another table
// are read again.
func pricesKey(tab *pricing.Table) string {
	if tab == nil {
		return ""
	}
	b, err := json.Marshal(tab)
	if err != nil {
		return tab.Describe()
	}
	sum := sha256.Sum256(append(b, tab.Describe()...))
	return hex.EncodeToString(sum[:8])
}

// cacheKind names the facts cache in its file and in what is said of it.
const cacheKind = "advice cache"

// loadCache reads the facts cache at path (see package cachefile: a
// regular file, bounded, of this version of the facts, its checksum
// matching). A missing one is empty; one that cannot be used is empty too,
// with the reason as notice, to be said once (the next save rebuilds it).
func loadCache(path string) (c *cache, notice error) {
	c = &cache{Version: advice.FactsVersion, Entries: map[string]cached{}}
	if path == "" {
		return c, nil
	}
	b, err := cachefile.Load(path, cacheKind, advice.FactsVersion)
	if err != nil || b == nil {
		return c, err
	}
	var got cache
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&got); err != nil || got.Entries == nil {
		return c, fmt.Errorf("%s %s: does not decode: %w", cacheKind, path, cachefile.ErrRebuild)
	}
	c.Entries = got.Entries
	return c, nil
}

// save writes the cache through a temporary file of its own renamed into
// place (cachefile.Save: removed when the write fails), keeping only the
// entries of files that still exist.
func (c *cache) save(path string) error {
	for p := range c.Entries {
		if _, err := os.Stat(p); err != nil {
			delete(c.Entries, p)
		}
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(c); err != nil {
		return fmt.Errorf("save advice cache: %w", err)
	}
	return cachefile.Save(path, cacheKind, advice.FactsVersion, buf.Bytes())
}

// Read reads the facts of every item, in parallel, taking unchanged
// sessions from the cache and saving the rest in it. The facts come in
// the order of items, those that failed left out. An error is returned
// only when the cache cannot be saved (the facts are good all the same).
func Read(items []Item, o Options) ([]*advice.Facts, Stats, error) {
	c, notice := loadCache(o.Cache)
	key := pricesKey(o.Prices)
	out := make([]*advice.Facts, len(items))
	// The facts read are held as JSON until all are read: bytes the
	// collector need not walk while it collects after every session
	// (5,000 sessions' facts, held as values, were walked by every
	// collection; as JSON, advise took about a tenth less CPU).
	held := make([][]byte, len(items))
	entry := func(it Item, f *advice.Facts) cached {
		return cached{Size: it.Size, ModTime: it.ModTime.UnixNano(), Prices: key, Facts: f}
	}
	var st Stats
	var todo []int
	for i, it := range items {
		if e, ok := c.Entries[it.Path]; ok && e.Size == it.Size && e.ModTime == it.ModTime.UnixNano() && e.Prices == key && e.Facts != nil {
			f := *e.Facts
			f.Ref = advice.Ref{ID: it.ID, Project: it.Project}
			out[i] = &f
			st.Cached++
			continue
		}
		todo = append(todo, i)
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, max(len(todo), 1))
	var mu sync.Mutex
	jobs := make(chan int)
	var wg sync.WaitGroup
	// A cache that could not be used is said once, and rebuilt.
	changed := notice != nil
	if notice != nil {
		st.Warnings = append(st.Warnings, notice.Error())
	}
	report := func() {
		if o.Progress != nil {
			o.Progress(Progress{Done: st.Cached + st.Read + len(st.Failed), Total: len(items), Bytes: st.Bytes})
		}
	}
	mu.Lock()
	report()
	mu.Unlock()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				it := items[i]
				f, warning, err := readOne(it, o.Prices)
				mu.Lock()
				if err != nil {
					st.Failed = append(st.Failed, fmt.Errorf("%s: %w", it.Path, err))
				} else {
					if b, err := json.Marshal(f); err == nil {
						held[i] = b
					} else {
						out[i] = f // kept as it is (JSON has no NaN)
						c.Entries[it.Path] = entry(it, f)
					}
					changed = true
					st.Read++
					st.Bytes += it.Size
				}
				if warning != "" {
					st.Warnings = append(st.Warnings, it.Path+": "+warning)
				}
				report()
				mu.Unlock()
			}
		}()
	}
	for _, i := range todo {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for i, b := range held {
		if b == nil {
			continue
		}
		f := &advice.Facts{}
		if err := json.Unmarshal(b, f); err != nil {
			return nil, st, fmt.Errorf("gather: facts of %s: %w", items[i].Path, err)
		}
		out[i], held[i] = f, nil
		c.Entries[items[i].Path] = entry(items[i], f)
	}
	var kept []*advice.Facts
	for _, f := range out {
		if f != nil {
			kept = append(kept, f)
		}
	}
	sort.Strings(st.Warnings)
	if o.Cache != "" && changed && !o.ReadOnly {
		if err := c.save(o.Cache); err != nil {
			return kept, st, err
		}
	}
	return kept, st, nil
}

// readOne reads one session's facts; its timeline is dropped when it
// returns.
func readOne(it Item, tab *pricing.Table) (*advice.Facts, string, error) {
	b, problems, schemas, err := source.ReadFileSchemas(context.Background(), it.Path)
	if err != nil {
		return nil, "", err
	}
	warning := ""
	if len(problems) > 0 {
		warning = source.Summary(problems)
	}
	return SessionFacts(b.Session(), it, tab, schemas), warning, nil
}

// SessionFacts is the advice facts of the session s read from it, priced
// at tab, with the schemas a search loaded that its files still hold:
// schemas, as the reading found them, or (nil) read from the files.
func SessionFacts(s *timeline.Session, it Item, tab *pricing.Table, schemas map[string]int) *advice.Facts {
	if it.Entry != nil && schemas == nil {
		schemas, _ = sessionfiles.DeferredSchemas(*it.Entry)
	}
	return advice.Of(s, advice.Ref{ID: it.ID, Project: it.Project}, advice.FactsOptions{Prices: tab, Schemas: schemas})
}
