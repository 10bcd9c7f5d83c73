package importer

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/tsinspect/tsinspect/importer/rawbodies"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// describe says, in one phrase, what a file of no known format looks like
// and what to do with it.
func describe(head []byte, name string) string {
	want := "tsinspect import reads " + Formats
	has := func(s string) bool { return bytes.Contains(head, []byte(s)) }
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	printed := sessionfiles.PrintedSession(head)
	switch {
	case len(head) == 0:
		return "the file is empty"
	case bytes.HasPrefix(head, []byte("\x1f\x8b")):
		return "it is gzip-compressed: decompress it (gunzip) and import the result"
	case bytes.HasPrefix(head, []byte("\x28\xb5\x2f\xfd")):
		return "it is zstd-compressed: decompress it (unzstd) and import the result"
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return "it is a zip archive: unpack it and import the capture inside"
	case bytes.HasPrefix(head, []byte("SQLite format 3\x00")):
		return "it is an SQLite database; if it is a tsinspect capture, open it with 'tsinspect open', nothing to import"
	case has(`"request_file"`) && has(`"response_file"`):
		return "it looks like the index.jsonl of a Claude Code raw-bodies directory: import the directory that holds it"
	case has(`"parentUuid"`) || (has(`"sessionId"`) && has(`"type":"user"`)):
		return "it looks like a Claude Code session transcript (~/.claude/projects) but not one tsinspect reads: its first record has no session ID; a session file opens as it is ('tsinspect open FILE.jsonl')"
	case printed != "":
		return sessionfiles.PrintedHint(printed)
	case len(trimmed) > 0 && trimmed[0] == '{':
		return "it is JSON, but neither a HAR (no \"log\" object) nor a log of a tool tsinspect knows; " + want
	case len(trimmed) > 0 && trimmed[0] == '[':
		return "it is a JSON array, which none of the formats tsinspect reads is; " + want
	case isText(head[:utf8Prefix(head)]):
		first, _, _ := strings.Cut(string(trimmed), "\n")
		if len(first) > 40 {
			first = first[:40] + "..."
		}
		return fmt.Sprintf("it is text starting %q, of no format tsinspect knows (%s); %s", first, extOf(name), want)
	}
	return fmt.Sprintf("it is binary data of no format tsinspect knows (starts % x); %s", head[:min(len(head), 8)], want)
}

// isText reports whether b is UTF-8 without control characters other than
// tab, CR and LF.
func isText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return false
		}
	}
	return true
}

// utf8Prefix returns how much of b to check for UTF-8: all but a rune that
// may be cut at its end.
func utf8Prefix(b []byte) int {
	n := len(b)
	for i := 0; i < utf8.UTFMax && n > 0 && !utf8.RuneStart(b[n-1]); i++ {
		n--
	}
	if n > 0 && !utf8.FullRune(b[n-1:]) {
		n--
	}
	return n
}

func extOf(name string) string {
	if e := filepath.Ext(name); e != "" {
		return "a " + e + " file"
	}
	return "no extension"
}

// Importable names, for a message, the format of the file or directory at
// path when it is one Import reads ("a HAR file", "a pcapng capture", "a
// Claude Code raw-bodies directory", ...), from its content as Import
// tells it; "" when it is not, or cannot be read.
func Importable(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if st.IsDir() {
		if rawbodies.Looks(path) {
			return "a Claude Code raw-bodies directory"
		}
		return ""
	}
	if !st.Mode().IsRegular() {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, headSize)
	n, _ := io.ReadFull(f, head)
	if f := formatNamed(Detect(head[:n], path)); f != nil {
		return f.called
	}
	return ""
}
