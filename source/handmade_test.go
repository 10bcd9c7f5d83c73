package source

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/timeline"
)

// handmade writes a small Claude Code session file record by record, each
// record the child of the one before unless told otherwise.
type handmade struct {
	t       *testing.T
	sid     string
	at      time.Time
	n       int
	last    string
	version string
	lines   []string
}

func newHandmade(t *testing.T, version string) *handmade {
	return &handmade{t: t, sid: "0d0a0b0c-1111-4222-8333-444455556666", at: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC), version: version}
}

// add writes record r after d, as a child of parent ("" for the record
// before; "-" for none), and returns its UUID.
func (h *handmade) add(d time.Duration, parent string, r map[string]any) string {
	h.n++
	h.at = h.at.Add(d)
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", h.n)
	switch parent {
	case "":
		if h.last == "" {
			r["parentUuid"] = nil
		} else {
			r["parentUuid"] = h.last
		}
	case "-":
		r["parentUuid"] = nil
	default:
		r["parentUuid"] = parent
	}
	r["uuid"], r["timestamp"], r["sessionId"], r["version"] = id, h.at.Format("2006-01-02T15:04:05.000Z"), h.sid, h.version
	r["isSidechain"], r["cwd"] = false, "/home/user/hand"
	if _, ok := r["type"]; !ok {
		r["type"] = "user"
	}
	b, err := json.Marshal(r)
	if err != nil {
		h.t.Fatal(err)
	}
	h.lines = append(h.lines, string(b))
	h.last = id
	return id
}

func (h *handmade) user(d time.Duration, content any) string {
	return h.add(d, "", map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": content}})
}

// answer writes an assistant message: its usage (input, read, 5-minute
// and 1-hour writes), its blocks, and extra members of the message.
func (h *handmade) answer(d time.Duration, model string, read, w5m, w1h int64, blocks []any, extra map[string]any) string {
	h.n++
	msg := map[string]any{"id": fmt.Sprintf("msg_%04d", h.n), "type": "message", "role": "assistant", "model": model, "content": blocks, "stop_reason": "end_turn",
		"usage": map[string]any{"input_tokens": 3, "output_tokens": 100, "cache_read_input_tokens": read, "cache_creation_input_tokens": w5m + w1h,
			"cache_creation": map[string]any{"ephemeral_5m_input_tokens": w5m, "ephemeral_1h_input_tokens": w1h}}}
	for k, v := range extra {
		msg[k] = v
	}
	return h.add(d, "", map[string]any{"type": "assistant", "message": msg, "requestId": fmt.Sprintf("req_%04d", h.n)})
}

func text(s string) []any { return []any{map[string]any{"type": "text", "text": s}} }

// write writes the file and reads it as the timeline and the listing
// (which must agree).
func (h *handmade) write() *timeline.Session {
	h.t.Helper()
	dir := filepath.Join(h.t.TempDir(), "projects", "-home-user-hand")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	f := filepath.Join(dir, h.sid+".jsonl")
	if err := os.WriteFile(f, []byte(strings.Join(h.lines, "\n")+"\n"), 0o644); err != nil {
		h.t.Fatal(err)
	}
	s, _ := readRelease(h.t, f)
	return s
}

// flagsOf lists the flags of kind in s.
func flagsOf(s *timeline.Session, kind string) []timeline.Flag {
	var out []timeline.Flag
	for _, tu := range s.Turns {
		for _, f := range tu.Flags {
			if f.Kind == kind {
				out = append(out, f)
			}
		}
	}
	return out
}
