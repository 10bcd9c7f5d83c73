package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/timeline"
)

// independentFiles lists the main session files the checker reads: every
// file of testdata/public and every session of testdata/releases (2.0's
// agent-*.jsonl beside a main file included: tsinspect opens those
// alone too). TSINSPECT_CHECK, when set, keeps only the files whose path
// holds it (e.g. TSINSPECT_CHECK=25-v2.1.219).
//
// TSINSPECT_CHECK_DIR, when set, names a directory whose main session
// files are read instead (every .jsonl under it but those in a subagents
// directory): ~/.claude/projects holds tsinspect to the second opinion
// on one's own sessions.
func independentFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	if dir := os.Getenv("TSINSPECT_CHECK_DIR"); dir != "" {
		files = mainSessionFiles(t, dir)
	} else {
		files = publicSessions(t)
		m, err := filepath.Glob(filepath.Join("testdata", "releases", "*", "projects", "*", "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	if only := os.Getenv("TSINSPECT_CHECK"); only != "" {
		var keep []string
		for _, f := range files {
			if strings.Contains(filepath.ToSlash(f), only) {
				keep = append(keep, f)
			}
		}
		files = keep
	}
	if len(files) == 0 {
		t.Fatal("no session files to check")
	}
	return files
}

// mainSessionFiles lists the .jsonl files under dir that are not in a
// subagents directory.
func mainSessionFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir() && e.Name() == "subagents":
			return filepath.SkipDir
		case !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl"):
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("TSINSPECT_CHECK_DIR: %v", err)
	}
	return files
}

// tsView is what the comparison takes of one of tsinspect's turns.
type tsView struct {
	index    int
	thread   string
	kind     string
	seconds  int64
	ws       []string
	searches []string
	loaded   []bool   // per tool call
	calls    []string // tool call names
	blind    []string // call_before_load flags' tools
}

// disagreements gathers, for one file, the disagreements of one kind: a
// count and the first few examples.
type disagreements struct {
	order []string
	count map[string]int
	ex    map[string][]string
}

func (d *disagreements) add(kind, format string, args ...any) {
	if d.count == nil {
		d.count, d.ex = map[string]int{}, map[string][]string{}
	}
	if d.count[kind] == 0 {
		d.order = append(d.order, kind)
	}
	d.count[kind]++
	if len(d.ex[kind]) < 3 {
		d.ex[kind] = append(d.ex[kind], fmt.Sprintf(format, args...))
	}
}

func (d *disagreements) String() string {
	var b strings.Builder
	for _, k := range d.order {
		fmt.Fprintf(&b, "  %s: %d\n", k, d.count[k])
		for _, e := range d.ex[k] {
			fmt.Fprintf(&b, "    %s\n", e)
		}
	}
	return b.String()
}

func searchKey(tool, query string, loaded []string) string {
	return fmt.Sprintf("%s %q → %v", tool, query, loaded)
}

// TestIndependentReadingAgrees reads every session file with the
// independent checker (independent_test.go) and with tsinspect, and
// compares them answer by answer (matched by the answer's message id):
// the thread's kind, the threads as a partition, the time to the second,
// the working set as a set of names, the searches each turn is the first
// to carry (tool, query, loaded names) and their total, which calls are
// loaded and which are blind (tsinspect's call_before_load flags), and
// the answered and failed turns' counts. It fails with, per file and per
// kind of disagreement, a count and the first three examples.
// Run one file with TSINSPECT_CHECK=<part of its path>.
func TestIndependentReadingAgrees(t *testing.T) {
	var report strings.Builder
	bad := 0
	for _, f := range independentFiles(t) {
		d := compareIndependent(t, f)
		if len(d.order) == 0 {
			continue
		}
		bad++
		rel, err := filepath.Rel("testdata", f)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			rel = f
		}
		fmt.Fprintf(&report, "%s\n%s", filepath.ToSlash(rel), d.String())
	}
	if bad > 0 {
		t.Errorf("tsinspect's reading and the checker's disagree in %d files (checker first, tsinspect second):\n%s", bad, report.String())
	}
}

// compareIndependent compares the two readings of main file f.
func compareIndependent(t *testing.T, f string) *disagreements {
	t.Helper()
	d := &disagreements{}
	ck, err := CheckSession(f)
	if err != nil {
		d.add("the checker cannot read the file", "%v", err)
		return d
	}
	b, _, err := ReadFile(context.Background(), f)
	if err != nil {
		d.add("tsinspect cannot read the file", "%v", err)
		return d
	}
	sess := b.Session()

	ts := map[string]*tsView{}
	var tsOrder []string
	tsFailed, tsSearches := 0, 0
	// The checker's turns are answers; a search tsinspect lists on a
	// failed request (one that carried its result and got no answer) is
	// held to the next answered turn of its thread.
	pending := map[string][]string{}
	for _, tu := range sess.Turns {
		tsSearches += len(tu.NewSearches)
		dt := tu.Decoded
		if dt == nil || dt.Response.ID == "" {
			tsFailed++
			for _, s := range tu.NewSearches {
				pending[tu.Thread] = append(pending[tu.Thread], searchKey(s.Tool, s.Query, s.Results))
			}
			continue
		}
		v := &tsView{index: tu.Index, thread: tu.Thread}
		if th := sess.Thread(tu.Thread); th != nil {
			v.kind = th.Kind
		}
		if tu.Exchange != nil {
			v.seconds = tu.Exchange.Start.Unix()
		}
		set := map[string]bool{}
		for _, w := range dt.WorkingSet {
			set[w.Name] = true
		}
		for n := range set {
			v.ws = append(v.ws, n)
		}
		sort.Strings(v.ws)
		v.searches = pending[tu.Thread]
		delete(pending, tu.Thread)
		for _, s := range tu.NewSearches {
			v.searches = append(v.searches, searchKey(s.Tool, s.Query, s.Results))
		}
		sort.Strings(v.searches)
		for _, c := range dt.ToolCalls {
			if c.Server {
				continue
			}
			v.calls = append(v.calls, c.Name)
			// Loaded by a search (or kept by a compaction): tsinspect's
			// Loaded is also set for tools sent whole (ViaUnrecorded).
			switch c.Via {
			case decode.ViaSearch, decode.ViaRestored, decode.ViaAddition:
				v.loaded = append(v.loaded, true)
			default:
				v.loaded = append(v.loaded, false)
			}
		}
		for _, fl := range tu.Flags {
			if fl.Kind == timeline.FlagCallBeforeLoad {
				v.blind = append(v.blind, fl.Tool)
			}
		}
		sort.Strings(v.blind)
		if _, dup := ts[dt.Response.ID]; dup {
			d.add("answer twice in tsinspect", "turn %d %s", tu.Index, dt.Response.ID)
			continue
		}
		ts[dt.Response.ID] = v
		tsOrder = append(tsOrder, dt.Response.ID)
	}

	if len(ck.Turns) != len(ts) {
		d.add("answered turns", "checker %d, tsinspect %d", len(ck.Turns), len(ts))
	}
	if ck.Searches != tsSearches {
		d.add("searches in all", "checker %d, tsinspect %d", ck.Searches, tsSearches)
	}
	if ck.Failed != tsFailed {
		d.add("failed requests", "checker %d (api_error records + isApiErrorMessage answers), tsinspect %d (turns without an answer id)", ck.Failed, tsFailed)
	}

	// In tsinspect's order: the examples then come in timeline order.
	turns := append([]*CkTurn(nil), ck.Turns...)
	sort.SliceStable(turns, func(i, j int) bool {
		vi, vj := ts[turns[i].MessageID], ts[turns[j].MessageID]
		return vi != nil && (vj == nil || vi.index < vj.index)
	})
	// Threads as partitions: each thread of one reading should be one
	// thread of the other.
	ckSplit := map[string]map[string][]int{} // checker thread -> tsinspect thread -> turn indexes
	tsSplit := map[string]map[string][]int{} // tsinspect thread -> checker thread -> turn indexes
	var ckThreads, tsThreads []string
	ckIDs := map[string]bool{}
	for i, c := range turns {
		ckIDs[c.MessageID] = true
		v := ts[c.MessageID]
		if v == nil {
			d.add("answer missing from tsinspect", "checker turn %d %s (%s, %s)", i+1, c.MessageID, c.Thread, c.Time.UTC().Format("2006-01-02T15:04:05Z"))
			continue
		}
		where := fmt.Sprintf("turn %d %s", v.index, c.MessageID)
		if c.Kind != v.kind {
			d.add("thread kind", "%s: %s (%s) vs %s (%s)", where, c.Kind, c.Thread, v.kind, v.thread)
		}
		if ckSplit[c.Thread] == nil {
			ckSplit[c.Thread] = map[string][]int{}
			ckThreads = append(ckThreads, c.Thread)
		}
		if tsSplit[v.thread] == nil {
			tsSplit[v.thread] = map[string][]int{}
			tsThreads = append(tsThreads, v.thread)
		}
		ckSplit[c.Thread][v.thread] = append(ckSplit[c.Thread][v.thread], v.index)
		tsSplit[v.thread][c.Thread] = append(tsSplit[v.thread][c.Thread], v.index)
		if !c.Time.IsZero() && c.Time.Unix() != v.seconds {
			d.add("time", "%s: %s vs %s", where, c.Time.UTC().Format("2006-01-02T15:04:05Z"), timeUnix(v.seconds))
		}
		if strings.Join(c.WorkingSet, " ") != strings.Join(v.ws, " ") {
			d.add("working set", "%s: %v vs %v", where, c.WorkingSet, v.ws)
		}
		var cs []string
		for _, s := range c.Searches {
			cs = append(cs, searchKey(s.Tool, s.Query, s.Loaded))
		}
		sort.Strings(cs)
		if strings.Join(cs, "\n") != strings.Join(v.searches, "\n") {
			d.add("searches of the turn", "%s: %v vs %v", where, cs, v.searches)
		}
		var names []string
		var blind []string
		for _, call := range c.Calls {
			names = append(names, call.Name)
			if call.Blind {
				blind = append(blind, call.Name)
			}
		}
		sort.Strings(blind)
		if strings.Join(names, " ") != strings.Join(v.calls, " ") {
			d.add("tool calls", "%s: %v vs %v", where, names, v.calls)
		} else {
			for j, call := range c.Calls {
				if call.Loaded != v.loaded[j] {
					d.add("call loaded", "%s: call %d %s in the working set=%v vs via search/restored=%v", where, j+1, call.Name, call.Loaded, v.loaded[j])
				}
			}
		}
		if c.CatalogRecorded && strings.Join(blind, " ") != strings.Join(v.blind, " ") {
			d.add("blind calls", "%s: %v vs %v", where, blind, v.blind)
		}
		if !c.CatalogRecorded && len(v.blind) > 0 {
			d.add("blind calls without a catalog", "%s: the file announces no deferred tools, tsinspect flags %v", where, v.blind)
		}
	}
	parts := func(m map[string][]int) string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Slice(ks, func(i, j int) bool { return m[ks[i]][0] < m[ks[j]][0] })
		var out []string
		for i, k := range ks {
			if i == 4 {
				out = append(out, fmt.Sprintf("and %d more", len(ks)-i))
				break
			}
			out = append(out, fmt.Sprintf("%s (%d turns from turn %d)", k, len(m[k]), m[k][0]))
		}
		return strings.Join(out, "; ")
	}
	for _, th := range ckThreads {
		if len(ckSplit[th]) > 1 {
			d.add("thread split by tsinspect", "checker's thread %s is tsinspect's %s", th, parts(ckSplit[th]))
		}
	}
	for _, th := range tsThreads {
		if len(tsSplit[th]) > 1 {
			d.add("threads merged by tsinspect", "tsinspect's thread %s is checker's %s", th, parts(tsSplit[th]))
		}
	}
	for _, id := range tsOrder {
		if !ckIDs[id] {
			v := ts[id]
			d.add("answer missing from the checker", "turn %d %s (%s)", v.index, id, v.thread)
		}
	}
	return d
}

func timeUnix(s int64) string {
	return time.Unix(s, 0).UTC().Format("2006-01-02T15:04:05Z")
}
