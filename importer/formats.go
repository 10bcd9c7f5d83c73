package importer

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/importer/claudetap"
	"github.com/tsinspect/tsinspect/importer/claudetrace"
	"github.com/tsinspect/tsinspect/importer/har"
	"github.com/tsinspect/tsinspect/importer/mitmflow"
	"github.com/tsinspect/tsinspect/importer/pcap"
	"github.com/tsinspect/tsinspect/importer/tlsrec"
	"github.com/tsinspect/tsinspect/importer/vcr"
)

// format is one file format Import reads, a row of the table Detect,
// Import and Describe walk (the formats of files; a raw-bodies directory
// and Claude Code's session files are told apart before): how its content
// is told, the names that tell it when the content does not, what a file
// of it is called, and how it is read.
type format struct {
	name string
	// called is what a file of the format is ("a HAR file").
	called string
	// looks tells the format from the file's first bytes; nil: by name
	// only.
	looks func(h sniffed) bool
	// exts are the name's extensions that tell the format when the
	// content does not; jsonExts says they tell it for JSON content too
	// (else only for content that is not JSON).
	exts     []string
	jsonExts bool
	// read reads the file into exchanges, with what it lost in rep.
	read func(in input, rep *Report) ([]exchange.Exchange, error)
}

// sniffed is the start of a file as the formats' looks see it.
type sniffed struct {
	// head is the first bytes; trimmed the same without a byte-order mark
	// and leading blanks; line its first line; json that it starts as a
	// JSON object.
	head, trimmed, line []byte
	json                bool
}

// input is what a format's read reads.
type input struct {
	// body reads the file from its start, drawing the progress bar; f is
	// the file itself (pcap reads it at offsets), of size and modTime.
	body    io.Reader
	f       *os.File
	size    int64
	modTime time.Time
	keys    *tlsrec.KeyLog
	bar     *bar
}

// formats is the table of file formats, in the order their content is
// tested.
func formats() []format {
	return []format{
		{name: FormatPcap, called: "a pcap capture", looks: func(h sniffed) bool { return pcap.Detect(h.head) == FormatPcap },
			exts: []string{".pcap", ".cap", ".dmp"}, read: readPcap},
		{name: FormatPcapNG, called: "a pcapng capture", looks: func(h sniffed) bool { return pcap.Detect(h.head) == FormatPcapNG },
			exts: []string{".pcapng", ".ntar"}, read: readPcap},
		{name: FormatMitmproxy, called: "a mitmproxy flow dump", looks: func(h sniffed) bool { return mitmflow.Looks(h.head) },
			exts: []string{".flow", ".flows", ".mitm", ".mitmdump"}, read: readMitmproxy},
		{name: FormatClaudeTrace, called: "a claude-trace log", looks: func(h sniffed) bool {
			return h.json && (bytes.HasPrefix(h.line, []byte(`{"request":{`)) && (bytes.Contains(h.line, []byte(`"logged_at"`)) || bytes.Contains(h.line[:min(len(h.line), 200)], []byte(`"url"`))) ||
				claudetrace.Looks(h.line))
		}, read: func(in input, rep *Report) ([]exchange.Exchange, error) {
			res, err := claudetrace.Read(in.body)
			if err != nil {
				return nil, err
			}
			return rep.addRecon(res, exchange.SourceClaudeTrace, "claude-trace lines"), nil
		}},
		{name: FormatClaudeTap, called: "a claude-tap trace", looks: func(h sniffed) bool { return h.json && claudetap.Looks(h.line) },
			read: func(in input, rep *Report) ([]exchange.Exchange, error) {
				res, err := claudetap.Read(in.body)
				if err != nil {
					return nil, err
				}
				return rep.addRecon(res, exchange.SourceClaudeTap, "claude-tap lines"), nil
			}},
		{name: FormatVCR, called: "a VCR cassette", looks: func(h sniffed) bool {
			if h.json {
				return bytes.Contains(h.line[:min(len(h.line), 2048)], []byte(`"http_interactions"`))
			}
			return vcr.Looks(h.head)
		}, exts: []string{".yaml", ".yml"}, read: func(in input, rep *Report) ([]exchange.Exchange, error) {
			res, err := vcr.Read(in.body, in.modTime)
			if err != nil {
				return nil, err
			}
			rep.Format = res.Flavor
			return rep.addRecon(&res.Result, exchange.SourceVCR, "interactions"), nil
		}},
		// Also indented, as browsers and 'tsinspect export' write it.
		{name: FormatHAR, called: "a HAR file", looks: func(h sniffed) bool {
			return h.json && bytes.Contains(h.trimmed[:min(len(h.trimmed), 2048)], []byte(`"log"`))
		}, exts: []string{".har"}, jsonExts: true, read: readHAR},
	}
}

// formatNamed is the row of the format called name, nil for none.
func formatNamed(name string) *format {
	for _, f := range formats() {
		if f.name == name {
			return &f
		}
	}
	return nil
}

// Detect tells a file's format from its first bytes (up to 64 KiB),
// falling back to its name's extension; it returns "" when neither tells.
func Detect(head []byte, name string) string {
	h := sniffed{head: head, trimmed: bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")}
	h.json = len(h.trimmed) > 0 && h.trimmed[0] == '{'
	h.line = h.trimmed
	if i := bytes.IndexByte(h.line, '\n'); i >= 0 {
		h.line = h.line[:i]
	}
	fs := formats()
	for _, f := range fs {
		if f.looks != nil && f.looks(h) {
			return f.name
		}
	}
	ext := strings.ToLower(filepath.Ext(name))
	for _, f := range fs {
		if slices.Contains(f.exts, ext) && (!h.json || f.jsonExts) {
			return f.name
		}
	}
	return ""
}

// readPcap reads a pcap or pcapng file, decrypting TLS with the key log.
func readPcap(in input, rep *Report) ([]exchange.Exchange, error) {
	res, err := pcap.Read(in.f, in.size, pcap.Options{KeyLog: in.keys, Progress: in.bar.update})
	if err != nil {
		return nil, err
	}
	rep.Format = res.Format
	rep.Damage = res.Damage
	rep.Decrypted = res.Suites
	for _, s := range res.Skipped {
		rep.Skipped = append(rep.Skipped, Skip(s))
	}
	return res.Exchanges, nil
}

// readHAR reads a HAR 1.2 file.
func readHAR(in input, rep *Report) ([]exchange.Exchange, error) {
	res, err := har.Read(in.body)
	if err != nil {
		return nil, err
	}
	rep.Damage = res.Damage
	if res.Invalid > 0 {
		rep.Skipped = append(rep.Skipped, Skip{What: "HAR entries that could not be read (first: " + res.FirstInvalid + ")", Count: res.Invalid, Error: true})
	}
	return res.Exchanges, nil
}

// readMitmproxy reads a mitmproxy flow dump.
func readMitmproxy(in input, rep *Report) ([]exchange.Exchange, error) {
	res, err := mitmflow.Read(in.body)
	if err != nil {
		return nil, err
	}
	exs := rep.addRecon(&res.Result, exchange.SourceMitmproxy, "flows")
	if res.NonHTTP > 0 {
		rep.Skipped = append(rep.Skipped, Skip{What: "flows that are not HTTP (tcp, udp, dns)", Count: res.NonHTTP})
	}
	if res.Newer > 0 {
		rep.Limits = append(rep.Limits, fmt.Sprintf("%d flows of a format newer than mitmproxy 12's (version %d) read as that", res.Newer, mitmflow.NewestVersion))
	}
	return exs, nil
}
