package main

import (
	"fmt"
	"strings"

	"github.com/tsinspect/tsinspect/fixtures"
	"github.com/tsinspect/tsinspect/fixtures/mcpserver"
	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/internal/listenaddr"
	"github.com/tsinspect/tsinspect/internal/outfile"
)

const standinAbout = `
Serve tsinspect's scripted stand-in for the Messages API, so that Claude
Code can be recorded without an API key and without spending anything: it
answers like the API (streaming, tool calls, tool search, a simulated
prompt cache) from a script instead of a model. Point 'tsinspect record
--upstream URL' at it.

It also writes --mcp-config FILE, a Claude Code MCP configuration for the
demo MCP server ("demo": the tools echo and action_0 .. action_39, which
Claude Code defers behind ToolSearch); that server is this binary run as
'tsinspect standin --mcp', speaking MCP on standard input and output.

Scripts (--scenario):
  demo        a select: search that loads mcp__demo__echo, a keyword
              search that finds nothing, the call, a closing answer
  toolsearch  the select: search, the call, an answer
  keyword     a keyword search that finds echo, the call, an answer
  flaky       toolsearch with each step failing once first (HTTP 500, a
              cut stream, an empty stop_sequence reply)
  subagent    main loads echo and starts a subagent (allow Agent too:
              --allowedTools ToolSearch,mcp__demo__echo,Agent), which
              loads echo in its own thread and calls it
  cachebreak  toolsearch with the stand-in dropping its prompt cache
              before the call: that turn reads nothing from the cache, a
              cache break nothing in the request explains

It serves until Ctrl-C. See "Try it without an API key" in the README.

Example (three commands; the first in the background or another terminal).
CLAUDE_CONFIG_DIR gives Claude Code a throwaway configuration directory,
so that the stand-in's session is kept in ./try-claude and not among your
own in ~/.claude (where 'tsinspect sessions', ccusage and other dashboards
would count its made-up spending):
  tsinspect standin --mcp-config mcp.json &
  CLAUDE_CONFIG_DIR=$PWD/try-claude ANTHROPIC_API_KEY=sk-ant-standin tsinspect record --db try.db --upstream http://127.0.0.1:8642 -- \
      claude -p "Show me what the demo MCP tools can do." --mcp-config mcp.json --allowedTools ToolSearch,mcp__demo__echo
  tsinspect open try.db`

func runStandin(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "standin", "[--listen ADDR] [--scenario NAME] [--mcp-config FILE] | --mcp", standinAbout)
	listen := fs.String("listen", "127.0.0.1:8642", "`address` to serve the stand-in API on (loopback only)")
	scenario := fs.String("scenario", "demo", "the `script` to answer from: "+orList(fixtures.ScenarioNames()))
	mcpConfig := fs.String("mcp-config", "", "write a Claude Code MCP configuration for the demo MCP server to `FILE`")
	mcp := fs.Bool("mcp", false, "be the demo MCP server on standard input and output instead")
	actions := fs.Int("actions", 40, "--mcp: the number of action_N tools besides echo")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return cli.Usage("standin: unexpected argument %q (see 'tsinspect standin -h')", fs.Arg(0))
	}
	if *actions < 0 {
		return cli.Usage("standin: --actions %d: want 0 or more", *actions)
	}
	for _, name := range []string{"listen", "scenario", "mcp-config"} {
		if *mcp && cli.Given(fs, name) {
			return cli.Usage("standin: --%s is for the stand-in API, not for --mcp", name)
		}
	}
	if !*mcp && cli.Given(fs, "actions") {
		return cli.Usage("standin: --actions goes with --mcp")
	}
	if *mcp {
		rawOut, _ := env.Raw()
		if err := mcpserver.Serve(env.Stdin, rawOut, *actions); err != nil {
			return fmt.Errorf("standin: %w", err)
		}
		return nil
	}
	sc, ok := fixtures.Scenario(*scenario)
	if !ok {
		return cli.Usage("standin: --scenario %q: want %s", *scenario, orList(fixtures.ScenarioNames()))
	}
	if host, ok := listenaddr.Host(*listen); !ok {
		return cli.Usage("standin: --listen %q: want HOST:PORT, e.g. 127.0.0.1:8642", *listen)
	} else if !listenaddr.Loopback(host) {
		return cli.Usage("standin: --listen %q is not a loopback address: the stand-in serves this machine alone (e.g. 127.0.0.1:8642)", *listen)
	}
	if err := outsideClaudeDir("standin", "--mcp-config", *mcpConfig); err != nil {
		return err
	}
	if *mcpConfig != "" {
		if err := outfile.Check(*mcpConfig); err != nil {
			return fmt.Errorf("standin: mcp config: %w", err)
		}
	}
	return fixtures.Standin(sc, *scenario, *listen, *mcpConfig, env.Stderr)
}

// orList is "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
