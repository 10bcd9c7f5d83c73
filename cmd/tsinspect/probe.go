package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/mcpclient"
	"github.com/tsinspect/tsinspect/textout"
	"github.com/tsinspect/tsinspect/toolsearch"
	"github.com/tsinspect/tsinspect/toolsearch/claudetools"
)

const probeAbout = `
Ask, without any session, how Claude Code's ToolSearch would treat the
tools of MCP servers: tsinspect starts each server of a Claude Code style
--mcp-config file (stdio) or connects to it (http), lists its tools with
MCP's tools/list (it calls none), and says:

  - per tool: the size of its definition in tokens (characters ÷ 2.5 of
    the definition Claude Code sends), and the first query made of its own
    name's words that ToolSearch returns it for, or why none does (a name
    whose words other tools share, an empty description);
  - what deferring the tools saves per request, and whether
    ENABLE_TOOL_SEARCH=auto would defer them;
  - for each --query, which tools it loads, every candidate's score and
    where the cut fell (Claude Code's published algorithm).

The pool searched is the tools of the servers probed and, as in a real
session, Claude Code's own deferred tools (CronCreate, WebFetch,
NotebookEdit, ...), which compete in every search: their names and
descriptions as the project recorded them from a Claude Code release
(--claude-tools picks the release, or none to leave them out).

Exit status 3 (for CI): with --require findable, when some tool is found
by no query of its own name's words; with --expect 'QUERY=TOOL', when
QUERY does not load TOOL.

Examples:
  tsinspect probe --mcp-config mcp.json
  tsinspect probe --mcp-config mcp.json --query 'send slack message' --query '+github issue'
  tsinspect probe --mcp-config mcp.json --require findable --expect 'echo text=mcp__demo__echo'`

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runProbe(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "probe", "--mcp-config FILE [--query Q]... [flags]", probeAbout)
	config := fs.String("mcp-config", "", "Claude Code style MCP config `FILE` ({\"mcpServers\": {...}})")
	servers := fs.String("server", "", "probe only these comma-separated server `names`")
	var queries, expects listFlag
	fs.Var(&queries, "query", "a ToolSearch `query` to run over the tools (repeatable)")
	fs.Var(&expects, "expect", "`QUERY=TOOL`: exit 3 unless QUERY loads TOOL (repeatable; TOOL as Claude Code names it, mcp__server__tool)")
	algorithm := fs.String("algorithm", toolsearch.Auto, "the keyword scoring: auto (that of the --claude-tools release), published, or a Claude Code `version`")
	claudeTools := fs.String("claude-tools", "", "Claude Code's own deferred tools in the pool: those of this `release` (default the newest recorded: "+claudetools.Newest()+"), or none")
	maxResults := fs.Int("max-results", toolsearch.DefaultMaxResults, "ToolSearch's max_results `n`")
	require := fs.String("require", "", "`findable`: exit 3 when some tool is found by no query of its own name's words")
	timeout := fs.Duration("timeout", 30*time.Second, "how long a server gets to start and list its tools")
	window := fs.Int("context-window", 200000, "the model's context window in `tokens`, for ENABLE_TOOL_SEARCH=auto's threshold")
	pos, err := cli.Interspersed(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return cli.Usage("probe: unexpected argument %q", pos[0])
	case *config == "":
		return cli.Usage("probe: --mcp-config FILE is required")
	case *require != "" && *require != "findable":
		return cli.Usage("probe: --require %q: want findable", *require)
	case *maxResults < 1:
		return cli.Usage("probe: --max-results %d: want 1 or more", *maxResults)
	case *timeout <= 0:
		return cli.Usage("probe: --timeout %v: want a duration above 0, e.g. 30s", *timeout)
	case *window < 1:
		return cli.Usage("probe: --context-window %d: want a number of tokens above 0", *window)
	}
	builtin, err := claudetools.Pick(*claudeTools)
	if err != nil {
		return cli.Usage("probe: %v", err)
	}
	alg, how, err := toolsearch.Resolve(*algorithm, builtin.Version)
	if err != nil {
		return cli.Usage("probe: --algorithm %q: want %s, %s or a Claude Code version (%s measured)", *algorithm, toolsearch.Auto, toolsearch.Published, strings.Join(toolsearch.Versions(), ", "))
	}
	wants, err := toolsearch.ParseExpects(expects)
	if err != nil {
		return cli.Usage("probe: %v", err)
	}
	list, err := mcpclient.Config(*config)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	if want := splitList(*servers); len(want) > 0 {
		kept, ok := mcpclient.Select(list, want)
		if !ok {
			return cli.Usage("probe: --server %s: the config's servers are %s", *servers, mcpclient.Names(list))
		}
		list = kept
	}
	pool, sizes, err := mcpclient.Probe(env.Stdout, list, *timeout)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w (a server slower to start or answer: raise --timeout, now %v)", err, *timeout)
	} else if err != nil {
		return err
	}
	all := toolsearch.Pool(pool, builtin)
	findings := toolsearch.Findable(alg, pool, all, *maxResults)
	if err := textout.Probe(env.Stdout, pool, sizes, findings, *window, *maxResults); err != nil {
		return fmt.Errorf("probe: write: %w", err)
	}
	if err := textout.ProbeSearches(env.Stdout, builtin, alg, how, queries, *maxResults, all); err != nil {
		return fmt.Errorf("probe: write: %w", err)
	}
	unmet := toolsearch.Unmet(alg, wants, *maxResults, all)
	for _, line := range unmet {
		fmt.Fprintf(env.Stderr, "tsinspect: %s\n", line)
	}
	failed := len(unmet) > 0
	if *require == "findable" {
		if lost := toolsearch.Lost(findings); len(lost) > 0 {
			failed = true
			fmt.Fprintf(env.Stderr, "tsinspect: --require findable: %d of %s found by no query of its name's words: %s\n", len(lost), numfmt.Count(len(findings), "tool", "tools"), strings.Join(lost, ", "))
		}
	}
	if failed {
		return &cli.ExitError{Code: 3}
	}
	return nil
}
