package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures/corpus"
)

// moduleRoot returns the directory holding go.mod, or "" when there is
// none above the working directory.
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// sampleDir returns the request bodies the project recorded from Claude
// Code 2.1.328 (testdata/claude-code-2.1.328 at the module root,
// re-recorded by TestRecordSamples in fixtures/session).
func sampleDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(moduleRoot(), "testdata", "claude-code-2.1.328")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("recorded samples: %v", err)
	}
	return dir
}

// corpusDir returns the third-party corpus, ../shared/corpus beside the
// module root. It is not part of the repository: tests that read it skip
// when it is absent, and fail instead under TSINSPECT_REQUIRE_SHARED=1 (as
// CI sets it), so that CI cannot pass by skipping them.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(moduleRoot(), "..", "shared", "corpus")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("TSINSPECT_REQUIRE_SHARED") != "" {
			t.Fatalf("third-party corpus not found beside the module root (../shared/corpus) and TSINSPECT_REQUIRE_SHARED is set: %v", err)
		}
		t.Skip("third-party corpus (../shared/corpus beside the module root) not found; set TSINSPECT_REQUIRE_SHARED=1 to make this a failure")
	}
	return dir
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sampleHeaders returns the request headers of 00-request-headers.json.
func sampleHeaders(t testing.TB) []exchange.Header {
	var h struct {
		Headers map[string]string `json:"headers"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(sampleDir(t), "00-request-headers.json")), &h); err != nil {
		t.Fatal(err)
	}
	var out []exchange.Header
	for k, v := range h.Headers {
		out = append(out, exchange.Header{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// sampleExchange wraps a sample request body in an exchange with no
// response yet.
func sampleExchange(t testing.TB, name string) *exchange.Exchange {
	return &exchange.Exchange{
		Method:     "POST",
		URL:        "https://api.anthropic.com/v1/messages?beta=true",
		ReqHeaders: sampleHeaders(t),
		ReqBody:    readFile(t, filepath.Join(sampleDir(t), name)),
		State:      exchange.StateComplete,
	}
}

// sseFromDataLines turns a file of one data JSON per line into SSE
// bodies, one per message.
func sseFromDataLines(b []byte) [][]byte { return corpus.DataLineStreams(b) }

// cassetteExchanges reads the interactions of a go-vcr or pydantic VCR
// cassette.
func cassetteExchanges(t testing.TB, path string) []*exchange.Exchange {
	t.Helper()
	out, err := corpus.Cassette(readFile(t, path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// corpusFiles lists the corpus files, relative to the corpus directory.
func corpusFiles(t testing.TB) []string {
	dir := corpusDir(t)
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() == "README.md" {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// corpusCase is one exchange built from a corpus file.
type corpusCase struct {
	name string
	ex   *exchange.Exchange
}

// corpusCases builds the exchanges of a corpus file: cassette
// interactions, raw SSE files, data-line files (one exchange per message)
// and plain JSON bodies.
func corpusCases(t testing.TB, rel string) []corpusCase {
	path := filepath.Join(corpusDir(t), rel)
	respOnly := func(body []byte, ct string) *exchange.Exchange {
		return &exchange.Exchange{
			Method: "POST", URL: "https://api.anthropic.com/v1/messages",
			ReqBody:     []byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`),
			Status:      200,
			RespHeaders: []exchange.Header{{Name: "Content-Type", Value: ct}},
			RespBody:    body,
			State:       exchange.StateComplete,
		}
	}
	switch {
	case strings.HasSuffix(rel, ".yaml"):
		var out []corpusCase
		for k, ex := range cassetteExchanges(t, path) {
			out = append(out, corpusCase{fmt.Sprintf("%s#%d", rel, k), ex})
		}
		return out
	case strings.HasSuffix(rel, ".chunks.txt"):
		var out []corpusCase
		for k, body := range sseFromDataLines(readFile(t, path)) {
			out = append(out, corpusCase{fmt.Sprintf("%s#%d", rel, k), respOnly(body, "text/event-stream")})
		}
		return out
	case strings.HasSuffix(rel, ".sse") || strings.HasSuffix(rel, ".txt"):
		return []corpusCase{{rel, respOnly(readFile(t, path), "text/event-stream; charset=utf-8")}}
	case strings.HasSuffix(rel, ".json"):
		ex := respOnly(readFile(t, path), "application/json")
		if strings.HasSuffix(rel, ".error.json") {
			ex.Status = 400
		}
		return []corpusCase{{rel, ex}}
	}
	t.Fatalf("corpus file of unknown kind: %s", rel)
	return nil
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(a, b []byte) bool {
	x, errx := decodeNumbers(a)
	y, erry := decodeNumbers(b)
	if errx != nil || erry != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// decodeNumbers decodes JSON keeping numbers as their text, so that
// numbers too large for a float64 compare too.
func decodeNumbers(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// noProblems fails the test when the turn has problems.
func noProblems(t testing.TB, name string, turn *Turn) {
	t.Helper()
	if len(turn.Problems) > 0 {
		t.Errorf("%s: unexpected problems:\n  %s", name, strings.Join(turn.Problems, "\n  "))
	}
}
