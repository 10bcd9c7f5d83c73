package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// source is one recorded session: its main file and the directory of its
// subagents and other side files (dir/<session ID>, may be absent).
type source struct {
	id, file, side string
	turns          string // the recording's directory name, for the summary
}

// findSession finds the one main session file under a projects directory.
func findSession(projects string) (source, error) {
	files, err := filepath.Glob(filepath.Join(projects, "*", "*.jsonl"))
	if err != nil {
		return source{}, err
	}
	if len(files) != 1 {
		return source{}, fmt.Errorf("%s: %d session files, want 1", projects, len(files))
	}
	f := files[0]
	id := strings.TrimSuffix(filepath.Base(f), ".jsonl")
	// The recording's directory holds home/.
	rec := filepath.Dir(filepath.Dir(filepath.Dir(projects)))
	return source{id: id, file: f, side: filepath.Join(filepath.Dir(f), id), turns: filepath.Base(rec)}, nil
}

// ids are the message and request IDs of Claude Code's records: msg_ or
// req_ and 24 base-58 characters.
var ids = regexp.MustCompile(`"(msg_|req_)[0-9A-Za-z]{24}"`)

const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// copier rewrites a session for its n-th copy.
type copier struct {
	old, new []byte // "sessionId":"<ID>", the original's and the copy's
	id       string // the copy's session ID
	tag      string // six characters from n, the last six of every message and request ID
}

func newCopier(src source, n int) copier {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", src.id, n)))
	h := hex.EncodeToString(sum[:16])
	// A version 4 UUID from the hash.
	id := h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:32]
	tag := make([]byte, 6)
	for i, v := len(tag)-1, n; i >= 0; i, v = i-1, v/len(digits) {
		tag[i] = digits[v%len(digits)]
	}
	return copier{old: []byte(`"sessionId":"` + src.id + `"`), new: []byte(`"sessionId":"` + id + `"`), id: id, tag: string(tag)}
}

// rewrite gives every record the copy's session ID and message and request
// IDs. The session ID stays as it was elsewhere: after a compaction Claude
// Code's requests name the transcript's path, and a request rewritten
// would no longer match the digest Claude Code kept of it.
func (c copier) rewrite(b []byte) []byte {
	b = bytes.ReplaceAll(b, c.old, c.new)
	return ids.ReplaceAllFunc(b, func(m []byte) []byte {
		out := bytes.Clone(m)
		copy(out[len(out)-1-len(c.tag):], c.tag)
		return out
	})
}

// writeConfig writes dir/projects: counts[i] copies of sources[i], spread
// over nproj project directories.
func writeConfig(dir string, sources []source, counts []int, nproj int) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	n := 0
	var files, subagents int
	var total int64
	for i, src := range sources {
		main, err := os.ReadFile(src.file)
		if err != nil {
			return err
		}
		side := map[string][]byte{} // relative path → content
		err = filepath.WalkDir(src.side, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(src.side, p)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(p)
			side[rel] = b
			return err
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for k := 0; k < counts[i]; k, n = k+1, n+1 {
			pdir := filepath.Join(dir, "projects", fmt.Sprintf("-home-user-src-project-%02d", n%nproj))
			c := newCopier(src, n)
			if err := os.MkdirAll(pdir, 0o700); err != nil {
				return err
			}
			b := c.rewrite(main)
			if err := os.WriteFile(filepath.Join(pdir, c.id+".jsonl"), b, 0o600); err != nil {
				return err
			}
			files++
			total += int64(len(b))
			for rel, content := range side {
				out := filepath.Join(pdir, c.id, rel)
				if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
					return err
				}
				b := c.rewrite(content)
				if err := os.WriteFile(out, b, 0o600); err != nil {
					return err
				}
				total += int64(len(b))
				if strings.HasSuffix(rel, ".jsonl") {
					subagents++
				}
			}
		}
		fmt.Fprintf(os.Stderr, "%d copies of the %s-turn session (%d bytes, %d side files)\n", counts[i], src.turns, len(main), len(side))
	}
	fmt.Fprintf(os.Stderr, "%s: %d sessions, %d subagent files, %.2f GB in %d projects\n",
		filepath.Join(dir, "projects"), files, subagents, float64(total)/1e9, min(nproj, n))
	return nil
}
