package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/toolsearch"
)

// Probe lists every server's tools, each given timeout to start and
// answer, and returns them under Claude Code's names, sorted by name, with
// the size in characters of each definition as Claude Code sends it in
// tools. It says on w, per server, what it is and how many tools it has.
func Probe(w io.Writer, list []Server, timeout time.Duration) ([]toolsearch.Tool, map[string]int, error) {
	var pool []toolsearch.Tool
	sizes := map[string]int{}
	for _, s := range list {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		tl, err := List(ctx, s)
		cancel()
		if err != nil {
			return nil, nil, fmt.Errorf("probe: %w", err)
		}
		var info struct{ Name, Version string }
		_ = json.Unmarshal(tl.ServerInfo, &info)
		fmt.Fprintf(w, "server %s (%s): %s\n", s.Name, strings.TrimSpace(s.Type+" "+info.Name+" "+info.Version), numfmt.Count(len(tl.Defs), "tool", "tools"))
		for _, raw := range tl.Defs {
			t := toolsearch.ParseTool(raw)
			var def struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			_ = json.Unmarshal(raw, &def)
			t.Name = ClaudeName(s.Name, t.Name)
			sent, _ := json.Marshal(map[string]any{"name": t.Name, "description": t.Description, "input_schema": def.InputSchema})
			sizes[t.Name] = len(sent)
			pool = append(pool, t)
		}
	}
	// Claude Code's catalog lists deferred tools sorted by name, and
	// ToolSearch breaks ties in that order.
	sort.SliceStable(pool, func(i, j int) bool { return pool[i].Name < pool[j].Name })
	return pool, sizes, nil
}

// Names lists the servers' names, separated by ", ".
func Names(list []Server) string {
	var out []string
	for _, s := range list {
		out = append(out, s.Name)
	}
	return strings.Join(out, ", ")
}

// Select keeps the servers of list named in want, in list's order; ok is
// false when a name of want is not in list.
func Select(list []Server, want []string) (kept []Server, ok bool) {
	for _, s := range list {
		for _, w := range want {
			if s.Name == w {
				kept = append(kept, s)
			}
		}
	}
	return kept, len(kept) == len(want)
}

// ToolsByName lists the tools of the servers of list as Probe does, writing
// nothing, by the name Claude Code gives them.
func ToolsByName(list []Server, timeout time.Duration) (map[string]toolsearch.Tool, error) {
	pool, _, err := Probe(io.Discard, list, timeout)
	if err != nil {
		return nil, err
	}
	out := map[string]toolsearch.Tool{}
	for _, t := range pool {
		out[t.Name] = t
	}
	return out, nil
}
