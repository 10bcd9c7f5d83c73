package source

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/timeline"
)

// release copies the session of a release's testdata (its main file and
// subagents' files) into a new directory, each file passed through edit
// (nil: as it is), and returns the copy's main file.
func release(t *testing.T, rel string, edit func(name string, b []byte) []byte) string {
	t.Helper()
	src := filepath.Join("testdata", "releases", rel)
	dst := filepath.Join(t.TempDir(), "projects", "-home-user-x", filepath.Base(src))
	id := strings.TrimSuffix(src, ".jsonl")
	files := []string{src}
	subs, _ := filepath.Glob(filepath.Join(id, "subagents", "*"))
	files = append(files, subs...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil && strings.HasSuffix(f, ".jsonl") {
			b = edit(filepath.Base(f), b)
		}
		out := filepath.Join(filepath.Dir(dst), strings.TrimPrefix(f, filepath.Dir(src)+string(filepath.Separator)))
		if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

const demo = "2.1.299/projects/-home-user-demo/76805962-ccee-4e9e-8dd8-bbece00290ac.jsonl"
const sub = "2.1.299/projects/-home-user-subagent/1f17fb66-bfa6-4542-850b-7cb93138e718.jsonl"

func summaryOf(t *testing.T, f string) *sessionfiles.Summary {
	t.Helper()
	es, err := sessionfiles.List(f)
	if err != nil || len(es) != 1 {
		t.Fatalf("list %s: %v", f, err)
	}
	s, err := sessionfiles.Summarize(es[0])
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSpacedJSONCountsTheSame: records laid out with spaces after the
// colons and commas are the same records (the listing once counted 0
// turns and $0 for them).
func TestSpacedJSONCountsTheSame(t *testing.T) {
	plain, _ := readRelease(t, filepath.Join("testdata", "releases", demo))
	spaced := release(t, demo, func(_ string, b []byte) []byte {
		return regexp.MustCompile(`":`).ReplaceAll(b, []byte(`" : `))
	})
	s, _ := readRelease(t, spaced) // the listing agrees with the timeline
	if len(s.Turns) != len(plain.Turns) || len(s.Turns) == 0 {
		t.Errorf("%d turns spaced, %d plain", len(s.Turns), len(plain.Turns))
	}
}

// TestCutLineIsNamed: a line cut in the middle of the file costs that
// line, named with its file and number, in the listing and when opened.
func TestCutLineIsNamed(t *testing.T) {
	f := release(t, demo, func(_ string, b []byte) []byte {
		lines := bytes.SplitAfter(b, []byte("\n"))
		lines[5] = append(lines[5][:len(lines[5])/2:len(lines[5])/2], '\n')
		return bytes.Join(lines, nil)
	})
	s := summaryOf(t, f)
	if s.BadLines != 1 || !strings.Contains(s.FirstBadLine, "line 6") {
		t.Errorf("listing: %d bad lines, first %q", s.BadLines, s.FirstBadLine)
	}
	_, problems, err := ReadFile(context.Background(), f)
	if err != nil || !strings.Contains(Summary(problems), "line 6") {
		t.Errorf("open: %v, problems %q", err, Summary(problems))
	}
	readRelease(t, f)
}

// TestUsageOfTheWrongType: a usage that is not an object, a count given
// as a string and a negative count cost only themselves: each is said,
// what could not be read counts 0 (never a negative cost), and the
// listing and the timeline agree on which answers were marked.
func TestUsageOfTheWrongType(t *testing.T) {
	f := release(t, demo, func(_ string, b []byte) []byte {
		lines := bytes.SplitAfter(b, []byte("\n"))
		ids := map[string]int{}
		idOf := regexp.MustCompile(`"id":"(msg_[^"]+)"`)
		for i, l := range lines {
			if !bytes.Contains(l, []byte(`"type":"assistant"`)) {
				continue
			}
			m := idOf.FindSubmatch(l)
			if m == nil {
				continue
			}
			k, ok := ids[string(m[1])]
			if !ok {
				k = len(ids)
				ids[string(m[1])] = k
			}
			switch k {
			case 0:
				l = regexp.MustCompile(`"output_tokens":(\d+)`).ReplaceAll(l, []byte(`"output_tokens":"$1"`))
			case 1:
				l = regexp.MustCompile(`"usage":\{[^{}]*(\{[^{}]*\}[^{}]*)*\}`).ReplaceAll(l, []byte(`"usage":"lots"`))
			case 2:
				l = regexp.MustCompile(`"cache_read_input_tokens":\d+`).ReplaceAll(l, []byte(`"cache_read_input_tokens":-84999750000`))
			}
			lines[i] = l
		}
		return bytes.Join(lines, nil)
	})
	s := summaryOf(t, f)
	if s.UsageProblems != 3 || !strings.Contains(s.FirstUsageProblem, "usage") {
		t.Fatalf("listing: %d usage problems (%q)", s.UsageProblems, s.FirstUsageProblem)
	}
	for _, u := range s.Usage {
		if u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheWrite5m < 0 {
			t.Errorf("a negative count reached the listing: %+v", u)
		}
	}
	sess, _ := readRelease(t, f)
	marked := 0
	for _, tu := range sess.Turns {
		for _, p := range tu.Decoded.Problems {
			if decode.IsUsageProblem(p) {
				marked++
				break
			}
		}
		if u := tu.Decoded.Response.Usage; u.CacheReadInputTokens < 0 {
			t.Errorf("turn %d: negative cache read", tu.Index)
		}
	}
	if marked != s.UsageProblems {
		t.Errorf("the timeline marks %d turns, the listing %d answers", marked, s.UsageProblems)
	}
}

// TestRecordsTwice: a file concatenated with itself, and a file with each
// assistant record written twice, hold the same session: nothing is
// counted twice, in the listing or the timeline.
func TestRecordsTwice(t *testing.T) {
	once, _ := readRelease(t, filepath.Join("testdata", "releases", sub))
	for name, edit := range map[string]func(string, []byte) []byte{
		"concatenated": func(_ string, b []byte) []byte { return append(b, b...) },
		"assistant twice": func(_ string, b []byte) []byte {
			var out []byte
			for _, l := range bytes.SplitAfter(b, []byte("\n")) {
				out = append(out, l...)
				if bytes.Contains(l, []byte(`"type":"assistant"`)) {
					out = append(out, l...)
				}
			}
			return out
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := release(t, sub, edit)
			twice, _ := readRelease(t, f)
			if got, want := sessionLine(twice), sessionLine(once); got != want {
				t.Errorf("twice:\n%s\nonce:\n%s", got, want)
			}
			if _, problems, _ := ReadFile(context.Background(), f); !strings.Contains(Summary(problems), "read again") {
				t.Errorf("the records read twice go unsaid: %q", Summary(problems))
			}
		})
	}
}

// TestHalfLineIsNamedInItsFile: a last line cut short is left out and
// named in the file it is in, the main file's or a subagent's.
func TestHalfLineIsNamedInItsFile(t *testing.T) {
	for _, which := range []string{"main", "subagent"} {
		f := release(t, sub, func(name string, b []byte) []byte {
			if (which == "main") != !strings.HasPrefix(name, "agent-") {
				return b
			}
			return append(b, []byte(`{"type":"assistant","message":{"id":"m`)...)
		})
		_, problems, err := ReadFile(context.Background(), f)
		s := Summary(problems)
		var want string
		if which == "main" {
			want = filepath.Base(f)
		} else {
			want = "agent-"
		}
		if err != nil || !strings.Contains(s, want) || !strings.Contains(s, "unfinished") {
			t.Errorf("%s: %v %q", which, err, s)
		}
		if which == "subagent" && strings.Contains(s, filepath.Base(f)) {
			t.Errorf("the subagent's half line is blamed on the main file: %q", s)
		}
	}
}

// TestInvalidUTF8ToolName: a tool name that is not valid UTF-8 is the
// same name to the listing and the timeline.
func TestInvalidUTF8ToolName(t *testing.T) {
	f := release(t, demo, func(_ string, b []byte) []byte {
		return bytes.ReplaceAll(b, []byte("mcp__demo__echo"), []byte("mcp__demo__\xffecho"))
	})
	readRelease(t, f) // fails when they disagree
}

// sessionLine is a session's turns in one line each.
func sessionLine(s *timeline.Session) string {
	if s == nil {
		return "(no session)"
	}
	var b strings.Builder
	for _, tu := range s.Turns {
		b.WriteString(turnLine(s, tu) + "\n")
	}
	return b.String()
}

// TestRequestRecordsOfNothing: request records that hold nothing (no
// shape in the files, no messages, no answer) are left out and said in
// two lines, however many (a million of them took 45 s and 7 GB, and
// every one was a warning).
func TestRequestRecordsOfNothing(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"user","uuid":"u0","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}` + "\n")
	for i := 0; i < 50000; i++ {
		fmt.Fprintf(&b, `{"type":"api-request","id":"r%d","sessionId":"s"}`+"\n", i)
	}
	f := filepath.Join(t.TempDir(), "projects", "p", "s.jsonl")
	os.MkdirAll(filepath.Dir(f), 0o700)
	os.WriteFile(f, []byte(b.String()), 0o600)
	bl, problems, err := ReadFile(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(bl.Session().Turns); n != 0 {
		t.Errorf("%d turns", n)
	}
	s := Summary(problems)
	if len(problems) != 2 || !strings.Contains(s, "50000 requests (the first r0)") || !strings.Contains(s, "50000 request records hold nothing") {
		t.Errorf("%d problems: %s", len(problems), s)
	}
}

// TestMemberOfAnUnexpectedType: a record one of whose members has a type
// tsinspect does not read (a retry delay written as a string) costs that
// member, named with its file and line, not the record.
func TestMemberOfAnUnexpectedType(t *testing.T) {
	plain, _ := readRelease(t, filepath.Join("testdata", "releases", "2.1.299/projects/-home-user-flaky/45a0fa3c-3569-4097-809e-6a2c1c79df51.jsonl"))
	f := release(t, "2.1.299/projects/-home-user-flaky/45a0fa3c-3569-4097-809e-6a2c1c79df51.jsonl", func(_ string, b []byte) []byte {
		return regexp.MustCompile(`"retryInMs":(\d+)`).ReplaceAll(b, []byte(`"retryInMs":"$1 ms"`))
	})
	s, _ := readRelease(t, f)
	if len(s.Turns) != len(plain.Turns) {
		t.Errorf("%d turns, want %d", len(s.Turns), len(plain.Turns))
	}
	_, problems, _ := ReadFile(context.Background(), f)
	if got := Summary(problems); !strings.Contains(got, "line 15: left out, of an unexpected type: retryInMs") {
		t.Errorf("problems: %s", got)
	}
}

// TestBedrockIDs: Bedrock and Vertex sessions have no request IDs and
// their own message and tool IDs (msg_bdrk_…, toolu_bdrk_…): the same
// timeline.
func TestBedrockIDs(t *testing.T) {
	plain, _ := readRelease(t, filepath.Join("testdata", "releases", demo))
	f := release(t, demo, func(_ string, b []byte) []byte {
		b = regexp.MustCompile(`,"requestId":"[^"]*"`).ReplaceAll(b, nil)
		b = bytes.ReplaceAll(b, []byte(`"msg_`), []byte(`"msg_bdrk_`))
		return bytes.ReplaceAll(b, []byte(`"toolu_`), []byte(`"toolu_bdrk_`))
	})
	s, _ := readRelease(t, f)
	if got, want := len(s.Turns), len(plain.Turns); got != want || got == 0 {
		t.Fatalf("%d turns, want %d", got, want)
	}
	for i, tu := range s.Turns {
		p := plain.Turns[i]
		if tu.Decoded.Response.Usage.TotalInput() != p.Decoded.Response.Usage.TotalInput() || len(tu.NewSearches) != len(p.NewSearches) || len(tu.Flags) != len(p.Flags) {
			t.Errorf("turn %d differs: %s\nwant %s", tu.Index, turnLine(s, tu), turnLine(plain, p))
		}
	}
}
