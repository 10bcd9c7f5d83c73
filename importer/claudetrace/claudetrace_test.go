package claudetrace

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
)

// The testdata log was written by claude-trace 1.0.9 (with the Claude Code
// 1.0.128 it installs) run against the scripted stand-in API, which
// answered "Hi there.". Its API key was a throwaway one.
const recorded = "testdata/claude-trace-1.0.9.jsonl"

func TestRecordedLog(t *testing.T) {
	f, err := os.Open(recorded)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 1 || res.Invalid != 0 || res.Damage != "" {
		t.Fatalf("got %d exchanges, %d invalid, damage %q", len(res.Exchanges), res.Invalid, res.Damage)
	}
	ex := res.Exchanges[0]
	if ex.Source != "import:claude-trace" || ex.Status != 200 || ex.State != exchange.StateComplete || ex.Host != "127.0.0.1" {
		t.Errorf("exchange: source %q status %d state %s host %q", ex.Source, ex.Status, ex.State, ex.Host)
	}
	if k := ex.ReqHeader("X-Api-Key"); !strings.HasPrefix(k, exchange.FingerprintPrefix) {
		t.Errorf("x-api-key kept as %q", k)
	}
	if !(ex.Start.Before(ex.FirstByte) || ex.Start.Equal(ex.FirstByte)) || ex.End.Before(ex.FirstByte) {
		t.Errorf("times out of order: %v %v %v", ex.Start, ex.FirstByte, ex.End)
	}
	d := decode.Decode(&ex)
	if !d.Response.Streamed || len(d.Response.Content) == 0 || d.Request.Model != "claude-sonnet-4-5" {
		t.Errorf("decoded: streamed %v, %d blocks, model %q", d.Response.Streamed, len(d.Response.Content), d.Request.Model)
	}
}

func TestOrphanAndDamage(t *testing.T) {
	good, _ := os.ReadFile(recorded)
	good = bytes.TrimSpace(good)
	orphan := `{"request":{"timestamp":1795380640.8,"method":"POST","url":"https://api.anthropic.com/v1/messages","headers":{},"body":{"model":"m","messages":[]}},"response":null,"note":"ORPHANED_REQUEST - No matching response received","logged_at":"2026-11-22T20:50:41.000Z"}`
	in := string(good) + "\nnot json at all\n" + orphan + "\n" + string(good[:len(good)/2])
	res, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 2 || res.Invalid != 1 || !strings.Contains(res.Damage, "cut off") {
		t.Fatalf("got %d exchanges, %d invalid (%s), damage %q", len(res.Exchanges), res.Invalid, res.FirstInvalid, res.Damage)
	}
	o := res.Exchanges[1]
	if o.State != exchange.StateClientAborted || o.Status != 0 || !strings.Contains(o.Error, "ORPHANED") {
		t.Errorf("orphan: state %s status %d error %q", o.State, o.Status, o.Error)
	}
}

func TestNotClaudeTrace(t *testing.T) {
	for _, in := range []string{"", `{"log":{"entries":[]}}`, "hello"} {
		if _, err := Read(strings.NewReader(in)); !errors.Is(err, ErrNotClaudeTrace) {
			t.Errorf("Read(%q) = %v, want ErrNotClaudeTrace", in, err)
		}
	}
}

func FuzzRead(f *testing.F) {
	b, _ := os.ReadFile(recorded)
	f.Add(b)
	f.Add([]byte(`{"request":{"url":"x","body":"a"},"response":{"status_code":500,"body":{"a":1}},"logged_at":"x"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := Read(bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, ex := range res.Exchanges {
			if ex.State == "" || ex.ReqBody == nil {
				t.Fatalf("exchange without state or body: %+v", ex)
			}
		}
	})
}
