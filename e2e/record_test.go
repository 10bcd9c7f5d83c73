package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/store"
)

// TestRecordClaudeCode records real Claude Code in both modes, scripted to
// call ToolSearch and then the tool it loaded, and checks the capture file
// alone against what the stand-in saw and sent.
func TestRecordClaudeCode(t *testing.T) {
	kit.RequireClaude(t)
	for _, mode := range []string{"mitm", "reverse"} {
		t.Run(mode, func(t *testing.T) {
			sc, _ := fixtures.Scenario("toolsearch")
			srv, url := session.StandIn(t, sc, fixtures.Options{})
			res := kit.Record(t, url, session.Options{Mode: mode})
			if res.Err != nil {
				t.Fatalf("record: %v\n%s", res.Err, res.Output)
			}
			sent := srv.Exchanges()
			if len(sent) < 3 {
				t.Fatalf("stand-in saw %d requests, want at least 3 (search, call, answer)\n%s", len(sent), res.Output)
			}
			db, err := store.OpenReadOnly(res.DB)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			got, err := db.Exchanges(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// Every request the stand-in received is in the capture, body
			// byte for byte, and the response body is what it sent.
			byBody := map[string]exchange.Exchange{}
			for _, ex := range got {
				byBody[string(ex.ReqBody)+"\x00"+urlPath(ex.URL)] = ex
			}
			for i, l := range sent {
				ex, ok := byBody[string(l.Body)+"\x00"+l.Path]
				if !ok {
					t.Fatalf("request %d (%s %s, %d bytes) the stand-in received is not in the capture", i, l.Method, l.Path, len(l.Body))
				}
				if !bytes.Equal(ex.RespBody, l.RespWire) {
					t.Errorf("request %d: recorded response (%d bytes) differs from what the stand-in sent (%d bytes)", i, len(ex.RespBody), len(l.RespWire))
				}
				if ex.State != exchange.StateComplete || ex.Status != l.Status {
					t.Errorf("request %d: state %s status %d, want complete %d", i, ex.State, ex.Status, l.Status)
				}
				if ex.Host != "api.anthropic.com" && mode == "mitm" {
					t.Errorf("request %d: host %q", i, ex.Host)
				}
			}
			if len(got) != len(sent) {
				t.Errorf("capture holds %d exchanges, stand-in saw %d", len(got), len(sent))
			}
			// The tool-search round trip is all there.
			var search, reference, call bool
			for _, ex := range got {
				search = search || bytes.Contains(ex.RespBody, []byte(`"name":"ToolSearch"`))
				reference = reference || bytes.Contains(ex.ReqBody, []byte(`{"type":"tool_reference","tool_name":"mcp__demo__echo"}`))
				call = call || bytes.Contains(ex.RespBody, []byte(`"name":"mcp__demo__echo"`))
			}
			if !search || !reference || !call {
				t.Errorf("ToolSearch call %v, tool_reference %v, loaded tool called %v: want all", search, reference, call)
			}
			// The API key reached the stand-in but not the disk.
			if k := sent[0].Header.Get("X-Api-Key"); k != session.APIKey {
				t.Errorf("stand-in got x-api-key %q", k)
			}
			db.Close()
			assertNotOnDisk(t, res.DB, session.APIKey)
		})
	}
}

func urlPath(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		if j := strings.IndexByte(u, '/'); j >= 0 {
			return u[j:]
		}
		return "/"
	}
	return u
}

// assertNotOnDisk fails if secret occurs in the capture file or any of its
// companion files (-wal, -shm, -journal).
func assertNotOnDisk(t *testing.T, db, secret string) {
	t.Helper()
	files, _ := filepath.Glob(db + "*")
	if len(files) == 0 {
		t.Fatalf("no capture file at %s", db)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the API key is in %s", filepath.Base(f))
		}
	}
}
