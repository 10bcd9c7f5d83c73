// Command scale measures tsinspect on session files shaped like a heavy
// user's, made without Claude Code from the public real sessions in the
// tests (internal/bench/tile: their records repeated with fresh IDs, tool
// results padded to KB sizes), beside ccusage and cat in the same run:
//
//   - long sessions of 100 to 10,000 turns: 'turns' and 'report' (the whole
//     reading) against the listing's light reading of the same file
//     ('sessions --no-index') and cat;
//   - directories of 100 to 5,000 sessions: the cold listing, the warm one
//     (from the index), 'advise' cold and cached, against 'ccusage session
//     --offline' and cat.
//
// Every command runs in a child process; the figures are its CPU time
// (user + system) and peak RSS from getrusage, the median of -reps runs
// taken in turn (a command, then the next), so that a loaded machine
// slows each alike. It prints Markdown tables for BENCHMARKS.md.
//
// The growth from 1,000 to 10,000 turns (the two sizes of -growth) is then
// measured again in -pairs interleaved pairs (the short session, then the
// long one), so that the ratio compares runs made under the same load:
// a median of three of each size, taken minutes apart, moved it by ±20 %.
//
//	go run ./bench/scale [-turns 100,1000,5000,10000] [-sessions 100,1000,5000] [-reps 3] [-growth 1000,10000] [-pairs 9] [-dir DIR]
//
// ccusage is $TSINSPECT_CCUSAGE, else "ccusage" on PATH; without it its
// columns say so.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/internal/bench/rusage"
	"github.com/tsinspect/tsinspect/internal/bench/tile"
	"github.com/tsinspect/tsinspect/internal/memlimit"
	"github.com/tsinspect/tsinspect/ui"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-first-rows" {
		if err := firstRows(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "scale:", err)
			os.Exit(1)
		}
		return
	}
	turns := flag.String("turns", "100,1000,5000,10000", "lengths of the long sessions, in requests")
	sessions := flag.String("sessions", "100,1000,5000", "sizes of the session directories")
	reps := flag.Int("reps", 3, "runs of each command (the median is shown)")
	growth := flag.String("growth", "1000,10000", "the two session lengths (of -turns) whose growth is measured in interleaved pairs; empty: not measured (by default, not when -turns lacks them)")
	pairs := flag.Int("pairs", 9, "interleaved pairs of runs for the growth")
	dir := flag.String("dir", "", "where the sessions are made and kept (default: a temporary directory, removed)")
	flag.Parse()
	growthSet := false
	flag.Visit(func(f *flag.Flag) { growthSet = growthSet || f.Name == "growth" })
	if !growthSet {
		// The default lengths, when -turns has both.
		if ts, err := sizes(*turns); err == nil && !(slices.Contains(ts, 1000) && slices.Contains(ts, 10000)) {
			fmt.Fprintln(os.Stderr, "scale: the growth in pairs is not measured: -turns lacks 1000 or 10000 (set -growth to two of its lengths)")
			*growth = ""
		}
	}
	if err := run(*turns, *sessions, *growth, *reps, *pairs, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func run(turnsFlag, sessionsFlag, growthFlag string, reps, pairs int, dir string) error {
	turns, err := sizes(turnsFlag)
	if err != nil {
		return err
	}
	counts, err := sizes(sessionsFlag)
	if err != nil {
		return err
	}
	grow, err := sizes(growthFlag)
	if err != nil {
		return err
	}
	if len(grow) != 0 && (len(grow) != 2 || !slices.Contains(turns, grow[0]) || !slices.Contains(turns, grow[1]) || grow[0] >= grow[1]) {
		return fmt.Errorf("-growth %q: want two lengths of -turns, the shorter first", growthFlag)
	}
	if reps < 1 || pairs < 1 {
		return fmt.Errorf("-reps and -pairs: want at least 1")
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "tsinspect-scale-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	bin := filepath.Join(dir, "tsinspect")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/tsinspect").CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v: %s", err, out)
	}
	public, err := publicSessions()
	if err != nil {
		return err
	}
	ccusage := os.Getenv("TSINSPECT_CCUSAGE")
	if ccusage == "" {
		ccusage, _ = exec.LookPath("ccusage")
	}
	if err := longSessions(bin, ccusage, dir, public, turns, reps); err != nil {
		return err
	}
	if len(grow) == 2 {
		if err := growthPairs(bin, dir, public[longSource], grow[0], grow[1], pairs); err != nil {
			return err
		}
	}
	return directories(bin, ccusage, dir, public, counts, reps)
}

// sizes parses a comma-separated list of positive numbers.
func sizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q: want positive numbers separated by commas", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// publicSessions reads the main files of the public sessions in the tests.
func publicSessions() (map[string][]byte, error) {
	paths, err := filepath.Glob("source/testdata/public/*/*.jsonl")
	if err != nil || len(paths) == 0 {
		return nil, fmt.Errorf("no public sessions under source/testdata/public (run from the module root): %v", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out[filepath.Base(filepath.Dir(p))] = b
	}
	return out, nil
}

// longSource is the public session long sessions are made from: Claude
// Code 2.1.219 with tool search, a compaction and API errors.
const longSource = "25-v2.1.219-compaction-api-error-toolsearch"

// resultBytes pads tool results to a real session's sizes.
const resultBytes = tile.RealResultBytes

func longSessions(bin, ccusage, dir string, public map[string][]byte, turns []int, reps int) error {
	src, ok := public[longSource]
	if !ok {
		return fmt.Errorf("the public session %s is missing", longSource)
	}
	fmt.Printf("## Long sessions (from %s, tool results padded to %d bytes)\n\n", longSource, resultBytes)
	fmt.Println("| turns | file | `cat` | ccusage `session` | light reading (`sessions --no-index`) | `turns` | `turns` / light | `report` | peak RSS `turns` / `report` | per turn `turns` | `open`: first rows / all (wall) |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	var prev, prevReport measure
	prevN := 0
	for _, n := range turns {
		path, err := longSession(dir, src, n)
		if err != nil {
			return err
		}
		project := filepath.Dir(path)
		fi, _ := os.Stat(path)
		env := benchEnv(dir)
		jobs := []job{
			{"cat", []string{path}, nil},
			{bin, []string{"sessions", filepath.Dir(filepath.Dir(path)), "--no-index"}, env},
			{bin, []string{"turns", path}, env},
			{bin, []string{"report", path, "--format", "json"}, env},
		}
		if ccusage != "" {
			jobs = append(jobs, job{ccusage, []string{"session", "--offline", "--json"}, []string{"CLAUDE_CONFIG_DIR=" + filepath.Dir(filepath.Dir(project))}})
		}
		ms := medians(reps, jobs)
		for _, m := range ms {
			if m.err != nil {
				return m.err
			}
		}
		growth, reportGrowth := "", ""
		if prevN > 0 {
			growth = fmt.Sprintf(" (×%.1f for ×%.1f turns)", ms[2].cpu.Seconds()/prev.cpu.Seconds(), float64(n)/float64(prevN))
			reportGrowth = fmt.Sprintf(" (×%.1f)", ms[3].cpu.Seconds()/prevReport.cpu.Seconds())
		}
		cc := "not installed"
		if ccusage != "" {
			cc = fmt.Sprintf("%s, %s", secs(ms[4].cpu), mib(ms[4].rss))
		}
		first, all, err := openTimes(path, reps)
		if err != nil {
			return err
		}
		fmt.Printf("| %d | %.1f MB | %s | %s | %s | %s%s | %.1f× | %s%s | %s / %s | %.2f ms | %s / %s |\n", n, float64(fi.Size())/1e6,
			secs(ms[0].cpu), cc, secs(ms[1].cpu), secs(ms[2].cpu), growth, ms[2].cpu.Seconds()/ms[1].cpu.Seconds(), secs(ms[3].cpu), reportGrowth,
			mib(ms[2].rss), mib(ms[3].rss), ms[2].cpu.Seconds()*1000/float64(n), secs(first), secs(all))
		prev, prevReport, prevN = ms[2], ms[3], n
	}
	fmt.Println()
	return nil
}

// longSession makes (or finds, made before) the session of n turns under
// dir and returns its path.
func longSession(dir string, src []byte, n int) (string, error) {
	project := filepath.Join(dir, "long", fmt.Sprintf("t%d", n), "projects", "-bench-long")
	if err := os.MkdirAll(project, 0o755); err != nil {
		return "", err
	}
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	path := filepath.Join(project, id+".jsonl")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	b, err := tile.Session(src, tile.Options{Requests: n, SessionID: id, ResultBytes: resultBytes})
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, b, 0o644)
}

// benchEnv is the environment of tsinspect's runs: its cache and home
// under dir, not the user's.
func benchEnv(dir string) []string {
	return []string{"XDG_CACHE_HOME=" + filepath.Join(dir, "cache"), "HOME=" + dir}
}

// growthPairs measures how 'turns' and 'report' grow from the session of
// small turns to that of large ones (those longSessions made from src), in
// pairs of runs one after the other, and prints each command's medians,
// the ratio of the medians and the range of the pairs' ratios, after the
// files' ratio (what a reading linear in the bytes would take).
func growthPairs(bin, dir string, src []byte, small, large, pairs int) error {
	paths := make([]string, 2)
	sizes := make([]int64, 2)
	for i, n := range []int{small, large} {
		p, err := longSession(dir, src, n)
		if err != nil {
			return err
		}
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		paths[i], sizes[i] = p, fi.Size()
	}
	fmt.Printf("### Growth from %d to %d turns, in %d interleaved pairs\n\n", small, large, pairs)
	fmt.Printf("The files: ×%.2f the bytes for ×%.1f the turns.\n\n", float64(sizes[1])/float64(sizes[0]), float64(large)/float64(small))
	fmt.Printf("| command | %d turns | %d turns | ratio of the medians | pairs' ratios |\n", small, large)
	fmt.Println("| --- | --- | --- | --- | --- |")
	env := benchEnv(dir)
	for _, cmd := range [][]string{{"turns"}, {"report", "--format", "json"}} {
		var a, b []time.Duration
		var ratios []float64
		for range pairs {
			ms := make([]measure, 2)
			for i, p := range paths {
				if ms[i] = measureOne(job{bin, append([]string{cmd[0], p}, cmd[1:]...), env}); ms[i].err != nil {
					return ms[i].err
				}
			}
			a, b = append(a, ms[0].cpu), append(b, ms[1].cpu)
			ratios = append(ratios, ms[1].cpu.Seconds()/ms[0].cpu.Seconds())
		}
		slices.Sort(ratios)
		ma, mb := median(a), median(b)
		fmt.Printf("| `%s` | %s | %s | ×%.1f | ×%.1f–%.1f (median ×%.1f) |\n", cmd[0], secs(ma), secs(mb), mb.Seconds()/ma.Seconds(),
			ratios[0], ratios[len(ratios)-1], median(ratios))
	}
	fmt.Println()
	return nil
}

func directories(bin, ccusage, dir string, public map[string][]byte, counts []int, reps int) error {
	names := make([]string, 0, len(public))
	for k := range public {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Println("## Session directories (copies of the public sessions, each with its own IDs)")
	fmt.Println()
	fmt.Println("| sessions | size | `cat` | cold listing | ccusage | cold / ccusage (CPU, RSS) | warm listing | warm / ccusage | `advise` cold | cached | cold advise / cold listing |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, n := range counts {
		root := filepath.Join(dir, "dirs", fmt.Sprintf("s%d", n))
		projects := filepath.Join(root, "projects")
		var files []string
		var size int64
		for i := range n {
			name := names[i%len(names)]
			project := filepath.Join(projects, fmt.Sprintf("-bench-project-%d", i%50))
			id := fmt.Sprintf("00000000-0000-4000-9000-%012d", i)
			path := filepath.Join(project, id+".jsonl")
			files = append(files, path)
			if fi, err := os.Stat(path); err == nil {
				size += fi.Size()
				continue
			}
			if err := os.MkdirAll(project, 0o755); err != nil {
				return err
			}
			requests := bytesCount(public[name], `"requestId"`)
			b, err := tile.Session(public[name], tile.Options{Requests: max(requests, 1), SessionID: id, Salt: i})
			if err != nil {
				// A public session without answers: copied as it is.
				b = public[name]
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				return err
			}
			size += int64(len(b))
		}
		cache := filepath.Join(dir, "cache-dirs", fmt.Sprint(n))
		env := []string{"XDG_CACHE_HOME=" + cache, "HOME=" + dir}
		// The warm listing and the cached advice need their caches.
		_ = measureOne(job{bin, []string{"sessions", projects}, env})
		_ = measureOne(job{bin, []string{"advise", projects}, env})
		jobs := []job{
			{"cat", files, nil},
			{bin, []string{"sessions", projects, "--no-index"}, env},
			{bin, []string{"sessions", projects}, env},
			{bin, []string{"advise", projects, "--no-cache"}, env},
			{bin, []string{"advise", projects}, env},
		}
		if ccusage != "" {
			jobs = append(jobs, job{ccusage, []string{"session", "--offline", "--json"}, []string{"CLAUDE_CONFIG_DIR=" + root}})
		}
		ms := medians(reps, jobs)
		for _, m := range ms {
			if m.err != nil {
				return m.err
			}
		}
		cc, vs, warmVs := "not installed", "-", "-"
		if ccusage != "" {
			c := ms[5]
			cc = fmt.Sprintf("%s, %s", secs(c.cpu), mib(c.rss))
			vs = fmt.Sprintf("%.2f×, %.2f×", ms[1].cpu.Seconds()/c.cpu.Seconds(), float64(ms[1].rss)/float64(c.rss))
			warmVs = fmt.Sprintf("%.2f×", ms[2].cpu.Seconds()/c.cpu.Seconds())
		}
		fmt.Printf("| %d | %.0f MB | %s | %s, %s | %s | %s | %s, %s | %s | %s, %s | %s | %.1f× |\n", n, float64(size)/1e6, secs(ms[0].cpu),
			secs(ms[1].cpu), mib(ms[1].rss), cc, vs, secs(ms[2].cpu), mib(ms[2].rss), warmVs,
			secs(ms[3].cpu), mib(ms[3].rss), secs(ms[4].cpu), ms[3].cpu.Seconds()/ms[1].cpu.Seconds())
	}
	fmt.Println()
	fmt.Println("CPU time (user + system) and peak RSS of each command's process, medians; cat reads every file once.")
	return nil
}

func bytesCount(b []byte, s string) int { return strings.Count(string(b), s) }

// job is one command to measure.
type job struct {
	name string
	args []string
	env  []string
}

// measure is one run's CPU time and peak RSS.
type measure struct {
	cpu time.Duration
	rss int64
	err error
}

// medians runs the jobs reps times in turn and returns each one's median
// CPU time and peak RSS.
func medians(reps int, jobs []job) []measure {
	runs := make([][]measure, len(jobs))
	for range reps {
		for i, j := range jobs {
			runs[i] = append(runs[i], measureOne(j))
		}
	}
	out := make([]measure, len(jobs))
	for i, rs := range runs {
		var cpus []time.Duration
		var rss []int64
		for _, r := range rs {
			if r.err != nil {
				out[i] = r
				break
			}
			cpus, rss = append(cpus, r.cpu), append(rss, r.rss)
		}
		if out[i].err != nil {
			continue
		}
		out[i] = measure{cpu: median(cpus), rss: median(rss)}
	}
	return out
}

// median is the middle of xs once sorted (the upper of the two middle
// values of an even count); xs is sorted in place and must not be empty.
func median[T cmp.Ordered](xs []T) T {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// measureOne runs a job with its output discarded.
func measureOne(j job) measure {
	u, err := rusage.Run(j.name, j.args, j.env)
	return measure{cpu: u.CPU, rss: u.RSS, err: err}
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// openTimes runs 'tsinspect open' of path on a simulated screen (this
// program again, -first-rows) reps times and returns the median wall
// times until its first turn rows are shown and until the whole session
// is.
func openTimes(path string, reps int) (first, all time.Duration, err error) {
	self, err := os.Executable()
	if err != nil {
		return 0, 0, err
	}
	var firsts, alls []time.Duration
	for range reps {
		debug.FreeOSMemory()
		out, err := exec.Command(self, "-first-rows", path).Output()
		if err != nil {
			return 0, 0, fmt.Errorf("open %s: %w", filepath.Base(path), err)
		}
		var f, a int64
		if _, err := fmt.Sscanf(string(out), "%d %d", &f, &a); err != nil {
			return 0, 0, fmt.Errorf("open %s: %q: %w", filepath.Base(path), out, err)
		}
		firsts, alls = append(firsts, time.Duration(f)), append(alls, time.Duration(a))
	}
	return median(firsts), median(alls), nil
}

// turnRow is the first row of the turn list on the simulated 80-column
// screen: its number, then its thread (the screen's text has no line
// breaks).
var turnRow = regexp.MustCompile(` 1  main `)

// firstRows is 'tsinspect open' on a simulated 80×25 screen, as the
// command runs it; it prints the nanoseconds until the first turn row is
// painted and until the session is read whole (the "loading" status
// gone).
func firstRows(path string) error {
	memlimit.Start(memlimit.DefaultFloor)
	sim := ui.NewTextScreen()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- ui.Open(ctx, path, ui.Options{Screen: sim, Title: filepath.Base(path)}) }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var first time.Duration
	for {
		select {
		case err := <-done:
			if err == nil {
				err = errors.New("the UI ended before the session was shown")
			}
			return err
		case <-tick.C:
		}
		screen := sim.Text()
		if first == 0 && turnRow.MatchString(screen) {
			first = time.Since(start)
		}
		if first > 0 && !strings.Contains(screen, "loading") {
			fmt.Println(int64(first), int64(time.Since(start)))
			cancel()
			<-done
			return nil
		}
	}
}
