package sessionfiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSubagentsOnlySession lists and opens a session whose main file is
// absent and whose subagents' files are there (a public 2.1.39 session's
// two subagents): one session, named as such, read from those files, the
// listing's turns the same as opening it.
func TestSubagentsOnlySession(t *testing.T) {
	src := filepath.Join("..", "source", "testdata", "public", "10-v2.1.39-subagents-compaction", "258c7280-ae70-4798-800f-63464d01a85d", "subagents")
	agents, _ := filepath.Glob(filepath.Join(src, "*.jsonl"))
	if len(agents) != 2 {
		t.Fatalf("test data: %v", agents)
	}
	root := filepath.Join(t.TempDir(), "projects")
	dir := filepath.Join(root, "p", "258c7280-ae70-4798-800f-63464d01a85d", "subagents")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		b, err := os.ReadFile(a)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, filepath.Base(a)), b, 0o600)
	}
	es, err := List(root)
	if err != nil || len(es) != 1 {
		t.Fatalf("listed %d sessions: %v", len(es), err)
	}
	e := es[0]
	if !e.SubagentsOnly || e.ID != "258c7280-ae70-4798-800f-63464d01a85d" || len(e.Agents) != 2 {
		t.Fatalf("entry %+v", e)
	}
	sum, err := Summarize(e)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.SubagentsOnly || sum.Turns != 4 {
		t.Errorf("summary: subagents only %v, %d turns; want true, 4", sum.SubagentsOnly, sum.Turns)
	}
	got, err := Resolve(root, "258c7280")
	if err != nil || got.Path != e.Path {
		t.Fatalf("resolve: %v %v", got.Path, err)
	}
	if err := Recognise(e.Path); err != nil {
		t.Errorf("recognise: %v", err)
	}
	s, err := Open(e.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !s.SubagentsOnly || s.Len() != sum.Turns {
		t.Errorf("opened: subagents only %v, %d requests; the listing says %d", s.SubagentsOnly, s.Len(), sum.Turns)
	}
	if len(s.Problems) == 0 || !strings.Contains(s.Problems[0].What, "subagents' files alone") {
		t.Errorf("problems %v: want one saying the main file is absent", s.Problems)
	}
}
