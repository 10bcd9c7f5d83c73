package sessionfiles

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tsinspect/tsinspect/internal/cachefile"
	"github.com/tsinspect/tsinspect/internal/crash"
	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// Index keeps each session's Summary keyed by its files' size and time, so
// that a second listing reads only the sessions that changed. It lives in
// the user's cache directory, never in Claude Code's.
type Index struct {
	path    string
	Entries map[string]Indexed `json:"entries"`
	Version int                `json:"version"`
	dirty   bool
	// notice says why the file at path was not used (damaged, another
	// version, not a regular file); nil when it was, or was missing.
	notice error
}

// Indexed is one session's entry.
type Indexed struct {
	Size    int64    `json:"size"`
	ModTime int64    `json:"mtime_ns"`
	Summary *Summary `json:"summary"`
	// Resume, kept for the most recently written sessions only, lets the
	// next listing read only what their files appended.
	Resume *Resume
}

// indexVersion changes when Summary does: an index of another version is
// read afresh.
// 5: the chain read through progress records, parallel results as one
// message, agent_progress subagents, partial searches.
const indexVersion = 5

// IndexPath is the index's file in the user's cache directory
// (XDG_CACHE_HOME or ~/.cache on Linux).
func IndexPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("session index: %w", err)
	}
	return filepath.Join(dir, "tsinspect", "sessions-index.gob"), nil
}

// indexKind names the index in its file and in what is said of it.
const indexKind = "session index"

// LoadIndex reads the index at path (see package cachefile: a regular
// file, bounded, of this version, its checksum matching); a missing one
// is empty, and one that cannot be used is empty too, with the reason in
// [Index.Notice] (it is only a cache: the next Save rebuilds it).
func LoadIndex(path string) *Index {
	ix := &Index{path: path, Entries: map[string]Indexed{}}
	if path == "" {
		return ix
	}
	b, err := cachefile.Load(path, indexKind, indexVersion)
	if err != nil || b == nil {
		ix.notice, ix.dirty = err, err != nil
		return ix
	}
	var got Index
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&got); err != nil || got.Entries == nil {
		ix.notice = fmt.Errorf("%s %s: does not decode: %w", indexKind, path, cachefile.ErrRebuild)
		ix.dirty = true
		return ix
	}
	ix.Entries = got.Entries
	return ix
}

// Notice is why the index file was not used (damaged, of another version,
// not a regular file), one line to say once; nil when it was used or
// there was none. The next Save rebuilds it.
func (ix *Index) Notice() error { return ix.notice }

// Save writes the index if it changed (or could not be used), through a
// temporary file of its own renamed into place (cachefile.Save): two
// listings at once each rename a whole index into place.
func (ix *Index) Save() error {
	if ix.path == "" || !ix.dirty {
		return nil
	}
	ix.Version = indexVersion
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(ix); err != nil {
		return fmt.Errorf("save session index: %w", err)
	}
	if err := cachefile.Save(ix.path, indexKind, indexVersion, buf.Bytes()); err != nil {
		return err
	}
	ix.dirty = false
	return nil
}

// Prune drops the entries of sessions under root (a directory as List
// was given it, or one file) that are not among entries, List's listing
// of root: sessions deleted since. Entries of other directories stay. It
// returns how many it dropped.
func (ix *Index) Prune(root string, entries []Entry) int {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	listed := make(map[string]bool, len(entries))
	for _, e := range entries {
		listed[e.Path] = true
	}
	n := 0
	for p := range ix.Entries {
		if listed[p] || !within(p, root) {
			continue
		}
		delete(ix.Entries, p)
		n++
	}
	if n > 0 {
		ix.dirty = true
	}
	return n
}

// within reports whether path is root or under it.
func within(path, root string) bool {
	if path == root {
		return true
	}
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// ScanStats counts what a Scan read and what it took from the index.
type ScanStats struct {
	// Read counts the sessions read (Resumed of them from where the last
	// listing stopped), Cached those taken from the index.
	Read, Cached, Resumed int
	Bytes                 int64 // bytes of the sessions read
	Failed                []error
}

// Said says what a listing that took took read: "read 3 sessions (2.1
// MB) in 40ms; 12 from the index".
func (st ScanStats) Said(took time.Duration) string {
	resumed := ""
	if st.Resumed > 0 {
		resumed = fmt.Sprintf(", %d of them from where the last listing stopped", st.Resumed)
	}
	return fmt.Sprintf("read %d %s (%s%s) in %s; %d from the index", st.Read, numfmt.Plural(st.Read, "session", "sessions"), numfmt.Bytes(st.Bytes), resumed, took.Round(time.Millisecond), st.Cached)
}

// Scan summarises entries, in parallel, taking unchanged sessions from ix
// and putting the rest in it. progress, when not nil, is called after each
// session read (from several goroutines, one at a time).
func Scan(entries []Entry, ix *Index, progress func(done, total int)) ([]*Summary, ScanStats) {
	out := make([]*Summary, len(entries))
	var st ScanStats
	var todo []int
	// The sessions written last may grow: they keep what lets a later
	// listing read only what they append.
	keep := map[string]bool{}
	byTime := make([]int, len(entries))
	for i := range byTime {
		byTime[i] = i
	}
	sort.SliceStable(byTime, func(a, b int) bool { return entries[byTime[a]].ModTime.After(entries[byTime[b]].ModTime) })
	for _, i := range byTime[:min(keepResumes, len(byTime))] {
		keep[entries[i].Path] = true
	}
	for p, c := range ix.Entries {
		if c.Resume != nil && !keep[p] {
			c.Resume = nil
			ix.Entries[p] = c
			ix.dirty = true
		}
	}
	for i, e := range entries {
		if c, ok := ix.Entries[e.Path]; ok && c.Size == e.Size && c.ModTime == e.ModTime.UnixNano() && c.Summary != nil {
			out[i] = c.Summary
			// The listing's own facts follow the files, not the index.
			out[i].Subagents = len(e.Agents)
			st.Cached++
			continue
		}
		todo = append(todo, i)
	}
	var mu sync.Mutex
	next := 0
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next == len(todo) {
					mu.Unlock()
					return
				}
				i := todo[next]
				next++
				mu.Unlock()
				e := entries[i]
				mu.Lock()
				prev := ix.Entries[e.Path]
				mu.Unlock()
				from := prev.Resume
				if prev.Summary == nil || e.Size < prev.Size {
					from = nil
				}
				s, res, resumed, err := summarizeSafe(e, from, keep[e.Path])
				mu.Lock()
				if err != nil {
					st.Failed = append(st.Failed, fmt.Errorf("%s: %w", e.Path, err))
				} else {
					out[i] = s
					ix.Entries[e.Path] = Indexed{Size: e.Size, ModTime: e.ModTime.UnixNano(), Summary: s, Resume: res}
					ix.dirty = true
					st.Read++
					if resumed {
						st.Resumed++
						st.Bytes += e.Size - prev.Size
					} else {
						st.Bytes += e.Size
					}
				}
				if progress != nil {
					progress(st.Read+len(st.Failed), len(todo))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var kept []*Summary
	for _, s := range out {
		if s != nil {
			kept = append(kept, s)
		}
	}
	return kept, st
}

// summarizeSafe is summarize with a panic made the session's error: one
// session that trips a bug costs only its own row.
func summarizeSafe(e Entry, from *Resume, keep bool) (s *Summary, res *Resume, resumed bool, err error) {
	defer crash.Recover("summarize session", &err)
	return summarize(e, from, keep)
}
