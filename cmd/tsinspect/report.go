package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/catalog"
	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/report"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/textout"
	"github.com/tsinspect/tsinspect/timeline"
)

const reportAbout = `
Write a report of a capture FILE (or of a directory of sessions: see
below): its threads (main agent, subagents, side
queries) and, for every Messages API turn, the model, status, stop reason
and usage, the deferred-tool catalog and the working set with what changed
since the thread's previous turn, the tool searches whose results the turn
carries, the tool calls of its response, the tool definitions sent (name,
deferred or not, a SHA-256 and a token estimate instead of the schema),
and the flags raised on it. A token summary says what the tool
definitions cost and what deferring them saved. Costs are in US dollars,
from the built-in price table (its date is in the report) or --prices
FILE: per turn, per thread and in total, what each cache break cost (its
lost tokens written again instead of read), what each blind call cost (the
turn that made it) and what deferral saved (saved tool-definition tokens
at the rate each request paid for the start of its prompt).

The report is meant to be shared (attached to a bug report, sent to an MCP
server's authors), so it is redacted by default:

  default  no message text, tool inputs or outputs, thinking, system
           prompt or images; credentials, metadata.user_id, session
           headers, e-mail addresses, paths and home directories, IP
           addresses and host names other than the API's are removed or
           replaced by pseudonyms ([path-1], [email-2], ...), the same
           value by the same pseudonym. Tool names and tool search
           queries are kept (scrubbed like the rest).
  strict   default, with MCP server names pseudonymised too
           (mcp__s1__create_issue).
  off      nothing removed; a warning is printed.

The JSON format is versioned (schema_version); its field names do not
change, new fields may appear. Arrays are [] when empty, never null.

The report goes to standard output, or to --out. A regular file there
(or one a symbolic link points at) is replaced whole: the report is written
to a temporary file beside it and renamed into place, so the file is
either complete or as it was. A device or pipe (/dev/null, /dev/stdout, a
FIFO) is written through, never replaced; a directory or a file without
write permission is refused.

With --fail-on, the command exits with status 3 after writing the report
when any turn carries a flag of one of the given kinds, and says which
kinds on which turns on standard error: use it in CI to make a session that
went wrong fail the build.

Given a DIR of sessions (a projects directory, one project's, or capture
files) instead of one FILE, the report is the advice across them, as
'tsinspect advise' reads it (patterns seen in at least 3 sessions, each
with what it saves and the sessions and turns it rests on), redacted as
above: the sessions' IDs become pseudonyms, their projects are left out.

Formats:
  json      (default) the full report
  markdown  for a GitHub issue: a summary, the flags with what they mean
            and what to do, the token summary, a table per thread
  html      one self-contained page that opens offline: per thread,
            charts of the catalog and working set, of the prompt tokens
            and of the tool-definition tokens, flags marked and
            explained, and the turn table

Examples:
  tsinspect report session.db > report.json
  tsinspect report --format markdown --out report.md session.db
  tsinspect report --format html --redact strict --out report.html session.db
  tsinspect report --fail-on cache_break,call_before_load session.db
  tsinspect report ~/.claude/projects --format markdown --out advice.md`

// reportAdvice writes the report of a directory of sessions: the advice
// across them (see 'tsinspect advise'), redacted under policy.
func reportAdvice(env *cli.Env, dir, format, out string, policy redact.Policy, tab *pricing.Table) error {
	q := catalog.AdviceQuery{MinSessions: advice.DefaultMinSessions, Quiet: true}
	q.Prices = tab
	r, err := adviseFrom(env, []string{dir}, q)
	if err != nil {
		return err
	}
	if r == nil {
		return readError("report", dir, fmt.Errorf("report: no sessions in %s (give a directory of Claude Code's session files, such as ~/.claude/projects, or of captures)", dir))
	}
	shared := redact.Advice(r, policy)
	if policy == redact.Off {
		fmt.Fprintln(env.Stderr, "tsinspect: warning: --redact off: the report names your sessions and projects; do not share it as it is")
	}
	return writeOut(env, "report", out, func(w io.Writer) error { return shared.Write(w, format, redact.Describe(policy)) })
}

// Exit status of 'report --fail-on' when a flag of a listed kind exists.
const exitFlagged = 3

func runReport(env *cli.Env, args []string) error {
	about := strings.Replace(reportAbout, "\nExamples:", "\nFlag kinds:\n"+textout.WrapList(timeline.Kinds(), "  ", 74)+"\n\nExamples:", 1)
	fs := cli.NewFlags(env, "report", "FILE|DIR [--format json|markdown|html] [--out FILE] [--redact POLICY] [--fail-on KINDS] [--prices FILE]", about)
	format := fs.String("format", "json", "report `format`: json, markdown or html")
	out := fs.String("out", "", "write the report to `FILE` instead of standard output, atomically (- for standard output)")
	policyName := fs.String("redact", string(redact.Default), "redaction `policy`: default, strict or off")
	failOn := fs.String("fail-on", "", "exit with status 3 if any turn has a flag of these `kinds` (comma-separated, e.g. cache_break,call_before_load)")
	prices := pricesFlag(fs)
	pos, err := cli.Args(fs, args, 1, 1, "one capture FILE")
	if err != nil {
		return err
	}
	switch *format {
	case "json", "html":
	case "markdown", "md":
		*format = "markdown"
	default:
		return cli.Usage("report: --format %q: want json, markdown or html", *format)
	}
	policy, err := parsePolicy("report", "--redact", *policyName)
	if err != nil {
		return err
	}
	kinds, err := report.ParseKinds(*failOn)
	switch {
	case errors.Is(err, report.ErrUnknownKind):
		return cli.Usage("report: --fail-on: %v", err)
	case err != nil:
		return cli.Usage("report: --fail-on %v", err)
	}
	tab, err := loadPrices(env, *prices)
	if err != nil {
		return err
	}
	if err := checkOut("report", *out); err != nil {
		return err
	}
	if fi, err := os.Stat(pos[0]); err == nil && fi.IsDir() {
		if len(kinds) > 0 {
			return cli.Usage("report: --fail-on goes with one session, not a directory of them")
		}
		return reportAdvice(env, pos[0], *format, *out, policy, tab)
	}
	b, err := source.Load(pos[0], env.Stderr)
	if err != nil {
		return readError("report", pos[0], err)
	}
	r, shared := redact.Report(b, version, tab, policy)
	if policy == redact.Off {
		fmt.Fprintln(env.Stderr, "tsinspect: warning: --redact off: the report is not redacted and may hold paths, e-mail addresses, identifiers and secrets; do not share it as it is")
	}
	opts := report.RenderOptions{Redaction: redact.Describe(policy), Unredacted: policy == redact.Off}
	// The report is written as it is rendered, not gathered first: on a
	// long session it runs to tens of MB.
	write := func(w io.Writer) error { return shared.Write(w, *format, opts) }
	if err := writeOut(env, "report: write", *out, write); err != nil { // each format buffers its writes
		return err
	}
	if len(kinds) > 0 {
		if msg := report.FailOnSummary(r, kinds); msg != "" {
			return &cli.ExitError{Code: exitFlagged, Err: fmt.Errorf("%s", msg)}
		}
	}
	return nil
}
