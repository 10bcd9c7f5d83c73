package source

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/store"
)

// Kind is one kind of source, a row of the table Open and Follow walk: how
// it recognises a file, how it opens one to read and follows one as it is
// written. A new kind of source is a row in Kinds and a type that
// implements Source (and, where it can, the optional methods OpenScan,
// Exchanges and Rows use: see partialScanner, exporter and lister).
type Kind struct {
	// Name names the kind in messages and docs.
	Name string
	// About says in a line what the kind is.
	About string
	// Title is what the terminal timeline calls a file of the kind.
	Title func(path string) string
	// Poll is how often following a file of the kind looks for more (0:
	// the UI's default).
	Poll time.Duration

	recognise func(path string) bool
	open      func(path string) (Source, error)
	follow    func(path string) Following
	// find lists the sessions of the kind under a directory (or the file
	// itself), with a line of what it passed over; Find walks it.
	find func(root string) (found []Found, skipped string, err error)
}

// The kinds' names.
const (
	KindSession = "claude-code-session"
	KindCapture = "capture"
)

// Kinds is the table of the kinds of source, in the order a path is
// matched against them; the last takes any path.
func Kinds() []Kind {
	return []Kind{
		{
			Name:  KindSession,
			About: "Claude Code's own session files (~/.claude/projects/…/SESSION.jsonl, with its subagents' files), read in place: each request rebuilt from its request records (2.1.300 and later) or made from the transcript",
			Title: func(p string) string { return "session " + strings.TrimSuffix(filepath.Base(p), ".jsonl") },
			Poll:  100 * time.Millisecond,
			// A .jsonl file is read as one, or refused with what it holds
			// instead (OpenFiles), never taken for a capture; one not
			// written yet is one to wait for.
			recognise: IsSessionFile,
			open:      func(p string) (Source, error) { return OpenFiles(p) },
			follow:    func(p string) Following { return &filesFollower{path: p} },
			find:      findSessions,
		},
		{
			Name:      KindCapture,
			About:     "a tsinspect capture file (SQLite), recorded by 'tsinspect record' or written by 'tsinspect import'",
			Title:     filepath.Base,
			recognise: func(string) bool { return true },
			open:      func(p string) (Source, error) { return OpenCapture(p) },
			follow:    func(p string) Following { return &Follower{path: p} },
			find:      findCaptures,
		},
	}
}

// KindOf is the kind of source the file at path is (see Kinds).
func KindOf(path string) Kind {
	ks := Kinds()
	for _, k := range ks {
		if k.recognise(path) {
			return k
		}
	}
	return ks[len(ks)-1]
}

// Open opens what a command was given: a capture file, or a Claude Code
// session (a .jsonl path, "latest", a session ID or a prefix of one, found
// under the directory sessionfiles.Root names).
func Open(arg string) (Source, error) {
	path, err := Resolve(arg, nil)
	if err != nil {
		return nil, err
	}
	return KindOf(path).open(path)
}

// Follow starts following the capture at path, or the Claude Code session
// it names (see Resolve); a file that is not there yet is waited for.
func Follow(path string) Following {
	if p, err := Resolve(path, nil); err == nil {
		path = p
	}
	return KindOf(path).follow(path)
}

// partialScanner is a source that can hand over its exchanges down to the
// partial ones, bodies included (OpenScan): a capture's rows whose
// response broke off.
type partialScanner interface {
	scanPartial(ctx context.Context, fn func(*exchange.Exchange) error) (string, error)
}

// exporter is a source that names its trace (Exchanges): a capture's
// started_at, a session's ID.
type exporter interface {
	traceSeed(ctx context.Context) string
}

// lister is a source that lists its exchanges as a capture's rows without
// decoding them (Rows).
type lister interface {
	rows(ctx context.Context) (rows []store.Summary, damaged func() string, err error)
}

func (c *Capture) scanPartial(ctx context.Context, fn func(*exchange.Exchange) error) (string, error) {
	damage, err := c.db.Scan(ctx, store.ScanOptions{Salvage: true, Partial: true}, fn)
	if len(damage) > 0 {
		return store.DamageSummary(damage), err
	}
	return "", err
}

func (c *Capture) traceSeed(ctx context.Context) string {
	started, _ := c.db.Meta(ctx, "started_at")
	return started
}

func (c *Capture) rows(ctx context.Context) ([]store.Summary, func() string, error) {
	rows, err := c.db.Summaries(ctx, 0)
	if err != nil {
		return nil, nil, err
	}
	return rows, func() string {
		if damage, err := c.db.DamagedRows(ctx); err == nil && len(damage) > 0 {
			return fmt.Sprintf("%d damaged (a row whose body is missing is not listed): %s", len(damage), store.DamageNames(damage))
		}
		return ""
	}, nil
}

func (f *Files) traceSeed(context.Context) string { return f.s.ID }

func (f *Files) rows(ctx context.Context) ([]store.Summary, func() string, error) {
	var rows []store.Summary
	_, err := f.Stream(ctx, func(ex *exchange.Exchange) error {
		rows = append(rows, store.Summary{ID: ex.ID, Source: ex.Source, Start: ex.Start, FirstByte: ex.FirstByte, End: ex.End,
			Method: ex.Method, URL: ex.URL, Host: ex.Host, Status: ex.Status, ReqBytes: int64(len(ex.ReqBody)),
			RespBytes: int64(len(ex.RespBody)), State: ex.State, Error: ex.Error})
		return nil
	})
	return rows, func() string { return "" }, err
}

// cloned is ex with bodies of its own (a stream's are its own only until
// fn returns).
func cloned(ex *exchange.Exchange) exchange.Exchange {
	c := *ex
	c.ReqBody, c.RespBody, c.ReqRef = bytes.Clone(ex.ReqBody), bytes.Clone(ex.RespBody), exchange.BodyRef{}
	return c
}
