package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/stats"
)

const statsAbout = `
Sum many captures into one table: a team's sessions, a CI run's. Give
capture files, or directories whose *.db files (searched recursively) are
read; a file there that is not a capture is skipped with a warning.

  MCP tools    per MCP server and tool: in how many captures it was
               offered (in the catalog or the working set), how many
               tool searches found it, in how many captures its schema
               was loaded, how many times it was called, and how many of
               those calls were blind (its schema not loaded)
  flags        per flag kind: how many, per 100 turns, and in which
               captures
  cache breaks how many, the prompt tokens written to the cache again
               because of them, by cause, and what that cost in US dollars
               (list prices: the built-in table, or --prices FILE)
  clients and models
               per Claude Code version (from the User-Agent) and per
               request model: captures, turns, flags, cache breaks,
               tokens and their cost

Captures are read in parallel, one per CPU. With --json the same table is
written as JSON (field names do not change; new ones may appear). Capture
names in the output are file names relative to the directory given, or as
given.

Examples:
  tsinspect stats sessions/
  tsinspect stats a.db b.db --json > stats.json`

func runStats(env *cliEnv, args []string) error {
	flags := newFlags(env, "stats", "CAPTURE|DIR... [--json] [--prices FILE]", statsAbout)
	asJSON := flags.Bool("json", false, "write JSON instead of a table")
	pricesPath := flags.String("prices", "", "price table `FILE` (JSON, the form of the built-in one) instead of the built-in prices")
	pos, err := parseInterspersed(flags, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError("stats: want capture files or directories (see 'tsinspect stats -h')")
	}
	files, err := statsFiles(pos)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return readError("stats", pos[0], fmt.Errorf("stats: no capture (*.db) in %s", strings.Join(pos, ", ")))
	}
	prices := pricing.Default()
	if *pricesPath != "" {
		if prices, err = pricing.Load(*pricesPath); err != nil {
			return fmt.Errorf("stats: --prices: %w", err)
		}
	}
	t, warnings, err := statsOf(files, prices)
	for _, w := range warnings {
		fmt.Fprintf(env.stderr, "tsinspect: stats: skipped %s\n", w)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return t.WriteJSON(env.stdout)
	}
	return t.WriteText(env.stdout)
}

// statsFile is one capture to read: its path, the name to show, and
// whether it was found in a directory (then a bad file is skipped).
type statsFile struct {
	path, name string
	found      bool
}

// statsFiles expands the arguments into capture files.
func statsFiles(args []string) ([]statsFile, error) {
	var out []statsFile
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("stats: %w", err)
		}
		if !fi.IsDir() {
			out = append(out, statsFile{path: a, name: a})
			continue
		}
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".db") {
				rel, rerr := filepath.Rel(a, p)
				if rerr != nil {
					rel = p
				}
				out = append(out, statsFile{path: p, name: rel, found: true})
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("stats: %w", err)
		}
	}
	return out, nil
}

// statsOf reads the captures in parallel and sums them, in the order of
// files whichever worker read each, so that the sums (floating point) come
// out the same on every run. warnings name the files found in a directory
// that could not be read.
func statsOf(files []statsFile, prices *pricing.Table) (*stats.Table, []string, error) {
	workers := min(runtime.GOMAXPROCS(0), len(files))
	type result struct {
		t       *stats.Table
		warning string
		err     error
	}
	results := make([]result, len(files))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				f := files[i]
				t := stats.New(prices)
				if err := addCapture(t, f); err != nil {
					if f.found {
						results[i].warning = fmt.Sprintf("%s: %v", f.name, err)
						continue
					}
					results[i].err = readError("stats", f.path, fmt.Errorf("stats: %s: %w", f.name, err))
					continue
				}
				results[i].t = t
			}
		}()
	}
	for i := range files {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	total := stats.New(prices)
	var warnings []string
	var errs []error
	for _, r := range results {
		if r.t != nil {
			total.Merge(r.t)
		}
		if r.warning != "" {
			warnings = append(warnings, r.warning)
		}
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	sort.Strings(warnings)
	if len(errs) > 0 {
		return nil, warnings, errs[0]
	}
	total.Finish()
	return total, warnings, nil
}

// addCapture reads one capture, an exchange at a time, and adds it to t.
func addCapture(t *stats.Table, f statsFile) error {
	b, err := streamSession(f.path, nil)
	if err != nil {
		return err
	}
	client := ""
	for _, ex := range b.Exchanges() {
		if client = ex.ClientVersion(); client != "" {
			break
		}
	}
	t.Add(f.name, client, b.Session())
	return nil
}
