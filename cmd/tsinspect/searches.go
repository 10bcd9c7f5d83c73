package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/coverage"
	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/mcpclient"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/textout"
	"github.com/tsinspect/tsinspect/toolsearch"
)

const searchesAbout = `
List every tool search of a capture once, on the turn that carries its
result, with what it loaded and when the model then called those tools:

  TURN     the turn (client search: whose request holds the result;
           server search: whose response does)
  THREAD   main, subN or sideN
  SEARCH   the search tool (ToolSearch, tool_search_tool_regex, ...)
  MODE     select, keyword, required, prefix, regex or bm25
  QUERY    the query or pattern as the model wrote it
  RESULT   "loaded A (called #N), B (never called)", "no match", an error,
           or "no result" when the capture ends first

With --tools, a second table says what happened to each tool whose name
matches: the turns whose catalog or working set held it, the searches that
found it, the first turn it was loaded, its calls and its blind calls
(made while its schema was not loaded). That is the table an MCP server
author wants: were my tools found, by which queries, and used?

With --require found (or called), the exit status is 3 when a tool
matching --tools was never found by a search (or never called with its
schema loaded): a check for the CI job of an MCP server, after a scripted
'claude -p' session recorded with 'tsinspect record'.

With --explain, each search is then re-run offline over the catalog of
the moment the model made the call: Claude Code's published ToolSearch
algorithm (select: lookup, exact name, mcp__ prefix, keyword scoring with
+required terms and max_results), or an approximation of the server's
regex and BM25 searches over the deferred definitions the request carries.
Every candidate is listed with its score and what it is made of, with
where and why the cut fell, and DIFFERS marks a search whose recorded
result the simulation does not reproduce, with the likely causes (unknown
descriptions, search hints not on the wire, a drifted algorithm).

Examples:
  tsinspect searches session.db
  tsinspect searches session.db --explain
  tsinspect searches session.db --tools 'mcp__github__*'
  tsinspect searches session.db --tools mcp__github__,mcp__linear__ --thread main
  tsinspect searches session.db --tools mcp__github__create_issue --require called`

func runSearches(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "searches", "FILE [--tools PATTERNS] [--thread ID] [--explain] [--json] [flags]", searchesAbout)
	toolsFlag := fs.String("tools", "", "also list what happened to the tools matching these comma-separated `patterns` (globs like mcp__github__*; a pattern without * ? [ matches names starting with it)")
	thread := fs.String("thread", "", "only this `thread` (main, sub1, side1, ...)")
	mcpConfig := fs.String("mcp-config", "", "with --explain: take tool descriptions from the MCP servers of this Claude Code style config `FILE` (tools/list), which a capture lacks for tools never loaded")
	algorithm := fs.String("algorithm", toolsearch.Auto, "with --explain: the keyword scoring: auto (that of the capture's Claude Code release), published (as published), or a Claude Code `version` (2.1.328: names also scored whole; measured: "+strings.Join(toolsearch.Versions(), ", ")+")")
	explain := fs.Bool("explain", false, "re-run each search offline (Claude Code's published ToolSearch algorithm; an approximation for server searches) and show every candidate's score, where the cut fell, and whether the recorded result agrees")
	asJSON := fs.Bool("json", false, "write JSON Lines: an object per search (kind \"search\"), then per tool matching --tools (kind \"tool\")")
	require := fs.String("require", "", "exit with status 3 unless every tool matching --tools was `found` (loaded by a search, or always loaded) or, with called, called with its schema loaded")
	pos, err := cli.Args(fs, args, 1, 1, "one capture FILE")
	if err != nil {
		return err
	}
	match, err := coverage.Matcher(splitList(*toolsFlag))
	if err != nil {
		return cli.Usage("searches: --tools %v", err)
	}
	if err := coverage.CheckFlags(*require, match != nil, *mcpConfig != "", *explain); err != nil {
		return cli.Usage("searches: %v", err)
	}
	if _, _, err := toolsearch.Resolve(*algorithm, ""); err != nil {
		return cli.Usage("searches: --algorithm %q: want %s, %s or a Claude Code version (%s measured)", *algorithm, toolsearch.Auto, toolsearch.Published, strings.Join(toolsearch.Versions(), ", "))
	}
	var servers []mcpclient.Server
	if *mcpConfig != "" {
		if servers, err = mcpclient.Config(*mcpConfig); err != nil {
			return fmt.Errorf("searches: %w", err)
		}
	}
	s, err := source.LoadSession(pos[0], env.Stderr)
	if err != nil {
		return readError("searches", pos[0], err)
	}
	if err := s.CheckThread(*thread); err != nil {
		return cli.Usage("searches: --thread %v", err)
	}
	// The MCP servers are asked before anything is written: one that
	// fails leaves no table behind it.
	var extra map[string]toolsearch.Tool
	if servers != nil {
		if extra, err = mcpclient.ToolsByName(servers, 30*time.Second); err != nil {
			return fmt.Errorf("searches: %w", err)
		}
	}
	searches, tools := coverage.Of(s, coverage.Options{Thread: *thread, Match: match})
	if *asJSON {
		if err := textout.SearchesJSON(env.Stdout, searches, tools); err != nil {
			return fmt.Errorf("searches: %w", err)
		}
	} else if err := textout.Searches(env.Stdout, searches); err != nil {
		return fmt.Errorf("searches: write: %w", err)
	}
	if *explain {
		alg, how, _ := toolsearch.Resolve(*algorithm, toolsearch.ClaudeCodeVersion(s))
		if err := textout.Explained(env.Stdout, alg, how, toolsearch.Thread(s, *thread, toolsearch.Options{Extra: extra, Algorithm: alg})); err != nil {
			return fmt.Errorf("searches: write: %w", err)
		}
	}
	if match != nil && !*asJSON {
		fmt.Fprintln(env.Stdout)
		if err := textout.Tools(env.Stdout, tools); err != nil {
			return fmt.Errorf("searches: write: %w", err)
		}
		if len(tools) == 0 {
			fmt.Fprintf(env.Stderr, "tsinspect: no tool in %s matches --tools %s\n", pos[0], *toolsFlag)
		}
	}
	if *require == "" {
		return nil
	}
	if msg := coverage.Required(tools, *require, *toolsFlag); msg != "" {
		fmt.Fprintf(env.Stderr, "tsinspect: %s\n", msg)
		return &cli.ExitError{Code: 3}
	}
	return nil
}
