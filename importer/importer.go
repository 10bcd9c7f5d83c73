// Package importer brings traffic recorded by other tools into a capture:
// packet captures (pcap, pcapng; TLS decrypted with a key log) through the
// pcap subpackage, HAR 1.2 files through the har subpackage, and the logs
// of tools that keep parsed exchanges (claude-trace, Claude Code's
// raw-bodies directories...) through a subpackage each. The format is told
// from the file's content. Imported exchanges are ordinary exchanges: they
// decode and are flagged like recorded ones, with Source "import:FORMAT".
package importer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/importer/pcap"
	"github.com/tsinspect/tsinspect/importer/rawbodies"
	"github.com/tsinspect/tsinspect/importer/recon"
	"github.com/tsinspect/tsinspect/importer/tlsrec"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// Formats Detect can return.
const (
	FormatPcap   = pcap.FormatPcap
	FormatPcapNG = pcap.FormatPcapNG
	FormatHAR    = "har"
	// FormatClaudeTrace is claude-trace's JSON Lines log.
	FormatClaudeTrace = "claude-trace"
	// FormatRawBodies is the directory Claude Code writes with
	// OTEL_LOG_RAW_API_BODIES=file:DIR.
	FormatRawBodies = "raw-bodies"
	// FormatMitmproxy is mitmproxy's flow dump (tnetstrings).
	FormatMitmproxy = "mitmproxy"
	// FormatVCR is a VCR cassette: vcrpy, Ruby VCR or go-vcr.
	FormatVCR = "vcr"
	// FormatClaudeTap is claude-tap's JSON Lines trace.
	FormatClaudeTap = "claude-tap"
	// FormatSessionFile is a Claude Code session file with its request
	// records (2.1.300 and later), and its subagents' files.
	FormatSessionFile = "claude-code-session"
)

// Formats lists, for messages, what Import reads.
const Formats = "pcap, pcapng, HAR, claude-trace logs, claude-tap traces, mitmproxy flow dumps, VCR cassettes (vcrpy, Ruby VCR, go-vcr formats 1 and 2) and Claude Code raw-bodies directories"

// ErrUnknownFormat is returned for a file of a format Import does not read;
// the error wrapping it says what the file looks like.
var ErrUnknownFormat = errors.New("unknown format")

// Sink receives imported exchanges; store.DB implements it. Insert must
// not keep ex.
type Sink interface {
	Insert(ctx context.Context, ex *exchange.Exchange) error
}

// Holder is a Sink that can tell which exchanges it already holds, as
// store.DB does: Import then inserts only the exchanges it did not hold
// before the import began, and counts the others in Report.Present, so
// that importing a file twice into one capture adds nothing the second
// time. Each exchange held stands for one imported exchange only: a file
// that holds the same exchange twice (a request repeated at the same
// instant, or a format without times) adds the copies the capture lacks.
type Holder interface {
	Sink
	// LastID is the ID of the newest exchange held, 0 for none.
	LastID(ctx context.Context) (int64, error)
	// Matching returns, in order, the IDs up to upTo of the exchanges
	// held that ex duplicates.
	Matching(ctx context.Context, ex *exchange.Exchange, upTo int64) ([]int64, error)
}

// Options tune Import.
type Options struct {
	// KeyLog is the path of an NSS key log to decrypt TLS with ("" for
	// none besides the secrets a pcapng may hold).
	KeyLog string
	// Progress, when not nil, gets a progress bar for files of at least
	// ProgressMin bytes (default 4 MiB).
	Progress    io.Writer
	ProgressMin int64
}

// Skip counts things that could not be imported, for one reason.
type Skip struct {
	What  string
	Count int
	// Error is set when data was lost (damage, missing or wrong keys,
	// unreadable entries) rather than being merely not HTTP.
	Error bool
}

// Report says what an import did.
type Report struct {
	Format   string
	Imported int
	// Present counts the exchanges of the file that the capture held
	// already (see Holder), which were not imported again.
	Present int
	// Incomplete counts the imported exchanges whose response did not
	// end (cut off, or not in the file).
	Incomplete int
	// Damage, when not empty, says where the file stopped being readable.
	Damage  string
	Skipped []Skip
	// Decrypted counts decrypted TLS connections by cipher suite.
	Decrypted map[string]int
	// KeyLogBadLines counts key log lines that could not be used.
	KeyLogBadLines int
	// Limits says what the format lacks compared with a live recording
	// (no SSE timing, re-serialised bodies...); empty when nothing.
	Limits []string
	// Redacted counts credentials found in bodies and replaced by their
	// fingerprints.
	Redacted int
}

// Problem returns a one-line account of what was lost, or "" when the
// import lost nothing it should have read.
func (r *Report) Problem() string {
	var parts []string
	if r.Damage != "" {
		parts = append(parts, r.Damage)
	}
	for _, s := range r.Skipped {
		if s.Error {
			parts = append(parts, counted(s.Count, s.What))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ")
}

// Notes returns a one-line account of what was skipped without loss (such
// as connections that are not HTTP), or "".
func (r *Report) Notes() string {
	var parts []string
	for _, s := range r.Skipped {
		if !s.Error {
			parts = append(parts, counted(s.Count, s.What))
		}
	}
	return strings.Join(parts, "; ")
}

// pluralNoun is the first plural noun of a skip's description.
var pluralNoun = regexp.MustCompile(`\b(connections|packets|entries|flows|lines|interactions)\b`)

// counted puts a count before a description written in the plural,
// making its noun singular for one.
func counted(n int, what string) string {
	if n == 1 {
		done := false
		what = pluralNoun.ReplaceAllStringFunc(what, func(w string) string {
			if done {
				return w
			}
			done = true
			if w == "entries" {
				return "entry"
			}
			return strings.TrimSuffix(w, "s")
		})
	}
	return fmt.Sprintf("%d %s", n, what)
}

// headSize is how much of a file Detect is given.
const headSize = 64 << 10

// Import reads the file (or raw-bodies directory) at path and inserts its
// exchanges, oldest first, into the sink that open returns; open is called
// only once there is an exchange to insert, so that a file that gives
// nothing leaves no empty capture behind. Import returns an error when the
// file cannot be imported at all; when only part of it could be, the
// Report's Problem says what was lost.
func Import(ctx context.Context, path string, open func() (Sink, error), opts Options) (*Report, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if st.IsDir() {
		if opts.KeyLog != "" {
			return nil, errors.New("import: --keylog applies to packet captures, not to a directory")
		}
		if !rawbodies.Looks(path) {
			return nil, fmt.Errorf("import: %s is a directory: %w", filepath.Base(path), rawbodies.ErrNotRawBodies)
		}
		return importRawBodies(ctx, path, open)
	}
	if err := checkInput(path); err != nil {
		return nil, err
	}
	if sessionfiles.Sniff(path) {
		if opts.KeyLog != "" {
			return nil, errors.New("import: --keylog applies to packet captures, not to a Claude Code session")
		}
		return importSession(ctx, path, open)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	defer f.Close()
	head := make([]byte, headSize)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	format := Detect(head, path)
	if format == "" {
		return nil, fmt.Errorf("import: %s: %w: %s", filepath.Base(path), ErrUnknownFormat, describe(head, path))
	}
	var keys *tlsrec.KeyLog
	rep := &Report{Format: format}
	if opts.KeyLog != "" {
		if format != FormatPcap && format != FormatPcapNG {
			return nil, fmt.Errorf("import: --keylog applies to packet captures, not to a %s file", format)
		}
		kf, err := os.Open(opts.KeyLog)
		if err != nil {
			return nil, fmt.Errorf("import: key log: %w", err)
		}
		keys, err = tlsrec.ParseKeyLog(kf)
		kf.Close()
		if err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		bad, first := keys.BadLines()
		rep.KeyLogBadLines = bad
		if keys.Sessions() == 0 {
			if bad > 0 {
				return nil, fmt.Errorf("import: key log %s holds no usable secrets (%s)", filepath.Base(opts.KeyLog), first)
			}
			return nil, fmt.Errorf("import: key log %s holds no secrets", filepath.Base(opts.KeyLog))
		}
	}
	bar := newBar(opts.Progress, st.Size(), opts.ProgressMin, filepath.Base(path))
	defer bar.finish()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	body := bufio.NewReaderSize(&progressReader{r: f, bar: bar}, 1<<16)

	exs, err := formatNamed(format).read(input{body: body, f: f, size: st.Size(), modTime: st.ModTime(), keys: keys, bar: bar}, rep)
	if err != nil {
		return nil, fmt.Errorf("import: %s: %w", filepath.Base(path), err)
	}
	return rep, insertAll(ctx, exs, open, rep)
}

// addRecon takes what an importer of the recon family read into the
// report and returns its exchanges.
func (r *Report) addRecon(res *recon.Result, source, what string) []exchange.Exchange {
	r.Damage = res.Damage
	r.Limits = exchange.Limits(source)
	if res.Invalid > 0 {
		r.Skipped = append(r.Skipped, Skip{What: what + " that could not be read (first: " + res.FirstInvalid + ")", Count: res.Invalid, Error: true})
	}
	return res.Exchanges
}

// importSession imports a Claude Code session from its own files: each
// request rebuilt, with its answer.
func importSession(ctx context.Context, path string, open func() (Sink, error)) (*Report, error) {
	s, err := sessionfiles.Open(path)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	rep := &Report{Format: FormatSessionFile, Limits: exchange.Limits(exchange.SourceSessionFile)}
	if !s.Requests {
		rep.Limits = exchange.Limits(exchange.SourceTranscript)
	}
	// The last request of a file with no answer yet may be answered
	// still (the session is running): it is left for a later import,
	// which would otherwise find it answered beside a failed copy of it.
	s.Live = true
	waiting := 0
	var exs []exchange.Exchange
	if err := s.Stream(ctx, func(ex *exchange.Exchange) error {
		if ex.State == exchange.StateInFlight {
			waiting++
			return nil
		}
		// The bodies are the stream's only until this returns.
		c := *ex
		c.ReqBody, c.RespBody, c.ReqRef = bytes.Clone(ex.ReqBody), bytes.Clone(ex.RespBody), exchange.BodyRef{}
		exs = append(exs, c)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	var problems []string
	for _, p := range s.Problems {
		problems = append(problems, p.String())
	}
	if u := sessionfiles.UnknownSummary(s.Unknown, s.Version); u != "" {
		problems = append(problems, u)
	}
	if len(problems) > 0 {
		rep.Damage = strings.Join(problems, "; ")
	}
	for _, ex := range exs {
		if ex.State != exchange.StateComplete {
			rep.Incomplete++
		}
	}
	if waiting > 0 {
		rep.Skipped = append(rep.Skipped, Skip{What: "requests with no answer written yet, the last of their file (if the session still runs, import it again when it ends)", Count: waiting})
	}
	return rep, insertAll(ctx, exs, open, rep)
}

// importRawBodies imports a Claude Code raw-bodies directory.
func importRawBodies(ctx context.Context, path string, open func() (Sink, error)) (*Report, error) {
	d := rawbodies.Open(path, rawbodies.Options{})
	cs, err := d.Scan(true)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	rep := &Report{Format: FormatRawBodies, Limits: exchange.Limits(exchange.SourceRawBodies), Redacted: d.Redacted}
	if d.BadLines > 0 {
		rep.Skipped = append(rep.Skipped, Skip{What: "index entries or body files that could not be read (first: " + d.FirstBad + ")", Count: d.BadLines, Error: true})
	}
	exs := make([]exchange.Exchange, len(cs))
	for i, c := range cs {
		exs[i] = c.Exchange
	}
	return rep, insertAll(ctx, exs, open, rep)
}

// insertAll sorts exs by start and inserts them into the sink open gives.
func insertAll(ctx context.Context, exs []exchange.Exchange, open func() (Sink, error), rep *Report) error {
	sort.SliceStable(exs, func(i, j int) bool { return exs[i].Start.Before(exs[j].Start) })
	if len(exs) == 0 {
		return nil
	}
	sink, err := open()
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	present, err := presence(ctx, sink)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	for i := range exs {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		held, err := present(&exs[i])
		if err != nil {
			return fmt.Errorf("import: after %d of %d exchanges: %w", rep.Imported+rep.Present, len(exs), err)
		}
		if held {
			rep.Present++
			continue
		}
		if err := sink.Insert(ctx, &exs[i]); err != nil {
			return fmt.Errorf("import: after %d of %d exchanges: %w", rep.Imported, len(exs), err)
		}
		rep.Imported++
		if exs[i].State != exchange.StateComplete {
			rep.Incomplete++
		}
	}
	return nil
}

// presence returns the test of whether the sink held an exchange before
// the import began, each exchange held answering for one imported
// exchange; for a sink that is not a Holder, or holds nothing, nothing is
// held.
func presence(ctx context.Context, sink Sink) (func(*exchange.Exchange) (bool, error), error) {
	none := func(*exchange.Exchange) (bool, error) { return false, nil }
	h, ok := sink.(Holder)
	if !ok {
		return none, nil
	}
	upTo, err := h.LastID(ctx)
	if err != nil || upTo == 0 {
		return none, err
	}
	used := map[int64]bool{}
	return func(ex *exchange.Exchange) (bool, error) {
		ids, err := h.Matching(ctx, ex, upTo)
		if err != nil {
			return false, err
		}
		for _, id := range ids {
			if !used[id] {
				used[id] = true
				return true, nil
			}
		}
		return false, nil
	}, nil
}

// progressReader reports how far into the file reading has got.
type progressReader struct {
	r   io.Reader
	bar *bar
	n   int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	p.bar.update(p.n)
	return n, err
}

// checkInput refuses, before opening it, an input that is not a regular
// file: opening a named pipe would wait for a writer forever, and a pipe
// or device cannot be read at random places as a capture needs.
func checkInput(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	m := st.Mode()
	switch {
	case m.IsDir():
		return fmt.Errorf("import: %s is a directory", path)
	case m&os.ModeNamedPipe != 0:
		return fmt.Errorf("import: %s is a pipe: import reads a file it can seek in; save the stream to a file first", path)
	case m&os.ModeSocket != 0:
		return fmt.Errorf("import: %s is a socket, not a file", path)
	case m&(os.ModeDevice|os.ModeCharDevice) != 0:
		return fmt.Errorf("import: %s is a device, not a file: save the capture to a file first", path)
	case !m.IsRegular():
		return fmt.Errorf("import: %s is not a regular file", path)
	}
	return nil
}
