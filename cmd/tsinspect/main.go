// Command tsinspect records Claude Code's Messages API traffic and shows
// what its tool search did: the catalog, the working set, every ToolSearch
// and what it loaded, cache breaks and their causes.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/internal/memlimit"
)

// version is the tsinspect release this binary was built from.
const version = "0.1.0"

func commands() []cli.Command {
	return []cli.Command{
		{Name: "record", Summary: "record a Claude Code session through a MITM or reverse proxy, or from the bodies it writes", Run: runRecord},
		{Name: "sessions", Summary: "list the sessions Claude Code keeps on disk, newest first: cost, cache breaks, blind calls, searches; --by day|week|month", Run: runSessions},
		{Name: "advise", Summary: "advice across your sessions: tools to load up front or drop, searches that miss, blind calls, cache breaks, tool search on or off, each with what it saves", Run: runAdvise},
		{Name: "push", Summary: "send each session's facts, redacted, to a team's PostgreSQL (sessions, advise, serve --from read it)", Run: runPush},
		{Name: "serve", Summary: "a web view of every session, live, in the browser: turns, tabs, cost per day, compare; read-only", Run: runServe},
		{Name: "prices", Summary: "show the price table in force (its date, source and rules) and which models of your sessions it cannot price", Run: runPrices},
		{Name: "exchanges", Summary: "list the recorded exchanges of a capture, one per line", Run: runExchanges},
		{Name: "turns", Summary: "list the Messages API turns of a capture: catalog, working set, tokens, flags", Run: runTurns},
		{Name: "searches", Summary: "list every tool search and what it loaded; --tools: were these tools found and called?", Run: runSearches},
		{Name: "probe", Summary: "without a session: list MCP servers' tools, which queries find them, what deferring saves", Run: runProbe},
		{Name: "diff", Summary: "compare two sessions: request shape, turns aligned per thread, searches, cost; exit 1 when they differ", Run: runDiff},
		{Name: "report", Summary: "write a sanitised report (JSON, Markdown or HTML); --fail-on KIND for CI", Run: runReport},
		{Name: "open", Summary: "browse a capture in the terminal: turns, working set, catalog, searches, cache, flags", Run: runOpen},
		{Name: "replay", Summary: "play a capture's turns back in recorded time (--speed N), with pause and step", Run: runReplay},
		{Name: "demo", Summary: "browse the capture bundled in tsinspect, no API key needed", Run: runDemo},
		{Name: "standin", Summary: "serve a scripted stand-in for the API and the demo MCP server: record Claude Code with no API key", Run: runStandin},
		{Name: "ca", Summary: "show the interception CA: path, fingerprint, how to trust it", Run: runCA},
		{Name: "import", Summary: "import a pcap, pcapng, HAR, claude-trace, claude-tap, mitmproxy flow dump, VCR cassette or raw-bodies directory into a capture", Run: runImport},
		{Name: "export", Summary: "export a capture as HAR 1.2, or send it to an OpenTelemetry collector (--format otlp)", Run: runExport},
		{Name: "stats", Summary: "one table across many captures and sessions: MCP tools, flags per 100 turns, cache breaks, clients, models", Run: runStats},
		{Name: "replay-server", Summary: "answer a client with a capture's recorded responses, in recorded time", Run: runReplayServer},
		{Name: "compact", Summary: "compress, in place, the bodies of a capture written by an older tsinspect", Run: runCompact},
		{Name: "version", Summary: "print the version", Run: func(env *cli.Env, _ []string) error {
			fmt.Fprintln(env.Stdout, "tsinspect", version)
			return nil
		}},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `tsinspect %s: see what Claude Code's tool search did, turn by turn.

Usage:
  tsinspect COMMAND [flags] [args]

Commands:
`, version)
	program().List(w)
	fmt.Fprint(w, `  help          show this help, or a command's: tsinspect help record

Start with:
  tsinspect demo                                 the timeline over a bundled session
  tsinspect record --db session.db -- claude     record a session
  tsinspect open session.db                      browse it
  tsinspect report session.db --format markdown  a report safe to attach to a bug
  tsinspect searches session.db --tools mcp__x__ were your MCP server's tools found?

Run 'tsinspect COMMAND -h' for a command's flags.
`)
}

func main() {
	env := &cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	// Keep resident memory near what is live (GOMEMLIMIT overrides).
	memlimit.Start(memlimit.DefaultFloor)
	os.Exit(run(env, os.Args[1:]))
}

// program is tsinspect's table of commands.
func program() cli.Program {
	return cli.Program{Name: "tsinspect", Commands: commands(), Usage: usage}
}

// run executes one command line and returns the exit status.
func run(env *cli.Env, args []string) int {
	return program().Run(env, args)
}
