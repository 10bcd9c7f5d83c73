package stats

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/source"
)

// File is one capture to read: its path, the name to show, and whether it
// was found in a directory (then a bad file is skipped).
type File struct {
	Path, Name string
	Found      bool
}

// Files expands capture files and directories into the sessions to read:
// a directory gives what the kinds of source find in it (source.Find:
// Claude Code's sessions and capture files), named relative to it.
func Files(args []string) ([]File, error) {
	var out []File
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			// A Claude Code session: "latest", an ID or a prefix of one.
			p, rerr := source.Resolve(a, nil)
			if rerr != nil {
				return nil, fmt.Errorf("stats: %w", rerr)
			}
			if p == a {
				return nil, fmt.Errorf("stats: %w", err)
			}
			out = append(out, File{Path: p, Name: a})
			continue
		}
		if !fi.IsDir() {
			out = append(out, File{Path: a, Name: a})
			continue
		}
		// What the kinds of source find in the directory: Claude Code's
		// sessions (a projects directory, or one project's) and capture
		// files, searched recursively.
		found, err := source.Find(true, a)
		if err != nil {
			return nil, fmt.Errorf("stats: %w", err)
		}
		for _, f := range found.Found {
			if f.Foreign() {
				continue
			}
			rel, rerr := filepath.Rel(a, f.Path)
			if rerr != nil {
				rel = f.Path
			}
			out = append(out, File{Path: f.Path, Name: rel, Found: true})
		}
	}
	return out, nil
}

// ReadError is the error of a capture named on the command line (not
// found in a directory) that could not be read.
type ReadError struct {
	// Path is the capture's path.
	Path string
	Err  error
}

func (e *ReadError) Error() string { return e.Err.Error() }

func (e *ReadError) Unwrap() error { return e.Err }

// Of reads the captures in parallel, one per CPU, and sums them, in the
// order of files whichever worker read each, so that the sums (floating
// point) come out the same on every run. warnings name the files found in
// a directory that could not be read; a file named itself that cannot be
// read is a *ReadError.
func Of(files []File, prices *pricing.Table) (*Table, []string, error) {
	workers := min(runtime.GOMAXPROCS(0), len(files))
	type result struct {
		t       *Table
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
				t := New(prices)
				if err := t.addCapture(f); err != nil {
					if f.Found {
						results[i].warning = fmt.Sprintf("%s: %v", f.Name, err)
						continue
					}
					results[i].err = &ReadError{Path: f.Path, Err: fmt.Errorf("stats: %s: %w", f.Name, err)}
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
	total := New(prices)
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
func (t *Table) addCapture(f File) error {
	b, err := source.Load(f.Path, nil)
	if err != nil {
		return err
	}
	client := ""
	for _, ex := range b.Exchanges() {
		if client = ex.ClientVersion(); client != "" {
			break
		}
	}
	t.Add(f.Name, client, b.Session())
	return nil
}
