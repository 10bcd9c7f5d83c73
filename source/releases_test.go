package source

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/golden"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// releaseFiles lists the main session files under testdata/releases: what
// real Claude Code releases wrote, driven against tsinspect's stand-in
// for the Messages API through the same scenarios (a select: search, a
// keyword search, one that found nothing, a blind call, a search that left
// out a named tool, a subagent, two at once, a session resumed on another
// model, a compaction, an HTTP 500, a cut stream and an empty reply, an
// HTTP 400 on every attempt, 529s and an error event). Paths are replaced
// by /home/user; nothing else was changed.
func releaseFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "releases", "*", "projects", "*", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no release files: %v", err)
	}
	sort.Strings(files)
	return files
}

// TestEveryReleaseOpens opens the session files of every release,
// 1.0.128 to 2.1.299 (none of which writes request records), and checks,
// file by file, the timeline built from the transcript against its
// golden, and the listing's figures against the timeline's.
func TestEveryReleaseOpens(t *testing.T) {
	var out strings.Builder
	for _, f := range releaseFiles(t) {
		rel, _ := filepath.Rel(filepath.Join("testdata", "releases"), f)
		if _, problems, err := ReadFile(context.Background(), f); err != nil || Summary(problems) != "" {
			t.Errorf("%s: %v %s", f, err, Summary(problems))
		}
		sess, row := readRelease(t, f)
		fmt.Fprintf(&out, "== %s\n%s\n", filepath.ToSlash(rel), row)
		for _, tu := range sess.Turns {
			fmt.Fprintf(&out, "%s\n", turnLine(sess, tu))
		}
	}
	golden.Check(t, filepath.Join("testdata", "releases.golden"), out.String(), *update)
}

// readRelease reads the session of main file f as the timeline and as
// the listing, checks that they agree, and returns the timeline and the
// listing's line.
func readRelease(t *testing.T, f string) (*timeline.Session, string) {
	t.Helper()
	b, problems, err := ReadFile(context.Background(), f)
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	_ = problems // TestEveryReleaseOpens wants none; others some
	sess := b.Session()
	entries, err := sessionfiles.List(f)
	if err != nil || len(entries) != 1 {
		t.Fatalf("%s is not listed: %v", f, err)
	}
	entry := &entries[0]
	sum, err := sessionfiles.Summarize(*entry)
	if err != nil {
		t.Fatal(err)
	}
	listing, timelineSays := listingFigures(sum), timelineFigures(sess)
	if listing != timelineSays {
		t.Errorf("%s: the listing says\n  %s\nthe timeline\n  %s", f, listing, timelineSays)
	}
	return sess, fmt.Sprintf("listing: %s subagents %d models %v catalog %v version %s", listing, sum.Subagents, sum.Models, sum.CatalogRecorded, sum.Version)
}

// figureLine is the figures the listing and the timeline must agree on.
const figureLine = "turns %d tokens %d/%d/%d/%d searches %d empty %d partial %d blind %d breaks %d placeholders %d"

// listingFigures are the listing's figures of a session.
func listingFigures(sum *sessionfiles.Summary) string {
	in, out, read, write := sum.Tokens()
	return fmt.Sprintf(figureLine, sum.Turns, in, out, read, write, sum.Searches, sum.EmptySearches, sum.PartialSearches,
		sum.BlindCalls, len(sum.Breaks), sum.OutputPlaceholders)
}

// timelineFigures are the same figures counted from the timeline's turns.
func timelineFigures(sess *timeline.Session) string {
	var in, out, read, write int64
	searches, empty, blind, breaks, partial, placeholders := 0, 0, 0, 0, 0, 0
	for _, tu := range sess.Turns {
		if tu.OutputPlaceholder() {
			placeholders++
		}
		u := tu.Decoded.Response.Usage
		in, out, read, write = in+u.InputTokens, out+u.OutputTokens, read+u.CacheReadInputTokens, write+u.CacheCreationInputTokens
		searches += len(tu.NewSearches)
		for _, fl := range tu.Flags {
			switch fl.Kind {
			case timeline.FlagEmptySearch:
				empty++
			case timeline.FlagCallBeforeLoad, timeline.FlagUnknownTool:
				blind++
			case timeline.FlagCacheBreak:
				breaks++
			case timeline.FlagSearchPartial:
				partial++
			}
		}
	}
	return fmt.Sprintf(figureLine, len(sess.Turns), in, out, read, write, searches, empty, partial, blind, breaks, placeholders)
}

// turnLine is what a turn of a release's session shows: its thread, model,
// status, stop reason, usage, catalog, working set, searches, calls and
// flags.
func turnLine(s *timeline.Session, tu *timeline.Turn) string {
	d := tu.Decoded
	kind := ""
	if th := s.Thread(tu.Thread); th != nil {
		kind = th.Kind
	}
	u := d.Response.Usage
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s(%s) %s status=%d stop=%s usage=%d/%d/%d/%d", tu.Index, tu.Thread, kind, d.Request.Model,
		tu.Exchange.Status, d.Response.StopReason, u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
	catalog := fmt.Sprint(len(d.Catalog))
	if tr := d.Request.Transcript; tr != nil && !tr.CatalogRecorded {
		catalog = "-"
	}
	fmt.Fprintf(&b, " catalog=%s", catalog)
	var ws []string
	for _, w := range d.WorkingSet {
		ws = append(ws, w.Name+":"+w.Via)
	}
	if len(ws) > 0 {
		fmt.Fprintf(&b, " ws=%v", ws)
	}
	for _, sr := range tu.NewSearches {
		fmt.Fprintf(&b, " search(%s %q → %v)", sr.Tool, sr.Query, sr.Results)
	}
	for _, c := range d.ToolCalls {
		fmt.Fprintf(&b, " call(%s %s)", c.Name, c.Via)
	}
	if tu.Exchange.Error != "" {
		fmt.Fprintf(&b, " error=%q", tu.Exchange.Error)
	}
	var kinds []string
	for _, f := range tu.Flags {
		k := f.Kind
		if f.Cause != "" {
			k += ":" + f.Cause
		}
		kinds = append(kinds, k)
	}
	if len(kinds) > 0 {
		fmt.Fprintf(&b, " flags=%v", kinds)
	}
	return b.String()
}

// links lists how each turn of s joined its thread (its link and Prev),
// then the threads (ID, kind, turns).
func links(s *timeline.Session) string {
	var b strings.Builder
	for _, tu := range s.Turns {
		fmt.Fprintf(&b, "%d:%s:%d ", tu.Index, tu.Link, tu.Prev)
	}
	for _, th := range s.Threads {
		fmt.Fprintf(&b, "\n%s %s %d turns", th.ID, th.Kind, len(th.Turns))
	}
	return b.String()
}

// TestFollowTranscriptLineByLine follows session files without request
// records as they are written, a line at a time, and ends with the
// timeline that reading them whole gives (a failed attempt learns its
// model from its retry's answer, written later; the main conversation
// restarted, its context cleared or its chain's link missing, goes on in
// the main thread however the turns before it were linked and kept).
func TestFollowTranscriptLineByLine(t *testing.T) {
	for _, rel := range []string{
		"releases/2.1.299/projects/-home-user-flaky/45a0fa3c-3569-4097-809e-6a2c1c79df51.jsonl",
		"releases/2.1.299/projects/-home-user-compact/5f0c4a8e-2b7d-4c1e-9a3f-6d8b1e2c7a91.jsonl",
		"public/36-v2.1.12-plan-clear-restart/38917d7d-9f69-4210-a3b0-eed0a9e97575.jsonl",
		"public/37-v2.1.23-chain-parent-missing/70c88cff-cb35-404f-a974-2a08bab4e4bc.jsonl",
	} {
		src := filepath.Join("testdata", rel)
		whole, _ := readRelease(t, src)
		want := sessionLine(whole) + links(whole)
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(t.TempDir(), "projects", "p", filepath.Base(src))
		os.MkdirAll(filepath.Dir(dst), 0o700)
		os.WriteFile(dst, nil, 0o600)
		f := Follow(dst)
		ctx := context.Background()
		var got *timeline.Session
		lines := strings.SplitAfter(string(b), "\n")
		for i, l := range lines {
			fh, err := os.OpenFile(dst, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fh.WriteString(l)
			fh.Close()
			if i%3 != 0 && i != len(lines)-1 {
				continue
			}
			s, err := f.Poll(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if s != nil {
				got = s
			}
		}
		f.Close()
		if got == nil || sessionLine(got)+links(got) != want {
			t.Errorf("%s followed:\n%s\nread whole:\n%s", rel, sessionLine(got)+links(got), want)
		}
	}
}

// TestPublicSessionsOpen opens session files of real work with real
// models that their authors published (testdata/public, 1.0.98 to
// 2.1.219: inline sidechains, a subagent, compactions, API error storms,
// ToolSearch with and without the catalog, blind calls of MCP tools),
// their texts replaced (see testdata/public/README.md): each file's
// timeline is held to a golden, and the listing to the timeline.
func TestPublicSessionsOpen(t *testing.T) {
	files := publicSessions(t)
	var out strings.Builder
	for _, f := range files {
		_, problems, err := ReadFile(context.Background(), f)
		if _, absent := os.Stat(f); absent != nil && len(problems) == 1 && strings.Contains(problems[0].Problem, "subagents' files alone") {
			problems = nil // said once: the main file is absent
		}
		if err != nil || Summary(problems) != "" {
			t.Errorf("%s: %v %s", f, err, Summary(problems))
		}
		rel, _ := filepath.Rel(filepath.Join("testdata", "public"), f)
		sess, row := readRelease(t, f)
		fmt.Fprintf(&out, "== %s\n%s\n", filepath.ToSlash(rel), row)
		for _, tu := range sess.Turns {
			fmt.Fprintf(&out, "%s\n", turnLine(sess, tu))
		}
	}
	golden.Check(t, filepath.Join("testdata", "public.golden"), out.String(), *update)
}

// publicSessions are the main files of the public sessions under
// testdata/public, and the main file as it would be of a session kept as
// its subagents' files alone (<id>/subagents/agent-*.jsonl, no <id>.jsonl).
func publicSessions(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "public", "*", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no public files: %v", err)
	}
	subs, _ := filepath.Glob(filepath.Join("testdata", "public", "*", "*", "subagents", "*.jsonl"))
	for _, s := range subs {
		main := filepath.Dir(filepath.Dir(s)) + ".jsonl"
		if _, err := os.Stat(main); err != nil && !slices.Contains(files, main) {
			files = append(files, main)
		}
	}
	sort.Strings(files)
	return files
}

// TestRestartKeptAcrossBuilds adds the requests of public sessions whose
// main conversation restarts (36: its context cleared; 37: the record its
// chain continues missing from the file) to a Builder one at a time,
// asking for the session after each, as a view that follows a session
// does: the turns kept linked from one build to the next come out as
// reading the file whole links them, the restart in the main thread.
func TestRestartKeptAcrossBuilds(t *testing.T) {
	for _, rel := range []string{
		"public/36-v2.1.12-plan-clear-restart/38917d7d-9f69-4210-a3b0-eed0a9e97575.jsonl",
		"public/37-v2.1.23-chain-parent-missing/70c88cff-cb35-404f-a974-2a08bab4e4bc.jsonl",
	} {
		src := filepath.Join("testdata", rel)
		whole, _ := readRelease(t, src)
		want := sessionLine(whole) + links(whole)
		if !strings.Contains(want, ":"+timeline.LinkRestart+":") {
			t.Fatalf("%s: no restart read whole:\n%s", rel, want)
		}
		s, err := sessionfiles.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		b := timeline.NewBuilder(false)
		var got *timeline.Session
		for i := range s.Len() {
			ex, err := s.GetMade(int64(i + 1))
			if err != nil {
				t.Fatal(err)
			}
			b.Add(ex)
			got = b.Session()
		}
		if g := sessionLine(got) + links(got); g != want {
			t.Errorf("%s built a request at a time:\n%s\nread whole:\n%s", rel, g, want)
		}
	}
}

// TestRestartScopesRepeatedSearches: after the main conversation restarts
// with its context cleared, asking the same search again is no repeat
// (what the first loaded is gone with the context), while the same two
// searches in one context are.
func TestRestartScopesRepeatedSearches(t *testing.T) {
	const at = "2026-11-20T10:00:0"
	answer := func(uuid, parent, id, content string, sec int) string {
		return fmt.Sprintf(`{"type":"assistant","uuid":%q,"parentUuid":%q,"sessionId":"s","version":"2.1.12","timestamp":"%s%d.000Z","message":{"id":%q,"model":"claude-opus-5","role":"assistant","type":"message","content":[%s],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}}`, uuid, parent, at, sec, id, content)
	}
	search := func(id string) string {
		return fmt.Sprintf(`{"type":"tool_use","id":%q,"name":"ToolSearch","input":{"query":"select:mcp__s__x"}}`, id)
	}
	result := func(uuid, parent, id string, sec int) string {
		return fmt.Sprintf(`{"type":"user","uuid":%q,"parentUuid":%q,"sessionId":"s","version":"2.1.12","timestamp":"%s%d.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":[{"type":"tool_reference","tool_name":"mcp__s__x"}]}]}}`, uuid, parent, at, sec, id)
	}
	prompt := func(uuid, parent string, sec int) string {
		p := `null`
		if parent != "" {
			p = fmt.Sprintf("%q", parent)
		}
		return fmt.Sprintf(`{"type":"user","uuid":%q,"parentUuid":%s,"sessionId":"s","version":"2.1.12","timestamp":"%s%d.000Z","message":{"role":"user","content":"find x"}}`, uuid, p, at, sec)
	}
	for _, c := range []struct {
		name     string
		again    []string // the records between the first context's last answer and the second search
		restart  bool
		repeated bool
	}{
		{"context cleared", []string{`{"type":"progress","uuid":"p1","parentUuid":null,"sessionId":"s","timestamp":"` + at + `4.000Z","data":{"type":"hook_progress","hookEvent":"SessionStart","hookName":"SessionStart:clear"}}`, prompt("u3", "p1", 5)}, true, false},
		{"one context", []string{prompt("u3", "a2", 5)}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines := []string{
				prompt("u1", "", 0),
				answer("a1", "u1", "msg_1", search("toolu_1"), 1),
				result("u2", "a1", "toolu_1", 2),
				answer("a2", "u2", "msg_2", `{"type":"text","text":"ok"}`, 3),
			}
			lines = append(lines, c.again...)
			lines = append(lines,
				answer("a3", "u3", "msg_3", search("toolu_2"), 6),
				result("u4", "a3", "toolu_2", 7),
				answer("a4", "u4", "msg_4", `{"type":"text","text":"ok"}`, 8))
			path := filepath.Join(t.TempDir(), "projects", "p", "s.jsonl")
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			s, _ := readRelease(t, path)
			if len(s.Turns) != 4 || len(s.Threads) != 1 || s.Threads[0].Kind != timeline.KindMain {
				t.Fatalf("%d turns in %d threads, want 4 in the main thread:\n%s", len(s.Turns), len(s.Threads), sessionLine(s)+links(s))
			}
			if got := s.Turns[2].Link == timeline.LinkRestart; got != c.restart {
				t.Errorf("turn 3 joined by %q (Prev %d): restart %v, want %v", s.Turns[2].Link, s.Turns[2].Prev, got, c.restart)
			}
			repeated := false
			for _, f := range s.Turns[3].Flags {
				repeated = repeated || f.Kind == timeline.FlagSearchRepeated
			}
			if repeated != c.repeated {
				t.Errorf("turn 4's search flagged as repeated: %v, want %v\n%s", repeated, c.repeated, sessionLine(s))
			}
		})
	}
}

// TestRestartInTheTabs: the turn that restarts the main conversation
// (public session 36, turn 14) is no turn's successor in the views: the
// Cache tab compares its prefix with nothing and says why, and the
// Working set tab counts from the restart.
func TestRestartInTheTabs(t *testing.T) {
	s, _ := readRelease(t, filepath.Join("testdata", "public", "36-v2.1.12-plan-clear-restart", "38917d7d-9f69-4210-a3b0-eed0a9e97575.jsonl"))
	turn := s.Turn(14)
	if turn == nil || turn.Link != timeline.LinkRestart {
		t.Fatalf("turn 14: %+v, want the restart", turn)
	}
	in := view.TabInput{Session: s, Turn: turn, Width: 100, Height: 6, Explain: timeline.Explain}
	if got := view.Text(view.TabCache.Lines(in)); !strings.Contains(got, "First turn since main started again") || strings.Contains(got, "Prefix vs #13") {
		t.Errorf("the Cache tab of turn 14:\n%s", got)
	}
	if got := view.Text(view.TabWorkingSet.Lines(in)); !strings.Contains(got, "first turn since main started again") {
		t.Errorf("the Working set tab of turn 14:\n%s", got)
	}
}
