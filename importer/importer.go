// Package importer brings traffic recorded by other tools into a capture:
// packet captures (pcap, pcapng; TLS decrypted with a key log) through the
// pcap subpackage, and HAR 1.2 files through the har subpackage. The format
// is told from the file's content. Imported exchanges are ordinary
// exchanges: they decode and are flagged like recorded ones, with Source
// "import:pcap" or "import:har".
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
	"github.com/tsinspect/tsinspect/importer/har"
	"github.com/tsinspect/tsinspect/importer/pcap"
	"github.com/tsinspect/tsinspect/importer/tlsrec"
)

// Formats Detect can return.
const (
	FormatPcap   = pcap.FormatPcap
	FormatPcapNG = pcap.FormatPcapNG
	FormatHAR    = "har"
)

// ErrUnknownFormat is returned for a file that is neither a packet capture
// nor a HAR.
var ErrUnknownFormat = errors.New("unknown format: want a pcap, pcapng or HAR file")

// Sink receives imported exchanges; store.DB implements it. Insert must
// not keep ex.
type Sink interface {
	Insert(ctx context.Context, ex *exchange.Exchange) error
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
var pluralNoun = regexp.MustCompile(`\b(connections|packets|entries)\b`)

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

// Detect tells a file's format from its first bytes, falling back to its
// name's extension; it returns "" when neither tells.
func Detect(head []byte, name string) string {
	if f := pcap.Detect(head); f != "" {
		return f
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return FormatHAR
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".har":
		return FormatHAR
	case ".pcap", ".cap", ".dmp":
		return FormatPcap
	case ".pcapng", ".ntar":
		return FormatPcapNG
	}
	return ""
}

// Import reads the file at path and inserts its exchanges, oldest first,
// into the sink that open returns; open is called only once there is an
// exchange to insert, so that a file that gives nothing leaves no empty
// capture behind. Import returns an error when the file cannot be imported
// at all; when only part of it could be, the Report's Problem says what
// was lost.
func Import(ctx context.Context, path string, open func() (Sink, error), opts Options) (*Report, error) {
	if err := checkInput(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("import: %s is a directory", path)
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	format := Detect(head[:n], path)
	if format == "" {
		return nil, fmt.Errorf("import: %s: %w", filepath.Base(path), ErrUnknownFormat)
	}
	var keys *tlsrec.KeyLog
	rep := &Report{Format: format}
	if opts.KeyLog != "" {
		if format == FormatHAR {
			return nil, errors.New("import: --keylog applies to packet captures, not to a HAR")
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

	var exs []exchange.Exchange
	switch format {
	case FormatHAR:
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		res, err := har.Read(bufio.NewReaderSize(&progressReader{r: f, bar: bar}, 1<<16))
		if err != nil {
			return nil, fmt.Errorf("import: %s: %w", filepath.Base(path), err)
		}
		exs = res.Exchanges
		rep.Damage = res.Damage
		if res.Invalid > 0 {
			rep.Skipped = append(rep.Skipped, Skip{What: "HAR entries that could not be read (first: " + res.FirstInvalid + ")", Count: res.Invalid, Error: true})
		}
	default:
		res, err := pcap.Read(f, st.Size(), pcap.Options{KeyLog: keys, Progress: bar.update})
		if err != nil {
			return nil, fmt.Errorf("import: %s: %w", filepath.Base(path), err)
		}
		exs = res.Exchanges
		rep.Format = res.Format
		rep.Damage = res.Damage
		rep.Decrypted = res.Suites
		for _, s := range res.Skipped {
			rep.Skipped = append(rep.Skipped, Skip(s))
		}
	}
	sort.SliceStable(exs, func(i, j int) bool { return exs[i].Start.Before(exs[j].Start) })
	if len(exs) == 0 {
		return rep, nil
	}
	sink, err := open()
	if err != nil {
		return rep, fmt.Errorf("import: %w", err)
	}
	for i := range exs {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("import: %w", err)
		}
		if err := sink.Insert(ctx, &exs[i]); err != nil {
			return rep, fmt.Errorf("import: after %d of %d exchanges: %w", rep.Imported, len(exs), err)
		}
		rep.Imported++
		if exs[i].State != exchange.StateComplete {
			rep.Incomplete++
		}
	}
	return rep, nil
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
		return fmt.Errorf("import: %s is a pipe: import reads a file it can seek in (pcap, pcapng or HAR); save the stream to a file first", path)
	case m&os.ModeSocket != 0:
		return fmt.Errorf("import: %s is a socket, not a file", path)
	case m&(os.ModeDevice|os.ModeCharDevice) != 0:
		return fmt.Errorf("import: %s is a device, not a file: save the capture to a file first", path)
	case !m.IsRegular():
		return fmt.Errorf("import: %s is not a regular file", path)
	}
	return nil
}
