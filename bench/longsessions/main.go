// Command longsessions builds long generated sessions (see
// fixtures/longsession) of several sizes, runs tsinspect's reading
// commands on each, and prints one table: the capture's size against the
// raw request and response bytes, and the CPU time and peak RSS of each
// command, with the growth from one size to the next.
//
//	go run ./bench/longsessions [-sizes 100,200,400,1000] [-dir DIR] [-keep]
//	go run ./bench/longsessions -real [-sizes 100,200,400,1000] [-dir DIR]
//
// With -real the sessions are recorded instead, with the real Claude Code
// CLI through the built tsinspect against the stand-in (see
// fixtures/realsession): a size is the number of main-thread turns, and
// sessions of 1,000 turns or more run with Claude Code's auto-compact
// window set to -compact-window tokens, so that they compact. Recording
// needs Claude Code ($TSINSPECT_CLAUDE, else claude on PATH); measuring
// sessions already recorded in DIR does not.
//
// Below the sessions' rows, -record N (default 1,000; 0 to skip) drives
// 'tsinspect record --mode reverse' with a generated session of N turns at
// -rate turns a second (internal/bench/recload) and adds the recorder's peak RSS,
// writer lag and capture size, and -proxy N (default 300; 0 to skip)
// times N requests direct and through 'tsinspect record --mode reverse',
// mitmdump (when on PATH) and a bare Go reverse proxy recording nothing
// (internal/bench/overhead), and adds the time to first byte each adds.
//
// Captures are kept in DIR (default a new temporary directory) and reused
// by a later run with the same DIR, so a second run measures the commands
// only. Each command runs once, in a child process, measured with
// getrusage: figures vary by ±15 % on a shared machine.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tsinspect/tsinspect/fixtures/longsession"
	"github.com/tsinspect/tsinspect/fixtures/session"
	"github.com/tsinspect/tsinspect/internal/bench/overhead"
	"github.com/tsinspect/tsinspect/internal/bench/recload"
	"github.com/tsinspect/tsinspect/internal/bench/rusage"
	"github.com/tsinspect/tsinspect/internal/memlimit"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/ui"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-measure-child" {
		if err := measureChild(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "longsessions:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "-record-child" {
		if err := recordChild(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "longsessions:", err)
			os.Exit(1)
		}
		return
	}
	if served, err := overhead.ServeYardstick(os.Args); served {
		if err != nil {
			fmt.Fprintln(os.Stderr, "longsessions:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "-open-child" {
		if err := openChild(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "longsessions:", err)
			os.Exit(1)
		}
		return
	}
	sizes := flag.String("sizes", "100,200,400,1000", "comma-separated session sizes in turns")
	dir := flag.String("dir", "", "directory for captures and binaries (default: a new temporary one)")
	keep := flag.Bool("keep", false, "keep the temporary directory")
	commands := flag.Bool("commands", true, "run the commands (false: only build the captures)")
	realRun := flag.Bool("real", false, "record the sessions with the real Claude Code CLI instead of generating them")
	window := flag.Int("compact-window", 400000, "with -real: Claude Code's auto-compact window in sessions of 1,000 turns or more")
	recordTurns := flag.Int("record", 1000, "also drive 'tsinspect record --mode reverse' with a generated session of this many turns at -rate turns a second and print its memory and writer lag (0: skip)")
	rate := flag.Float64("rate", 10, "turns a second for -record")
	proxyN := flag.Int("proxy", 300, "also time this many requests direct and through 'tsinspect record --mode reverse', mitmdump (when on PATH) and a bare Go proxy, and print the added time to first byte (0: skip)")
	flag.Parse()
	var rec *recorder
	if *realRun {
		rec = &recorder{compactWindow: *window}
	}
	extra := extras{recordTurns: *recordTurns, rate: *rate, proxyRequests: *proxyN}
	if err := run(*sizes, *dir, *keep, *commands, rec, extra); err != nil {
		fmt.Fprintln(os.Stderr, "longsessions:", err)
		os.Exit(1)
	}
}

// sessionInfo is what is known of a generated capture; it is saved next to
// it.
type sessionInfo struct {
	Turns     int   `json:"turns"`
	Exchanges int   `json:"exchanges"`
	ReqBytes  int64 `json:"req_bytes"`
	RespBytes int64 `json:"resp_bytes"`
	Subagents int   `json:"subagents"`
	Compacted int   `json:"compactions"`
	// Restarts counts the main thread's restarts after a compaction, as
	// tsinspect's timeline sees them (recorded sessions only).
	Restarts   int   `json:"restarts,omitempty"`
	OpenBytes  int64 `json:"open_bytes"`  // file + WAL before the writer closed
	FileBytes  int64 `json:"file_bytes"`  // file after close
	WriteNanos int64 `json:"write_nanos"` // wall time of writing through the store
}

// measure is one command run.
type measure struct {
	cpu time.Duration
	rss int64 // bytes
	err error
}

// recorder records real sessions; nil means generate them.
type recorder struct {
	compactWindow int
	kit           *session.Kit
}

// extras are the measurements printed below the sessions' rows.
type extras struct {
	recordTurns int     // recording: turns driven through 'record' (0: none)
	rate        float64 // recording: turns a second
	// proxyRequests are timed through each proxy (0: none).
	proxyRequests int
}

func run(sizeList, dir string, keep, runCommands bool, rec *recorder, extra extras) error {
	var sizes []int
	for _, f := range strings.Split(sizeList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-sizes: bad size %q", f)
		}
		sizes = append(sizes, n)
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "longsessions")
		if err != nil {
			return err
		}
		if !keep {
			defer os.RemoveAll(d)
		}
		dir = d
	}
	bin := filepath.Join(dir, "tsinspect")
	if rec != nil {
		kit, err := session.NewKit(dir)
		if err != nil {
			return err
		}
		rec.kit, bin = kit, kit.Tsinspect
	} else if out, err := exec.Command("go", "build", "-o", bin, "./cmd/tsinspect").CombinedOutput(); err != nil {
		return fmt.Errorf("build tsinspect: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var base longsession.Base
	if rec == nil {
		if base, err = demoBase(); err != nil {
			return err
		}
	}
	commands := []struct {
		name string
		args []string
	}{
		{"turns", []string{"turns"}},
		{"searches", []string{"searches"}},
		{"report json", []string{"report", "--format", "json"}},
		{"report markdown", []string{"report", "--format", "markdown"}},
		{"report html", []string{"report", "--format", "html"}},
	}
	infos := map[int]sessionInfo{}
	results := map[int]map[string]measure{}
	for _, n := range sizes {
		path := filepath.Join(dir, fmt.Sprintf("session-%d.db", n))
		var info sessionInfo
		if rec != nil {
			path = filepath.Join(dir, fmt.Sprintf("real-%d.db", n))
			info, err = rec.ensure(path, n)
		} else {
			info, err = ensureSession(path, n, base)
		}
		if err != nil {
			return err
		}
		infos[n] = info
		results[n] = map[string]measure{}
		if !runCommands {
			continue
		}
		for _, c := range commands {
			args := append(append([]string{}, c.args...), path)
			results[n][c.name] = runMeasured(self, bin, args...)
		}
		results[n]["open"] = runMeasured(self, self, "-open-child", path)
	}
	if !runCommands {
		commands = nil
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "what\t"
	for _, n := range sizes {
		head += fmt.Sprintf("%d turns\t", n)
	}
	for i := 1; i < len(sizes); i++ {
		head += fmt.Sprintf("%d/%d\t", sizes[i], sizes[i-1])
	}
	fmt.Fprintln(w, head)
	row := func(name string, cell func(n int) (string, float64)) {
		line := name + "\t"
		var vals []float64
		for _, n := range sizes {
			s, v := cell(n)
			line += s + "\t"
			vals = append(vals, v)
		}
		for i := 1; i < len(vals); i++ {
			if vals[i-1] > 0 && vals[i] > 0 {
				line += fmt.Sprintf("%.2f×\t", vals[i]/vals[i-1])
			} else {
				line += "\t"
			}
		}
		fmt.Fprintln(w, line)
	}
	row("Messages turns", func(n int) (string, float64) { return strconv.Itoa(infos[n].Turns), float64(infos[n].Turns) })
	row("subagents, compactions", func(n int) (string, float64) {
		return fmt.Sprintf("%d, %d", infos[n].Subagents, infos[n].Compacted), 0
	})
	if rec != nil {
		row("main restarts seen", func(n int) (string, float64) { return strconv.Itoa(infos[n].Restarts), 0 })
	}
	row("exchanges", func(n int) (string, float64) { return strconv.Itoa(infos[n].Exchanges), float64(infos[n].Exchanges) })
	row("raw req+resp", func(n int) (string, float64) {
		v := infos[n].ReqBytes + infos[n].RespBytes
		return mb(v), float64(v)
	})
	if rec == nil {
		row("file+WAL while recording", func(n int) (string, float64) {
			i := infos[n]
			return fmt.Sprintf("%s (%.2f %%)", mb(i.OpenBytes), 100*float64(i.OpenBytes)/float64(i.ReqBytes+i.RespBytes)), float64(i.OpenBytes)
		})
	}
	row("file closed", func(n int) (string, float64) {
		i := infos[n]
		return fmt.Sprintf("%s (%.2f %%)", mb(i.FileBytes), 100*float64(i.FileBytes)/float64(i.ReqBytes+i.RespBytes)), float64(i.FileBytes)
	})
	writing := "writing (wall)"
	if rec != nil {
		writing = "recording with claude (wall)"
	}
	row(writing, func(n int) (string, float64) {
		d := time.Duration(infos[n].WriteNanos)
		return fmt.Sprintf("%.1f s", d.Seconds()), d.Seconds()
	})
	names := []string{}
	for _, c := range commands {
		names = append(names, c.name)
	}
	if runCommands {
		names = append(names, "open")
	}
	for _, name := range names {
		row(name+": CPU", func(n int) (string, float64) {
			m := results[n][name]
			if m.err != nil {
				return "error", 0
			}
			return fmt.Sprintf("%.2f s", m.cpu.Seconds()), m.cpu.Seconds()
		})
		row(name+": peak RSS", func(n int) (string, float64) {
			m := results[n][name]
			if m.err != nil {
				return "error", 0
			}
			return mb(m.rss), float64(m.rss)
		})
	}
	if extra.recordTurns > 0 {
		if err := recordRows(w, bin, dir, extra, len(sizes)); err != nil {
			return err
		}
	}
	if extra.proxyRequests > 0 {
		if err := proxyRows(w, self, bin, extra.proxyRequests, len(sizes)); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, n := range sizes {
		for name, m := range results[n] {
			if m.err != nil {
				fmt.Fprintf(os.Stderr, "%d turns, %s: %v\n", n, name, m.err)
			}
		}
	}
	return nil
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// runMeasured runs a command with its output discarded and returns its
// CPU time (user + system) and peak RSS. It starts the command through a
// child of its own (self -measure-child), which measures it and reports:
// Linux counts in a process's peak RSS the memory of the process that
// started it, shared until exec, and this one may have grown by building
// the sessions.
func runMeasured(self, name string, args ...string) measure {
	cmd := exec.Command(self, append([]string{"-measure-child", name}, args...)...)
	var out, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return measure{err: fmt.Errorf("measure %s: %w: %s", filepath.Base(name), err, stderr.String())}
	}
	var r measured
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
		return measure{err: fmt.Errorf("measure %s: %w", filepath.Base(name), err)}
	}
	if r.Err != "" {
		return measure{err: errors.New(r.Err)}
	}
	return measure{cpu: time.Duration(r.CPUNanos), rss: r.RSS}
}

// measured is what -measure-child reports on its standard output.
type measured struct {
	CPUNanos int64  `json:"cpu_nanos"`
	RSS      int64  `json:"rss"`
	Err      string `json:"err,omitempty"`
}

// measureChild runs args (a command and its arguments) and writes what
// measureDirect found as JSON to standard output.
func measureChild(args []string) error {
	if len(args) == 0 {
		return errors.New("-measure-child: no command")
	}
	m := measureDirect(args[0], args[1:]...)
	r := measured{CPUNanos: m.cpu.Nanoseconds(), RSS: m.rss}
	if m.err != nil {
		r.Err = m.err.Error()
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// measureDirect runs a command with its output discarded and returns its
// CPU time (user + system) and peak RSS, from getrusage.
func measureDirect(name string, args ...string) measure {
	u, err := rusage.Run(name, args, nil)
	return measure{cpu: u.CPU, rss: u.RSS, err: err}
}

// demoBase reads the real requests sessions are built on from the demo
// capture (internal/bench/recload).
func demoBase() (longsession.Base, error) { return recload.DemoBase(".") }

// ensureSession generates the session of n turns at path unless it is
// there already.
func ensureSession(path string, n int, base longsession.Base) (sessionInfo, error) {
	infoPath := path + ".json"
	if b, err := os.ReadFile(infoPath); err == nil {
		var info sessionInfo
		if err := json.Unmarshal(b, &info); err == nil {
			return info, nil
		}
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return sessionInfo{}, err
		}
	}
	db, err := store.Open(path)
	if err != nil {
		return sessionInfo{}, err
	}
	o := longsession.Options{Turns: n, Seed: 1}
	if n >= 1000 {
		o.CompactEvery = 350
	}
	start := time.Now()
	st, err := longsession.Generate(context.Background(), db, base, o)
	took := time.Since(start)
	if err != nil {
		db.Close()
		return sessionInfo{}, err
	}
	info := sessionInfo{Turns: st.Turns, Exchanges: st.Exchanges, ReqBytes: st.ReqBytes, RespBytes: st.RespBytes,
		Subagents: st.Subagents, Compacted: st.Compacted, OpenBytes: size(path) + size(path+"-wal"), WriteNanos: took.Nanoseconds()}
	if err := db.Close(); err != nil {
		return info, err
	}
	info.FileBytes = size(path) + size(path+"-wal")
	b, err := json.Marshal(info)
	if err != nil {
		return info, err
	}
	return info, os.WriteFile(infoPath, b, 0o600)
}

func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// openChild is 'tsinspect open' on a simulated 120×40 screen, ending as
// soon as the turn list is painted (the "loading" status gone).
func openChild(path string) error {
	// As the tsinspect command does (cmd/tsinspect main).
	memlimit.Start(memlimit.DefaultFloor)
	sim := ui.NewTextScreen()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ui.Open(ctx, path, ui.Options{Screen: sim, Title: filepath.Base(path)}) }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	seenLoading := false
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
		}
		screen := sim.Text()
		if screen == "" {
			continue
		}
		if strings.Contains(screen, "loading") {
			seenLoading = true
			continue
		}
		if strings.Contains(screen, "sonnet") || seenLoading && strings.Contains(screen, "1") {
			cancel()
			return <-done
		}
	}
}

// recordRows drives 'tsinspect record --mode reverse' with a generated
// session (internal/bench/recload) and writes its figures as rows of the table,
// each in the first size's column.
func recordRows(w io.Writer, bin, dir string, extra extras, columns int) error {
	base, err := demoBase()
	if err != nil {
		return err
	}
	rdir := filepath.Join(dir, "record")
	if err := os.MkdirAll(rdir, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(rdir)
	fmt.Fprintf(os.Stderr, "longsessions: recording %d turns at %.0f/s through the proxy...\n", extra.recordTurns, extra.rate)
	r, err := recload.Run(context.Background(), base, recload.Options{Bin: bin, Dir: rdir, Turns: extra.recordTurns, Rate: extra.rate, CompactEvery: 350})
	if err != nil {
		return err
	}
	pad := strings.Repeat("\t", columns+columns-1)
	line := func(name, value string) { fmt.Fprintf(w, "%s\t%s%s\n", name, value, pad) }
	what := fmt.Sprintf("record %d turns at %.0f/s", r.Turns, extra.rate)
	line(what+": kept up", fmt.Sprintf("%v (%d failed, %.2f/s)", r.KeptUp(), r.Failed, r.Rate))
	line(what+": request bodies", fmt.Sprintf("up to %s, %s late", mb(int64(r.MaxReqBytes)), mb(int64(r.LateReqBytes))))
	line(what+": peak RSS", mb(max(r.HWM, r.PeakRSS)))
	line(what+": writer lag p50/p99/max", fmt.Sprintf("%d/%d/%d ms", r.LagP50.Milliseconds(), r.LagP99.Milliseconds(), r.LagMax.Milliseconds()))
	line(what+": capture", fmt.Sprintf("%s (%.2f %%)", mb(r.CaptureBytes), 100*float64(r.CaptureBytes)/float64(max(r.RawBytes, 1))))
	return nil
}

// proxyRows times requests direct and through each proxy
// (internal/bench/overhead) and writes, per proxy, the time to first byte it adds
// and the most it delays an SSE event, as rows of the table.
func proxyRows(w io.Writer, self, bin string, n, columns int) error {
	mitm, _ := exec.LookPath("mitmdump")
	fmt.Fprintf(os.Stderr, "longsessions: timing %d requests through each proxy...\n", n)
	floor, relay := overhead.Yardsticks(self)
	r, err := overhead.Measure(context.Background(), overhead.Config{
		Tsinspect: bin, Mitmdump: mitm, Requests: n, MaxTime: 2 * time.Minute,
		Floor: floor, Relay: relay,
	})
	if err != nil {
		return err
	}
	sum := overhead.Summarise(r)
	pad := strings.Repeat("\t", columns+columns-1)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }
	for _, row := range sum.Rows {
		if row.Name == "direct" {
			fmt.Fprintf(w, "proxy: direct, TTFB p50\t%s (%d requests)%s\n", ms(row.P50), row.N, pad)
			continue
		}
		fmt.Fprintf(w, "proxy: %s, TTFB added p50 / worst SSE event added\t%s / %s%s\n", row.Name, ms(row.Added), ms(row.EventAdded), pad)
	}
	if sum.Ratio > 0 {
		fmt.Fprintf(w, "proxy: tsinspect's added p50 over mitmproxy's\t%.2f%s\n", sum.Ratio, pad)
	}
	for _, sk := range r.Skipped {
		fmt.Fprintf(w, "proxy: left out\t%s%s\n", sk, pad)
	}
	return nil
}
