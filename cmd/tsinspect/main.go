// Command tsinspect records Claude Code's Messages API traffic and shows
// what its tool search did: the catalog, the working set, every ToolSearch
// and what it loaded, cache breaks and their causes.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/internal/crash"
	"github.com/tsinspect/tsinspect/internal/memlimit"
	"github.com/tsinspect/tsinspect/internal/suggest"
	"github.com/tsinspect/tsinspect/internal/termsafe"
)

// version is the tsinspect release this binary was built from.
const version = "0.1.0"

// exitError carries an exit status through to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError marks bad command-line input (exit status 2).
func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(env *cliEnv, args []string) error
}

// cliEnv is what a command may touch: its streams. Commands get no other
// global state, so tests can run them in process.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// rawStdout and rawStderr are the streams without termsafe's
	// escapes, for what is not text read from a file: a recorded
	// command's own output (a full-screen program draws with escape
	// sequences), the MCP server's protocol, a progress bar redrawn in
	// place. nil: stdout and stderr are the raw streams.
	rawStdout, rawStderr io.Writer
}

// raw returns the streams without termsafe's escapes.
func (e *cliEnv) raw() (stdout, stderr io.Writer) {
	stdout, stderr = e.stdout, e.stderr
	if e.rawStdout != nil {
		stdout = e.rawStdout
	}
	if e.rawStderr != nil {
		stderr = e.rawStderr
	}
	return stdout, stderr
}

func commands() []command {
	return []command{
		{"record", "record a Claude Code session through a MITM or reverse proxy, or from the bodies it writes", runRecord},
		{"sessions", "list the sessions Claude Code keeps on disk, newest first: cost, cache breaks, blind calls, searches; --by day|week|month", runSessions},
		{"advise", "advice across your sessions: tools to load up front or drop, searches that miss, blind calls, cache breaks, tool search on or off, each with what it saves", runAdvise},
		{"push", "send each session's facts, redacted, to a team's PostgreSQL (sessions, advise, serve --from read it)", runPush},
		{"serve", "a web view of every session, live, in the browser: turns, tabs, cost per day, compare; read-only", runServe},
		{"prices", "show the price table in force (its date, source and rules) and which models of your sessions it cannot price", runPrices},
		{"exchanges", "list the recorded exchanges of a capture, one per line", runExchanges},
		{"turns", "list the Messages API turns of a capture: catalog, working set, tokens, flags", runTurns},
		{"searches", "list every tool search and what it loaded; --tools: were these tools found and called?", runSearches},
		{"probe", "without a session: list MCP servers' tools, which queries find them, what deferring saves", runProbe},
		{"diff", "compare two sessions: request shape, turns aligned per thread, searches, cost; exit 1 when they differ", runDiff},
		{"report", "write a sanitised report (JSON, Markdown or HTML); --fail-on KIND for CI", runReport},
		{"open", "browse a capture in the terminal: turns, working set, catalog, searches, cache, flags", runOpen},
		{"replay", "play a capture's turns back in recorded time (--speed N), with pause and step", runReplay},
		{"demo", "browse the capture bundled in tsinspect, no API key needed", runDemo},
		{"standin", "serve a scripted stand-in for the API and the demo MCP server: record Claude Code with no API key", runStandin},
		{"ca", "show the interception CA: path, fingerprint, how to trust it", runCA},
		{"import", "import a pcap, pcapng, HAR, claude-trace, claude-tap, mitmproxy flow dump, VCR cassette or raw-bodies directory into a capture", runImport},
		{"export", "export a capture as HAR 1.2, or send it to an OpenTelemetry collector (--format otlp)", runExport},
		{"stats", "one table across many captures and sessions: MCP tools, flags per 100 turns, cache breaks, clients, models", runStats},
		{"replay-server", "answer a client with a capture's recorded responses, in recorded time", runReplayServer},
		{"compact", "compress, in place, the bodies of a capture written by an older tsinspect", runCompact},
		{"version", "print the version", func(env *cliEnv, _ []string) error {
			fmt.Fprintln(env.stdout, "tsinspect", version)
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
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-13s %s\n", c.name, c.summary)
	}
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
	env := &cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	// Keep resident memory near what is live (GOMEMLIMIT overrides).
	memlimit.Start(memlimit.DefaultFloor, 100*time.Millisecond)
	os.Exit(run(env, os.Args[1:]))
}

// run executes one command line and returns the exit status. Errors are
// printed as one line.
func run(env *cliEnv, args []string) (code int) {
	// Whatever a table, a warning or an error quotes from a file is shown,
	// never obeyed by the terminal: both streams pass through
	// termsafe.Writer (JSON written through it means the same); see
	// cliEnv.raw for what does not.
	rawOut, rawErr := env.raw()
	env = &cliEnv{stdin: env.stdin, stdout: termsafe.Writer(rawOut), stderr: termsafe.Writer(rawErr), rawStdout: rawOut, rawStderr: rawErr}
	// A panic is a bug whatever the input: one line that says so, where,
	// and how to report it, then exit 1 (the readers turn their own
	// panics into errors; this is for the rest).
	defer func() {
		if r := recover(); r != nil {
			op := "tsinspect"
			if len(args) > 0 {
				op = args[0]
			}
			fmt.Fprintf(env.stderr, "tsinspect: %s\n", crash.Error(op, r))
			code = 1
		}
	}()
	err := dispatch(env, args)
	if err == nil {
		return 0
	}
	var ee *exitError
	code = 1
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code
		}
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	msg := oneLine(err.Error())
	if code != 2 {
		msg = plainError(msg)
	}
	fmt.Fprintf(env.stderr, "tsinspect: %s\n", msg)
	return code
}

// internalPackage reports whether name is one of the names tsinspect's
// packages put before their errors ("store: open x.db: ..."): useful in a
// stack of wrapped errors, noise to a user.
func internalPackage(name string) bool {
	// Every package of the module but the commands: TestEveryPackageNamed
	// fails when one is added without its name here.
	switch name {
	case "advice", "cachefile", "canonjson", "capture", "catalog", "claudetap", "claudetools", "claudetrace", "compare", "comparetest", "contentcoding", "corpus", "coverage", "crash",
		"decode", "democapture", "diffreport", "exchange", "filter", "fixtures", "gather", "golden", "har", "httpflow", "importer",
		"listenaddr", "longsession", "oddfiles", "mcpclient", "mcpserver", "memlimit", "mitmflow", "numfmt", "otlp", "outfile",
		"pcap", "pcaptest", "pgtest", "pricing", "rawbodies", "regfile", "realsession", "recon", "recording", "redact", "replayserver",
		"report", "session", "sessionfiles", "sharing", "shell", "source", "stats", "suggest", "store", "team", "termsafe", "textout", "timeline", "tlsrec", "toolsearch", "tooltokens", "ui", "vcr", "view", "web":
		return true
	}
	return false
}

// plainError drops the package names, and the operation names a package
// put before another package's error, from the start of an error message:
// "ui: open: store: open x.db: file does not exist" becomes
// "open x.db: file does not exist".
func plainError(msg string) string {
	for {
		pkg, rest, ok := strings.Cut(msg, ": ")
		if !ok || !internalPackage(pkg) || rest == "" {
			return msg
		}
		msg = rest
		if op, inner, ok := strings.Cut(msg, ": "); ok && !strings.ContainsAny(op, " /") {
			if next, _, ok := strings.Cut(inner, ": "); ok && internalPackage(next) {
				msg = inner
			}
		}
	}
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func dispatch(env *cliEnv, args []string) error {
	if len(args) == 0 {
		usage(env.stderr)
		return &exitError{code: 2}
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && name == "help" {
			return dispatch(env, []string{args[1], "-h"})
		}
		usage(env.stdout)
		return nil
	case "-version", "--version":
		name = "version"
	}
	var names []string
	for _, c := range commands() {
		if c.name == name {
			return c.run(env, args[1:])
		}
		names = append(names, c.name)
	}
	if c := suggest.Closest(name, names); c != "" {
		return usageError("unknown command %q: did you mean %q? (run 'tsinspect help' for the list)", name, c)
	}
	return usageError("unknown command %q (run 'tsinspect help' for the list)", name)
}

// newFlags makes a FlagSet whose help goes to stdout and whose errors come
// back as usage errors rather than being printed.
func newFlags(env *cliEnv, name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(env.stdout, "Usage: tsinspect %s\n\n%s\n", strings.TrimSpace(name+" "+synopsis), strings.TrimSpace(about))
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			return // no "Flags:" heading over nothing
		}
		fmt.Fprintf(env.stdout, "\nFlags:\n")
		fs.SetOutput(env.stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses args, turning -h into a printed help and any other
// error into a one-line usage error.
// The help goes to standard output on -h only: after a mistyped flag it
// would land in whatever standard output was redirected to.
func parseFlags(fs *flag.FlagSet, args []string) error {
	help := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = help
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help()
			return err
		}
		return usageError("%s: %v%s (see 'tsinspect %s -h')", fs.Name(), err, flagSuggestion(fs, err), fs.Name())
	}
	return nil
}

// flagSet reports whether the flag name was given on the command line
// (fs parsed), whatever its value.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
