// Package tile makes Claude Code session files of any length from a real
// one, for benchmarks that need no Claude Code: the records of a source
// session are repeated, each copy with its own UUIDs, message, request and
// tool-use IDs and later timestamps, its first record chained to the
// copy before (a session that starts at a compaction boundary then
// compacts once per copy, as a long real session does), until the file
// holds the number of requests asked for. Records keep their shapes and
// sizes: the progress, hook and attachment records in the chain, parallel
// results, tool_reference results, usage.
package tile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"time"
)

// RealResultBytes is a tool result's size in a real working session, what
// the benchmarks pad the public sessions' scrubbed results to.
const RealResultBytes = 4000

// Options say what to make.
type Options struct {
	// Requests is how many distinct requests (answers) the file holds;
	// the last copy is cut after the record that reaches it.
	Requests int
	// SessionID replaces the source's session ID ("" keeps it), so copies
	// of one source are distinct sessions.
	SessionID string
	// Salt makes the IDs of this file differ from those of another file
	// made from the same source (0 and 1 give different IDs).
	Salt int
	// ResultBytes, when > 0, pads every tool result's text to at least
	// that many bytes (public sessions' texts are scrubbed short;
	// RealResultBytes is a real session's size).
	ResultBytes int
}

var (
	uuidRE  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	idRE    = regexp.MustCompile(`"((?:msg|req|toolu|srvtoolu)_[A-Za-z0-9_]+)"`)
	timeRE  = regexp.MustCompile(`"timestamp":"([0-9T:.\-]+Z)"`)
	reqIDRE = regexp.MustCompile(`"requestId":"([^"]+)"`)
)

// Session returns a session file of o.Requests requests made from the
// session file src; an error when src holds no request to repeat.
func Session(src []byte, o Options) ([]byte, error) {
	lines := bytes.Split(bytes.TrimSpace(src), []byte("\n"))
	var first, last time.Time
	perCopy := map[string]bool{}
	origSession := ""
	for _, l := range lines {
		if m := timeRE.FindSubmatch(l); m != nil {
			if t, err := time.Parse(time.RFC3339Nano, string(m[1])); err == nil {
				if first.IsZero() || t.Before(first) {
					first = t
				}
				if t.After(last) {
					last = t
				}
			}
		}
		if m := reqIDRE.FindSubmatch(l); m != nil {
			perCopy[string(m[1])] = true
		}
		if origSession == "" {
			var r struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(l, &r) == nil {
				origSession = r.SessionID
			}
		}
	}
	if len(perCopy) == 0 {
		return nil, fmt.Errorf("tile: the source holds no request with a requestId")
	}
	span := last.Sub(first) + time.Minute
	var out bytes.Buffer
	seen := map[string]bool{}
	prevLast := "" // the last chain record's uuid of the copy before
	for c := 0; len(seen) < o.Requests; c++ {
		shift := time.Duration(c) * span
		tag := fmt.Sprintf("%04x%04x", o.Salt&0xffff, c&0xffff)
		lastUUID := ""
		for i, l := range lines {
			if len(seen) >= o.Requests {
				break
			}
			l = uuidRE.ReplaceAllFunc(l, func(u []byte) []byte {
				if origSession != "" && string(u) == origSession {
					return u
				}
				return append(append([]byte{}, u[:24]...), tag...)
			})
			l = idRE.ReplaceAllFunc(l, func(m []byte) []byte {
				return []byte(fmt.Sprintf(`%s_t%s"`, m[:len(m)-1], tag))
			})
			if c > 0 {
				l = timeRE.ReplaceAllFunc(l, func(m []byte) []byte {
					s := timeRE.FindSubmatch(m)
					t, err := time.Parse(time.RFC3339Nano, string(s[1]))
					if err != nil {
						return m
					}
					return []byte(`"timestamp":"` + t.Add(shift).UTC().Format("2006-01-02T15:04:05.000Z") + `"`)
				})
			}
			if o.SessionID != "" && origSession != "" {
				l = bytes.ReplaceAll(l, []byte(origSession), []byte(o.SessionID))
			}
			var r map[string]json.RawMessage
			if err := json.Unmarshal(l, &r); err != nil {
				continue
			}
			changed := false
			if c > 0 && i == firstChain(lines) && prevLast != "" {
				// Chain this copy to the one before: a first record with
				// no parent continues from the copy's last.
				if string(r["parentUuid"]) == "null" {
					if _, ok := r["logicalParentUuid"]; ok {
						r["logicalParentUuid"] = json.RawMessage(`"` + prevLast + `"`)
					} else {
						r["parentUuid"] = json.RawMessage(`"` + prevLast + `"`)
					}
					changed = true
				}
			}
			if o.ResultBytes > 0 {
				if pad(r, o.ResultBytes) {
					changed = true
				}
			}
			if changed {
				b, err := json.Marshal(r)
				if err != nil {
					return nil, fmt.Errorf("tile: %w", err)
				}
				l = b
			}
			if u, ok := r["uuid"]; ok {
				var s string
				if json.Unmarshal(u, &s) == nil && s != "" && !sidechain(r) {
					lastUUID = s
				}
			}
			if m := reqIDRE.FindSubmatch(l); m != nil {
				seen[string(m[1])] = true
			}
			out.Write(l)
			out.WriteByte('\n')
		}
		prevLast = lastUUID
	}
	return out.Bytes(), nil
}

// firstChain is the index of the first line with a uuid.
func firstChain(lines [][]byte) int {
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"uuid":`)) {
			return i
		}
	}
	return -1
}

func sidechain(r map[string]json.RawMessage) bool {
	return string(r["isSidechain"]) == "true"
}

// pad lengthens the text of the tool results of a user record to at least
// n bytes; it reports whether it changed anything.
func pad(r map[string]json.RawMessage, n int) bool {
	raw, ok := r["message"]
	if !ok || !bytes.Contains(raw, []byte(`"tool_result"`)) {
		return false
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(raw, &msg) != nil {
		return false
	}
	var blocks []map[string]json.RawMessage
	if json.Unmarshal(msg["content"], &blocks) != nil {
		return false
	}
	changed := false
	for _, b := range blocks {
		if string(b["type"]) != `"tool_result"` {
			continue
		}
		var text string
		if json.Unmarshal(b["content"], &text) != nil || len(text) >= n {
			continue
		}
		text += "\n" + filler(n-len(text))
		b["content"], _ = json.Marshal(text)
		changed = true
	}
	if !changed {
		return false
	}
	msg["content"], _ = json.Marshal(blocks)
	r["message"], _ = json.Marshal(msg)
	return true
}

// filler is n bytes of lines that read like a tool's output.
func filler(n int) string {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	for i := 0; b.Len()+w.Buffered() < n; i++ {
		fmt.Fprintf(w, "%6d  line of a file the tool read, padded to a real result's size\n", i)
	}
	w.Flush()
	return b.String()[:n]
}
