package sessionfiles

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
)

// dirSeparator splits a FuzzSessionDir input into files: the main
// session file, then each subagent's.
var dirSeparator = []byte("\n\x00agent\x00\n")

// FuzzSessionDir feeds arbitrary bytes to the whole path from a projects
// directory to a timeline: Find lists the session (its subagents' files
// with it), the listing's one-pass summary and the rebuild read it, and
// neither panics nor blocks; where both passes read every line (no
// problem named, no bad line counted), they agree on the number of turns:
// both rest on the transcript's one reading.
func FuzzSessionDir(f *testing.F) {
	w := twoTurns(&testing.T{})
	whole := strings.Join(w.lines, "\n") + "\n"
	f.Add([]byte(whole))
	f.Add([]byte(whole + string(dirSeparator) + whole))
	f.Add([]byte(whole[:len(whole)/3] + string(dirSeparator) + whole))
	f.Add(bytes.ReplaceAll([]byte(whole), []byte(`"keep":1`), []byte(`"keep":-1`)))
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		proj := filepath.Join(root, "-home-me-repo")
		if err := os.RemoveAll(proj); err != nil {
			t.Fatal(err)
		}
		id := "0b5e1d2c-0000-4000-8000-000000000001"
		agents := filepath.Join(proj, id, "subagents")
		if err := os.MkdirAll(agents, 0o700); err != nil {
			t.Fatal(err)
		}
		parts := bytes.Split(data, dirSeparator)
		if len(parts) > 4 {
			parts = parts[:4]
		}
		main := filepath.Join(proj, id+".jsonl")
		for i, p := range parts {
			name := main
			if i > 0 {
				name = filepath.Join(agents, fmt.Sprintf("agent-%d.jsonl", i))
			}
			if err := os.WriteFile(name, p, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		l, err := Find(root)
		if err != nil || len(l.Entries) != 1 || len(l.Entries[0].Agents) != len(parts)-1 || len(l.Skipped) != 0 {
			t.Fatalf("Find: %v, %+v", err, l)
		}
		sum, _, _, err := summarizeSafe(l.Entries[0], nil, false)
		if err != nil {
			t.Fatal(err)
		}
		s, err := openWith(main, 1<<12)
		if err != nil {
			return
		}
		n := 0
		if err := s.Stream(context.Background(), func(ex *exchange.Exchange) error {
			if ex.ReqBody == nil || ex.RespBody == nil {
				t.Fatalf("exchange %d without bodies", ex.ID)
			}
			n++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n+s.Voids() != s.Len() {
			t.Fatalf("streamed %d and left out %d of %d", n, s.Voids(), s.Len())
		}
		if len(s.Problems) == 0 && sum.BadLines == 0 && !s.Partial && sum.Turns != n {
			t.Fatalf("the listing counts %d turns, the timeline %d", sum.Turns, s.Len())
		}
	})
}
