package toolsearch_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/fixtures"
	fsession "github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/toolsearch/claudetools"
)

var record = flag.Bool("record", false, "record claudetools/VERSION.json with the Claude Code CLI ($TSINSPECT_CLAUDE or claude on PATH)")

// TestRecordClaudeTools records the deferred tools of a Claude Code
// release, as ToolSearch sees them: a first session lists its catalog, a
// second has the stand-in load every tool of it that is not an MCP
// server's with one select: search, and the next request carries their
// definitions. Their names, descriptions and sizes go to
// claudetools/VERSION.json.
func TestRecordClaudeTools(t *testing.T) {
	if !*record {
		t.Skip("records with -record only")
	}
	dir := t.TempDir()
	kit, err := fsession.NewKit(dir)
	if err != nil {
		t.Fatal(err)
	}
	kit.RequireClaude(t)
	run := func(steps ...fixtures.Reply) []*decode.Turn {
		_, url := fsession.StandIn(t, fixtures.Script{Routes: map[fixtures.Route][]fixtures.Step{fixtures.RouteMain: fixtures.Steps(steps...)}}, fixtures.Options{})
		res := kit.Record(t, url, fsession.Options{Actions: 1, Timeout: 2 * time.Minute})
		if res.Err != nil {
			t.Fatalf("%v\n%s", res.Err, res.Output)
		}
		db, err := store.OpenReadOnly(res.DB)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		exs, err := db.Exchanges(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []*decode.Turn
		for i := range exs {
			if d := decode.Decode(&exs[i]); d.Request.Kind == decode.KindMessages && len(d.Request.Tools) > 1 {
				out = append(out, d)
			}
		}
		return out
	}
	first := run(fixtures.Text("Nothing to do."))
	if len(first) == 0 {
		t.Fatal("no Messages request recorded")
	}
	var builtin []string
	for _, n := range first[0].Catalog {
		if !strings.HasPrefix(n, "mcp__") {
			builtin = append(builtin, n)
		}
	}
	if len(builtin) == 0 {
		t.Fatal("the catalog holds no tool of Claude Code's own")
	}
	turns := run(fixtures.ToolSearch("select:"+strings.Join(builtin, ","), len(builtin)), fixtures.Text("Loaded."))
	last := turns[len(turns)-1]
	var tools []claudetools.Tool
	for _, d := range last.Request.Tools {
		if !d.DeferLoading || d.Placeholder {
			continue
		}
		var def claudetools.Tool
		if err := json.Unmarshal(d.Raw, &def); err != nil {
			t.Fatal(err)
		}
		def.Bytes = len(timeline.CanonicalJSON(d.Raw))
		tools = append(tools, def)
	}
	if len(tools) != len(builtin) {
		t.Fatalf("%d definitions loaded for %d tools: %v", len(tools), len(builtin), builtin)
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	v, err := exec.Command(kit.Claude, "--version").Output()
	if err != nil || len(strings.Fields(string(v))) == 0 {
		t.Fatalf("claude --version: %v", err)
	}
	version := strings.Fields(string(v))[0]
	b, _ := json.MarshalIndent(claudetools.Release{Version: version, Tools: tools}, "", "  ")
	path := filepath.Join("claudetools", version+".json")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d tools", path, len(tools))
}
