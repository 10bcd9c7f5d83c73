// Package cli is tsinspect's command-line frame: the streams a command may
// touch, its flags (help on -h, one-line usage errors with a suggestion,
// flags and arguments in any order), the exit status an error carries, and
// the running of one command line (escaped output, a panic turned into one
// line, errors without the package names they passed through).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tsinspect/tsinspect/internal/crash"
	"github.com/tsinspect/tsinspect/internal/suggest"
	"github.com/tsinspect/tsinspect/internal/termsafe"
)

// Env is what a command may touch: its streams. Commands get no other
// global state, so tests can run them in process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// RawStdout and RawStderr are the streams without termsafe's escapes,
	// for what is not text read from a file: a recorded command's own
	// output (a full-screen program draws with escape sequences), the MCP
	// server's protocol, a progress bar redrawn in place. nil: Stdout and
	// Stderr are the raw streams.
	RawStdout, RawStderr io.Writer
}

// Raw returns the streams without termsafe's escapes.
func (e *Env) Raw() (stdout, stderr io.Writer) {
	stdout, stderr = e.Stdout, e.Stderr
	if e.RawStdout != nil {
		stdout = e.RawStdout
	}
	if e.RawStderr != nil {
		stderr = e.RawStderr
	}
	return stdout, stderr
}

// ExitError carries an exit status through to the end of Run.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Usage marks bad command-line input (exit status 2).
func Usage(format string, args ...any) error {
	return &ExitError{Code: 2, Err: fmt.Errorf(format, args...)}
}

// Command is one subcommand.
type Command struct {
	Name    string
	Summary string
	Run     func(env *Env, args []string) error
}

// Program is a command line's table of commands.
type Program struct {
	Name     string
	Commands []Command
	// Usage writes the program's help: what it is, its commands
	// (Program.List writes their lines), where to start.
	Usage func(w io.Writer)
}

// List writes a line per command: its name and summary.
func (p Program) List(w io.Writer) {
	for _, c := range p.Commands {
		fmt.Fprintf(w, "  %-13s %s\n", c.Name, c.Summary)
	}
}

// Run executes one command line and returns the exit status. Errors are
// printed as one line.
func (p Program) Run(env *Env, args []string) (code int) {
	// Whatever a table, a warning or an error quotes from a file is shown,
	// never obeyed by the terminal: both streams pass through
	// termsafe.Writer (JSON written through it means the same); see
	// Env.Raw for what does not.
	rawOut, rawErr := env.Raw()
	env = &Env{Stdin: env.Stdin, Stdout: termsafe.Writer(rawOut), Stderr: termsafe.Writer(rawErr), RawStdout: rawOut, RawStderr: rawErr}
	// A panic is a bug whatever the input: one line that says so, where,
	// and how to report it, then exit 1 (the readers turn their own
	// panics into errors; this is for the rest).
	defer func() {
		if r := recover(); r != nil {
			op := p.Name
			if len(args) > 0 {
				op = args[0]
			}
			fmt.Fprintf(env.Stderr, "%s: %s\n", p.Name, crash.Error(op, r))
			code = 1
		}
	}()
	err := p.dispatch(env, args)
	if err == nil {
		return 0
	}
	var ee *ExitError
	code = 1
	if errors.As(err, &ee) {
		code = ee.Code
		if ee.Err == nil {
			return code
		}
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	msg := OneLine(err.Error())
	if code != 2 {
		msg = PlainError(msg)
	}
	fmt.Fprintf(env.Stderr, "%s: %s\n", p.Name, msg)
	return code
}

func (p Program) dispatch(env *Env, args []string) error {
	if len(args) == 0 {
		p.Usage(env.Stderr)
		return &ExitError{Code: 2}
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && name == "help" {
			return p.dispatch(env, []string{args[1], "-h"})
		}
		p.Usage(env.Stdout)
		return nil
	case "-version", "--version":
		name = "version"
	}
	var names []string
	for _, c := range p.Commands {
		if c.Name == name {
			return c.Run(env, args[1:])
		}
		names = append(names, c.Name)
	}
	if c := suggest.Closest(name, names); c != "" {
		return Usage("unknown command %q: did you mean %q? (run '%s help' for the list)", name, c, p.Name)
	}
	return Usage("unknown command %q (run '%s help' for the list)", name, p.Name)
}

// OneLine is the first line of s, trimmed.
func OneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
