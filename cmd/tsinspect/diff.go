package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"

	"github.com/tsinspect/tsinspect/diffreport"
	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/redact"
)

const diffAbout = `
Compare two sessions A and B (captures, or anything else tsinspect reads)
and say what differs:

  summary        turns, threads, models, clients, cost (and what cache
                 breaks and blind calls cost), tokens by kind, searches
                 and empty searches, flags by kind, side by side
  request shape  per thread: betas, system blocks (which changed, by how
                 many tokens), tool definitions added, removed or changed
                 (description, schema), the catalog, the announcement,
                 parameters such as thinking, effort, context management
  turns          aligned per thread by order and content, so that a turn
                 one side lacks shows as inserted; for each pair, what
                 differs in model, catalog, working set, searches, calls,
                 usage, cost and flags. Identical stretches fold to one
                 line.
  --tools P      for each tool whose name starts with P, how it was
                 searched for and found in A and in B

IDs, times and signatures never count as differences, nor does the part
of Claude Code's billing header that changes with every request.

Text is written for a terminal of --width columns (80 by default);
--json (or --format json) writes the comparison as JSON; --format
markdown|html writes it for a bug report, redacted as 'tsinspect report'
redacts (--redact default, strict or off; text and JSON, for your own
terminal, are not redacted unless --redact says so).

Exit status as diff(1): 0 when the sessions are the same in what
tsinspect compares, 1 when they differ, 2 on trouble.

Examples:
  tsinspect diff yesterday.db today.db
  tsinspect diff --tools mcp__github__ before.db after.db
  tsinspect diff --format markdown --out diff.md a.db b.db`

func runDiff(env *cli.Env, args []string) error {
	err := diff(env, args)
	var ee *cli.ExitError
	if err == nil || errors.As(err, &ee) {
		return err
	}
	// Trouble, status 2 as diff(1) has it, said as plainly as any other
	// command's error (run strips package names only from status 1).
	return &cli.ExitError{Code: 2, Err: troubleError{err}}
}

// troubleError is an error said without the package names before it.
type troubleError struct{ err error }

func (e troubleError) Error() string { return cli.PlainError(cli.OneLine(e.err.Error())) }
func (e troubleError) Unwrap() error { return e.err }

func diff(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "diff", "A B [--tools PREFIX] [--json | --format text|json|markdown|html] [--out FILE] [--redact POLICY] [--width N] [--prices FILE]", diffAbout)
	format := fs.String("format", "text", "output `format`: text, json, markdown or html")
	asJSON := fs.Bool("json", false, "write JSON (the same as --format json)")
	out := fs.String("out", "", "write to `FILE` instead of standard output, atomically (- for standard output)")
	policyName := fs.String("redact", "", "redaction `policy`: default, strict or off (default: default for markdown and html, off for text and json)")
	tools := fs.String("tools", "", "compare how the tools whose names start with `PREFIX` were searched for and found")
	width := fs.Int("width", diffreport.Width, "text width in `columns` (at least 60)")
	prices := pricesFlag(fs)
	pos, err := cli.Args(fs, args, 2, 2, "two sessions A and B")
	if err != nil {
		return err
	}
	switch *format {
	case "text", "json", "html":
	case "markdown", "md":
		*format = "markdown"
	default:
		return cli.Usage("diff: --format %q: want text, json, markdown or html", *format)
	}
	if *asJSON {
		if cli.Given(fs, "format") && *format != "json" {
			return cli.Usage("diff: --json and --format %s: give one", *format)
		}
		*format = "json"
	}
	if *width < 60 {
		return cli.Usage("diff: --width %d: want at least 60", *width)
	}
	policy, err := parsePolicy("diff", "--redact", cmp.Or(*policyName, string(diffreport.DefaultPolicy(*format))))
	if err != nil {
		return err
	}
	tab, err := loadPrices(env, *prices)
	if err != nil {
		return err
	}
	if err := checkOut("diff", *out); err != nil {
		return err
	}
	ins, err := diffreport.Load(pos[0], pos[1], env.Stderr, func(path string, err error) error { return readError("diff", path, err) })
	if err != nil {
		return err
	}
	res := diffreport.Build(ins[0], ins[1], diffreport.Options{Prices: tab, Policy: policy, Tools: *tools, Version: version})
	if policy == redact.Off && (*format == "markdown" || *format == "html") {
		fmt.Fprintln(env.Stderr, "tsinspect: warning: --redact off: the comparison is not redacted and may hold paths, e-mail addresses, identifiers and secrets; do not share it as it is")
	}
	if err := writeOut(env, "diff: write", *out, func(w io.Writer) error { return res.Write(w, *format, *width) }); err != nil {
		return err
	}
	if !res.Same {
		return &cli.ExitError{Code: 1}
	}
	return nil
}
