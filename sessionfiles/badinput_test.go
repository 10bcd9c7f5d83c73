package sessionfiles

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/internal/oddfiles"

	"github.com/tsinspect/tsinspect/exchange"
)

// bounded runs fn and fails the test if it has not returned within limit:
// a reader that blocks on its input is the failure these tests look for.
func bounded(t *testing.T, limit time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s: still running after %v", what, limit)
	}
}

// keepLine is twoTurns' second api-request with its keep replaced.
func withKeep(t *testing.T, keep string) *writer {
	w := twoTurns(t)
	for i, l := range w.lines {
		if strings.Contains(l, `"id":"r2"`) {
			w.lines[i] = strings.Replace(l, `"keep":1`, `"keep":`+keep, 1)
			if w.lines[i] == l {
				t.Fatal("no keep to replace")
			}
		}
	}
	return w
}

// Issue 30, row 1: an api-request keeping -1 messages of its base made
// slicing panic in every command that reads the session.
func TestNegativeKeepIsAProblemNotAPanic(t *testing.T) {
	p := withKeep(t, "-1").save(t, "")
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	exs := readAll(t, s)
	if len(exs) != 2 {
		t.Fatalf("%d exchanges", len(exs))
	}
	if len(s.Problems) != 1 || !strings.Contains(s.Problems[0].String(), "request r2 keeps -1 messages of request r1: read as none") {
		t.Errorf("problems %v", s.Problems)
	}
	// Rebuilt without the kept message, it does not match what Claude
	// Code sent, and says so.
	if s.Unconfirmed != 2 {
		t.Errorf("unconfirmed %d", s.Unconfirmed)
	}
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Summarize(entryOf(p, info)); err != nil {
		t.Fatal(err)
	}
	// A keep past the base's messages keeps them all, as before.
	if s, err := Open(withKeep(t, "99").save(t, "")); err != nil || len(readAll(t, s)) != 2 {
		t.Fatalf("keep 99: %v", err)
	}
}

// A panic while reading is an error that names the session, not a crash.
func TestStreamTurnsAPanicIntoAnError(t *testing.T) {
	s, err := Open(twoTurns(t).save(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	var nilMap map[string]int
	err = s.Stream(t.Context(), func(ex *exchange.Exchange) error {
		nilMap["x"]++ // a bug in what reads the exchanges
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "read session "+s.Path+": internal error at ") || !strings.Contains(err.Error(), "assignment to entry in nil map") {
		t.Fatalf("%v", err)
	}
}

// Issue 30, row 2: a named pipe or a link to /dev/zero named *.jsonl made
// the listing, "latest" and the readers block or read without end.
func TestPipesAndDevicesAreNotRead(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "-home-me-repo")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(proj, "0b5e1d2c-0000-4000-8000-000000000001.jsonl")
	if err := os.WriteFile(good, []byte(strings.Join(twoTurns(t).lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(good, old, old)
	fifo, zero := filepath.Join(proj, "22222222-0000-4000-8000-000000000002.jsonl"), filepath.Join(proj, "33333333-0000-4000-8000-000000000003.jsonl")
	oddfiles.Make(t, fifo, zero)
	agents := filepath.Join(proj, "0b5e1d2c-0000-4000-8000-000000000001", "subagents")
	if err := os.MkdirAll(agents, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(agents, "agent-zero.jsonl")); err != nil {
		t.Fatal(err)
	}
	bounded(t, 10*time.Second, "Find", func() {
		l, err := Find(root)
		if err != nil {
			t.Error(err)
			return
		}
		if len(l.Entries) != 1 || l.Entries[0].Path != good || len(l.Entries[0].Agents) != 0 {
			t.Errorf("entries %+v", l.Entries)
		}
		sum := l.SkippedSummary()
		for _, want := range []string{"3 paths not read", "22222222-0000-4000-8000-000000000002.jsonl: a named pipe, not a regular file", "33333333-0000-4000-8000-000000000003.jsonl: a character device, not a regular file", "agent-zero.jsonl: a character device"} {
			if !strings.Contains(sum, want) {
				t.Errorf("skipped %q lacks %q", sum, want)
			}
		}
	})
	for _, p := range []string{fifo, zero} {
		bounded(t, 10*time.Second, "Open "+p, func() {
			if _, err := Open(p); !errors.Is(err, ErrNotRegular) {
				t.Errorf("Open: %v", err)
			}
			if err := Recognise(p); !errors.Is(err, ErrNotRegular) {
				t.Errorf("Recognise: %v", err)
			}
			if _, err := Summarize(Entry{Path: p}); !errors.Is(err, ErrNotRegular) {
				t.Errorf("Summarize: %v", err)
			}
			if _, err := Find(p); !errors.Is(err, ErrNotRegular) {
				t.Errorf("Find: %v", err)
			}
		})
	}
	// The pipe, the device and the subagent's link are newer, and
	// passed over: "latest" is the session that can be read.
	bounded(t, 10*time.Second, "latest", func() {
		e, err := Resolve(root, "latest")
		if err != nil || e.Path != good {
			t.Errorf("latest: %v %v", e.Path, err)
		}
	})
	// A subagent's file that is a device is named, and the rest read.
	bounded(t, 10*time.Second, "Open with a device for a subagent", func() {
		s, err := Open(good)
		if err != nil {
			t.Error(err)
			return
		}
		if len(readAll(t, s)) != 2 || len(s.Problems) != 1 || !strings.Contains(s.Problems[0].String(), "agent-zero.jsonl: read "+filepath.Join(agents, "agent-zero.jsonl")+": not a regular file (a character device)") {
			t.Errorf("problems %v", s.Problems)
		}
	})
}

// Issue 30, row 15: one line over the longest line read made the whole
// session unopenable, naming neither file nor line.
func TestOverLongLineIsSkippedAndNamed(t *testing.T) {
	w := twoTurns(t)
	long := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}}`
	w.lines = append(w.lines[:5], append([]string{long}, w.lines[5:]...)...)
	s, err := openWith(w.save(t, ""), 4096)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(readAll(t, s)); n != 2 {
		t.Fatalf("%d exchanges", n)
	}
	if len(s.Problems) != 1 || s.Problems[0].String() != "0b5e1d2c-0000-4000-8000-000000000001.jsonl line 6: a line longer than 4 kB: left out" {
		t.Errorf("problems %v", s.Problems)
	}
	// The line after it is counted from the file's start.
	w.lines = append(w.lines, `{"type":"assistant",`)
	s, err = openWith(w.save(t, ""), 4096)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Problems) != 2 || s.Problems[1].Line != 11 {
		t.Errorf("problems %v", s.Problems)
	}
}

// appendTo appends text to the file at p.
func appendTo(t *testing.T, p, text string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// Issue 30, row 3: a line over the limit appended while following was read
// again on every poll, and nothing after it was ever read.
func TestFollowGoesPastAnOverLongLineOnce(t *testing.T) {
	w := twoTurns(t)
	first := strings.Join(w.lines[:5], "\n") + "\n"
	p := filepath.Join(t.TempDir(), "0b5e1d2c-0000-4000-8000-000000000001.jsonl")
	if err := os.WriteFile(p, []byte(first), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := openWith(p, 4096)
	if err != nil {
		t.Fatal(err)
	}
	// The long line arrives in three writes, the last with its newline.
	appendTo(t, p, `{"type":"user","message":{"role":"user","content":"`+strings.Repeat("x", 3000))
	if _, err := s.Refresh(); err != nil {
		t.Fatal(err)
	}
	if len(s.Problems) != 0 {
		t.Fatalf("a line still under the limit: %v", s.Problems)
	}
	appendTo(t, p, strings.Repeat("y", 3000))
	s.Refresh()
	offset := s.files[p].read.at.offset
	appendTo(t, p, strings.Repeat("z", 3000)+`"}}`+"\n")
	s.Refresh()
	if got := s.files[p].read.at.offset; got != int64(len(first)+9000+len(`{"type":"user","message":{"role":"user","content":"`)+4) || got <= offset {
		t.Errorf("offset %d, then %d: not past the line", offset, got)
	}
	appendTo(t, p, strings.Join(w.lines[5:], "\n")+"\n")
	for range 3 {
		if _, err := s.Refresh(); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(readAll(t, s)); n != 2 {
		t.Fatalf("%d exchanges: what follows the long line is not read", n)
	}
	if len(s.Problems) != 1 || s.Problems[0].Line != 6 || !strings.Contains(s.Problems[0].What, "longer than 4 kB") {
		t.Errorf("problems %v", s.Problems)
	}
}

// Issue 30, row 4: a followed file cut, replaced, deleted or renamed kept
// the old turns or mixed two sessions, a deleted one repeated its error on
// every poll, and line numbers counted from the last read.
func TestFollowSurvivesCutReplacedAndDeletedFiles(t *testing.T) {
	w := twoTurns(t)
	one := strings.Join(w.lines[:5], "\n") + "\n"
	rest := strings.Join(w.lines[5:], "\n") + "\n"
	dir := t.TempDir()
	p := filepath.Join(dir, "0b5e1d2c-0000-4000-8000-000000000001.jsonl")
	if err := os.WriteFile(p, []byte(one), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	appendTo(t, p, rest+`{"type":"assistant",`+"\n")
	if _, err := s.Refresh(); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 2 || len(s.Problems) != 1 || s.Problems[0].Line != 10 {
		t.Fatalf("after appending: %d requests, problems %v (want line 10, counted from the start)", s.Len(), s.Problems)
	}
	// Cut back to the first turn: read again, from the start.
	if err := os.Truncate(p, int64(len(one))); err != nil {
		t.Fatal(err)
	}
	from, err := s.Refresh()
	if err != nil || from != 0 || s.Len() != 1 || s.Generation() != 1 {
		t.Fatalf("after the cut: from %d, %d requests, generation %d, %v", from, s.Len(), s.Generation(), err)
	}
	if len(s.Problems) != 1 || !strings.Contains(s.Problems[0].What, "was cut (") {
		t.Errorf("problems %v", s.Problems)
	}
	// Replaced by another file (mv): read again, only the new file's.
	other := filepath.Join(dir, "other.jsonl")
	if err := os.WriteFile(other, []byte(strings.Join(w.lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, p); err != nil {
		t.Fatal(err)
	}
	if from, err := s.Refresh(); err != nil || from != 0 || s.Len() != 2 || s.Generation() != 2 {
		t.Fatalf("after the replacement: from %d, %d requests, generation %d, %v", from, s.Len(), s.Generation(), err)
	}
	if len(s.Problems) != 1 || !strings.Contains(s.Problems[0].What, "was replaced") {
		t.Errorf("problems %v", s.Problems)
	}
	// Deleted: said once, however many polls; the turns stay.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := s.Refresh(); err != nil {
			t.Fatal(err)
		}
	}
	if s.Len() != 2 || len(s.Problems) != 2 || !strings.Contains(s.Problems[1].What, "is gone") {
		t.Fatalf("after the deletion: %d requests, problems %v", s.Len(), s.Problems)
	}
	// Back: followed again, from its start.
	if err := os.WriteFile(p, []byte(one), 0o600); err != nil {
		t.Fatal(err)
	}
	if from, err := s.Refresh(); err != nil || from != 0 || s.Len() != 1 || s.Generation() != 3 {
		t.Fatalf("after it came back: from %d, %d requests, generation %d, %v", from, s.Len(), s.Generation(), err)
	}
	if len(s.Problems) != 1 || !strings.Contains(s.Problems[0].What, "came back") {
		t.Errorf("problems %v", s.Problems)
	}
	appendTo(t, p, rest)
	if _, err := s.Refresh(); err != nil || s.Len() != 2 {
		t.Fatalf("appended after it came back: %d requests, %v", s.Len(), err)
	}
}

// Issue 30, row 9: a projects directory that is a link, or project
// directories linked into it, listed nothing.
func TestLinkedDirectoriesAreListed(t *testing.T) {
	real := t.TempDir()
	proj := filepath.Join(real, "-home-me-repo")
	if err := os.MkdirAll(filepath.Join(proj, "0b5e1d2c-0000-4000-8000-000000000001", "subagents"), 0o700); err != nil {
		t.Fatal(err)
	}
	lines := []byte(strings.Join(twoTurns(t).lines, "\n") + "\n")
	for _, p := range []string{filepath.Join(proj, "0b5e1d2c-0000-4000-8000-000000000001.jsonl"), filepath.Join(proj, "0b5e1d2c-0000-4000-8000-000000000001", "subagents", "agent-a.jsonl")} {
		if err := os.WriteFile(p, lines, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	elsewhere := t.TempDir()
	other := filepath.Join(elsewhere, "kept-on-another-disk")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "aaaaaaaa-0000-4000-8000-000000000002.jsonl"), lines, 0o600); err != nil {
		t.Fatal(err)
	}
	// A project directory linked in, one linked twice, and a link back
	// to the projects directory itself.
	if err := os.Symlink(other, filepath.Join(real, "-home-me-other")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(real, "-home-me-other-again")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(proj, "loop")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "projects")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{real, link} {
		l, err := Find(root)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range l.Entries {
			ids = append(ids, e.ID[:8]+":"+e.Project+":"+filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(firstOr(e.Agents))))))
		}
		if len(l.Entries) != 2 {
			t.Errorf("%s: %v", root, ids)
		}
		if len(l.Skipped) != 1 || !strings.Contains(l.Skipped[0].What, "a loop") {
			t.Errorf("%s: skipped %v", root, l.Skipped)
		}
		for _, e := range l.Entries {
			if e.ID[:8] == "0b5e1d2c" && (len(e.Agents) != 1 || !strings.HasPrefix(e.Path, root)) {
				t.Errorf("%s: %+v", root, e)
			}
		}
	}
}

func firstOr(s []string) string {
	if len(s) == 0 {
		return "."
	}
	return s[0]
}

// The smaller points of issue 30: "latest" passes over sessions that
// cannot be read and says which; a file that is not a session says what it
// holds instead.
func TestLatestPassesOverWhatCannotBeRead(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "-home-me-repo")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(proj, "0b5e1d2c-0000-4000-8000-000000000001.jsonl")
	if err := os.WriteFile(good, []byte(strings.Join(twoTurns(t).lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(good, old, old)
	broken := filepath.Join(proj, "bbbbbbbb-0000-4000-8000-000000000002.jsonl")
	if err := os.WriteFile(broken, []byte("\x00\x00garbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := Resolve(root, "latest")
	if err != nil || e.Path != good {
		t.Fatalf("latest: %s %v", e.Path, err)
	}
	if len(e.Passed) != 1 || e.Passed[0].File != broken || !strings.Contains(e.Passed[0].What, "its first line is not a JSON record") {
		t.Errorf("passed %v", e.Passed)
	}
	os.Remove(good)
	if _, err := Resolve(root, "latest"); err == nil || !strings.Contains(err.Error(), "none of the 1 under") {
		t.Errorf("only a broken one: %v", err)
	}
}

func TestRecogniseSaysWhatAFileHolds(t *testing.T) {
	dir := t.TempDir()
	huge := `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-11-20T10:00:00.000Z","sessionId":"0b5e1d2c-0000-4000-8000-000000000001","content":"` + strings.Repeat("a", 2<<20) + `"}` + "\n"
	for content, want := range map[string]string{
		"":                          "it is empty",
		"\n\n":                      "it holds no record",
		"not json\n":                "its first line is not a JSON record",
		`{"type":"quantum"}` + "\n": `its first record's type "quantum" is not one Claude Code writes`,
		`{"type":"user"}` + "\n":    "its first record (user) has no sessionId",
		// A damaged first record costs only itself when the session's
		// own records follow (the listing reads past it too); alone,
		// or before more records without one, it still says why not.
		`{"type":"user"}` + "\n" + strings.Join(twoTurns(t).lines, "\n") + "\n":                          "",
		`,"x":1}` + "\n" + `{"type":"attachment"}` + "\n" + strings.Join(twoTurns(t).lines, "\n") + "\n": "",
		`{"type":"user"}` + "\n" + `{"type":"assistant"}` + "\n":                                         "its first record (user) has no sessionId",
		// What claude -p --output-format stream-json prints names its
		// session as session_id, on every record: whole, or its init
		// record still being written.
		`{"type":"system","subtype":"init","session_id":"5eed2f3e-0b37-463a-b3bf-cb4a841b1c6c"}` + "\n" + `{"type":"assistant","session_id":"5eed2f3e-0b37-463a-b3bf-cb4a841b1c6c"}` + "\n": "printed for session 5eed2f3e-0b37-463a-b3bf-cb4a841b1c6c, which holds no requests; the session's own file does: 'tsinspect open 5eed2f3e'",
		`{"type":"system","subtype":"init","session_id":"5eed2f3e-0b37-463a-b3bf-cb4a841b1c6c","tools":["Ba`:                                                                                "printed for session 5eed2f3e",
		// A record of another tool that happens to have a session_id is
		// not taken for it.
		`{"type":"span","session_id":"x"}` + "\n":    `its first record's type "span" is not one Claude Code writes`,
		`{"request":{},"response":{}}`:               "its first record has no type",
		strings.Join(twoTurns(t).lines, "\n") + "\n": "",
		huge: "",
	} {
		p := filepath.Join(dir, "s.jsonl")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		err := Recognise(p)
		switch {
		case want == "" && err != nil:
			t.Errorf("%.40q: %v", content, err)
		case want != "" && (!errors.Is(err, ErrNotSession) || !strings.Contains(err.Error(), want)):
			t.Errorf("%.40q: %v, want %q", content, err, want)
		}
	}
}

// Issue 30: the index was never pruned of deleted sessions, and two
// listings at once wrote the same temporary file.
func TestIndexIsPrunedAndSavedWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cache", "sessions-index.gob")
	root := filepath.Join(dir, "projects")
	ix := LoadIndex(path)
	for _, p := range []string{filepath.Join(root, "p", "a.jsonl"), filepath.Join(root, "p", "gone.jsonl"), filepath.Join(dir, "elsewhere", "b.jsonl")} {
		ix.Entries[p] = Indexed{Size: 1, Summary: &Summary{ID: filepath.Base(p)}}
	}
	ix.dirty = true
	if n := ix.Prune(root, []Entry{{Path: filepath.Join(root, "p", "a.jsonl")}}); n != 1 {
		t.Errorf("pruned %d", n)
	}
	if _, ok := ix.Entries[filepath.Join(root, "p", "gone.jsonl")]; ok || len(ix.Entries) != 2 {
		t.Errorf("entries %v", ix.Entries)
	}
	// Many saves at once: each renames a whole index into place, and no
	// temporary file is left behind.
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			x := LoadIndex(path)
			x.Entries[filepath.Join(root, "p", strings.Repeat("n", i+1)+".jsonl")] = Indexed{Size: int64(i), Summary: &Summary{Turns: i}}
			x.dirty = true
			errs <- x.Save()
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	got := LoadIndex(path)
	if len(got.Entries) == 0 {
		t.Error("the index does not read back")
	}
	list, _ := os.ReadDir(filepath.Dir(path))
	if len(list) != 1 {
		var names []string
		for _, e := range list {
			names = append(names, e.Name())
		}
		t.Errorf("left in the cache directory: %v", names)
	}
}

// A file rewritten in place, as long as before or longer, is told by its
// first bytes.
func TestFollowSeesAFileRewrittenInPlace(t *testing.T) {
	w := twoTurns(t)
	p := w.save(t, "")
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	// The same records, but the first one's timestamp changed: another
	// session written over this one, byte count and inode alike.
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(strings.Replace(string(data), "10:00:00.000Z", "11:00:00.000Z", 1)), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if from, err := s.Refresh(); err != nil || from != 0 || s.Generation() != 1 || len(s.Problems) != 1 || !strings.Contains(s.Problems[0].What, "was rewritten") {
		t.Fatalf("from %d, generation %d, problems %v, %v", from, s.Generation(), s.Problems, err)
	}
	if from, _ := s.Refresh(); from != s.Len() || s.Generation() != 1 {
		t.Errorf("read again with nothing changed: from %d, generation %d", from, s.Generation())
	}
}

// A session whose first line was cut and whose first whole record lost
// its session ID: the listing counted its turns, and the full reading
// refused the file as not a session. Both read it now, alike.
func TestDamagedHeadIsReadAsTheListingReadsIt(t *testing.T) {
	w := twoTurns(t)
	damaged := `ssionId":"cut","type":"user"}` + "\n" + `{"type":"attachment","attachment":{"type":"hook_success"}}` + "\n" + strings.Join(w.lines, "\n") + "\n"
	p := filepath.Join(t.TempDir(), "0b5e1d2c-0000-4000-8000-000000000001.jsonl")
	if err := os.WriteFile(p, []byte(damaged), 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Summarize(entryOf(p, info))
	if err != nil || sum.Turns != 2 {
		t.Fatalf("listing: %+v, %v", sum, err)
	}
	if err := Recognise(p); err != nil {
		t.Fatalf("Recognise: %v", err)
	}
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s.Stream(context.Background(), func(*exchange.Exchange) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != sum.Turns {
		t.Errorf("read whole: %d requests, the listing %d", n, sum.Turns)
	}
}
