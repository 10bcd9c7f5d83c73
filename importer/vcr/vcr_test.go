package vcr

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures/corpus"
)

// vcrpy-4.2.1.yaml and ruby-vcr-5.0.0.yml were recorded by vcrpy and Ruby
// VCR themselves (see TestRecordedVCRPy, TestRecordedRubyVCR);
// go-vcr-2.3.0.yaml and go-vcr-3.2.0.yaml were recorded by go-vcr v2.3.0
// (cassette format 1) and v3.2.0 (format 2) in front of the stand-in API:
// a JSON answer and a stream. The other cassettes are written to each
// library's format with the stand-in's answers: vcrpy with a gzip body kept
// as !!binary (decode_compressed_response off) and a stream, Ruby VCR with a
// !binary stream and a base64_string error body, go-vcr format 2 with an
// HTTP 529 and durations.

var base = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func read(t *testing.T, path string) *Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := Read(f, base)
	if err != nil {
		t.Fatal(err)
	}
	if res.Invalid != 0 {
		t.Fatalf("%d invalid interactions: %s", res.Invalid, res.FirstInvalid)
	}
	return res
}

func TestVCRPy(t *testing.T) {
	res := read(t, "testdata/vcrpy.yaml")
	if res.Flavor != FlavorVCRPy || len(res.Exchanges) != 2 {
		t.Fatalf("flavor %q, %d exchanges", res.Flavor, len(res.Exchanges))
	}
	gz, sse := res.Exchanges[0], res.Exchanges[1]
	if !bytes.HasPrefix(gz.RespBody, []byte("\x1f\x8b")) || !bytes.Contains(gz.RespBodyDecoded, []byte(`"Done."`)) {
		t.Errorf("gzip body: %q / decoded %q", gz.RespBody[:4], gz.RespBodyDecoded)
	}
	if !gz.Start.Equal(base) || !sse.Start.Equal(base.Add(time.Second)) {
		t.Errorf("starts %v %v", gz.Start, sse.Start)
	}
	if k := sse.ReqHeader("x-api-key"); !strings.HasPrefix(k, exchange.FingerprintPrefix) {
		t.Errorf("x-api-key kept as %q", k)
	}
	d := decode.Decode(&sse)
	if !d.Response.Streamed || len(d.Response.Content) != 1 || d.Response.Content[0].Text != "Done." {
		t.Errorf("stream decoded as %+v", d.Response)
	}
}

func TestRubyVCR(t *testing.T) {
	res := read(t, "testdata/ruby-vcr.yml")
	if res.Flavor != FlavorRuby || len(res.Exchanges) != 2 {
		t.Fatalf("flavor %q, %d exchanges", res.Flavor, len(res.Exchanges))
	}
	sse, overloaded := res.Exchanges[0], res.Exchanges[1]
	if sse.Method != "POST" || !bytes.HasPrefix(sse.RespBody, []byte("event: message_start")) {
		t.Errorf("method %q, body %.40q", sse.Method, sse.RespBody)
	}
	if want := time.Date(2026, 11, 22, 21, 10, 43, 0, time.UTC); !sse.Start.Equal(want) {
		t.Errorf("start %v, want recorded_at %v", sse.Start, want)
	}
	if overloaded.Status != 529 || !bytes.Contains(overloaded.RespBody, []byte("overloaded_error")) {
		t.Errorf("error interaction: %d %q", overloaded.Status, overloaded.RespBody)
	}
}

func TestGoVCR2(t *testing.T) {
	res := read(t, "testdata/go-vcr-format2-errors.yaml")
	if res.Flavor != FlavorGoVCR2 || len(res.Exchanges) != 2 {
		t.Fatalf("flavor %q, %d exchanges", res.Flavor, len(res.Exchanges))
	}
	ok, overloaded := res.Exchanges[0], res.Exchanges[1]
	if ok.Status != 200 || ok.End.Sub(ok.Start) != 412500*time.Microsecond {
		t.Errorf("status %d, duration %v", ok.Status, ok.End.Sub(ok.Start))
	}
	if overloaded.Status != 529 || overloaded.State != exchange.StateComplete {
		t.Errorf("529: %d %s", overloaded.Status, overloaded.State)
	}
}

// TestRecordedVCRPy reads the cassette vcrpy 4.2.1 (python-requests,
// decode_compressed_response off) wrote in front of the stand-in, which
// gzipped its JSON answer.
func TestRecordedVCRPy(t *testing.T) {
	res := read(t, "testdata/vcrpy-4.2.1.yaml")
	if res.Flavor != FlavorVCRPy || len(res.Exchanges) != 2 {
		t.Fatalf("flavor %q, %d exchanges", res.Flavor, len(res.Exchanges))
	}
	gz, sse := res.Exchanges[0], res.Exchanges[1]
	if !bytes.HasPrefix(gz.RespBody, []byte("\x1f\x8b")) || !bytes.Contains(gz.RespBodyDecoded, []byte(`"Done."`)) {
		t.Errorf("gzip body %q, decoded %q", gz.RespBody[:min(4, len(gz.RespBody))], gz.RespBodyDecoded)
	}
	if d := decode.Decode(&sse); !d.Response.Streamed || len(d.Response.Content) != 1 || d.Response.Content[0].Text != "Done." {
		t.Errorf("stream decoded as %+v", d.Response)
	}
}

// TestRecordedRubyVCR reads the cassette Ruby VCR 5.0.0 (webmock,
// Net::HTTP) wrote in front of the stand-in: the gzip body tagged !binary.
func TestRecordedRubyVCR(t *testing.T) {
	res := read(t, "testdata/ruby-vcr-5.0.0.yml")
	if res.Flavor != FlavorRuby || len(res.Exchanges) != 2 {
		t.Fatalf("flavor %q, %d exchanges", res.Flavor, len(res.Exchanges))
	}
	gz, sse := res.Exchanges[0], res.Exchanges[1]
	if !bytes.HasPrefix(gz.RespBody, []byte("\x1f\x8b")) || !bytes.Contains(gz.RespBodyDecoded, []byte(`"Done."`)) || gz.Start.Year() != 2026 {
		t.Errorf("gzip body %q, decoded %q, start %v", gz.RespBody[:min(4, len(gz.RespBody))], gz.RespBodyDecoded, gz.Start)
	}
	if k := gz.ReqHeader("X-Api-Key"); strings.Contains(k, "ANTHROPIC_API_KEY") || !strings.HasPrefix(k, exchange.FingerprintPrefix) {
		t.Errorf("x-api-key %q", k)
	}
	if d := decode.Decode(&sse); !d.Response.Streamed || len(d.Response.Content) != 1 || d.Response.Content[0].Text != "Done." {
		t.Errorf("stream decoded as %+v", d.Response)
	}
}

// TestRecordedGoVCR reads the cassettes go-vcr itself wrote.
func TestRecordedGoVCR(t *testing.T) {
	for path, flavor := range map[string]string{"testdata/go-vcr-2.3.0.yaml": FlavorGoVCR1, "testdata/go-vcr-3.2.0.yaml": FlavorGoVCR2} {
		res := read(t, path)
		if res.Flavor != flavor || len(res.Exchanges) != 2 {
			t.Fatalf("%s: flavor %q, %d exchanges", path, res.Flavor, len(res.Exchanges))
		}
		js, sse := res.Exchanges[0], res.Exchanges[1]
		if js.Status != 200 || js.End.Sub(js.Start) <= 0 || js.RespHeader("Request-Id") == "" {
			t.Errorf("%s: status %d, duration %v", path, js.Status, js.End.Sub(js.Start))
		}
		d := decode.Decode(&sse)
		if !d.Response.Streamed || len(d.Response.Content) != 1 || d.Response.Content[0].Text != "Done." {
			t.Errorf("%s: stream decoded as %+v", path, d.Response)
		}
	}
}

// TestCorpus reads the third-party cassettes: go-vcr v1 from the Go SDK,
// vcrpy with parsed_body from pydantic-ai.
func TestCorpus(t *testing.T) {
	dir := corpus.Dir(t)
	var files []string
	for _, sub := range []string{"anthropic-sdk-go", "pydantic-ai"} {
		m, _ := filepath.Glob(filepath.Join(dir, sub, "*.yaml"))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("no cassettes under %s", dir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			res := read(t, f)
			if len(res.Exchanges) == 0 {
				t.Fatal("no exchanges")
			}
			want := FlavorVCRPy
			if strings.Contains(f, "anthropic-sdk-go") {
				want = FlavorGoVCR1
			}
			if res.Flavor != want {
				t.Errorf("flavor %q, want %q", res.Flavor, want)
			}
			turns := 0
			for i := range res.Exchanges {
				ex := &res.Exchanges[i]
				if ex.Status == 0 {
					t.Errorf("exchange %d: no status", i)
				}
				d := decode.Decode(ex)
				if strings.Contains(ex.URL, "/count_tokens") {
					turns++
				} else if strings.HasSuffix(ex.URL, "/v1/messages") || strings.Contains(ex.URL, "/v1/messages?") {
					turns++
					if d.Request.Model == "" || (ex.Status == 200 && d.Response.ID == "") {
						t.Errorf("exchange %d: model %q, response id %q, problems %v", i, d.Request.Model, d.Response.ID, d.Problems)
					}
				}
			}
			if turns == 0 {
				t.Error("no Messages or count_tokens exchanges")
			}
		})
	}
}

func TestNotCassette(t *testing.T) {
	for _, in := range []string{"", "a: b", "- 1\n- 2", "interactions: 3", "{\"log\": {}}"} {
		if _, err := Read(strings.NewReader(in), base); !errors.Is(err, ErrNotCassette) {
			t.Errorf("Read(%q) = %v, want ErrNotCassette", in, err)
		}
	}
}

func TestAliasBomb(t *testing.T) {
	in := "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
		"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n" +
		"g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\ninteractions: [*g]\n"
	if _, err := Read(strings.NewReader(in), base); err == nil {
		t.Error("an alias bomb was read")
	}
}

func FuzzRead(f *testing.F) {
	for _, p := range []string{"testdata/vcrpy.yaml", "testdata/ruby-vcr.yml", "testdata/go-vcr-format2-errors.yaml", "testdata/go-vcr-2.3.0.yaml", "testdata/ruby-vcr-5.0.0.yml", "testdata/vcrpy-4.2.1.yaml"} {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := Read(bytes.NewReader(in), base)
		if err != nil {
			return
		}
		for _, ex := range res.Exchanges {
			if ex.State == "" || ex.URL == "" {
				t.Fatalf("exchange without state or URL: %+v", ex)
			}
		}
	})
}

// TestCutOff: a cassette cut off inside its last interaction keeps the
// interactions before it and says so.
func TestCutOff(t *testing.T) {
	b, err := os.ReadFile("testdata/go-vcr-format2-errors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	second := bytes.Index(b, []byte("\n- id: 1"))
	cut := b[:second+60] // inside the second interaction's request
	cut = append(cut, []byte("\n  bad: [unclosed\n")...)
	res, err := Read(bytes.NewReader(cut), base)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 1 || res.Damage == "" {
		t.Errorf("got %d exchanges, damage %q; want 1 and damage", len(res.Exchanges), res.Damage)
	}
}
