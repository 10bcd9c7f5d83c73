package sessionfiles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestResumeAgreesWithReadingWhole grows real session files (the main
// file and a subagent's) a few lines at a time, cutting lines in the
// middle and answers between their records, and lists them after each
// step with the index: the session is read from where the last listing
// stopped, and its summary is what reading it whole gives. A file
// replaced by another is read whole.
func TestResumeAgreesWithReadingWhole(t *testing.T) {
	src := filepath.Join("..", "source", "testdata", "releases", "2.1.299", "projects", "-home-user-subagent")
	mains, _ := filepath.Glob(filepath.Join(src, "*.jsonl"))
	subs, _ := filepath.Glob(filepath.Join(src, "*", "subagents", "*.jsonl"))
	if len(mains) != 1 || len(subs) == 0 {
		t.Fatalf("test data: %v %v", mains, subs)
	}
	whole := map[string][]byte{}
	for _, f := range append(mains, subs...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		whole[f] = b
	}
	dir := filepath.Join(t.TempDir(), "projects", "p")
	dst := func(f string) string { r, _ := filepath.Rel(src, f); return filepath.Join(dir, r) }
	for _, f := range append(mains, subs...) {
		os.MkdirAll(filepath.Dir(dst(f)), 0o700)
		os.WriteFile(dst(f), nil, 0o600)
	}
	ix := LoadIndex(filepath.Join(t.TempDir(), "index.gob"))
	resumed := 0
	for step := 1; ; step++ {
		grew := false
		for _, f := range append(mains, subs...) {
			have, _ := os.ReadFile(dst(f))
			if len(have) == len(whole[f]) {
				continue
			}
			// A few records more, and half of the next line.
			n := len(have)
			for k := 0; k < 3 && n < len(whole[f]); k++ {
				if i := bytes.IndexByte(whole[f][n:], '\n'); i >= 0 {
					n += i + 1
				} else {
					n = len(whole[f])
				}
			}
			if step%2 == 0 && n < len(whole[f]) {
				if i := bytes.IndexByte(whole[f][n:], '\n'); i > 4 {
					n += i / 2
				}
			}
			os.WriteFile(dst(f), whole[f][:n], 0o600)
			grew = true
		}
		if !grew {
			break
		}
		resumed += checkListedAsWhole(t, filepath.Dir(dir), ix, fmt.Sprintf("step %d", step))
	}
	if resumed < 3 {
		t.Errorf("only %d listings went on from the last", resumed)
	}
	// Replaced by another session's file, longer: read whole.
	other, _ := os.ReadFile(filepath.Join("..", "source", "testdata", "releases", "2.1.299", "projects", "-home-user-compact", "5f0c4a8e-2b7d-4c1e-9a3f-6d8b1e2c7a91.jsonl"))
	os.WriteFile(dst(mains[0]), append(other, whole[mains[0]]...), 0o600)
	es, _ := List(filepath.Dir(dir))
	sums, st := Scan(es, ix, nil)
	fresh, _ := Summarize(es[0])
	a, _ := json.Marshal(sums[0])
	b, _ := json.Marshal(fresh)
	if st.Resumed != 0 || !bytes.Equal(a, b) {
		t.Errorf("replaced file: %d resumed;\n%s\n%s", st.Resumed, a, b)
	}
}

// TestResumeAgreesOnPublicFiles grows every public session of real work
// (source/testdata/public: progress records in the chain, parallel
// results, compactions, subagents) in a dozen steps, touches it, and
// lists it after each step with the index: the listing that goes on from
// the index is what reading the files whole gives, and so is the listing
// of a file touched without a change.
func TestResumeAgreesOnPublicFiles(t *testing.T) {
	mains, _ := filepath.Glob(filepath.Join("..", "source", "testdata", "public", "*", "*.jsonl"))
	if len(mains) == 0 {
		t.Fatal("no public session files")
	}
	// and the sessions kept as their subagents' files alone
	orphans, _ := filepath.Glob(filepath.Join("..", "source", "testdata", "public", "*", "*", "subagents"))
	for _, o := range orphans {
		if main := filepath.Dir(o) + ".jsonl"; !slices.Contains(mains, main) {
			if _, err := os.Stat(main); err != nil {
				mains = append(mains, main)
			}
		}
	}
	for _, main := range mains {
		src := filepath.Dir(main)
		subs, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(main, ".jsonl"), "subagents", "*.jsonl"))
		files := subs
		if _, err := os.Stat(main); err == nil {
			files = append([]string{main}, subs...)
		}
		t.Run(filepath.Base(src), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "projects", "p")
			dst := func(f string) string { r, _ := filepath.Rel(src, f); return filepath.Join(dir, r) }
			whole := map[string][]byte{}
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				whole[f] = b
				os.MkdirAll(filepath.Dir(dst(f)), 0o700)
				os.WriteFile(dst(f), nil, 0o600)
			}
			ix := LoadIndex(filepath.Join(t.TempDir(), "index.gob"))
			check := func(what string) {
				t.Helper()
				checkListedAsWhole(t, filepath.Dir(dir), ix, what)
			}
			const steps = 12
			for step := 1; step <= steps; step++ {
				for _, f := range files {
					n := len(whole[f]) * step / steps
					if step < steps {
						// Up to the end of a line, and now and then half the next.
						if i := bytes.IndexByte(whole[f][n:], '\n'); i >= 0 {
							n += i + 1
							if step%3 == 0 {
								if j := bytes.IndexByte(whole[f][n:], '\n'); j > 4 {
									n += j / 2
								}
							}
						}
					}
					os.WriteFile(dst(f), whole[f][:n], 0o600)
				}
				check("step " + strconv.Itoa(step))
			}
			later := time.Now().Add(time.Minute)
			for _, f := range files {
				os.Chtimes(dst(f), later, later)
			}
			check("touched")
			check("listed again")
		})
	}
}

// checkListedAsWhole lists the one session under root through ix and
// fails unless its summary is what reading its files whole gives; it
// returns how many sessions the listing went on from where the last
// stopped.
func checkListedAsWhole(t *testing.T, root string, ix *Index, what string) int {
	t.Helper()
	es, err := List(root)
	if err != nil || len(es) != 1 {
		t.Fatalf("%s: list: %v %d", what, err, len(es))
	}
	sums, st := Scan(es, ix, nil)
	fresh, err := Summarize(es[0])
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(sums[0])
	b, _ := json.Marshal(fresh)
	if !bytes.Equal(a, b) {
		t.Fatalf("%s: from the index\n%s\nread whole\n%s", what, a, b)
	}
	return st.Resumed
}
