package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures/democapture"
)

// TestBadFlagsRefusedFirst gives every command bad flag values and
// arguments: each is refused with exit status 2 and one line on standard
// error, before it writes anything: nothing on standard output, no file
// created or changed (no capture, no CA, no configuration, no report),
// even where the value is only known to be bad once a capture has been
// read or an address opened.
func TestBadFlagsRefusedFirst(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "c.db")
	if err := os.WriteFile(capture, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	mcp := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(mcp, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	newDB := filepath.Join(dir, "new.db")
	ca := filepath.Join(dir, "ca")
	rec := func(args ...string) []string {
		return append([]string{"record", "--db", newDB, "--ca-dir", ca}, args...)
	}
	cases := [][]string{
		{"turns", capture, "--filter", "cost>>0.05"},
		{"turns", capture, "--filter", "flag:"},
		{"turns"},
		{"searches", capture, "--algorithm", "nope"},
		{"searches", capture, "--mcp-config", mcp},
		{"searches", capture, "--require", "nope", "--tools", "mcp__"},
		{"searches", capture, "--require", "found"},
		{"searches", capture, "--tools", "["},
		{"report", capture, "--format", "pdf", "--out", filepath.Join(dir, "r.pdf")},
		{"report", capture, "--redact", "some", "--out", filepath.Join(dir, "r.json")},
		{"report", capture, "--fail-on", "cache_braek", "--out", filepath.Join(dir, "r.json")},
		{"diff", capture},
		{"diff", capture, capture, capture},
		{"diff", capture, capture, "--format", "pdf", "--out", filepath.Join(dir, "d.pdf")},
		{"diff", capture, capture, "--json", "--format", "html", "--out", filepath.Join(dir, "d.html")},
		{"diff", capture, capture, "--redact", "some", "--out", filepath.Join(dir, "d.txt")},
		{"diff", capture, capture, "--width", "20"},
		{"diff", capture, capture, "--prices"},
		{"export", capture, "--format", "csv", "--out", filepath.Join(dir, "x.csv")},
		{"export", capture, "--format", "har", "--exact", "--out", filepath.Join(dir, "x.har")},
		{"export", capture, "--format", "har", "--redact", "some", "--out", filepath.Join(dir, "x.har")},
		{"export", capture, "--format", "har", "--endpoint", "http://127.0.0.1:4318"},
		{"export", capture, "--format", "otlp", "--out", filepath.Join(dir, "x.json")},
		{"export", capture, "--format", "otlp", "--redact", "some"},
		{"export", capture, "--format", "otlp", "--endpoint", "http://[::1"},
		{"stats", "--json"},
		{"open", capture, "--follow", "--compare", capture},
		{"push", dir},
		{"push", dir, "--to", "mysql://u:pw@127.0.0.1/db"},
		{"push", dir, "--to", "postgres://u@127.0.0.1/db", "--redact", "some"},
		{"sessions", dir, "--sort", "price"},
		{"sessions", dir, "--since", "yesterday"},
		{"sessions", dir, "--limit", "-1"},
		{"sessions", dir, dir},
		{"sessions", dir, "--by", "year"},
		{"sessions", dir, "--by", "day", "--per", "client"},
		{"sessions", dir, "--per", "model"},
		{"sessions", dir, "--by", "week", "--week-start", "someday"},
		{"sessions", dir, "--by", "day", "--timezone", "Mars/Olympus"},
		{"sessions", dir, "--by", "day", "--sort", "cost"},
		{"sessions", dir, "--timezone", "UTC"},
		{"report", dir, "--fail-on", "cache_break", "--out", filepath.Join(dir, "r.json")},
		{"advise", dir, dir},
		{"advise", dir, "--since", "yesterday"},
		{"advise", dir, "--min-sessions", "0"},
		{"advise", dir, "--top", "-1"},
		{"advise", dir, "--evidence", "0"},
		{"advise", dir, "--json", "--markdown"},
		{"advise", dir, "--min-sessions", "many"},
		{"prices", dir, dir},
		{"prices", dir, "--no-sessions"},
		{"prices", "--no-sessions", "--json=maybe"},
		{"stats", capture, "--prices"},
		{"probe", "--mcp-config", mcp, "--require", "everything"},
		{"probe", "--mcp-config", mcp, "--max-results", "0"},
		{"probe", "--mcp-config", mcp, "--timeout", "-1s"},
		{"probe", "--mcp-config", mcp, "--context-window", "0"},
		{"probe", "--mcp-config", mcp, "--expect", "no equals sign"},
		{"probe", "--mcp-config", mcp, "--algorithm", "nope"},
		{"probe", "--query", "x"},
		{"open", capture, capture},
		{"open", capture, "--follow=maybe"},
		{"replay", capture, "--speed", "0"},
		{"replay", capture, "--speed", "2000"},
		{"demo", "extra"},
		rec("--mode", "tap"),
		rec("--listen", "0.0.0.0:9"),
		rec("--listen", "127.0.0.1:99999"),
		rec("--listen", "8080"),
		rec("--upstream", "ftp://example.com"),
		rec("--upstream", "::nope"),
		rec("--upstream", "http://user:secret@"),
		rec("--intercept", "api.example.com:443"),
		rec("--intercept", "https://api.example.com"),
		rec("--otlp-redact", "some"),
		rec("--otlp-redact", "strict"),
		rec("--otlp", "http://[::1"),
		rec("true"),
		{"record", "--db", newDB, "--mode", "bodies", "--listen", "127.0.0.1:0", "--", "true"},
		{"record", "--db", newDB, "--mode", "bodies", "--ca-dir", ca, "--", "true"},
		{"record", "--db", newDB, "--mode", "bodies", "--otlp", "http://127.0.0.1:4318", "--", "true"},
		{"record", "--db", newDB, "--mode", "bodies", "--upstream", "ftp://127.0.0.1:9", "--", "true"},
		{"record", "--ca-dir", ca},
		{"import", capture},
		{"import", mcp, capture, "--db", newDB},
		{"exchanges", capture, "extra"},
		{"exchanges", capture, "--json=maybe"},
		{"replay-server", capture, "--listen", "nope"},
		{"replay-server", capture, "--listen", "127.0.0.1:99999"},
		{"replay-server", capture, "--listen", "0.0.0.0:1"},
		{"standin", "--scenario", "nope", "--mcp-config", filepath.Join(dir, "m.json")},
		{"standin", "--listen", "nope", "--mcp-config", filepath.Join(dir, "m.json")},
		{"standin", "--listen", "10.0.0.1:8642", "--mcp-config", filepath.Join(dir, "m.json")},
		{"standin", "--mcp", "--actions", "-1"},
		{"standin", "--mcp", "--listen", "127.0.0.1:0"},
		{"standin", "--actions", "3", "--mcp-config", filepath.Join(dir, "m.json")},
		{"ca", "--ca-dir", ca, "--intercept", "bad host"},
		{"ca", "--ca-dir", ca, "extra"},
		{"compact"},
		{"compact", capture, capture},
		{"serve", dir, "--redact", "some"},
		{"serve", dir, "--listen", "nope"},
		{"serve", dir, "--listen", "8080"},
		{"serve", dir, "--listen", "example.com:80"},
		{"serve", dir, "--listen", "127.0.0.1:99999"},
		{"serve", dir, "--allow-host", "a.example:80"},
		{"serve", dir, "--no-index=maybe"},
	}
	before := tree(t, dir)
	for _, args := range cases {
		code, stdout, stderr := runIn(args...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "tsinspect: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout, one line", args, code, stdout, stderr)
		}
		if after := tree(t, dir); !slices.Equal(after, before) {
			t.Errorf("%q changed the files: %v, was %v", args, after, before)
			before = after
		}
	}
}

// tree lists the files under dir with their sizes and modification times.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %v %v %d", p, fi.ModTime(), fi.Mode(), fi.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
